"""How verdicts, answers and reviews read in words, for the reports and the workbench.

- ``precision_words``: what a verdict's confidence means where it was measured ("when factseek
  says Refuted it was right 71% of the time (AVeriTeC dev, 500 claims)").
- ``answer_kind``: "no evidence" (``unknown``) and "conflicting evidence" (``conflicting``) read
  differently; so do "no independent evidence" (only the claimant's own words or copies), "only
  letters, opinion or blogs" and "too weak to decide" (evidence below the rules' level).
- ``abstained_words``: an abstention with the strongest card for the claim and against it.
- ``review_lines``: who decided the verdict (approved, set), or that no one did, what it rests
  on (a reviewed verdict: the cards the review cites, ``ReviewRecord.citations``), and what the
  machine said.
- ``verdict_sentence``: the verdict in one short sentence, its reason in plain words ("Not enough
  evidence: the best supporting card (E2, 0.59) is too weak, and E1 reads against it"); the
  numbers come after it, elsewhere.
- ``judge_words``: which judge gave the verdict ("the stance rules", a trained judge, a reviewer).
- ``by_reviewer``: whether a confidence rests on a stance a reviewer set (then it is not shown:
  the reviewer's stance is certain by construction).
- ``reliability_line``: how often the stance model's readings were right on real-world evidence
  (``stance.reliability``), shown above the cards.
- ``answer_reliability_line``: how often the claim's own question was answered rightly where
  the verdict rules were measured (``judge.rules.answer_words``), shown with the answers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from factseek.constraints.hits import PAGE_REMOVED
from factseek.judge.verdict import (
    ONLY_CLAIMANT,
    ONLY_OPINION,
    OTHER_THING,
    TOO_WEAK,
    named,
    strongest,
)
from factseek.review.ratings import label_words
from factseek.types import REVIEWER_PREFIX, Answer, Evidence, Report, Verdict


def reliability_line(report: Report) -> str:
    """ "How far to trust a card's stance: on real-world evidence ..., a “supports” reading was
    right 63% of the time ...", or "" when the report's stance model measured none or no card
    has a stance."""
    said = str(report.config.get("stance_reliability") or "")
    if not said or not any(e.stance for e in report.evidence):
        return ""
    return f"How far to trust a card's stance: {said}."


def answer_reliability_line(report: Report) -> str:
    """ "How far to trust an answer: where it was measured (...), when the claim itself was
    answered “yes” it was supported 56% of the time ...", or "" when the report's rules
    measured none or nothing was answered yes or no."""
    said = str(report.config.get("answer_reliability") or "")
    if not said or not any(a.answer in ("yes", "no") for a in report.answers):
        return ""
    return f"How far to trust an answer: {said}."


def by_reviewer(report: Report, ids: Sequence[str]) -> bool:
    """Whether any of the cards ``ids`` has a stance a reviewer set: a confidence computed from
    it is not the model's, and is not shown."""
    mine = {e.id for e in report.evidence if e.stance and e.stance.set_by}
    return bool(mine.intersection(ids))


def abstained_words(report: Report) -> str:
    """ "not enough evidence to decide", with the strongest card for the claim and against it."""

    def best(label: str) -> str:
        e = strongest(report.evidence, label)
        return "none" if e is None else named(e, label)

    return (
        f"not enough evidence to decide (strongest for: {best('supports')};"
        f" against: {best('refutes')})"
    )


def precision_words(v: Verdict) -> str:
    """What the confidence means where it was measured: "when factseek says refuted it was right
    71% of the time (AVeriTeC dev, 500 claims)" ("" when the verdict has no measured precision)."""
    if v.precision is None or not v.judged:
        return ""
    basis = f" ({v.precision_basis})" if v.precision_basis else ""
    return (
        f"when factseek says {label_words(v.label or '')} it was right"
        f" {100 * v.precision:.0f}% of the time{basis}"
    )


def answer_kind(a: Answer) -> tuple[str, str]:
    """(class, words) of an answer: "unknown" (no usable evidence) and "conflicting" (evidence
    on both sides) read differently. Reports from before "conflicting" existed wrote it as
    "unknown" with a rationale starting "conflicting evidence"."""
    if a.answer == "conflicting" or (
        a.answer == "unknown" and a.rationale.startswith("conflicting evidence")
    ):
        return "conflicting", "conflicting evidence"
    if a.answer == "unknown":
        if a.rationale.startswith(ONLY_CLAIMANT):
            return "unknown", "no independent evidence"
        if a.rationale.startswith(OTHER_THING):
            return "unknown", "its figure is of another thing"
        if a.rationale.startswith(ONLY_OPINION):
            return "unknown", "only letters, opinion or blogs"
        if a.rationale.startswith(TOO_WEAK):
            return "unknown", "too weak to decide"
        return "unknown", "no evidence"
    return a.answer, a.answer


def review_lines(report: Report) -> list[str]:
    """Who decided the verdict (or that no one did), in plain words, one line each ([] for a
    report that never went through review)."""
    r = report.review
    if r is None:
        return []
    out: list[str] = []
    when = r.at[:16].replace("T", " ") + " UTC" if r.at else ""
    rating = f" rated {r.rating_name} on the {r.scale} scale" if r.rating_name else ""
    if r.status == "approved":
        out.append(f"Reviewed: {r.reviewer} approved the machine's verdict on {when};{rating}.")
    elif r.status == "set":
        out.append(f"Reviewed: {r.reviewer} set the verdict on {when}:{rating or ' ' + r.label}.")
    elif r.status == "stale":
        out.append(
            f"Automated verdict, not reviewed: {r.reviewer} approved {label_words(r.label)} on"
            f" {when}, but corrections since changed the machine's verdict."
        )
    else:
        out.append("Automated verdict, not reviewed by a person.")
    if r.status in ("approved", "set"):
        out.append(rests_on_line(report))
    if r.note:
        out.append(f"Reviewer's note: {r.note}")
    m = r.machine
    if m is not None and (
        r.status == "set" or (m.label, m.judged) != (report.verdict.label, report.verdict.judged)
    ):
        out.append(
            f"The machine said: {m} by {m.judge}." if m.judged else f"The machine said: {m}."
        )
    return out


def rests_on_line(report: Report) -> str:
    """What a reviewed verdict rests on: "Rests on E7 (site.example), E8 (...): the cards
    maria confirmed." (the review's ``citations``, every renderer and the ClaimReview alike)."""
    r = report.review
    if r is None:
        return ""
    ids = r.citations
    if not ids:
        return (
            f"Rests on {r.reviewer}'s judgement alone: no card confirmed, so a ClaimReview cites"
            " none."
        )
    where = {e.id: e.domain or e.url for e in report.evidence}
    where.update({f"S{i}": s.url for i, s in enumerate(report.summaries, 1)})
    cited = ", ".join(f"{i} ({where[i]})" if where.get(i) else i for i in ids)
    whose = (
        f"the cards {r.reviewer} confirmed"
        if r.status == "set"
        else f"the cards the machine's verdict cites, which {r.reviewer} approved, and those confirmed"
    )
    return f"Rests on {cited}: {whose}."


def judge_words(v: Verdict) -> str:
    """Who gave the verdict, in words: "the stance rules (stance-rules:mpnet)", "the trained
    judge my-judge", "the reviewer maria", or "no judge" when it was not judged."""
    if not v.judged:
        return "no judge"
    if v.judge.startswith(REVIEWER_PREFIX):
        return f"the reviewer {v.judge[len(REVIEWER_PREFIX) :]}"
    if v.judge == "stance-rules" or v.judge.startswith("stance-rules:"):
        return f"the stance rules, built in ({v.judge})"
    return f"the judge {v.judge}" if v.judge else "an unnamed judge"


_LEANS = re.compile(r"the evidence leans ([a-z-]+) with probability")
_SIDE_OF = {"supported": "supports", "refuted": "refutes"}


def _how(e: Evidence, side: str) -> str:
    who = e.stance.set_by if e.stance is not None else ""
    p = float(e.stance.probs.get(side, 0.0)) if e.stance is not None else 0.0
    return f"set by {who}" if who else f"{p:.2f}"


def _weak(e: Evidence, side: str) -> str:
    """Why the best card of a side did not decide: "the best supporting card (E2, 0.59) is too
    weak"; a stance a reviewer set is no probability: "E4 (set by maria) reads against it, but
    the rules need more to decide"."""
    if e.stance is not None and e.stance.set_by:
        reads = "supports it" if side == "supports" else "reads against it"
        return f"{e.id} (set by {e.stance.set_by}) {reads}, but the rules need more to decide"
    best = "the best supporting card" if side == "supports" else "the best card against it"
    return f"{best} ({e.id}, {_how(e, side)}) is too weak"


def _ids(ids: Sequence[str]) -> str:
    ids = list(ids)
    return ids[0] if len(ids) == 1 else ", ".join(ids[:-1]) + " and " + ids[-1]


def verdict_sentence(report: Report) -> str:
    """The verdict and its reason in one short sentence (see the module docstring)."""
    v, r = report.verdict, report.review
    if r is not None and r.status == "set":
        words = r.rating_name or label_words(r.label)
        if not r.citations:
            return f"{words}: set by {r.reviewer}, who has confirmed no card."
        return f"{words}: set by {r.reviewer}, resting on {_ids(r.citations)}, the cards they confirmed."
    if not v.judged:
        return f"Not judged: {v.explanation or 'no judge gave a verdict'}."
    words = label_words(v.label or "")
    sup, ref = strongest(report.evidence, "supports"), strongest(report.evidence, "refutes")
    if v.label == "supported" and sup is not None:
        why = f"{sup.id} ({_how(sup, 'supports')}) supports it"
        more = [i for i in v.evidence_ids if i != sup.id]
        why += f", as do {_ids(more)}" if more else ""
        against = (
            f"{ref.id} reads against it, too weakly to count" if ref else "none reads against it"
        )
        return f"{words}: {why}; {against}."
    if v.label == "refuted" and ref is not None:
        why = f"{ref.id} ({_how(ref, 'refutes')}) reads against it"
        return f"{words}: {why}" + (f", though {sup.id} supports it." if sup else ".")
    if v.label == "conflicting-evidence" and sup is not None and ref is not None:
        return (
            f"{words}: {sup.id} ({_how(sup, 'supports')}) supports it and"
            f" {ref.id} ({_how(ref, 'refutes')}) reads against it."
        )
    if v.label != "not-enough-evidence":
        return f"{words}: the verdict of {judge_words(v)}."
    lean = _LEANS.search(v.rationale or v.explanation or "")
    side = _SIDE_OF.get(lean.group(1), "") if lean else ""
    if v.abstained and side == "refutes" and ref is not None:
        return f"{words}: {_weak(ref, 'refutes')}" + (
            f", and {sup.id} supports it." if sup else "."
        )
    if v.abstained and lean and not side and sup is not None and ref is not None:
        return (
            f"{words}: {sup.id} supports it and {ref.id} reads against it, neither surely enough"
            " to say the evidence conflicts."
        )
    open_ = [a for a in report.answers if a.answer not in ("yes", "no", "conflicting")]
    if not v.abstained and any(a.answer == "yes" for a in report.answers) and open_:
        return (
            f"{words}: part of the claim is supported, but {len(open_)} of its"
            f" {len(report.answers)} questions have no answer."
        )
    if sup is not None:
        return f"{words}: {_weak(sup, 'supports')}" + (
            f", and {ref.id} reads against it." if ref else "."
        )
    if ref is not None:
        return f"{words}: {_weak(ref, 'refutes')}."
    if report.evidence:
        return f"{words}: no card takes a side."
    return f"{words}: no evidence was found."


def machine_answers(report: Report) -> dict[str, Answer]:
    return {a.question: a for a in report.review.machine_answers} if report.review else {}


def answer_cell(a: Answer, machine: Answer | None) -> str:
    words = answer_kind(a)[1]
    if machine is None:
        return words
    was = answer_kind(machine)[1]
    conf = f" {machine.confidence:.2f}" if machine.confidence is not None else ""
    return f"{words} (after corrections; the machine said {was}{conf})"


# ----------------------------------------------------------------------------- constraint codes in words

#: What a constraint decision's reason code means, in words for the readable formats.
REASON_WORDS = {
    "after-claim-date": "published after the claim's day",
    "claim-day": "published on the claim's day",
    "modified-after-claim": "modified on or after the claim's day",
    "guessed-date": "publication date only guessed",
    "undated": "no publication date",
    "date-conflict": "conflicting publication dates",
    "excluded-site": "excluded site",
    "excluded-marker": "URL marks a fact-check",
    "pdf": "PDF file",
    "video": "video page",
    "over-k": "beyond the first k kept results",
}

#: What a search filter is about, in words.
FILTER_WORDS = {"date": "publication date", "domain": "excluded sites"}


def reason_words(reason: str) -> str:
    """A reason code in plain words: ``"excluded-site:snopes.com"`` -> ``"excluded site
    (snopes.com)"``; an unknown code is returned as it is."""
    code, _, detail = reason.partition(":")
    if code == "page" and detail:  # removed after fetching, by the page's own dates
        return f"{reason_words(detail)} (by the page's own dates)"
    words = REASON_WORDS.get(code, code)
    if not detail:
        return words
    return f'URL contains "{detail}"' if code == "excluded-marker" else f"{words} ({detail})"


def stage_words(stage: str) -> str:
    """A funnel stage in plain words (a page-date removal names its reason in words)."""
    if stage.startswith(PAGE_REMOVED):
        return PAGE_REMOVED + REASON_WORDS.get(
            stage[len(PAGE_REMOVED) :], stage[len(PAGE_REMOVED) :]
        )
    return stage


def filter_words(native: Sequence[str], emulated: Sequence[str]) -> str:
    """Who applied which search filter, in words ("" when there were none)."""

    def names(xs: Sequence[str]) -> str:
        return " and ".join(FILTER_WORDS.get(x, x) for x in xs)

    parts = []
    if native:
        parts.append(f"{names(native)} filtered by the search engine itself")
    if emulated:
        parts.append(f"{names(emulated)} filtered by factseek after the search")
    return "; ".join(parts)
