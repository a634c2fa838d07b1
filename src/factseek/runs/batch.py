"""Batch checking with a run journal: one JSON line per finished claim, flushed, so a killed run
resumes where it stopped and loses nothing finished.

Layout of OUT: ``reports/<name>.json`` (one report per claim, written atomically; plus
``reports/<name>.md``/``.html`` for the ``formats`` asked for; ``<name>`` is the claim id made
safe by ``factseek.sanitize.safe_name``, so no id can write outside ``OUT/reports``),
``journal.jsonl`` (finished claims), ``errors.jsonl`` (claims that failed; retried on rerun),
``resume.jsonl`` (journaled claims that ran again on a resume, and why: their report was
missing, unreadable, or of another claim; see ``factseek.runs.resume``),
``summary.csv`` and ``summary.md`` (one row per claim: verdict, confidence, kept documents, time,
and the claims file's label with whether the verdict agrees; see ``factseek.runs.summary``).

Before any work: every line is parsed and validated (``DataError`` naming ``file:line`` and the
field), duplicate ids are refused, and OUT must be writable. While running, a claim that fails
for any reason is recorded in ``errors.jsonl`` and the batch moves on. On resume, a torn last
line of the journal (a killed run) is cut off first, so the next record starts on its own line,
and a journaled claim is skipped only when its report is there and is its own.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factseek.api import CheckOptions, build_parts, check_config
from factseek.constraints.temporal import DEFAULT_GUESSED
from factseek.errors import DataError, FactseekError
from factseek.files import check_writable_dir
from factseek.pipeline import CheckConfig, Parts, run
from factseek.redact import redact_text
from factseek.report import write_report
from factseek.runs.resume import (
    ERRORS,
    JOURNAL,
    check_run_folder,
    claim_id,
    prepare_run,
    report_name,
)
from factseek.runs.summary import finish_batch
from factseek.sanitize import clean_text, safe_name
from factseek.types import Claim

if TYPE_CHECKING:
    from factseek.datasets.claimsfile import ClaimRecord
    from factseek.runs.distributed import RaySettings


def read_claims(path: Path) -> Iterator[tuple[int, Claim]]:
    """(line, claim) from a claims file (docs/formats.md); DataError names the bad line."""
    from factseek.datasets.claimsfile import read_claims_file

    for record in read_claims_file(path):
        yield record.line, record.claim


def _gold(records: Sequence[ClaimRecord]) -> dict[str, str]:
    return {claim_id(r.claim): r.label for r in records if r.label}


def _unique_ids(claims: list[tuple[int, Claim]], path: Path) -> None:
    """``DataError`` for two claims with one id, or ids that would share a report file."""
    seen: dict[str, tuple[int, str]] = {}
    for n, c in claims:
        cid = claim_id(c)
        key = safe_name(cid).lower()  # case-insensitive file systems
        if key in seen:
            first, other = seen[key]
            what = (
                f"duplicate claim id {cid!r}"
                if other == cid
                else (f"claim id {cid!r} would share a report file with {other!r}")
            )
            raise DataError(f"{what} (first on line {first})", str(path), n)
        seen[key] = (n, cid)


def _check_one(
    claim: Claim, parts: Any, config: CheckConfig, path: Path, formats: Sequence[str]
) -> None:
    report = run(claim, parts, config)
    try:
        write_report(report, path, "json")
        for fmt in sorted(set(formats) - {"json"}):
            write_report(report, path.with_suffix(f".{fmt}"), fmt)
    except OSError as e:  # the output folder failed (disk full, removed...): stop the batch
        raise _OutputFailed(f"cannot write {path}: {e.strerror or e}") from None


class _OutputFailed(FactseekError):
    """Writing into OUT failed: every further claim would fail the same way."""


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
    top_docs: int | None = None,
    cards: int | None = None,
    on_conflict: str = "after",
    date_basis: str = "modified",
    guessed: str = DEFAULT_GUESSED,
    keep_pdf: bool = False,
    ray: RaySettings | None = None,
) -> tuple[int, int, int]:
    """Check every claim not yet in the journal, then write the summaries. ``formats``: per-claim
    report formats besides JSON ("md", "html"); ``ray``: run the claims on a Ray cluster
    (``factseek.runs.distributed``; same run folder). Returns (checked, skipped, failed)."""
    from factseek.datasets.claimsfile import read_claims_file

    records = read_claims_file(claims_path)  # validate the whole file before any work
    claims = [(r.line, r.claim) for r in records]
    _unique_ids(claims, claims_path)
    check_writable_dir(out, "--out")
    check_run_folder(out)  # before the parts load: a clear line, not an error mid-run
    config = check_config(
        k=k,
        undated=undated,
        exclude_sites=exclude_sites,
        top_docs=top_docs,
        cards=cards,
        on_conflict=on_conflict,
        date_basis=date_basis,
        guessed=guessed,
        keep_pdf=keep_pdf,
    )
    from factseek.stance import engine_for_many

    options = {"stance_engine": engine_for_many(), **options}
    if ray is not None:
        from factseek.runs.distributed import run_claims_ray

        opts = CheckOptions(**options)
        result = run_claims_ray(claims, out, opts, config, ray, progress=progress, formats=formats)
    else:
        parts = build_parts(CheckOptions(**options))
        result = run_claims(claims, out, parts, config, progress=progress, formats=formats)
    finish_batch(out, formats, _gold(records))
    return result


def gold_labels(path: Path) -> dict[str, str]:
    """Claim id -> the claims file's ``label`` (for the summaries' agreement column)."""
    from factseek.datasets.claimsfile import read_claims_file

    return _gold(read_claims_file(path))


def run_claims(
    claims: Sequence[tuple[int, Claim]],
    out: Path,
    parts: Parts,
    config: CheckConfig,
    *,
    progress: bool = True,
    formats: Sequence[str] = (),
) -> tuple[int, int, int]:
    """Check the ``(line, claim)`` pairs not yet in ``out``'s journal with built parts; what
    ``run_batch`` does after reading and validating its file (``eval pipeline`` calls it with
    the claims of a data set). Returns (checked, skipped, failed)."""
    todo = prepare_run(out, claims)
    journal = out / JOURNAL
    checked = failed = 0
    from rich.progress import Progress

    with (
        Progress(disable=not progress, transient=True) as bar,
        open(journal, "a", encoding="utf-8") as jf,
        open(out / ERRORS, "a", encoding="utf-8") as ef,
    ):
        task = bar.add_task("checking claims", total=len(todo))
        for n, claim in todo:
            cid = claim_id(claim)
            name = report_name(cid)
            try:
                _check_one(claim, parts, config, out / name, formats)
            except _OutputFailed:
                raise
            except Exception as e:  # one claim never stops the batch: record it, move on
                message = str(e) if isinstance(e, FactseekError) else f"{type(e).__name__}: {e}"
                message = redact_text(clean_text(message))[:2000]  # stored: no secrets, no escapes
                ef.write(json.dumps({"id": cid, "line": n, "error": message}) + "\n")
                ef.flush()
                failed += 1
            else:
                jf.write(json.dumps({"id": cid, "line": n, "report": name}) + "\n")
                jf.flush()
                checked += 1
            bar.advance(task)
    return checked, len(claims) - len(todo), failed
