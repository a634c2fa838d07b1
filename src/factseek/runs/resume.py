"""What a resumed batch may skip, checked rather than trusted.

A journal line says a claim finished. ``resume(out, claims)`` believes it only when the line's
report is where ``report_name`` puts it, reads as a report (``report.read_report``: size-capped,
validated field by field) and is of that same claim: its id (``claim_id``) and its
whitespace-normalised text and date. Any other journaled claim runs again, with the reason
(``Resume.rerun``; ``batch`` writes them to ``resume.jsonl``). The last journal line of a claim
wins, so a claim that ran again is judged by its new report.

``check_run_folder(out)`` refuses, with one line before any work, a run folder whose files are
not what they should be (``journal.jsonl`` a folder, ``reports`` a file). ``batch.run_claims``,
``batch_summary.finish_batch`` and distributed runners all call these functions.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factseek.errors import FactseekError, InputError
from factseek.sanitize import safe_name
from factseek.types import Claim, Report

JOURNAL = "journal.jsonl"
ERRORS = "errors.jsonl"
RESUMED = "resume.jsonl"
REPORTS = "reports"
#: Files of a run folder that must be plain files when they exist.
RUN_FILES = (JOURNAL, ERRORS, RESUMED, "summary.csv", "summary.md")


def claim_id(claim: Claim) -> str:
    """The claim's id, or a hash of its (whitespace-normalised) text and date."""
    if claim.id:
        return claim.id
    key = f"{' '.join(claim.text.split())}\x00{claim.date}"
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


def report_name(cid: str) -> str:
    """The report's path inside OUT for claim id ``cid`` (never outside ``reports/``)."""
    return f"{REPORTS}/{safe_name(cid)}.json"


def check_run_folder(out: Path) -> None:
    """``InputError`` (one line) when a run file exists but is not a file, or ``reports`` is
    not a folder."""
    from factseek.files import os_errors

    with os_errors(out, "run folder"):
        _check_run_folder(out)


def _check_run_folder(out: Path) -> None:
    for name in RUN_FILES:
        path = out / name
        if (path.exists() or path.is_symlink()) and not path.is_file():
            raise InputError(
                f"{path} exists but is not a file; move it away or choose another --out"
            )
    reports = out / REPORTS
    if (reports.exists() or reports.is_symlink()) and not reports.is_dir():
        raise InputError(
            f"{reports} exists but is not a folder; move it away or choose another --out"
        )


def read_jsonl_objects(path: Path) -> list[dict[str, Any]]:
    """The objects with a string ``id`` of a run's JSONL file; torn or foreign lines skipped."""
    from factseek.files import os_errors, read_input

    with os_errors(path, "run journal"):
        if not path.is_file():
            return []
    text = read_input(path, "run journal").decode("utf-8", errors="replace")
    out = []
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("id"), str):
            out.append(record)
    return out


def journal_entries(out: Path) -> dict[str, dict[str, Any]]:
    """The last journal line of each claim id, in the order the ids first appear."""
    entries: dict[str, dict[str, Any]] = {}
    for record in read_jsonl_objects(out / JOURNAL):
        entries[record["id"]] = record
    return entries


def journaled_report(
    out: Path, cid: str, entry: dict[str, Any], claim: Claim | None = None
) -> tuple[Report | None, str]:
    """Claim ``cid``'s journaled report, or None and why it cannot be used. With ``claim``, the
    report's text and date must match it too."""
    from factseek.report import read_report

    expected = report_name(cid)
    if entry.get("report") != expected:
        named = str(entry.get("report"))[:80]
        return None, f"its journal line names the report {named!r}, not {expected!r}"
    try:
        report = read_report(out / expected)
    except FactseekError as e:
        return None, f"its report is unusable: {e}"
    found = claim_id(report.claim)
    if found != cid:
        return None, f"its report {expected} is for claim {found[:80]!r}"
    if claim is not None:
        text = " ".join(claim.text.split())
        if report.claim.text != text or report.claim.date != claim.date:
            return None, f"its report {expected} is for another claim text or date"
    return report, ""


@dataclass(frozen=True, kw_only=True)
class Resume:
    """Which claims of a run may be skipped, and which journaled ones run again and why."""

    done: frozenset[str]
    rerun: tuple[tuple[str, str], ...] = ()  # (claim id, why its journal line was not trusted)


def resume(out: Path, claims: Sequence[tuple[int, Claim]]) -> Resume:
    """Check every journaled claim of ``claims`` against its report (see the module docstring)."""
    entries = journal_entries(out)
    done: set[str] = set()
    rerun: list[tuple[str, str]] = []
    for _, claim in claims:
        cid = claim_id(claim)
        entry = entries.get(cid)
        if entry is None or cid in done:
            continue
        _, why = journaled_report(out, cid, entry, claim)
        if why:
            rerun.append((cid, why))
        else:
            done.add(cid)
    return Resume(done=frozenset(done), rerun=tuple(rerun))


def repair_tail(path: Path) -> None:
    """Cut a torn last line (no newline: the run was killed while writing it)."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as f:
        f.seek(-1, os.SEEK_END)
        if f.read(1) == b"\n":
            return
        f.seek(0)
        f.truncate(f.read().rfind(b"\n") + 1)


def prepare_run(out: Path, claims: Sequence[tuple[int, Claim]]) -> list[tuple[int, Claim]]:
    """Make the run folder ready (checked, torn journal lines cut) and return the claims still to
    check: those not journaled, or journaled with a report that is not theirs (noted in
    ``resume.jsonl``). ``run_claims`` and the Ray runner both start here."""
    out.mkdir(parents=True, exist_ok=True)
    check_run_folder(out)
    (out / REPORTS).mkdir(exist_ok=True)
    repair_tail(out / JOURNAL)
    repair_tail(out / ERRORS)
    repair_tail(out / RESUMED)
    plan = resume(out, claims)  # journaled claims whose report is not theirs run again
    if plan.rerun:
        lines = "".join(json.dumps({"id": c, "rerun": why}) + "\n" for c, why in plan.rerun)
        with open(out / RESUMED, "a", encoding="utf-8") as rf:
            rf.write(lines)
    return [(n, c) for n, c in claims if claim_id(c) not in plan.done]
