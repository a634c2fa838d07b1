"""The labelled-claim record every data-set loader returns, and the parsing helpers they share
(``factseek.datasets.claims`` has the loaders' registry, ``factseek.datasets.public`` the public
data sets' loaders)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factseek.datasets.guard import at
from factseek.errors import DataError, InputError
from factseek.labels import LabelSet
from factseek.sanitize import json_loads
from factseek.text import WORD_RE
from factseek.types import MAX_CLAIM_CHARS, Claim

MAX_FIELD_CHARS = 100_000  # justification / article text kept per record
MAX_LINE_CHARS = 10_000_000  # a longer line is malformed input, not data


@dataclass(frozen=True, kw_only=True)
class LabeledClaim:
    """One claim with its gold label (``None`` where the file has none) and what came with it.

    ``questions`` are the gold subquestions of all annotators in file order (exact duplicates
    removed); ``question_sets`` keeps them per annotator. ``meta`` holds the remaining fields as
    strings (subjects, party, credit history, url...). ``evidence`` is gold evidence text where
    the data set has it (AVeriTeC: each question's answers, a boolean answer followed by its
    explanation), with the page each came from in ``evidence_urls`` ("" when none).
    """

    claim: Claim
    label: str | None
    justification: str = ""
    questions: tuple[str, ...] = ()
    question_sets: tuple[tuple[str, ...], ...] = ()
    meta: Mapping[str, str] = field(default_factory=dict)
    evidence: tuple[str, ...] = ()
    evidence_urls: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class DedupReport:
    """What ``dedup`` removed from a training set (counts, plus the removed ids)."""

    kept: int
    overlap: int  # training claims whose normalised text is in an evaluation set
    repeated: int  # training claims repeating an earlier training claim
    removed_ids: tuple[str, ...] = ()

    def line(self) -> str:
        return (
            f"kept {self.kept} training claims; removed {self.overlap} that appear in the "
            f"evaluation data and {self.repeated} repeated within training"
        )


# ----------------------------------------------------------------------------- helpers


def normalize_claim_text(text: str) -> str:
    """Dedup key: lower-cased letter/digit runs joined by one space (quotes, punctuation ignored)."""
    return " ".join(WORD_RE.findall(text.lower()))


def clip_field(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit]


def str_field(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return "\n".join(str_field(v) for v in value)
    return str(value).strip()


def text_lines(path: Path) -> Iterator[tuple[int, str]]:
    from factseek.files import input_lines

    for n, raw in input_lines(path, "data file", max_line=4 * MAX_LINE_CHARS):
        at(path, n)
        try:
            line = raw.decode("utf-8-sig" if n == 1 else "utf-8")
        except UnicodeDecodeError as e:
            raise DataError(f"not UTF-8 text ({e.reason})", str(path), n) from None
        if len(line) > MAX_LINE_CHARS:
            raise DataError("line too long", str(path), n)
        if line.strip():
            yield n, line


def jsonl_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for n, line in text_lines(path):
        try:
            record = json_loads(line)
        except json.JSONDecodeError as e:
            raise DataError(f"not valid JSON ({e.msg})", str(path), n) from None
        if not isinstance(record, dict):
            raise DataError("expected a JSON object", str(path), n)
        yield n, record


def claim_text(raw: Any, path: Path, n: int | None) -> tuple[str, dict[str, str]]:
    text = " ".join(str_field(raw).split())
    if not text:
        raise DataError("empty claim", str(path), n)
    if len(text) > MAX_CLAIM_CHARS:
        return text[:MAX_CLAIM_CHARS], {"truncated": "1"}
    return text, {}


def parse_label(labels: LabelSet, raw: Any, path: Path, n: int | None) -> str:
    if not isinstance(raw, str):
        raise DataError(f"missing or non-text label {raw!r}", str(path), n)
    try:
        return labels.parse(raw)
    except InputError as e:
        raise DataError(str(e), str(path), n) from None


def require(record: Mapping[str, Any], key: str, path: Path, n: int | None) -> Any:
    if key not in record:
        raise DataError(f"missing field {key!r}", str(path), n)
    return record[key]


def unique(items: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(x for x in items if x))
