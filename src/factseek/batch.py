"""Batch checking with a run journal: one JSON line per finished claim, flushed, so a killed run
resumes where it stopped and loses nothing finished.

Layout of OUT: ``reports/<id>.json`` (one report per claim, written atomically),
``journal.jsonl`` (finished claims), ``errors.jsonl`` (claims that failed; retried on rerun).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from factseek.api import CheckOptions, build_parts, check_config, make_claim
from factseek.errors import DataError, FactseekError
from factseek.pipeline import CheckConfig, Parts, run
from factseek.report import write_report
from factseek.types import Claim


def claim_id(claim: Claim) -> str:
    if claim.id:
        return claim.id
    key = f"{claim.text}\x00{claim.date}"
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


def read_claims(path: Path) -> Iterator[tuple[int, Claim]]:
    """Claims from JSONL (text, date, speaker, venue, id); DataError names the bad line."""
    try:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                    if not isinstance(row, dict) or not isinstance(row.get("text"), str):
                        raise ValueError("expected an object with a 'text' string")
                    claim = make_claim(
                        row["text"],
                        date=row.get("date"),
                        speaker=row.get("speaker"),
                        venue=row.get("venue"),
                        id=str(row["id"]) if row.get("id") is not None else None,
                    )
                except (ValueError, FactseekError) as e:
                    raise DataError(str(e).splitlines()[0], str(path), n) from None
                yield n, claim
    except FileNotFoundError:
        raise DataError("file not found", str(path)) from None
    except UnicodeDecodeError:
        raise DataError("not valid UTF-8", str(path)) from None


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
    top_docs: int | None = None,
    cards: int | None = None,
    progress: bool = True,
) -> tuple[int, int, int]:
    """Check every claim not yet in the journal. Returns (checked, skipped, failed)."""
    claims = list(read_claims(claims_path))  # validate the whole file before any work
    parts = build_parts(CheckOptions(**options))
    config = check_config(
        k=k, undated=undated, exclude_sites=exclude_sites, top_docs=top_docs, cards=cards
    )
    return run_claims(claims, out, parts, config, progress=progress)


def run_claims(
    claims: Sequence[tuple[int, Claim]],
    out: Path,
    parts: Parts,
    config: CheckConfig,
    *,
    progress: bool = True,
    description: str = "checking claims",
) -> tuple[int, int, int]:
    """Check ``(line, claim)`` pairs not yet in ``out``'s journal with built parts.

    Returns (checked, skipped, failed); reports are ``out/reports/<claim_id>.json``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "reports").mkdir(exist_ok=True)
    journal = out / "journal.jsonl"
    done = _done_ids(journal)
    todo = [(n, c) for n, c in claims if claim_id(c) not in done]
    checked = failed = 0
    from rich.progress import Progress

    with (
        Progress(disable=not progress, transient=True) as bar,
        open(journal, "a", encoding="utf-8") as jf,
        open(out / "errors.jsonl", "a", encoding="utf-8") as ef,
    ):
        task = bar.add_task(description, total=len(todo))
        for n, claim in todo:
            cid = claim_id(claim)
            try:
                report = run(claim, parts, config)
                path = out / "reports" / f"{cid}.json"
                write_report(report, path, "json")
                jf.write(json.dumps({"id": cid, "line": n, "report": f"reports/{cid}.json"}) + "\n")
                jf.flush()
                checked += 1
            except FactseekError as e:
                ef.write(json.dumps({"id": cid, "line": n, "error": str(e)}) + "\n")
                ef.flush()
                failed += 1
            bar.advance(task)
    return checked, len(claims) - len(todo), failed
