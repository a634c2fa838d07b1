"""What a veracity classifier reads: "speaker venue claim [SEP] evidence", as in the paper.

The first segment is the claim with its speaker and venue; the second depends on the mode:

- ``claim``: none (claim-only baseline, with metadata);
- ``summaries``: the relevant claim-focused summaries of a factseek ``Report``, in rank order;
- ``justification``: the fact-checker's justification (the oracle setting).

The tokenizer joins the two segments with its own separator token. Summaries for a data set come
from factseek Report JSON files (one report per ``.json`` file, or one per line of a ``.jsonl``
file, or a folder of either), matched to claims by claim id, else by normalised claim text.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

from factseek.datasets.claims import LabeledClaim, normalize_claim_text
from factseek.errors import DataError, InputError
from factseek.sanitize import json_loads
from factseek.types import Claim, Report, Summary, from_dict

Mode = Literal["claim", "summaries", "justification"]
MODES: tuple[str, ...] = get_args(Mode)


def check_mode(mode: str) -> Mode:
    if mode not in MODES:
        raise InputError(f"unknown judge mode {mode!r} (one of: {', '.join(MODES)})")
    return mode  # type: ignore[return-value]


def claim_segment(claim: Claim) -> str:
    """ "speaker venue claim" (missing parts left out)."""
    return " ".join(x.strip() for x in (claim.speaker, claim.venue, claim.text) if x and x.strip())


def summaries_segment(summaries: Sequence[Summary]) -> str:
    """The relevant summaries' text, in the order given (the pipeline's document rank)."""
    return " ".join(" ".join(s.text.split()) for s in summaries if s.relevant and s.text.strip())


@dataclass(frozen=True, kw_only=True)
class ReportSummaries:
    """Summaries from factseek reports, looked up by claim id or normalised claim text."""

    by_id: dict[str, tuple[Summary, ...]] = field(default_factory=dict)
    by_text: dict[str, tuple[Summary, ...]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.by_text)

    def lookup(self, claim: Claim) -> tuple[Summary, ...] | None:
        if claim.id is not None and claim.id in self.by_id:
            return self.by_id[claim.id]
        return self.by_text.get(normalize_claim_text(claim.text))


def _report_files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.suffix in (".json", ".jsonl") and p.is_file())
    if not path.exists():
        raise InputError(f"report file or folder not found: {path}")
    return [path]


def _reports(path: Path) -> Iterable[tuple[int | None, dict]]:
    from factseek.files import read_input

    text = read_input(path, "report").decode("utf-8", errors="replace")
    if path.suffix == ".jsonl":
        for n, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    yield n, json_loads(line)
                except json.JSONDecodeError as e:
                    raise DataError(f"not valid JSON ({e.msg})", str(path), n) from None
    else:
        try:
            yield None, json_loads(text)
        except json.JSONDecodeError as e:
            raise DataError(f"not valid JSON ({e.msg})", str(path)) from None


def load_report_summaries(paths: Sequence[str | Path]) -> ReportSummaries:
    """Read the summaries of every factseek Report JSON under ``paths``."""
    by_id: dict[str, tuple[Summary, ...]] = {}
    by_text: dict[str, tuple[Summary, ...]] = {}
    for root in paths:
        for path in _report_files(Path(root)):
            for n, data in _reports(path):
                if isinstance(data, dict) and "report" in data and "claim" not in data:
                    data = data["report"]  # a batch journal line wrapping its report
                try:
                    report = from_dict(Report, data)
                except (TypeError, ValueError, KeyError) as e:
                    raise DataError(f"not a factseek report ({e})", str(path), n) from None
                summaries = tuple(report.summaries)
                if report.claim.id:
                    by_id[report.claim.id] = summaries
                by_text[normalize_claim_text(report.claim.text)] = summaries
    return ReportSummaries(by_id=by_id, by_text=by_text)


@dataclass(frozen=True, kw_only=True)
class Example:
    """One classifier input pair and its gold label (None when unknown)."""

    id: str
    first: str
    second: str
    label: str | None


def build_examples(
    rows: Sequence[LabeledClaim], mode: Mode, summaries: ReportSummaries | None = None
) -> tuple[list[Example], int]:
    """Classifier inputs for ``rows``; also returns how many claims had no report (summaries mode)
    or no justification (justification mode): those get an empty second segment."""
    mode = check_mode(mode)
    if mode == "summaries" and summaries is None:
        raise InputError("mode 'summaries' needs factseek reports (--summaries DIR)")
    out: list[Example] = []
    missing = 0
    for i, row in enumerate(rows):
        second = ""
        if mode == "justification":
            second = " ".join(row.justification.split())
            missing += not second
        elif mode == "summaries":
            found = summaries.lookup(row.claim)  # type: ignore[union-attr]
            if found is None:
                missing += 1
            else:
                second = summaries_segment(found)
        out.append(
            Example(
                id=row.claim.id or f"row-{i}",
                first=claim_segment(row.claim),
                second=second,
                label=row.label,
            )
        )
    return out, missing
