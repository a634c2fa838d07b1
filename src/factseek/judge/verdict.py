"""Answers to the subquestions and a 4-way AVeriTeC verdict, from evidence stances, by rules.

``answer_questions(questions, evidence) -> [Answer]``: one answer per question, from the
question's own evidence cards (``Evidence.question``) and their stance labels:

1. *Supporting* cards are independent cards labelled ``supports``; *refuting* cards are cards
   labelled ``refutes`` (the claimant's own words and syndicated copies never confirm, but an
   admission still refutes).
2. **yes** when the question has supporting and no refuting cards; **no** when it has refuting
   and no supporting cards; **unknown** otherwise, with the reason: "no evidence found" (no
   card), "conflicting evidence" (both), or "only the claimant's own words or copies" (only
   non-independent support). The confidence of yes/no is the strongest card's probability for
   that label; the answer cites every card it rests on, strongest first.

``StanceRules.judge(claim, questions, evidence, answers) -> Verdict`` on the AVeriTeC scale, first rule
that applies (questions are the claim and its yes/no subquestions, "yes" meaning the claim's
part holds):

3. **none found**: no question is answered yes or no and none has conflicting evidence ->
   ``not-enough-evidence`` (confidence: 1 minus the strongest card's stance strength).
4. **one refuted**: some question is answered no -> ``refuted`` (confidence: the strongest "no").
5. **conflict**: some question has conflicting evidence -> ``conflicting-evidence``
   (confidence: the weaker of the strongest support and the strongest refutation).
6. **all supported**: every question with any card is answered yes, and the claim itself or at
   least half of the questions are -> ``supported`` (confidence: the weakest "yes").
7. otherwise (support for some parts, nothing for the rest) -> ``not-enough-evidence``.

The rationale names the rule and cites evidence ids; ``Verdict.evidence_ids`` lists them.
"""

from __future__ import annotations

from collections.abc import Sequence

from factseek.labels import AVERITEC
from factseek.types import Answer, Claim, Evidence, Passage, Question, Verdict

__all__ = ["StanceRules", "aggregate", "answer_questions"]

NO_EVIDENCE = "no evidence found"
CONFLICT = "conflicting evidence"
ONLY_CLAIMANT = "only the claimant's own words or copies support it"


def _p(e: Evidence, label: str) -> float:
    return float(e.stance.probs.get(label, 0.0)) if e.stance is not None else 0.0


def _cite(cards: Sequence[Evidence], label: str) -> str:
    return ", ".join(f"{e.id} ({e.domain or e.url}, {_p(e, label):.2f})" for e in cards)


def _answer(question: str, cards: Sequence[Evidence]) -> Answer:
    sup = sorted(
        (e for e in cards if e.independent and e.stance and e.stance.label == "supports"),
        key=lambda e: -_p(e, "supports"),
    )
    ref = sorted(
        (e for e in cards if e.stance and e.stance.label == "refutes"),
        key=lambda e: -_p(e, "refutes"),
    )
    if sup and not ref:
        return Answer(
            question=question,
            answer="yes",
            confidence=round(_p(sup[0], "supports"), 4),
            evidence_ids=tuple(e.id for e in sup),
            method="stance",
            rationale=f"supported by {_cite(sup, 'supports')}",
        )
    if ref and not sup:
        return Answer(
            question=question,
            answer="no",
            confidence=round(_p(ref[0], "refutes"), 4),
            evidence_ids=tuple(e.id for e in ref),
            method="stance",
            rationale=f"refuted by {_cite(ref, 'refutes')}",
        )
    if sup and ref:
        why = f"{CONFLICT}: {_cite(sup, 'supports')} support; {_cite(ref, 'refutes')} refute"
        ids = tuple(e.id for e in (*sup, *ref))
    elif any(e.stance and e.stance.label == "supports" for e in cards):
        why, ids = ONLY_CLAIMANT, tuple(e.id for e in cards)
    else:
        why, ids = NO_EVIDENCE, ()
    return Answer(
        question=question, answer="unknown", evidence_ids=ids, method="stance", rationale=why
    )


def answer_questions(questions: Sequence[Question], evidence: Sequence[Evidence]) -> list[Answer]:
    """One answer per question, in order (rules 1-2 of the module docstring)."""
    return [_answer(q.text, [e for e in evidence if e.question == q.text]) for q in questions]


def _short(text: str, n: int = 80) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def aggregate(
    claim: Claim, answers: Sequence[Answer], evidence: Sequence[Evidence], *, judge: str
) -> Verdict:
    """The AVeriTeC verdict from answers (rules 3-7 of the module docstring)."""
    by_id = {e.id: e for e in evidence}
    yes = [a for a in answers if a.answer == "yes"]
    no = [a for a in answers if a.answer == "no"]
    conflict = [a for a in answers if a.rationale.startswith(CONFLICT)]
    with_cards = [a for a in answers if any(e.question == a.question for e in evidence)]

    def verdict(label: str, confidence: float, rationale: str, cited: Sequence[Answer]) -> Verdict:
        ids = tuple(dict.fromkeys(i for a in cited for i in a.evidence_ids))
        return Verdict(
            judged=True,
            label=label,
            judge=judge,
            scale=AVERITEC.name,
            confidence=round(confidence, 4),
            rationale=rationale,
            explanation=rationale,
            evidence_ids=ids,
        )

    if no:
        best = max(no, key=lambda a: a.confidence or 0.0)
        why = f"refuted: “{_short(best.question)}” is answered no ({best.rationale})"
        if len(no) > 1:
            why += f"; {len(no) - 1} more question(s) answered no"
        return verdict("refuted", best.confidence or 0.0, why, no)
    if conflict:
        a = conflict[0]
        sup = max((_p(by_id[i], "supports") for i in a.evidence_ids if i in by_id), default=0.0)
        ref = max((_p(by_id[i], "refutes") for i in a.evidence_ids if i in by_id), default=0.0)
        why = f"conflicting evidence on “{_short(a.question)}”: {a.rationale.split(': ', 1)[-1]}"
        return verdict("conflicting-evidence", min(sup, ref), why, conflict)
    claim_yes = any(a.question == claim.text for a in yes)
    if yes and len(yes) == len(with_cards) and (claim_yes or 2 * len(yes) >= len(answers)):
        weakest = min(yes, key=lambda a: a.confidence or 0.0)
        why = f"supported: {len(yes)} of {len(answers)} question(s) answered yes ({'; '.join(a.rationale for a in yes)})"
        return verdict("supported", weakest.confidence or 0.0, why, yes)
    strongest = max(
        (max(_p(e, "supports"), _p(e, "refutes")) for e in evidence if e.stance), default=0.0
    )
    if yes:
        open_ = len(answers) - len(yes)
        why = f"not enough evidence: {len(yes)} question(s) answered yes, {open_} without an answer"
        return verdict("not-enough-evidence", 1.0 - strongest, why, yes)
    why = "not enough evidence: no question is answered by evidence that takes a stance"
    return verdict("not-enough-evidence", 1.0 - strongest, why, [])


class StanceRules:
    """The default evidence judge: ``answer_questions`` then ``aggregate``, no training."""

    scale = AVERITEC.name

    def __init__(self, stance_name: str = "") -> None:
        self.name = f"stance-rules:{stance_name}" if stance_name else "stance-rules"

    def judge(
        self,
        claim: Claim,
        questions: Sequence[Question],
        evidence: Sequence[Evidence],
        answers: Sequence[Answer] | None = None,
        passages: Sequence[Passage] = (),
    ) -> Verdict:
        """The verdict; ``answers`` default to ``answer_questions(questions, evidence)``. The
        rules read the cards' stance only (``passages`` are ignored)."""
        if answers is None:
            answers = answer_questions(questions, evidence)
        return aggregate(claim, answers, evidence, judge=self.name)
