"""Search stability between two runs: Jaccard overlap of retrieved URL sets (paper Table 4).

A run is given as a path:

* a report JSON file (one ``Report``), a JSONL file of reports (``check --claims -f json``), a
  folder of such files, or a ``factseek batch`` output folder (its ``reports/``): one URL set per
  claim (its ``claim.id``, else its text), the union of the hit URLs of all its queries;
* an evidence bundle folder (``factseek.runs.bundle``): one URL set per recorded query text.

``compare_runs`` pairs the keys both runs have; a pair where both sets are empty has no
Jaccard (``None``) and is left out of the mean rather than counted as 0 or 1.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factseek.errors import DataError, InputError
from factseek.files import input_lines, os_errors, read_input
from factseek.report import report_from_data
from factseek.runs.bundle import KIND, SEARCH_LOG, Replayer
from factseek.sanitize import json_loads
from factseek.types import Report


@dataclass(frozen=True, kw_only=True)
class Overlap:
    key: str
    a: int  # URLs in run A
    b: int
    shared: int
    jaccard: float | None


@dataclass(frozen=True, kw_only=True)
class Comparison:
    rows: tuple[Overlap, ...]
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]
    unit: str  # "claim" or "query"

    @property
    def mean(self) -> float | None:
        values = [r.jaccard for r in self.rows if r.jaccard is not None]
        return sum(values) / len(values) if values else None


def jaccard(a: set[str], b: set[str]) -> float | None:
    """|A ∩ B| / |A ∪ B|; None when both are empty."""
    union = a | b
    return len(a & b) / len(union) if union else None


#: The longest line of a JSONL file of reports (one report a line).
MAX_REPORT_LINE = 64 * 2**20


def _report_records(path: Path) -> Iterator[tuple[str, Any]]:
    """(where, JSON data) of each report in ``path``, read with the input size cap."""
    if path.suffix == ".jsonl":
        for i, raw in input_lines(path, "JSONL file of reports", max_line=MAX_REPORT_LINE):
            if raw.strip():
                yield f"{path}:{i}", _json(raw, str(path), i)
    else:
        yield str(path), _json(read_input(path, "report"), str(path), None)


def _json(raw: bytes, path: str, line: int | None) -> Any:
    try:
        return json_loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise DataError(f"not valid UTF-8 (byte {e.start})", path, line) from None
    except ValueError:
        raise DataError("not valid JSON", path, line) from None


def _report_urls(report: Report, kept_only: bool) -> tuple[str, set[str]]:
    key = report.claim.id or report.claim.text
    urls: set[str] = set()
    for r in report.results:
        for i, h in enumerate(r.hits):
            if kept_only and not (i < len(r.decisions) and r.decisions[i].kept):
                continue
            urls.add(h.url)
    return key, urls


def url_sets(path: Path, *, kept_only: bool = False) -> tuple[dict[str, set[str]], str]:
    """Key -> URL set for one run, and the unit ("claim" or "query")."""
    with os_errors(path, "run"):
        return _url_sets(Path(path), kept_only)


def _url_sets(path: Path, kept_only: bool) -> tuple[dict[str, set[str]], str]:
    if not path.exists():
        raise InputError(f"{path}: no such file or folder")
    config = path / "config.json"
    is_bundle = config.is_file() and KIND.encode() in read_input(config, "bundle config")
    if path.is_dir() and is_bundle:
        if kept_only:
            raise InputError("--kept needs reports: a bundle holds hits, not decisions")
        sets: dict[str, set[str]] = {}
        for r in Replayer(path).searches:
            sets.setdefault(r["query"], set()).update(h["url"] for h in r.get("hits", []))
        if not (path / SEARCH_LOG).exists():
            raise InputError(f"{path}: the bundle holds no search calls")
        return sets, "query"
    if path.is_dir() and (path / "journal.jsonl").is_file() and (path / "reports").is_dir():
        path = path / "reports"  # a batch folder: its per-claim reports
    files = (
        sorted(p for p in path.iterdir() if p.suffix in (".json", ".jsonl"))
        if path.is_dir()
        else [path]
    )
    sets = {}
    for f in files:
        for where, record in _report_records(f):
            key, urls = _report_urls(report_from_data(record, where), kept_only)
            sets.setdefault(key, set()).update(urls)
    if not sets:
        raise InputError(f"{path}: no reports found")
    return sets, "claim"


def compare_runs(a: Path, b: Path, *, kept_only: bool = False) -> Comparison:
    """Per-key Jaccard of URL sets between two runs (or bundles), keys in sorted order."""
    sa, unit_a = url_sets(a, kept_only=kept_only)
    sb, unit_b = url_sets(b, kept_only=kept_only)
    if unit_a != unit_b:
        raise InputError(f"cannot compare a {unit_a}-level run with a {unit_b}-level one")
    rows = tuple(
        Overlap(
            key=k,
            a=len(sa[k]),
            b=len(sb[k]),
            shared=len(sa[k] & sb[k]),
            jaccard=jaccard(sa[k], sb[k]),
        )
        for k in sorted(set(sa) & set(sb))
    )
    return Comparison(
        rows=rows,
        only_a=tuple(sorted(set(sa) - set(sb))),
        only_b=tuple(sorted(set(sb) - set(sa))),
        unit=unit_a,
    )
