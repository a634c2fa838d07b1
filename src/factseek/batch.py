"""Batch checking with a run journal: one JSON line per finished claim, flushed, so a killed run
resumes where it stopped and loses nothing finished.

Layout of OUT: ``reports/<id>.json`` (one report per claim, written atomically; plus
``reports/<id>.md``/``.html`` for the ``formats`` asked for), ``journal.jsonl`` (finished claims),
``errors.jsonl`` (claims that failed; retried on rerun), ``summary.csv`` and ``summary.md`` (one
row per claim: verdict, confidence, kept documents, time; see ``factseek.batch_summary``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from factseek.api import CheckOptions, build_parts
from factseek.batch_summary import finish_batch
from factseek.errors import FactseekError
from factseek.pipeline import CheckConfig, run
from factseek.report import write_report
from factseek.types import Claim


def claim_id(claim: Claim) -> str:
    if claim.id:
        return claim.id
    key = f"{claim.text}\x00{claim.date}"
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


def read_claims(path: Path) -> Iterator[tuple[int, Claim]]:
    """(line, claim) from a claims file (docs/formats.md); DataError names the bad line."""
    from factseek.datasets.claimsfile import read_claims_file

    for record in read_claims_file(path):
        yield record.line, record.claim


def _done_ids(journal: Path) -> set[str]:
    if not journal.exists():
        return set()
    done = set()
    for line in journal.read_text(encoding="utf-8").splitlines():
        try:
            done.add(json.loads(line)["id"])
        except (ValueError, KeyError, TypeError):
            continue  # a torn last line from a killed run
    return done


def run_batch(
    claims_path: Path,
    out: Path,
    *,
    options: Mapping[str, Any],
    k: int = 10,
    undated: str = "drop",
    exclude_sites: tuple[str, ...] = (),
    progress: bool = True,
    formats: Sequence[str] = (),
) -> tuple[int, int, int]:
    """Check every claim not yet in the journal, then write the summaries. ``formats``: per-claim
    report formats besides JSON ("md", "html"). Returns (checked, skipped, failed)."""
    claims = list(read_claims(claims_path))  # validate the whole file before any work
    out.mkdir(parents=True, exist_ok=True)
    (out / "reports").mkdir(exist_ok=True)
    journal = out / "journal.jsonl"
    done = _done_ids(journal)
    parts = build_parts(CheckOptions(**options))
    config = CheckConfig(k=k, undated=undated, exclude_sites=exclude_sites)  # type: ignore[arg-type]
    todo = [(n, c) for n, c in claims if claim_id(c) not in done]
    checked = failed = 0
    from rich.progress import Progress

    with (
        Progress(disable=not progress, transient=True) as bar,
        open(journal, "a", encoding="utf-8") as jf,
        open(out / "errors.jsonl", "a", encoding="utf-8") as ef,
    ):
        task = bar.add_task("checking claims", total=len(todo))
        for n, claim in todo:
            cid = claim_id(claim)
            try:
                report = run(claim, parts, config)
                path = out / "reports" / f"{cid}.json"
                write_report(report, path, "json")
                for fmt in sorted(set(formats) - {"json"}):
                    write_report(report, path.with_suffix(f".{fmt}"), fmt)
                jf.write(json.dumps({"id": cid, "line": n, "report": f"reports/{cid}.json"}) + "\n")
                jf.flush()
                checked += 1
            except FactseekError as e:
                ef.write(json.dumps({"id": cid, "line": n, "error": str(e)}) + "\n")
                ef.flush()
                failed += 1
            bar.advance(task)
    finish_batch(out, formats)
    return checked, len(claims) - len(todo), failed
