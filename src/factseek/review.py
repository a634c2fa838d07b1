"""A report as a fact-checker reviews it: evidence cards with corrections applied.

``cards(report, corrections)`` gives one ``Card`` per evidence card (``Report.evidence``), or, for
reports without evidence cards, one per summary (ids ``S1``, ``S2``, ... in summary order, quoting
the summary's sentences with their offsets). Corrections in force (``feedback.in_force``) mark a
card irrelevant or set its stance, and say who did it.

``reviewed(report, corrections)`` is the report with the corrections applied, still a valid
``Report`` for every renderer: cards marked irrelevant leave the evidence (and the ids citing them),
summaries marked irrelevant become ``relevant=False``, a stance set by a user becomes a
``StanceResult`` with ``model="user:NAME"``, an overridden verdict replaces the pipeline's with
``judge="user:NAME"``; each change adds a note naming who, when and what the pipeline said.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Literal
from urllib.parse import urlsplit

from factseek.feedback import Correction, in_force
from factseek.types import (
    STANCE_LABELS,
    Evidence,
    Report,
    StanceResult,
    Summary,
    Verdict,
)


@dataclass(frozen=True, kw_only=True)
class Quote:
    text: str
    start_char: int | None = None
    end_char: int | None = None
    supported: bool | None = None


@dataclass(frozen=True, kw_only=True)
class Card:
    """One evidence card as the review page shows it (corrections applied)."""

    id: str
    url: str
    source: Literal["evidence", "summary"]
    title: str = ""
    domain: str = ""
    published: _dt.date | None = None
    question: str = ""  # the question it is evidence for ("" when not tied to one)
    quotes: tuple[Quote, ...] = ()
    stance: StanceResult | None = None
    independent: bool = True
    note: str = ""
    relevant: bool = True
    relevance_by: str = ""  # the user who marked relevance ("" = the pipeline's opinion)
    stance_by: str = ""  # the user who set the stance ("" = the model's)


def user_stance(label: str, user: str) -> StanceResult:
    probs = {lab: 1.0 if lab == label else 0.0 for lab in STANCE_LABELS}
    return StanceResult(label=label, probs=probs, model=f"user:{user}")  # type: ignore[arg-type]


def _domain(url: str) -> str:
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return host.removeprefix("www.")


def _base_cards(report: Report) -> list[Card]:
    if report.evidence:
        return [
            Card(
                id=e.id,
                url=e.url,
                source="evidence",
                title=e.title,
                domain=e.domain or _domain(e.url),
                published=e.published,
                question=e.question,
                quotes=(Quote(text=e.text, start_char=e.start_char, end_char=e.end_char),),
                stance=e.stance,
                independent=e.independent,
                note=e.note,
            )
            for e in report.evidence
        ]
    docs = {d.url: d for d in report.documents}
    out = []
    for i, s in enumerate(report.summaries, 1):
        doc = docs.get(s.url)
        quotes = tuple(
            Quote(text=x.text, start_char=x.start_char, end_char=x.end_char, supported=x.supported)
            for x in s.sentences
        ) or (Quote(text=s.text),)
        out.append(
            Card(
                id=f"S{i}",
                url=s.url,
                source="summary",
                title=s.title or (doc.title if doc else ""),
                domain=(doc.domain if doc and doc.domain else _domain(s.url)),
                published=doc.published if doc else None,
                quotes=quotes,
                note=s.note,
                relevant=s.relevant,
            )
        )
    return out


def cards(report: Report, corrections: Iterable[Correction] = ()) -> list[Card]:
    """The report's cards with the corrections in force applied."""
    force = in_force(corrections)
    out = []
    for card in _base_cards(report):
        rel = force.get(("relevance", card.id))
        if rel is not None:
            card = replace(card, relevant=bool(rel.value["relevant"]), relevance_by=rel.user)
        st = force.get(("stance", card.id))
        if st is not None:
            card = replace(card, stance=user_stance(st.value["label"], st.user), stance_by=st.user)
        out.append(card)
    return out


def verdict_override(corrections: Iterable[Correction]) -> Correction | None:
    return in_force(corrections).get(("verdict", ""))


def _when(c: Correction) -> str:
    return f"{c.user} ({c.created})"


def reviewed(report: Report, corrections: Iterable[Correction]) -> Report:
    """The report with the corrections in force applied (see the module docstring)."""
    force = in_force(corrections)
    notes = list(report.notes)
    evidence: list[Evidence] = []
    dropped: set[str] = set()
    for e in report.evidence:
        rel = force.get(("relevance", e.id))
        if rel is not None and not rel.value["relevant"]:
            dropped.add(e.id)
            notes.append(f"evidence {e.id} ({e.url}) marked irrelevant by {_when(rel)}")
            continue
        st = force.get(("stance", e.id))
        if st is not None:
            was = e.stance.label if e.stance else "none"
            e = replace(e, stance=user_stance(st.value["label"], st.user))
            notes.append(
                f"stance of {e.id} set to {st.value['label']} by {_when(st)} (model: {was})"
            )
        evidence.append(e)
    summaries: list[Summary] = []
    for i, s in enumerate(report.summaries, 1):
        rel = force.get(("relevance", f"S{i}")) if not report.evidence else None
        if rel is not None and bool(rel.value["relevant"]) != s.relevant:
            mark = "relevant" if rel.value["relevant"] else "irrelevant"
            s = replace(s, relevant=bool(rel.value["relevant"]))
            notes.append(f"summary S{i} ({s.url}) marked {mark} by {_when(rel)}")
        summaries.append(s)
    answers = tuple(
        replace(a, evidence_ids=tuple(x for x in a.evidence_ids if x not in dropped))
        for a in report.answers
    )
    verdict = report.verdict
    if dropped:
        verdict = replace(
            verdict, evidence_ids=tuple(x for x in verdict.evidence_ids if x not in dropped)
        )
    ov = force.get(("verdict", ""))
    if ov is not None:
        was = verdict.label if verdict.judged else "not judged"
        notes.append(
            f"verdict overridden by {_when(ov)}: {ov.value['label']} (the pipeline said {was})"
        )
        verdict = Verdict(
            judged=True,
            label=ov.value["label"],
            judge=f"user:{ov.user}",
            explanation=ov.value.get("note", ""),
            scale=ov.value["scale"],
            rationale=ov.value.get("note", ""),
            evidence_ids=verdict.evidence_ids,
        )
    return replace(
        report,
        evidence=tuple(evidence),
        summaries=tuple(summaries),
        answers=answers,
        verdict=verdict,
        notes=tuple(notes),
    )
