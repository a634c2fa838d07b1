"""What the review page shows, computed from a stored run (pure functions, no web framework).

The page leads with the verdict (``VerdictView``), then one ``Section`` per subquestion with its
answer and evidence cards (the claim itself first). Reports without evidence cards show their
summaries as cards in one section of their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from factseek.feedback import Correction, in_force
from factseek.labels import AVERITEC, POLITIFACT
from factseek.review import Card, cards, verdict_override
from factseek.types import Answer, Query, Question, Report, Verdict

#: verdict label -> colour class of the verdict box
VERDICT_TONE = {
    "true": "good",
    "mostly-true": "good",
    "half-true": "mixed",
    "barely-true": "bad",
    "false": "bad",
    "pants-fire": "worst",
    "supported": "good",
    "refuted": "bad",
    "conflicting-evidence": "mixed",
    "not-enough-evidence": "none",
}
#: every label a fact-checker may choose when overriding, per scale
SCALES: dict[str, tuple[str, ...]] = {
    "politifact": tuple(reversed(POLITIFACT.labels)),
    "averitec": AVERITEC.labels,
}


@dataclass(frozen=True, kw_only=True)
class VerdictView:
    judged: bool
    label: str = ""
    tone: str = "none"
    scale: str = ""
    confidence: float | None = None
    judge: str = ""
    rationale: str = ""
    evidence_ids: tuple[str, ...] = ()
    override: Correction | None = None
    original: Verdict | None = None  # the pipeline's verdict when overridden


@dataclass(frozen=True, kw_only=True)
class Section:
    title: str
    question: Question | None = None
    is_claim: bool = False
    answer: Answer | None = None
    queries: tuple[Query, ...] = ()
    hits: int = 0
    kept: int = 0
    cards: tuple[Card, ...] = ()
    irrelevant: tuple[Card, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Review:
    verdict: VerdictView
    sections: tuple[Section, ...]
    summary_cards: bool  # True: cards are summaries, shown in the last section
    corrections: tuple[Correction, ...] = ()
    counts: dict[str, int] = field(default_factory=dict)


def verdict_view(report: Report, corrections: Sequence[Correction]) -> VerdictView:
    v = report.verdict
    ov = verdict_override(corrections)
    if ov is not None:
        return VerdictView(
            judged=True,
            label=ov.value["label"],
            tone=VERDICT_TONE.get(ov.value["label"], "none"),
            scale=ov.value["scale"],
            judge=f"{ov.user} (override)",
            rationale=ov.value.get("note", ""),
            evidence_ids=v.evidence_ids,
            override=ov,
            original=v,
        )
    if not v.judged:
        return VerdictView(judged=False, rationale=v.explanation)
    return VerdictView(
        judged=True,
        label=v.label or "",
        tone=VERDICT_TONE.get(v.label or "", "none"),
        scale=v.scale,
        confidence=v.confidence,
        judge=v.judge,
        rationale=v.rationale or v.explanation,
        evidence_ids=v.evidence_ids,
    )


def _split(cs: Sequence[Card]) -> tuple[tuple[Card, ...], tuple[Card, ...]]:
    return tuple(c for c in cs if c.relevant), tuple(c for c in cs if not c.relevant)


def review(report: Report, corrections: Sequence[Correction]) -> Review:
    all_cards = cards(report, corrections)
    answers = {a.question: a for a in report.answers}
    by_question: dict[str, list[Query]] = {}
    stats: dict[str, tuple[int, int]] = {}
    for r in report.results:
        by_question.setdefault(r.query.question, []).append(r.query)
        hits, kept = stats.get(r.query.question, (0, 0))
        stats[r.query.question] = (hits + len(r.hits), kept + sum(d.kept for d in r.decisions))
    summary_cards = bool(all_cards) and all_cards[0].source == "summary"
    sections: list[Section] = []
    claim_text = report.claim.text
    placed: set[str] = set()
    for q in report.questions:
        is_claim = q.source == "claim" or q.text == claim_text
        mine = [
            c
            for c in all_cards
            if not summary_cards
            and (c.question == q.text or (is_claim and c.question in ("", claim_text)))
        ]
        placed.update(c.id for c in mine)
        good, bad = _split(mine)
        hits, kept = stats.get(q.text, (0, 0))
        sections.append(
            Section(
                title="The claim as a whole" if is_claim else q.text,
                question=q,
                is_claim=is_claim,
                answer=answers.get(q.text),
                queries=tuple(by_question.get(q.text, ())),
                hits=hits,
                kept=kept,
                cards=good,
                irrelevant=bad,
            )
        )
    rest = [c for c in all_cards if c.id not in placed]
    if rest:
        good, bad = _split(rest)
        title = "Evidence (summaries of the kept documents)" if summary_cards else "Other evidence"
        sections.append(Section(title=title, cards=good, irrelevant=bad))
    force = in_force(corrections)
    return Review(
        verdict=verdict_view(report, corrections),
        sections=tuple(sections),
        summary_cards=summary_cards,
        corrections=tuple(sorted(corrections, key=lambda c: -c.id)),
        counts={
            "cards": len(all_cards),
            "irrelevant": sum(not c.relevant for c in all_cards),
            "corrections": len(force),
        },
    )
