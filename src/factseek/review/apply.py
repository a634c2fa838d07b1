"""A report as a fact-checker reviews it: corrections applied, answers and verdict recomputed.

``cards(report, corrections)`` gives one ``Card`` per evidence card (``Report.evidence``), or, for
reports without evidence cards, one per summary (ids ``S1``, ``S2``, ... in summary order, quoting
the summary's sentences with their offsets). Corrections in force (``copies.force``: the latest
per card, and one made on a card quoting the same sentence for the same question) mark a card
irrelevant or set its stance, and say who did it and, for a copy, on which card.

``reviewed(report, corrections, ratings)`` is the report as the record stands, still a valid
``Report`` for every renderer:

1. Cards marked irrelevant leave the evidence (and the ids citing them); summaries marked
   irrelevant become ``relevant=False``; a stance set by a reviewer becomes a ``StanceResult``
   with ``model="user:NAME"``, and counts as they read it (a card whose figure the machine found
   said of another thing, ``Evidence.figure_of_other``, is no longer kept from counting as
   support). Each change adds a note naming who, when and what the pipeline said, and each
   correction that reached copies of its card a note naming them ("also applied to E4, E7: same
   sentence, same question").
2. A question with a card dropped or re-stanced is answered again by the report's own rules
   (``judge.verdict.answer_questions``); when the verdict came from those rules (a judge named
   ``stance-rules...``), the verdict is recomputed by them too (``StanceRules.judge``). Another
   judge is not rerun: a note says its verdict predates the corrections.
3. The reviewer's decision (``feedback.decision``): a verdict they *set* replaces the machine's
   (``judge="user:NAME"``, ``scale`` = the organisation's rating scale); a verdict they
   *approved* stays the machine's, and is ``stale`` once the corrections change the machine's
   label.
4. ``Report.review`` (a ``ReviewRecord``) says which of these holds, with the machine's verdict
   as it ran, its answers that changed, the rating on the organisation's scale, and the cards a
   published review cites (``citations``). A verdict the reviewer *set* rests on the cards they
   confirmed (``confirmed``: marked relevant, or a supports/refutes stance they set) and on
   those only: its ``evidence_ids`` and ``citations`` are those cards, never a machine card the
   reviewer did not confirm. An *approved* verdict cites what the machine's verdict cites (the
   cards the approve button names) and the confirmed cards. A card marked irrelevant never.
   Every decision is a note, earlier ones marked "replaced later", each with who and when.

``carry_forward(old, corrections, new)`` brings a reviewer's card corrections from a run to its
rerun wherever the same evidence reappears: the same sentence (``copies.sentence_key``) under the
same question (``decompose.same_question``: a card is judged relevant, or for or against, per
question), on the same page where the rerun still quotes it there, else wherever it does; never
by card id. It lists the corrections that no longer apply and why (a verdict is decided again on
each run's evidence).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Literal
from urllib.parse import urlsplit

from factseek.decompose import same_question
from factseek.review import copies
from factseek.review.feedback import Correction, decision, in_force
from factseek.review.history import ReviewState
from factseek.review.ratings import DEFAULT_RATINGS, RatingScale, label_words
from factseek.summarize.measures import NOT_COUNTED
from factseek.types import (
    REVIEWER_PREFIX,
    STANCE_LABELS,
    Answer,
    Evidence,
    Report,
    ReviewRecord,
    StanceResult,
    Summary,
    Verdict,
    figures_heading,
)

RULES_JUDGE = "stance-rules"  # the name (prefix) of the verdicts the rules recompute


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
    figures: str = ""  # figures for the reviewer to compare, or why the reading was set aside
    relevant: bool = True
    relevance_by: str = ""  # the user who marked relevance ("" = the pipeline's opinion)
    stance_by: str = ""  # the user who set the stance ("" = the model's)
    relevance_from: str = ""  # the card the relevance mark was made on, when not this one
    stance_from: str = ""  # the card the stance was set on, when not this one
    applied_to: tuple[str, ...] = ()  # the copies this card's corrections also reached

    @property
    def figures_heading(self) -> str:
        """How the page introduces ``figures`` (``types.figures_heading``)."""
        return figures_heading(self.figures)


def user_stance(label: str, user: str) -> StanceResult:
    probs = {lab: 1.0 if lab == label else 0.0 for lab in STANCE_LABELS}
    return StanceResult(label=label, probs=probs, model=f"{REVIEWER_PREFIX}{user}")  # type: ignore[arg-type]


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
                figures=e.figures,
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
    """The report's cards with the corrections in force applied (copies included)."""
    corrections = list(corrections)
    force = copies.force(report, corrections)
    reached = copies.reached(report, corrections)
    out = []
    for card in _base_cards(report):
        rel = force.get(("relevance", card.id))
        if rel is not None:
            card = replace(
                card,
                relevant=bool(rel.value["relevant"]),
                relevance_by=rel.user,
                relevance_from=copies.made_on(rel, card.id),
            )
        st = force.get(("stance", card.id))
        if st is not None:
            card = replace(
                card,
                stance=user_stance(st.value["label"], st.user),
                stance_by=st.user,
                stance_from=copies.made_on(st, card.id),
            )
        mine = (c for c in (rel, st) if c is not None and c.target == card.id)
        also = dict.fromkeys(x for c in mine for x in reached.get(c.id, ()))
        out.append(replace(card, applied_to=tuple(also)))
    return out


def _when(c: Correction) -> str:
    return f"{c.user} ({c.created})"


def by_rules(v: Verdict) -> bool:
    """Whether the verdict came from the stance rules (and so is recomputed after corrections)."""
    return v.judged and (v.judge == RULES_JUDGE or v.judge.startswith(RULES_JUDGE + ":"))


def _said(v: Verdict) -> str:
    return str(v) if v.judged else "not judged"


def _recompute(
    report: Report, evidence: list[Evidence], changed: set[str], dropped: set[str]
) -> tuple[tuple[Answer, ...], Verdict, tuple[Answer, ...]]:
    """Answers and verdict after the corrections, and the machine's answers that changed."""
    from factseek.judge.verdict import StanceRules, answer_questions

    def unlisted(a: Answer) -> Answer:
        return replace(a, evidence_ids=tuple(x for x in a.evidence_ids if x not in dropped))

    v = report.verdict
    if not changed or not report.answers:
        if dropped:
            answers = tuple(unlisted(a) for a in report.answers)
            ids = tuple(x for x in v.evidence_ids if x not in dropped)
            return answers, replace(v, evidence_ids=ids), ()
        return report.answers, v, ()
    questions = [q for q in report.questions if q.text in changed]
    fresh = {a.question: a for a in answer_questions(questions, evidence)}
    answers = tuple(fresh.get(a.question) or unlisted(a) for a in report.answers)
    was = tuple(
        a
        for a in report.answers
        if a.question in fresh
        and (a.answer, a.evidence_ids) != (fresh[a.question].answer, fresh[a.question].evidence_ids)
    )
    if by_rules(v):
        rules = StanceRules(v.judge.partition(":")[2])
        verdict = rules.judge(report.claim, report.questions, evidence, answers)
    else:
        verdict = replace(v, evidence_ids=tuple(x for x in v.evidence_ids if x not in dropped))
    return answers, verdict, was


def confirmed(report: Report, force: dict[tuple[str, str], Correction]) -> tuple[str, ...]:
    """Ids of the cards the reviewer confirmed, in the report's order: marked relevant, or given
    a supports/refutes stance, and not marked irrelevant since (for a report without evidence
    cards, the summaries they marked relevant)."""
    if not report.evidence:
        return tuple(
            f"S{i}"
            for i in range(1, len(report.summaries) + 1)
            if (rel := force.get(("relevance", f"S{i}"))) is not None and rel.value["relevant"]
        )
    out = []
    for e in report.evidence:
        rel = force.get(("relevance", e.id))
        st = force.get(("stance", e.id))
        if rel is not None and not rel.value["relevant"]:
            continue
        if (rel is not None and rel.value["relevant"]) or (
            st is not None and st.value["label"] in ("supports", "refutes")
        ):
            out.append(e.id)
    return tuple(out)


def _citations(
    report: Report, verdict: Verdict, status: str, force: dict[tuple[str, str], Correction]
) -> tuple[str, ...]:
    """Card ids a published review cites. A verdict the reviewer set rests on the cards they
    confirmed, and on those only; an approved machine verdict on the cards it cites (what the
    reviewer approved, as the approve button names them) plus the confirmed ones."""
    mine = confirmed(report, force)
    if status == "set":
        return mine
    if report.evidence:
        keep = set(verdict.evidence_ids) | set(mine)
        return tuple(e.id for e in report.evidence if e.id in keep)
    return tuple(f"S{i}" for i, s in enumerate(report.summaries, 1) if s.relevant)


def _decision_words(d: Correction) -> str:
    label = d.value.get("label", "")
    if d.kind == "verdict":
        return f"verdict set to {label_words(label)} by {_when(d)}"
    return f"the machine's verdict {label_words(label)} approved by {_when(d)}"


def _decide(
    report: Report,
    verdict: Verdict,
    corrections: list[Correction],
    force: dict[tuple[str, str], Correction],
    ratings: RatingScale,
    notes: list[str],
) -> tuple[Verdict, ReviewRecord]:
    """The verdict of record and the review record without the machine's fields."""
    d = decision(corrections)
    if d is None:
        return verdict, ReviewRecord(status="machine")
    earlier = [c for c in corrections if c.kind in ("verdict", "approve") and c.id < d.id]
    notes.extend(
        f"{_decision_words(c)}; replaced later" for c in sorted(earlier, key=lambda c: c.id)
    )
    label, scale, note = d.value["label"], d.value["scale"], d.value.get("note", "")
    rating = ratings.resolve(scale, label)
    common = dict(
        reviewer=d.user,
        at=d.created,
        label=rating.label if rating else label,
        scale=ratings.name if rating else scale,
        rating=rating.value if rating else None,
        rating_name=rating.name if rating else "",
        note=note,
    )
    if d.kind == "verdict":
        notes.append(
            f"verdict set by {_when(d)}: {label_words(label) if rating is None else rating.name}"
            f" (the pipeline said {_said(report.verdict)})"
        )
        mine = Verdict(
            judged=True,
            label=str(common["label"]),
            judge=f"{REVIEWER_PREFIX}{d.user}",
            explanation=note,
            scale=str(common["scale"]),
            rationale=note,
            evidence_ids=confirmed(report, force),  # what the reviewer confirmed
        )
        return mine, ReviewRecord(status="set", **common)  # type: ignore[arg-type]
    same = verdict.judged and (verdict.label, verdict.scale) == (label, scale)
    if same:
        notes.append(f"verdict {label} approved by {_when(d)}")
    else:
        notes.append(
            f"verdict {label} approved by {_when(d)}, but the corrections since changed it to"
            f" {_said(verdict)}: not reviewed"
        )
    return verdict, ReviewRecord(status="approved" if same else "stale", **common)  # type: ignore[arg-type]


@dataclass(frozen=True, kw_only=True)
class Reviewed:
    """``reviewed``'s report and the machine's verdict after the corrections (which a verdict the
    reviewer set hides from the report)."""

    report: Report
    machine_now: Verdict


def reviewed(
    report: Report, corrections: Iterable[Correction], ratings: RatingScale = DEFAULT_RATINGS
) -> Report:
    """The report with the corrections in force applied (see the module docstring)."""
    return review_state(report, corrections, ratings).report


def review_state(
    report: Report, corrections: Iterable[Correction], ratings: RatingScale = DEFAULT_RATINGS
) -> Reviewed:
    """``reviewed``'s report with the machine's verdict after the corrections."""
    corrections = list(corrections)
    force = copies.force(report, corrections)
    notes = list(report.notes)
    evidence: list[Evidence] = []
    dropped: set[str] = set()
    changed: set[str] = set()  # questions whose cards were dropped or re-stanced
    for e in report.evidence:
        rel = force.get(("relevance", e.id))
        if rel is not None and not rel.value["relevant"]:
            dropped.add(e.id)
            changed.add(e.question)
            notes.append(
                f"evidence {e.id} ({e.url}) marked irrelevant by {_when(rel)}{copies.note(rel, e.id)}"
            )
            continue
        st = force.get(("stance", e.id))
        if st is not None:
            was = e.stance.label if e.stance else "none"
            lifted = (
                "; its figure, found said of another thing, no longer keeps it from counting"
                if e.figure_of_other and st.value["label"] == "supports"
                else ""
            )
            # the reviewer's reading stands: a card the machine kept from counting as support
            # because its figure is said of another thing counts as they read it
            e = replace(
                e,
                stance=user_stance(st.value["label"], st.user),
                figure_of_other=False,
                figures=e.figures.removesuffix(NOT_COUNTED),
            )
            changed.add(e.question)
            notes.append(
                f"stance of {e.id} set to {st.value['label']} by {_when(st)} (model: {was}){lifted}"
                + copies.note(st, e.id)
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
    by_id = {c.id: c for c in corrections}
    for cid, ids in copies.reached(report, corrections).items():
        c = by_id[cid]
        notes.append(
            f"{c.target} {what(c)} by {c.user}: also applied to {', '.join(ids)}: {copies.WHY}"
        )
    answers, machine_now, was = _recompute(report, evidence, changed, dropped)
    machine = report.verdict
    if changed and machine.judged and not by_rules(machine):
        notes.append(
            f"the verdict of {machine.judge} predates the corrections (only the stance rules are"
            " recomputed): approve or set it"
        )
    elif (machine_now.label, machine_now.judged) != (machine.label, machine.judged):
        notes.append(
            f"with the corrections the rules give {_said(machine_now)}"
            f" (the pipeline said {_said(machine)})"
        )
    carry = force.get(("carry", ""))
    if carry is not None:
        notes.extend(carry_notes(carry))
    verdict, record = _decide(report, machine_now, corrections, force, ratings, notes)
    out = replace(
        report,
        evidence=tuple(evidence),
        summaries=tuple(summaries),
        answers=answers,
        verdict=verdict,
        notes=tuple(notes),
    )
    record = replace(
        record,
        machine=machine,
        machine_answers=was,
        citations=_citations(out, verdict, record.status, force),
    )
    return Reviewed(report=replace(out, review=record), machine_now=machine_now)


def listing(report: Report) -> ReviewState:
    """What the history list shows of a reviewed report (``reviewed``'s output)."""
    rec = report.review or ReviewRecord()
    v = report.verdict
    if rec.status in ("approved", "set"):
        label, scale, words = rec.label, rec.scale, rec.rating_name or label_words(rec.label)
    else:
        label = v.label if v.judged else None
        scale, words = v.scale, label_words(label or "")
    return ReviewState(
        label=label,
        scale=scale,
        status=rec.status,
        reviewer=rec.reviewer if rec.status != "machine" else "",
        words=words,
        cites=rec.citations if rec.status in ("approved", "set") else (),
    )


# ----------------------------------------------------------------------------- reruns


@dataclass(frozen=True, kw_only=True)
class Carried:
    """A correction brought forward: ``kind`` and ``value`` for card ``target`` of the rerun."""

    kind: str
    target: str
    value: dict[str, Any]
    source: Correction


@dataclass(frozen=True, kw_only=True)
class NotCarried:
    """A correction of the earlier run that no longer applies, and why."""

    source: Correction
    card: str = ""
    url: str = ""
    quote: str = ""
    why: str = ""


@dataclass(frozen=True, kw_only=True)
class CarryPlan:
    from_run: int
    carried: tuple[Carried, ...] = ()
    not_carried: tuple[NotCarried, ...] = ()

    def record(self) -> dict[str, Any]:
        """The value of the ``carry`` correction that records this plan on the rerun."""
        return {
            "from_run": self.from_run,
            "carried": [
                {
                    "kind": c.kind,
                    "card": c.target,
                    "from_card": c.source.target,
                    "what": what(c.source),
                    "user": c.source.user,
                }
                for c in self.carried
            ],
            "not_carried": [
                {
                    "kind": n.source.kind,
                    "card": n.card,
                    "url": n.url,
                    "quote": n.quote[:300],
                    "what": what(n.source),
                    "user": n.source.user,
                    "why": n.why,
                }
                for n in self.not_carried
            ],
        }


def what(c: Correction) -> str:
    """A correction in a few words: "marked irrelevant", "stance set to refutes", ..."""
    if c.kind == "relevance":
        return "marked relevant" if c.value.get("relevant") else "marked irrelevant"
    if c.kind == "stance":
        return f"stance set to {c.value.get('label')}"
    if c.kind == "verdict":
        return f"verdict set to {c.value.get('label')}"
    if c.kind == "approve":
        return f"machine verdict {c.value.get('label')} approved"
    return c.kind


def _quote(card: Card) -> str:
    return " ".join(" ".join(q.text for q in card.quotes).split())


def carry_forward(
    old: Report, corrections: Iterable[Correction], new: Report, *, from_run: int = 0
) -> CarryPlan:
    """Which of ``old``'s corrections (run ``from_run``) apply to ``new`` (see the module
    docstring)."""
    corrections = list(corrections)
    old_cards = {c.id: c for c in _base_cards(old)}
    index: dict[str, list[Card]] = {}
    for c in _base_cards(new):
        index.setdefault(copies.sentence_key(_quote(c)), []).append(c)
    carried: list[Carried] = []
    missing: list[NotCarried] = []
    for (kind, target), c in sorted(in_force(corrections).items(), key=lambda kv: kv[1].id):
        if kind in ("verdict", "approve"):
            why = "a verdict is decided on each run's own evidence: approve or set it again"
            missing.append(NotCarried(source=c, why=why))
            continue
        if kind not in ("relevance", "stance"):
            continue
        card = old_cards.get(target)
        if card is None:
            missing.append(NotCarried(source=c, card=target, why="no such card in the run"))
            continue
        quote = _quote(card)
        here = index.get(copies.sentence_key(quote), [])
        asked = copies.question_of(old, card.question)
        same_q = [m for m in here if same_question(asked, copies.question_of(new, m.question))]
        same_q = [m for m in same_q if m.url.strip() == card.url.strip()] or same_q
        if here and not same_q:
            why = "the quote now stands under another question (it is judged per question)"
            missing.append(NotCarried(source=c, card=target, url=card.url, quote=quote, why=why))
            continue
        here = same_q
        if not here:
            why = "this run's cards do not quote it any more"
            missing.append(NotCarried(source=c, card=target, url=card.url, quote=quote, why=why))
            continue
        value = {**c.value, "carried_from": {"run": c.run_id, "card": target}}
        carried.extend(Carried(kind=kind, target=m.id, value=value, source=c) for m in here)
    return CarryPlan(from_run=from_run, carried=tuple(carried), not_carried=tuple(missing))


def carry_notes(carry: Correction) -> list[str]:
    """The report notes for a rerun's ``carry`` record."""
    v = carry.value
    run = v.get("from_run")
    out = [
        f"carried forward from #{run}: {x['from_card']} {x['what']} by {x['user']}"
        f" (now {x['card']})"
        for x in v.get("carried", ())
    ]
    out += [
        f"no longer applies (from #{run}): "
        + (f"{x['card']} " if x.get("card") else "")
        + f"{x['what']} by {x['user']}: {x['why']}"
        for x in v.get("not_carried", ())
    ]
    return out
