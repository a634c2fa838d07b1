"""Corrections become training data: ``export(history, log, out)`` writes JSONL files that the
training commands' loaders read as they are (docs/web-app.md shows each format).

- ``decompose.jsonl``: each run's subquestions as the fact-checker left them (the latest
  ``questions`` correction), in ClaimDecomp's chat format (``messages``: user = ``SPEAKER stated
  on MONTH D, YYYY in VENUE:`` + newline + the claim; assistant = the questions, each ending in
  "?", joined by ", "), which ``datasets.claims.load_claimdecomp`` reads (``eval decompose``).
- ``stance.jsonl``: one (question, evidence, label) pair per card the fact-checker judged:
  a stance they set, or ``nei`` for a card they marked irrelevant. Fields ``question``,
  ``evidence``, ``label`` (supports / refutes / nei), plus ``claim`` (= ``question``), so the
  FEVER loader (``judge train --format fever``) reads the file too.
- ``rewrite_queries.jsonl`` + ``rewrite_corpus.jsonl``: accepted queries for the rewriter in the
  ``jsonl`` retrieval format (``rewrite bfs --format jsonl``): a query (what was searched for a
  question; cards tied to no question count for the claim's own query) is
  accepted when the fact-checker confirmed at least one of its cards (marked relevant, or a
  supports/refutes stance); ``relevant`` lists those cards' URLs; the corpus is every document of
  the runs involved (``id`` = URL, ``title``, ``text``).
- ``verdicts.jsonl``: reviewers' verdicts (set, or a machine verdict approved and not changed
  since) on the PolitiFact scale in ClaimDecomp's labelled format (``example_id``, ``claim``,
  ``person``, ``venue``, ``label``, ``justification`` = the note, ``annotations`` = the run's
  questions) for ``judge train --format claimdecomp``.
- ``verdicts_averitec.json``: the same on the AVeriTeC scale as one JSON array in AVeriTeC's own
  format (``claim``, ``claim_date`` DD-MM-YYYY, ``speaker``, ``label`` such as ``Refuted``,
  ``justification`` = the note, ``questions`` = the run's questions with no answers), which
  ``datasets.claims.load_averitec`` reads (``--format averitec``). A label of the
  organisation's own scale counts on a machine scale when it stands for exactly one label there
  (``factseek.review.ratings``).
- ``claimreview.jsonl``: one schema.org ClaimReview per run whose verdict a named reviewer
  approved or set (``review.claimreview.claim_review``; never a machine verdict).

Every file is written by ``review.claimreview.dumps``: ``<``, ``>`` and ``&`` inside strings are
``\\u`` escapes, so a line can be embedded in a page as it is (JSON readers see the same text).
- ``machine_verdicts.jsonl``: every finished run's machine verdict as it ran, for research,
  marked ``"automated": true`` (``web.claimreview.automated_verdict``), never as a review.

Carried corrections (a rerun's copies of an earlier run's, ``carried_from``) are not exported
again, nor the cards a correction reached because they quote the same sentence for the same
question (``review.copies``): each judgement is one training example, and its row lists those
cards (``applied_to``). They count as confirmed for ``rewrite_queries.jsonl``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factseek.errors import InputError
from factseek.files import atomic_write
from factseek.review import copies
from factseek.review.apply import Card, cards, reviewed
from factseek.review.feedback import Correction, FeedbackLog, by_run, decision
from factseek.review.history import History
from factseek.review.ratings import DEFAULT_RATINGS, MACHINE_SCALES, RatingScale
from factseek.types import Claim, Report

FILES = (
    "decompose.jsonl",
    "stance.jsonl",
    "rewrite_queries.jsonl",
    "rewrite_corpus.jsonl",
    "verdicts.jsonl",
    "claimreview.jsonl",
    "machine_verdicts.jsonl",
)
AVERITEC_FILE = "verdicts_averitec.json"
#: factseek's AVeriTeC label -> the data set's own spelling.
_AVERITEC_NAMES = {
    "supported": "Supported",
    "refuted": "Refuted",
    "not-enough-evidence": "Not Enough Evidence",
    "conflicting-evidence": "Conflicting Evidence/Cherrypicking",
}


@dataclass(frozen=True, kw_only=True)
class ExportCounts:
    runs: int = 0  # runs with at least one correction
    decompose: int = 0
    stance: int = 0
    queries: int = 0
    corpus: int = 0
    verdicts: int = 0
    averitec: int = 0  # reviewers' verdicts on the AVeriTeC scale
    claimreviews: int = 0  # runs whose verdict a named reviewer approved or set
    machine: int = 0  # machine verdicts (automated, for research)
    skipped: Mapping[str, int] = field(default_factory=dict)  # reason -> corrections not exported

    def line(self) -> str:
        skipped = ", ".join(f"{k} {v}" for k, v in self.skipped.items()) or "none"
        return (
            f"{self.runs} corrected runs: {self.decompose} decomposition examples, {self.stance}"
            f" stance pairs, {self.queries} accepted queries over {self.corpus} documents,"
            f" {self.verdicts} PolitiFact and {self.averitec} AVeriTeC verdicts,"
            f" {self.claimreviews} ClaimReviews; {self.machine} automated machine verdicts;"
            f" skipped: {skipped}"
        )


def _question(text: str) -> str:
    text = " ".join(text.split()).rstrip(",")
    return text if text.endswith("?") else text + "?"


def stated(claim: Claim) -> str:
    """ClaimDecomp's 'stated on April 7, 2020 in a press briefing:' for a claim ('' if undated)."""
    d = claim.date
    if d is None:
        return ""
    where = f" in {' '.join(claim.venue.split())}" if claim.venue else ""
    return f"stated on {d:%B} {d.day}, {d.year}{where}:"


def decompose_example(claim: Claim, questions: Iterable[str]) -> dict[str, Any]:
    speaker = " ".join((claim.speaker or "Unknown").split())
    head = f"{speaker} {stated(claim)}" if claim.date else speaker
    qs = [_question(q) for q in questions if " ".join(q.split()) != claim.text]
    return {
        "messages": [
            {"role": "user", "content": f"{head}\n“{claim.text}”"},
            {"role": "assistant", "content": ", ".join(qs)},
        ]
    }


def _stance_rows(
    report: Report,
    run_cards: list[Card],
    force: Mapping[Any, Correction],
    reached: Mapping[int, tuple[str, ...]],
):
    for card in run_cards:
        rel = force.get(("relevance", card.id))
        st = force.get(("stance", card.id))
        if rel is not None and not rel.value["relevant"]:
            label, by = "nei", rel
        elif st is not None:
            label, by = st.value["label"], st
        else:
            continue
        if "carried_from" in by.value:  # the earlier run exported this judgement already
            continue
        if by.target != card.id:  # a copy's judgement: exported once, from the card it was made on
            continue
        question = card.question or report.claim.text
        yield {
            "question": question,
            "claim": question,
            "evidence": " ".join(q.text for q in card.quotes),
            "label": label,
            "url": card.url,
            "card": card.id,
            "applied_to": list(reached.get(by.id, ())),
            "user": by.user,
            "created": by.created,
        }


def _confirmed(card: Card, force: Mapping[Any, Correction]) -> bool:
    rel = force.get(("relevance", card.id))
    if rel is not None:
        return bool(rel.value["relevant"])
    st = force.get(("stance", card.id))
    return st is not None and st.value["label"] in ("supports", "refutes")


def _machine_label(v: Correction, ratings: RatingScale) -> list[tuple[str, str]]:
    """(machine scale, label) pairs a reviewer's decision stands for, for the training files."""
    scale, label = v.value["scale"], v.value["label"]
    if scale in MACHINE_SCALES or v.kind == "approve":
        return [(scale, label)]
    rating = ratings.resolve(scale, label)
    if rating is None:
        return [(scale, label)]
    out = []
    for name in MACHINE_SCALES:
        mine = [m.partition(":")[2] for m in rating.machine if m.startswith(name + ":")]
        if len(mine) == 1:
            out.append((name, mine[0]))
    return out or [(scale, label)]


def export(
    history: History,
    log: FeedbackLog,
    out: Path,
    *,
    ratings: RatingScale = DEFAULT_RATINGS,
    organisation: str = "",
) -> ExportCounts:
    """Write the files (``FILES``, ``AVERITEC_FILE``) under ``out`` and return what went into
    each. ``ratings`` is the organisation's scale, ``organisation`` the ClaimReview author."""
    from factseek.review.claimreview import automated_verdict, claim_review, dumps, refusal

    out.mkdir(parents=True, exist_ok=True)
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in FILES}
    corpus: dict[str, dict[str, Any]] = {}
    skipped: dict[str, int] = {}
    averitec: list[dict[str, Any]] = []
    corrected = by_run(log.all())
    for run_id in sorted(corrected):
        try:
            run = history.get(run_id)
        except InputError:  # the run was deleted after the correction: nothing to learn from
            skipped["run deleted"] = skipped.get("run deleted", 0) + len(corrected[run_id])
            continue
        report = run.report
        if report is None:
            continue
        force = copies.force(report, corrected[run_id])
        run_cards = cards(report, corrected[run_id])
        q = force.get(("questions", ""))
        if q is not None:
            rows["decompose.jsonl"].append(
                {**decompose_example(report.claim, q.value["after"]), "run_id": run_id}
            )
        reached = copies.reached(report, corrected[run_id])
        for row in _stance_rows(report, run_cards, force, reached):
            rows["stance.jsonl"].append({**row, "run_id": run_id})
        accepted = False
        sent = {r.query.question: r.query.text for r in report.results}
        claim_text = report.claim.text
        for i, question in enumerate(report.questions):
            is_claim = question.source == "claim" or question.text == claim_text
            relevant = [
                c.url
                for c in run_cards
                if _confirmed(c, force)
                and (c.question == question.text or (is_claim and c.question in ("", claim_text)))
            ]
            if relevant:
                accepted = True
                rows["rewrite_queries.jsonl"].append(
                    {
                        "id": f"run{run_id}-q{i + 1}",
                        "query": sent.get(question.text, question.text),
                        "relevant": sorted(set(relevant)),
                        "run_id": run_id,
                    }
                )
        if accepted:
            for d in report.documents:
                corpus.setdefault(d.url, {"id": d.url, "title": d.title, "text": d.text})
        v = decision(corrected[run_id])
        mine = reviewed(report, corrected[run_id], ratings)
        if v is not None and mine.review is not None and mine.review.status == "stale":
            skipped["approval outdated"] = skipped.get("approval outdated", 0) + 1
            v = None
        for scale, label in _machine_label(v, ratings) if v is not None else ():
            if scale == "politifact":
                rows["verdicts.jsonl"].append(_verdict_row(run_id, report, v, label))
            elif scale == "averitec":
                averitec.append(_averitec_row(report, v, label))
            else:
                key = f"verdict on the {scale} scale"
                skipped[key] = skipped.get(key, 0) + 1
        if v is not None and not refusal(mine.review):
            cr = claim_review(mine, organisation=organisation)
            rows["claimreview.jsonl"].append({**cr, "run_id": run_id})
    for run_id in history.ids():
        try:
            report = history.get(run_id).report
        except InputError:  # deleted meanwhile
            continue
        if report is not None:
            rows["machine_verdicts.jsonl"].append({**automated_verdict(report), "run_id": run_id})
    rows["rewrite_corpus.jsonl"] = list(corpus.values())
    for name, items in rows.items():
        atomic_write(out / name, "".join(dumps(r) + "\n" for r in items))  # safe in a page
    atomic_write(out / AVERITEC_FILE, dumps(averitec, indent=1) + "\n")
    return ExportCounts(
        runs=len(corrected),
        decompose=len(rows["decompose.jsonl"]),
        stance=len(rows["stance.jsonl"]),
        queries=len(rows["rewrite_queries.jsonl"]),
        corpus=len(corpus),
        verdicts=len(rows["verdicts.jsonl"]),
        averitec=len(averitec),
        claimreviews=len(rows["claimreview.jsonl"]),
        machine=len(rows["machine_verdicts.jsonl"]),
        skipped=skipped,
    )


def _averitec_row(report: Report, v: Correction, label: str) -> dict[str, Any]:
    c = report.claim
    return {
        "claim": c.text,
        "claim_date": c.date.strftime("%d-%m-%Y") if c.date else None,
        "speaker": c.speaker,
        "label": _AVERITEC_NAMES.get(label, label),
        "justification": v.value.get("note", ""),
        "questions": [
            {"question": q.text, "answers": []} for q in report.questions if q.source != "claim"
        ],
        "user": v.user,
        "created": v.created,
    }


def _verdict_row(run_id: int, report: Report, v: Correction, label: str) -> dict[str, Any]:
    c = report.claim
    return {
        "example_id": f"run{run_id}",
        "claim": c.text,
        "person": c.speaker or "",
        "venue": stated(c) or (c.venue or ""),
        "label": label,
        "justification": v.value.get("note", ""),
        "annotations": [{"questions": [q.text for q in report.questions if q.source != "claim"]}],
        "user": v.user,
        "created": v.created,
    }
