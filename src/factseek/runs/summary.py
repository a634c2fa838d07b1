"""What a batch run found, at a glance: ``summary.csv`` and ``summary.md`` in its folder.

One row per claim of the run folder: the finished claims (``journal.jsonl``; a claim's last
journal line counts), then the claims whose last attempt failed (``errors.jsonl``, not finished
since), each group in the claims file's order (the records' ``line``; a run on a Ray cluster
journals claims as they finish, and its summaries are the same as a local run's). No journaled
claim is dropped or shown under another's name: one whose report is missing, unreadable or of
another claim (``batch_resume.journaled_report``) is a "failed" row saying why. Columns: ``id``,
``claim``, ``verdict`` (the label, "not judged", or "failed"), ``abstained`` ("yes" when the
judge declined to decide: ``Verdict.abstained``, whose label reads not-enough-evidence),
``confidence`` (the judge's probability for the label, when it gives one), ``kept_documents``
(documents that passed the constraints), ``seconds`` (the sum of the stage timings), ``report``
(the per-claim report file, relative to the folder), ``error``, ``gold_label`` (the claims
file's ``label``, as written) and ``agrees``: "yes"/"no" (the verdict is/is not that label, read
in the verdict's own label set), "abstained" (the judge gave no verdict to compare: an
abstention is neither right nor wrong, as docs/verdicts.md scores the judge: how often each
label it gives is right, and on how many claims it abstains), or "" when there is no verdict, no
gold label, or the gold label is not on the verdict's scale. ``summary.md`` counts the verdicts
with abstentions apart and adds one line: right, wrong, abstained.

``finish_batch(out, formats)`` also renders any requested per-claim format that is missing (a
rerun with a new ``--format``) from the JSON report, and then writes both summaries atomically.
The CSV is safe to open in a spreadsheet: a cell that would start a formula (``=``, ``+``, ``-``,
``@``) is prefixed with an apostrophe.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from factseek.errors import InputError
from factseek.files import atomic_write
from factseek.labels import LABEL_SETS
from factseek.report import Format, clip_text, markdown_text, write_report
from factseek.runs.resume import (
    ERRORS,
    journal_entries,
    journaled_report,
    read_jsonl_objects,
    report_name,
)

SUMMARY_CSV = "summary.csv"
SUMMARY_MD = "summary.md"
COLUMNS = (
    "id",
    "claim",
    "verdict",
    "abstained",
    "confidence",
    "kept_documents",
    "seconds",
    "report",
    "error",
    "gold_label",
    "agrees",
)


@dataclass(frozen=True, kw_only=True)
class SummaryRow:
    """One claim of a batch run (see the module docstring for the columns)."""

    id: str
    claim: str
    verdict: str
    abstained: bool = False  # the judge declined to decide (the verdict reads not-enough-evidence)
    confidence: float | None = None
    kept_documents: int | None = None
    seconds: float | None = None
    report: str = ""  # the most readable per-claim report file, relative to the run folder
    error: str = ""
    gold_label: str = ""  # the claims file's label, as written
    agrees: str = ""  # "yes" / "no" / "abstained" / "" (not compared: see the module docstring)
    scale: str = ""  # the verdict's label set (not a column)


def agreement(label: str, scale: str, gold: str, abstained: bool = False) -> str:
    """ "yes"/"no" when the gold label reads as a label of the verdict's set, "abstained" when the
    judge declined to decide (nothing to compare), else ""."""
    if not label or not gold:
        return ""
    if abstained:
        return "abstained"
    sets = [LABEL_SETS[scale]] if scale in LABEL_SETS else []
    sets = sets or [s for s in LABEL_SETS.values() if label in s]
    for labels in sets:
        try:
            return "yes" if labels.parse(gold) == label else "no"
        except InputError:
            continue
    return ""


def _in_file_order(records: Iterable[dict]) -> list[dict]:
    """Records by their claims-file ``line`` (stable: a record without one keeps its place after
    the numbered ones)."""
    rows = list(records)
    last = len(rows) + 1 + max((r["line"] for r in rows if _is_line(r.get("line"))), default=0)
    return sorted(rows, key=lambda r: r["line"] if _is_line(r.get("line")) else last)


def _is_line(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def finish_batch(
    out: Path, formats: Sequence[Format | str] = (), gold: Mapping[str, str] | None = None
) -> list[SummaryRow]:
    """Render missing per-claim formats, write ``summary.csv`` and ``summary.md`` into ``out``,
    and return the rows. ``gold``: claim id -> the claims file's label."""
    gold = gold or {}
    wanted = [Format(f) for f in formats if Format(f) != Format.json]
    rows: list[SummaryRow] = []
    seen: set[str] = set()
    for entry in _in_file_order(journal_entries(out).values()):
        cid = entry["id"]
        seen.add(cid)
        report, problem = journaled_report(out, cid, entry)
        if report is None:
            rows.append(
                SummaryRow(
                    id=cid, claim="", verdict="failed", error=problem, gold_label=gold.get(cid, "")
                )
            )
            continue
        path = out / report_name(cid)
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
        label = (v.label or "") if v.judged else ""
        rows.append(
            SummaryRow(
                id=cid,
                claim=report.claim.text,
                verdict=label or "not judged",
                abstained=bool(label) and v.abstained,
                confidence=v.confidence,
                kept_documents=len(report.documents),
                seconds=round(sum(report.timings.values()), 3),
                report=shown.relative_to(out).as_posix(),
                gold_label=gold.get(cid, ""),
                agrees=agreement(label, v.scale, gold.get(cid, ""), v.abstained),
                scale=v.scale,
            )
        )
    failed: dict[str, SummaryRow] = {}
    for entry in _in_file_order(read_jsonl_objects(out / ERRORS)):
        if entry["id"] not in seen:
            failed[entry["id"]] = SummaryRow(
                id=entry["id"],
                claim="",
                verdict="failed",
                error=str(entry.get("error", "")),
                gold_label=gold.get(entry["id"], ""),
            )
    rows.extend(failed.values())
    atomic_write(out / SUMMARY_CSV, summary_csv(rows))
    atomic_write(out / SUMMARY_MD, summary_markdown(rows))
    return rows


def _cell(value: object) -> str:
    if value is None or value is False:
        return ""
    if value is True:
        return "yes"
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


def agreement_line(rows: Sequence[SummaryRow]) -> str:
    """How the verdicts fare against the claims file's labels: right, wrong (with the share right
    of the verdicts given) and abstained, then what could not be compared ("" when no claim has
    a gold label)."""
    gold = [r for r in rows if r.gold_label]
    if not gold:
        return ""
    right = sum(r.agrees == "yes" for r in gold)
    wrong = sum(r.agrees == "no" for r in gold)
    abstained = sum(r.agrees == "abstained" for r in gold)
    share = (
        f" ({100 * right / (right + wrong):.0f}% of {right + wrong} given)" if right + wrong else ""
    )
    no_verdict = sum(r.verdict in ("not judged", "failed") for r in gold)
    off_scale = len(gold) - right - wrong - abstained - no_verdict
    parts = [f"{no_verdict} without a verdict"] if no_verdict else []
    if off_scale:
        parts.append(f"{off_scale} with a gold label not on the verdict's scale")
    rest = f"; {', '.join(parts)}" if parts else ""
    return (
        f"Against the claims file's labels: {right} right, {wrong} wrong{share}, "
        f"{abstained} abstained{rest}."
    )


def _verdict_counts(rows: Sequence[SummaryRow]) -> str:
    """ "refuted 2, abstained 1, ...": an abstention counted apart from a not-enough-evidence."""
    counts: dict[str, int] = {}
    for r in rows:
        key = "abstained" if r.abstained else r.verdict
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))


def summary_markdown(rows: Sequence[SummaryRow]) -> str:
    """The rows as a Markdown table, each claim linked to its report, plus counts by verdict
    (abstentions apart) and (when the claims file had labels) the gold label, agreement, and the
    line of right, wrong and abstained."""
    line = agreement_line(rows)
    with_gold = bool(line)
    out = [
        "# factseek batch summary\n",
        f"{len(rows)} claims: {_verdict_counts(rows)}\n",
        *([line + "\n"] if line else []),
        "| id | claim | verdict | abstained | confidence | kept documents | seconds |"
        + (" gold label | agrees |" if with_gold else ""),
        "|---|---|---|---|---|---|---|" + ("---|---|" if with_gold else ""),
    ]
    for r in rows:
        claim = markdown_text(clip_text(r.claim, 120)) or markdown_text(r.error)
        if r.report:
            claim = f"[{claim}](<{r.report}>)"
        conf = "" if r.confidence is None else f"{r.confidence:.2f}"
        docs = "" if r.kept_documents is None else str(r.kept_documents)
        secs = "" if r.seconds is None else f"{r.seconds:.1f}"
        gold = f" {markdown_text(r.gold_label)} | {r.agrees} |" if with_gold else ""
        abstained = "yes" if r.abstained else ""
        out.append(
            f"| {markdown_text(r.id)} | {claim} | {markdown_text(r.verdict)} | {abstained} "
            f"| {conf} | {docs} | {secs} |{gold}"
        )
    return "\n".join(out) + "\n"
