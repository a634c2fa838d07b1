"""What the review page shows, computed from a stored run (pure functions, no web framework).

The page leads with the verdict (``VerdictView``): the verdict of record coloured by its label,
one short sentence saying why in plain words (``report.words.verdict_sentence``), the judge
that gave it, what it rests on (for a reviewed verdict: the cards the review cites, those the
reviewer confirmed), who approved or set it (or that no one has), the machine's verdict beside
the reviewer's, and then the numbers: the confidence with what it means and the rules' own
rationale. Then one ``Section`` per subquestion with its answer (the
machine's too, when corrections changed it) and evidence cards (the claim itself first). Reports
without evidence cards show their summaries as cards in one section of their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from factseek.judge.verdict import strongest
from factseek.report.words import answer_kind as report_answer_kind
from factseek.report.words import (
    answer_reliability_line,
    by_reviewer,
    judge_words,
    precision_words,
    reliability_line,
    verdict_sentence,
)
from factseek.review import copies
from factseek.review.apply import Card, Reviewed, cards, review_state
from factseek.review.claimreview import refusal
from factseek.review.feedback import Correction, in_force
from factseek.review.ratings import DEFAULT_RATINGS, LABEL_TONE, Rating, RatingScale, label_words
from factseek.types import Answer, Evidence, Query, Question, Report, ReviewRecord, Verdict

VERDICT_TONE = LABEL_TONE  # verdict label -> colour class of the verdict box


def answer_kind(a: Answer) -> tuple[str, str]:
    """(css class, words) of an answer: "No evidence" and "Conflicting evidence" differ."""
    cls, words = report_answer_kind(a)
    return cls, words[:1].upper() + words[1:]


def tone(label: str | None, scale: str = "", ratings: RatingScale = DEFAULT_RATINGS) -> str:
    """The colour class of a verdict label: by its rating on the organisation's scale, else by
    the machine label."""
    if not label:
        return "none"
    if scale == ratings.name:
        r = ratings.resolve(scale, label)
        if r is not None:
            return r.tone
    return LABEL_TONE.get(label, "none")


def confidence_words(v: Verdict) -> str:
    """The confidence with what it means ("" when the judge gives none)."""
    measured = precision_words(v)
    if measured:
        return measured[:1].upper() + measured[1:]
    if v.confidence is None:
        return ""
    return (
        f"Confidence {100 * v.confidence:.0f}%: the judge's own score for this label, not a"
        " measured accuracy"
    )


@dataclass(frozen=True, kw_only=True)
class VerdictView:
    judged: bool
    label: str = ""  # the verdict of record, as an id
    words: str = ""  # ... in words
    tone: str = "none"
    scale: str = ""
    status: str = "machine"  # machine, approved, set, stale
    reviewer: str = ""
    at: str = ""
    note: str = ""
    headline: str = ""  # the verdict and its reason in one short sentence
    confidence: str = ""  # the confidence with what it means ("" = none to show)
    judge: str = ""
    judge_words: str = ""  # who gave the verdict of record, in words
    rests_on: tuple[Card, ...] = ()  # the cards it rests on (reviewed: the review's citations)
    rationale: str = ""
    evidence_ids: tuple[str, ...] = ()
    abstained: bool = False
    best_for: Card | None = None  # abstained: the strongest card on each side
    best_against: Card | None = None
    machine: Verdict | None = None  # the pipeline's verdict as it ran
    machine_now: Verdict | None = None  # the machine's verdict after the corrections
    changed: bool = False  # the corrections changed the machine's verdict
    approve: Rating | None = None  # the rating an approval would record
    can_approve: bool = False
    publish_refusal: str = ""  # why no ClaimReview ("" = it can be published)
    replaces: str = ""  # an approval now replaces this reviewer's label ("" = none set)
    record: ReviewRecord | None = None


@dataclass(frozen=True, kw_only=True)
class Section:
    title: str
    question: Question | None = None
    is_claim: bool = False
    answer: Answer | None = None
    answer_class: str = ""
    answer_words: str = ""
    machine_answer: Answer | None = None  # the pipeline's answer, when corrections changed it
    machine_words: str = ""
    corrected: bool = False  # a reviewer dropped or re-stanced one of its cards
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
    reached: dict[int, tuple[str, ...]] = field(default_factory=dict)  # correction -> copies
    counts: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # what the corrections did (carried forward, recomputed...)
    carry: Correction | None = None  # what this rerun brought forward
    report: Report | None = None  # the reviewed report
    reliability: str = ""  # how often the stance model's readings held on real-world evidence
    answer_reliability: str = ""  # how often the claim's own answer held where it was measured


def _strongest(cs: Sequence[Card], label: str, evidence: Sequence[Evidence]) -> Card | None:
    """The card ``judge.verdict.strongest`` names among the reviewed report's ``evidence`` (its
    corrections applied: no card marked irrelevant, a reviewer's stance in force)."""
    best = strongest(evidence, label)
    return next((c for c in cs if best is not None and c.id == best.id and c.relevant), None)


def verdict_view(
    report: Report, corrections: Sequence[Correction], ratings: RatingScale = DEFAULT_RATINGS
) -> VerdictView:
    """The verdict box of a run (``report`` as stored, before corrections)."""
    state = review_state(report, corrections, ratings)
    return _verdict_view(state, cards(report, corrections), ratings)


def _verdict_view(state: Reviewed, all_cards: Sequence[Card], ratings: RatingScale) -> VerdictView:
    out = state.report
    rec = out.review or ReviewRecord()
    machine = rec.machine or out.verdict
    now = state.machine_now
    approve = ratings.for_machine(now.scale, now.label or "") if now.judged else None
    v = out.verdict
    if rec.status in ("set", "approved"):
        label, words = rec.label, rec.rating_name or label_words(rec.label)
        t = tone(rec.label, rec.scale, ratings)
    else:
        label, words = (v.label or ""), label_words(v.label or "")
        t = tone(v.label, v.scale, ratings)
    if v.abstained and rec.status != "set":
        words = "Not enough evidence to decide"
    reviewed_ = rec.status in ("approved", "set")
    ids = rec.citations if reviewed_ else v.evidence_ids
    by_id = {c.id: c for c in all_cards}
    return VerdictView(
        judged=v.judged,
        label=label,
        words=words if v.judged else "Not judged",
        tone=t if v.judged else "none",
        scale=rec.scale if rec.status in ("approved", "set") and rec.rating_name else v.scale,
        status=rec.status,
        reviewer=rec.reviewer,
        at=rec.at,
        note=rec.note,
        headline=verdict_sentence(out),
        confidence=(
            ""
            if rec.status == "set"
            else "No confidence shown: the verdict rests on stances a reviewer set"
            if by_reviewer(out, v.evidence_ids)
            else confidence_words(v)
        ),
        judge=v.judge,
        judge_words=judge_words(v),
        rests_on=tuple(by_id[i] for i in ids if i in by_id),
        rationale=v.rationale or v.explanation,
        evidence_ids=v.evidence_ids,
        abstained=v.abstained and rec.status != "set",
        best_for=_strongest(all_cards, "supports", out.evidence) if v.abstained else None,
        best_against=_strongest(all_cards, "refutes", out.evidence) if v.abstained else None,
        machine=machine,
        machine_now=now,
        changed=(now.judged, now.label) != (machine.judged, machine.label),
        approve=approve,
        can_approve=now.judged and approve is not None,
        publish_refusal=refusal(rec),
        replaces=rec.reviewer if rec.status == "set" else "",
        record=rec,
    )


def _split(cs: Sequence[Card]) -> tuple[tuple[Card, ...], tuple[Card, ...]]:
    return tuple(c for c in cs if c.relevant), tuple(c for c in cs if not c.relevant)


def _answer_text(a: Answer) -> str:
    words = answer_kind(a)[1]
    # the strength of its cards (docs/verdicts.md), not a measured probability: no percent sign
    return f"{words} · strength {a.confidence:.2f}" if a.confidence is not None else words


def review(
    report: Report, corrections: Sequence[Correction], ratings: RatingScale = DEFAULT_RATINGS
) -> Review:
    """Everything the review page shows of a stored run and its corrections."""
    state = review_state(report, corrections, ratings)
    out = state.report
    all_cards = cards(report, corrections)
    answers = {a.question: a for a in out.answers}
    machine_answers = {a.question: a for a in (out.review.machine_answers if out.review else ())}
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
        a = answers.get(q.text)
        was = machine_answers.get(q.text)
        corrected = any(c.stance_by or (c.relevance_by and not c.relevant) for c in mine)
        sections.append(
            Section(
                title="The claim as a whole" if is_claim else q.text,
                question=q,
                is_claim=is_claim,
                answer=a,
                answer_class=answer_kind(a)[0] if a else "",
                answer_words=(
                    (answer_kind(a)[1] if corrected else _answer_text(a)) if a is not None else ""
                ),
                corrected=corrected,
                machine_answer=was,
                machine_words=_answer_text(was) if was else "",
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
        verdict=_verdict_view(state, all_cards, ratings),
        sections=tuple(sections),
        summary_cards=summary_cards,
        corrections=tuple(sorted(corrections, key=lambda c: -c.id)),
        reached=copies.reached(report, corrections),
        counts={
            "cards": len(all_cards),
            "irrelevant": sum(not c.relevant for c in all_cards),
            "corrections": len(force),
        },
        notes=out.notes[len(report.notes) :],
        carry=force.get(("carry", "")),
        report=out,
        reliability=reliability_line(out),  # "" without stance cards (summary-card runs)
        answer_reliability=answer_reliability_line(out),
    )
