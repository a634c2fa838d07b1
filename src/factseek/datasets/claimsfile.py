"""The claims file: the one format every command that reads claims accepts (docs/formats.md).

JSONL, UTF-8 (a byte-order mark at the start is allowed), one JSON object a line; blank lines
are skipped. Or the same fields as a table: CSV or TSV with a header row naming the columns
(``factseek.datasets.claimstable``); a file whose first line is not a JSON object is read as
one. Fields:

========== ============================ =========================================================
field      type                         meaning
========== ============================ =========================================================
claim      string (required)            the claim; ``text`` or ``query`` are accepted instead
                                        (give one of the three), at most 2,000 characters
id         string or integer            unique within the file
date       "YYYY-MM-DD" or null         when the claim was made (evidence must predate it); not
                                        in the future
speaker    string or null               who made it
venue      string or null               where it was made
label      string or null               gold veracity label, in one label set for the whole
                                        file (PolitiFact, AVeriTeC or FEVER; ``factseek.labels``)
relevant   list of strings or integers  ids of the corpus documents the claim should retrieve
                                        (query rewriting)
questions  list of strings              gold subquestions (``factseek eval decompose``)
========== ============================ =========================================================

Other fields are ignored. A command may require more than ``claim`` (``require=``): the query
rewriter needs ``id`` and ``relevant``. Every problem raises ``DataError`` naming ``file:line``:
bad JSON, a first line that is neither a JSON object nor a header naming a claim column, a wrong
type, an empty or over-long claim, a bad date, a repeated id, a missing required field, a label
of no label set or of another set than the file's other labels. Nothing is silently dropped or
truncated.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import json
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factseek.datasets.claimstable import not_a_header, table_delimiter, table_rows
from factseek.errors import DataError, FactseekError, InputError
from factseek.labels import LABEL_SETS, LabelSet
from factseek.sanitize import json_loads
from factseek.types import MAX_CLAIM_CHARS, Claim

#: The claim text's field and the two names accepted in its place.
TEXT_FIELDS = ("claim", "text", "query")
#: Every field the format defines, in documentation order.
FIELDS = ("claim", "id", "date", "speaker", "venue", "label", "relevant", "questions")
#: A longer line is malformed input, not a claim.
MAX_LINE_CHARS = 1_000_000


@dataclass(frozen=True, kw_only=True)
class ClaimRecord:
    """One line of a claims file. ``label`` is as written (a label set parses it where a command
    needs one); ``relevant`` is ``None`` when the line has no such field; ``line`` is 1-based."""

    claim: Claim
    line: int
    label: str | None = None
    relevant: tuple[str, ...] | None = None
    questions: tuple[str, ...] = ()


def _decoded_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Every line with its line break, blank ones included, streamed with the input caps
    (``factseek.files``): the one place the file is opened."""
    from factseek.files import input_lines

    # a line of MAX_LINE_CHARS characters takes at most 4 bytes each in UTF-8
    for n, raw in input_lines(path, "claims file", max_line=4 * MAX_LINE_CHARS + 2):
        try:
            line = raw.decode("utf-8-sig" if n == 1 else "utf-8")  # a byte-order mark is fine
        except UnicodeDecodeError as e:
            raise DataError(f"not UTF-8 text ({e.reason})", str(path), n) from None
        if len(line.rstrip("\r\n")) > MAX_LINE_CHARS:
            raise DataError(f"line longer than {MAX_LINE_CHARS:,} characters", str(path), n)
        yield n, line


def _first_line(lines: Iterator[tuple[int, str]]) -> list[tuple[int, str]]:
    """The lines up to the first non-blank one (empty when every line is blank)."""
    head: list[tuple[int, str]] = []
    for n, line in lines:
        head.append((n, line))
        if line.strip():
            return head
    return []


def is_claims_table(path: str | Path) -> bool:
    """Whether the file's first non-blank line is a CSV/TSV claims header (format sniffing; a file
    that cannot be read is not one, and its loader says why)."""
    path = Path(path)
    lines = _decoded_lines(path)
    try:
        head = _first_line(lines)
    except FactseekError:
        return False
    finally:
        lines.close()
    return bool(head) and table_delimiter(head[-1][1], path) is not None


def _records(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line, record)``: each JSONL line decoded, or each table row as its fields. The first
    non-blank line decides: a JSON object (or array) means JSONL, else it must be a header."""
    lines = _decoded_lines(path)
    head = _first_line(lines)
    if not head:
        return
    first = head[-1]
    every = itertools.chain(head, lines)
    if first[1].lstrip()[:1] in ("{", "["):
        for n, line in every:
            if line.strip():
                try:
                    yield n, json_loads(line)
                except json.JSONDecodeError as e:
                    raise DataError(f"not valid JSON ({e.msg})", str(path), n) from None
        return
    delimiter = table_delimiter(first[1], path)
    if delimiter is None:
        raise DataError(not_a_header(first[1], path), str(path), first[0])
    yield from table_rows(every, path, delimiter)


def _optional_str(row: Mapping[str, Any], key: str) -> str | None:
    value = row.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{key!r} must be a string, not {type(value).__name__}")
    return " ".join(value.split()) or None


def _text(row: Mapping[str, Any]) -> str:
    given = [k for k in TEXT_FIELDS if row.get(k) is not None]
    if not given:
        raise ValueError("missing field 'claim' (or 'text')")
    if len(given) > 1 and len({json.dumps(row[k]) for k in given}) > 1:
        raise ValueError(f"give one of {', '.join(repr(k) for k in given)}, not several")
    raw = row[given[0]]
    if not isinstance(raw, str):
        raise ValueError(f"{given[0]!r} must be a string, not {type(raw).__name__}")
    text = " ".join(raw.split())
    if not text:
        raise ValueError("the claim is empty")
    if len(text) > MAX_CLAIM_CHARS:
        raise ValueError(f"the claim has {len(text):,} characters; the limit is {MAX_CLAIM_CHARS}")
    return text


def _id(row: Mapping[str, Any]) -> str | None:
    value = row.get("id")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValueError(f"'id' must be a string or an integer, not {type(value).__name__}")
    text = str(value).strip()
    if not text:
        raise ValueError("'id' is empty")
    return text


def _date(row: Mapping[str, Any]) -> _dt.date | None:
    value = row.get("date")
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"'date' must be a YYYY-MM-DD string, not {type(value).__name__}")
    try:
        if len(value.strip()) != 10:
            raise ValueError
        day = _dt.date.fromisoformat(value.strip())
    except ValueError:
        raise ValueError(f"date {value!r} is not YYYY-MM-DD") from None
    if day > _dt.date.today():  # the pipeline would refuse it after the work had started
        raise ValueError(f"date {value.strip()} is in the future")
    return day


def _str_list(row: Mapping[str, Any], key: str, *, ints: bool) -> tuple[str, ...] | None:
    value = row.get(key)
    if value is None:
        return None
    ok = (str, int) if ints else (str,)
    if not isinstance(value, list) or any(
        isinstance(v, bool) or not isinstance(v, ok) for v in value
    ):
        what = "strings or integers" if ints else "strings"
        raise ValueError(f"{key!r} must be a list of {what}")
    return tuple(s for s in (" ".join(str(v).split()) for v in value) if s)


def parse_record(row: Any, *, require: Collection[str] = ()) -> tuple[Claim, dict[str, Any]]:
    """One decoded line -> its ``Claim`` and the other fields (``label``, ``relevant``,
    ``questions``); ``ValueError`` with a one-line reason when it breaks the format."""
    if not isinstance(row, dict):
        raise ValueError("expected a JSON object")
    for key in require:
        if key != "claim" and row.get(key) is None:
            raise ValueError(f"missing field {key!r} (required here)")
    claim = Claim(
        text=_text(row),
        date=_date(row),
        speaker=_optional_str(row, "speaker"),
        venue=_optional_str(row, "venue"),
        id=_id(row),
    )
    extra = {
        "label": _optional_str(row, "label"),
        "relevant": _str_list(row, "relevant", ints=True),
        "questions": _str_list(row, "questions", ints=False) or (),
    }
    return claim, extra


def read_claims_file(path: str | Path, *, require: Collection[str] = ()) -> list[ClaimRecord]:
    """Every claim of a claims file, in file order (see the module docstring for the format).

    ``require``: fields besides ``claim`` that every line must have (e.g. ``("id", "relevant")``).
    Raises ``DataError`` naming ``file:line`` at the first problem, ``InputError`` when the file
    is missing.
    """
    unknown = set(require) - set(FIELDS)
    if unknown:
        raise ValueError(f"unknown claims-file field(s): {', '.join(sorted(unknown))}")
    path = Path(path)
    out: list[ClaimRecord] = []
    first_line: dict[str, int] = {}
    for n, record in _records(path):
        try:
            claim, extra = parse_record(record, require=require)
        except ValueError as e:
            raise DataError(str(e), str(path), n) from None
        if claim.id is not None:
            if claim.id in first_line:
                raise DataError(
                    f"id {claim.id!r} repeats line {first_line[claim.id]}", str(path), n
                )
            first_line[claim.id] = n
        out.append(ClaimRecord(claim=claim, line=n, **extra))
    file_label_set(out, path)
    return out


def _sets_reading(raw: str) -> tuple[LabelSet, ...]:
    """The label sets that read ``raw`` as one of their labels."""
    out = []
    for labels in LABEL_SETS.values():
        try:
            labels.parse(raw)
        except InputError:
            continue
        out.append(labels)
    return tuple(out)


def _names(sets: Sequence[LabelSet]) -> str:
    return " or ".join(s.name for s in sets)


def file_label_set(records: Sequence[ClaimRecord], path: str | Path) -> LabelSet:
    """The one label set of the records' labels: the first of ``LABEL_SETS`` that reads them
    all (PolitiFact when there are none). ``DataError`` names the line of a label no set reads,
    or of the first label of another set than an earlier line's, with both sets."""
    common = tuple(LABEL_SETS.values())
    anchor: ClaimRecord | None = None  # the first labelled line
    for r in records:
        if r.label is None:
            continue
        sets = _sets_reading(r.label)
        if not sets:
            known = "; ".join(f"{s.name}: {', '.join(s.labels)}" for s in LABEL_SETS.values())
            raise DataError(f"label {r.label!r} is in no label set ({known})", str(path), r.line)
        narrowed = tuple(s for s in common if s in sets)
        if not narrowed:
            assert anchor is not None
            raise DataError(
                f"label {r.label!r} belongs to the {_names(sets)} label set, but line "
                f"{anchor.line}'s {anchor.label!r} belongs to {_names(common)}: a claims file "
                "takes labels of one set",
                str(path),
                r.line,
            )
        common, anchor = narrowed, anchor or r
    return common[0]


def looks_like_claims(record: Mapping[str, Any]) -> bool:
    """Whether a decoded JSON object reads as a claims-file line (for format sniffing)."""
    return any(isinstance(record.get(k), str) for k in TEXT_FIELDS)
