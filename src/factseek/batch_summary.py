"""What a batch run found, at a glance: ``summary.csv`` and ``summary.md`` in its folder.

One row per claim of the run folder: the finished claims (``journal.jsonl``), then the claims
whose last attempt failed (``errors.jsonl``, not finished since), each group in the claims file's
order (the records' ``line``; a run on a Ray cluster journals claims as they finish, and its
summaries are the same as a local run's): ``id``, ``claim``, ``verdict`` (the
label, "not judged", or "failed"), ``confidence`` (the judge's probability for the label, when it
gives one), ``kept_documents`` (documents that passed the constraints), ``seconds`` (the sum of
the stage timings), ``report`` (the per-claim report file, relative to the folder) and ``error``.

``finish_batch(out, formats)`` also renders any requested per-claim format that is missing (a
rerun with a new ``--format``) from the JSON report, and then writes both summaries atomically.
The CSV is safe to open in a spreadsheet: a cell that would start a formula (``=``, ``+``, ``-``,
``@``) is prefixed with an apostrophe.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from factseek.errors import FactseekError
from factseek.files import atomic_write
from factseek.report import Format, clip_text, markdown_text, read_report, write_report

SUMMARY_CSV = "summary.csv"
SUMMARY_MD = "summary.md"
COLUMNS = ("id", "claim", "verdict", "confidence", "kept_documents", "seconds", "report", "error")


@dataclass(frozen=True, kw_only=True)
class SummaryRow:
    """One claim of a batch run (see the module docstring for the columns)."""

    id: str
    claim: str
    verdict: str
    confidence: float | None = None
    kept_documents: int | None = None
    seconds: float | None = None
    report: str = ""  # the most readable per-claim report file, relative to the run folder
    error: str = ""


def _jsonl(path: Path) -> Iterator[dict]:
    """Objects of a JSONL file; a torn or foreign line (a killed run) is skipped."""
    if not path.exists():
        return
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("id"), str):
            yield record


def _in_file_order(records: Iterator[dict]) -> list[dict]:
    """Records by their claims-file ``line`` (stable: a record without one keeps its place after
    the numbered ones)."""
    rows = list(records)
    last = len(rows) + 1 + max((r["line"] for r in rows if _is_line(r.get("line"))), default=0)
    return sorted(rows, key=lambda r: r["line"] if _is_line(r.get("line")) else last)


def _is_line(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _inside(out: Path, relative: object) -> Path | None:
    """``out / relative`` when it stays inside ``out`` (a journal is data, not instructions)."""
    if not isinstance(relative, str) or not relative:
        return None
    path = (out / relative).resolve()
    return path if path.is_relative_to(out.resolve()) else None


def finish_batch(out: Path, formats: Sequence[Format | str] = ()) -> list[SummaryRow]:
    """Render missing per-claim formats, write ``summary.csv`` and ``summary.md`` into ``out``,
    and return the rows."""
    wanted = [Format(f) for f in formats if Format(f) != Format.json]
    rows: list[SummaryRow] = []
    seen: set[str] = set()
    for entry in _in_file_order(_jsonl(out / "journal.jsonl")):
        cid = entry["id"]
        path = _inside(out, entry.get("report"))
        if cid in seen or path is None:
            continue
        seen.add(cid)
        try:
            report = read_report(path)
        except FactseekError as e:
            rows.append(SummaryRow(id=cid, claim="", verdict="failed", error=str(e)))
            continue
        shown = path
        for fmt in wanted:
            target = path.with_suffix(f".{fmt.value}")
            if not target.exists():
                write_report(report, target, fmt)
        for fmt in (Format.html, Format.md):  # link the most readable one that exists
            if path.with_suffix(f".{fmt.value}").exists():
                shown = path.with_suffix(f".{fmt.value}")
                break
        v = report.verdict
        rows.append(
            SummaryRow(
                id=cid,
                claim=report.claim.text,
                verdict=(v.label or "") if v.judged else "not judged",
                confidence=v.confidence,
                kept_documents=len(report.documents),
                seconds=round(sum(report.timings.values()), 3),
                report=shown.relative_to(out.resolve()).as_posix(),
            )
        )
    failed: dict[str, SummaryRow] = {}
    for entry in _in_file_order(_jsonl(out / "errors.jsonl")):
        if entry["id"] not in seen:
            failed[entry["id"]] = SummaryRow(
                id=entry["id"], claim="", verdict="failed", error=str(entry.get("error", ""))
            )
    rows.extend(failed.values())
    atomic_write(out / SUMMARY_CSV, summary_csv(rows))
    atomic_write(out / SUMMARY_MD, summary_markdown(rows))
    return rows


def _cell(value: object) -> str:
    if value is None:
        return ""
    text = f"{value:.3f}" if isinstance(value, float) else " ".join(str(value).split())
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def summary_csv(rows: Sequence[SummaryRow]) -> str:
    """The rows as CSV with a header (``COLUMNS``)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for r in rows:
        w.writerow([_cell(getattr(r, c)) for c in COLUMNS])
    return buf.getvalue()


def summary_markdown(rows: Sequence[SummaryRow]) -> str:
    """The rows as a Markdown table, each claim linked to its report, plus counts by verdict."""
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    out = [
        "# factseek batch summary\n",
        f"{len(rows)} claims: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + "\n",
        "| id | claim | verdict | confidence | kept documents | seconds |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        claim = markdown_text(clip_text(r.claim, 120)) or markdown_text(r.error)
        if r.report:
            claim = f"[{claim}](<{r.report}>)"
        conf = "" if r.confidence is None else f"{r.confidence:.2f}"
        docs = "" if r.kept_documents is None else str(r.kept_documents)
        secs = "" if r.seconds is None else f"{r.seconds:.1f}"
        out.append(
            f"| {markdown_text(r.id)} | {claim} | {markdown_text(r.verdict)} | {conf} | {docs} "
            f"| {secs} |"
        )
    return "\n".join(out) + "\n"
