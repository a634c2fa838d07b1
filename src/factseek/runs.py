"""Search stability between two runs: Jaccard overlap of retrieved URL sets (paper Table 4).

A run is given as a path:

* a report JSON file (one ``Report``), a JSONL file of reports (``check --claims -f json``), a
  folder of such files, or a ``factseek batch`` output folder (its ``reports/``): one URL set per
  claim (its ``claim.id``, else its text), the union of the hit URLs of all its queries;
* an evidence bundle folder (``factseek.bundle``): one URL set per recorded query text.

``compare_runs`` pairs the keys both runs have; a pair where both sets are empty has no
Jaccard (``None``) and is left out of the mean rather than counted as 0 or 1.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factseek.bundle import KIND, SEARCH_LOG, Replayer
from factseek.errors import DataError, InputError
from factseek.sanitize import json_loads


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


def _report_records(path: Path) -> Iterator[tuple[Path, int | None, Mapping[str, Any]]]:
    if path.suffix == ".jsonl":
        with path.open(encoding="utf-8") as f:
            for i, line in enumerate(f, 1):
                if line.strip():
                    try:
                        yield path, i, json_loads(line)
                    except ValueError:
                        raise DataError("not valid JSON", str(path), i) from None
    else:
        try:
            yield path, None, json_loads(path.read_text(encoding="utf-8"))
        except ValueError:
            raise DataError("not valid JSON", str(path)) from None


def _report_urls(record: Mapping[str, Any], kept_only: bool, where: str) -> tuple[str, set[str]]:
    claim = record.get("claim")
    results = record.get("results")
    if not isinstance(claim, Mapping) or not isinstance(results, list):
        raise DataError("not a factseek report (no claim/results)", where)
    key = str(claim.get("id") or claim.get("text") or "")
    urls: set[str] = set()
    for r in results:
        hits = r.get("hits") or []
        decisions = r.get("decisions") or []
        for i, h in enumerate(hits):
            if kept_only and not (i < len(decisions) and decisions[i].get("kept")):
                continue
            urls.add(h["url"])
    return key, urls


def url_sets(path: Path, *, kept_only: bool = False) -> tuple[dict[str, set[str]], str]:
    """Key -> URL set for one run, and the unit ("claim" or "query")."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file or folder")
    config = path / "config.json"
    if path.is_dir() and config.exists() and KIND in config.read_text(encoding="utf-8"):
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
        for src, line, record in _report_records(f):
            where = f"{src}:{line}" if line else str(src)
            key, urls = _report_urls(record, kept_only, where)
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
