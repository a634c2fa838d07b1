"""A claims file as a table: CSV or TSV with a header row (``docs/formats.md``).

The header names the columns, as the JSONL format names its fields (``claim`` or ``text``,
``id``, ``date``, ``speaker``, ``venue``, ``label``, ``relevant``, ``questions``; case and
surrounding spaces do not matter; other columns are ignored). Each later row is one claim: an
empty cell is an absent field; ``relevant`` and ``questions`` hold a JSON array
(``["d1", "d2"]``) or values separated by ``|``. A row of empty cells is skipped. A cell may hold
the delimiter or a line break inside double quotes; the row's line is the line it starts on.

``table_delimiter(first_line, path)`` says whether a file's first line is such a header (and
with which delimiter); ``table_rows`` turns the lines into ``(line, fields)`` for
``claimsfile.parse_record``. Problems are ``DataError`` naming ``file:line``: a header without a
claim column, a repeated column, a row with more or fewer cells than the header, bad quoting.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from factseek.errors import DataError

#: The columns that hold the claim's text (``claimsfile.TEXT_FIELDS``).
TEXT_COLUMNS = ("claim", "text", "query")
#: Columns whose cell is a list.
LIST_COLUMNS = ("relevant", "questions")
#: Delimiters tried on the header, by file name ending (others: tab, comma, semicolon).
PREFERRED = {".tsv": "\t", ".tab": "\t", ".csv": ","}
DELIMITERS = ("\t", ",", ";")
DELIMITER_NAMES = {"\t": "TSV", ",": "CSV", ";": "CSV (semicolons)"}


def _cells(line: str, delimiter: str) -> list[str]:
    try:
        return next(csv.reader([line], delimiter=delimiter), [])
    except csv.Error:
        return []


def header_names(line: str, delimiter: str) -> list[str]:
    """The header's column names, lower-cased and stripped (a byte-order mark already removed)."""
    return [" ".join(c.split()).lower() for c in _cells(line, delimiter)]


def table_delimiter(first_line: str, path: Path) -> str | None:
    """The delimiter under which ``first_line`` is a header naming a claim column, the file's
    own kind first (``.tsv``: tab, ``.csv``: comma); ``None`` when it is no such header."""
    preferred = PREFERRED.get(path.suffix.lower())
    for d in ((preferred,) if preferred else ()) + DELIMITERS:
        if set(header_names(first_line, d)) & set(TEXT_COLUMNS):
            return d
    return None


def _list_cell(value: str, column: str) -> list[str]:
    if value.startswith("["):
        try:
            items = json.loads(value)
        except json.JSONDecodeError as e:
            raise ValueError(f"column {column!r}: not a JSON array ({e.msg})") from None
        if not isinstance(items, list):
            raise ValueError(f"column {column!r}: not a JSON array")
        return items
    return [x for x in (p.strip() for p in value.split("|")) if x]


def row_fields(names: list[str], cells: list[str]) -> dict[str, Any]:
    """One row as the fields of a JSONL line: empty cells left out, list columns as lists."""
    fields: dict[str, Any] = {}
    for name, cell in zip(names, cells, strict=True):
        value = cell.strip()
        if not name or not value:
            continue
        fields[name] = _list_cell(value, name) if name in LIST_COLUMNS else value
    if not set(fields) & set(TEXT_COLUMNS):
        column = next(n for n in names if n in TEXT_COLUMNS)
        raise ValueError(f"the claim is empty (column {column!r})")
    return fields


def not_a_header(first_line: str, path: Path) -> str:
    """Why a first line that is not JSON is no claims header either (the columns it names)."""
    preferred = PREFERRED.get(path.suffix.lower())
    cells = [
        header_names(first_line, d)
        for d in ((preferred,) if preferred else ()) + DELIMITERS
        if len(header_names(first_line, d)) > 1
    ]
    shown = ", ".join(cells[0] if cells else [" ".join(first_line.split())[:60]])
    return (
        "not a JSON object, nor a CSV/TSV header naming a 'claim' or 'text' column "
        f"(it reads: {shown}); a claims file is JSONL, or CSV/TSV with a header"
    )


def table_rows(
    lines: Iterable[tuple[int, str]], path: Path, delimiter: str
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line, fields)`` for every row after the header; ``lines`` are every line of the file
    from the first, blank ones included, as ``(number, text with its line break)``."""
    reader = csv.reader((text for _, text in lines), delimiter=delimiter, strict=True)
    kind = DELIMITER_NAMES[delimiter]
    names: list[str] | None = None
    header_line = 0
    consumed = 0  # lines read before the current row
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            raise DataError(f"not valid {kind} ({e})", str(path), consumed + 1) from None
        start = consumed + 1  # the line the row starts on
        consumed = reader.line_num
        if not any(c.strip() for c in cells):
            continue
        if names is None:
            names, header_line = [" ".join(c.split()).lower() for c in cells], start
            repeated = sorted({n for n in names if n and names.count(n) > 1})
            if repeated:
                raise DataError(f"the header names column {repeated[0]!r} twice", str(path), start)
            continue
        if len(cells) != len(names):
            raise DataError(
                f"{len(cells)} cells, but the header (line {header_line}) names {len(names)}"
                f" columns ({', '.join(names)}); quote a cell that holds the delimiter",
                str(path),
                start,
            )
        try:
            fields = row_fields(names, cells)
        except ValueError as e:
            raise DataError(str(e), str(path), start) from None
        yield start, fields
