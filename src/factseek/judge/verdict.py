"""Answers to the subquestions and a 4-way AVeriTeC verdict, from evidence stances, by rules.

The numbers the rules need live in a ``VerdictRules`` (``judge.rules``: the shipped file, chosen
by cross-validation on AVeriTeC *train* claims, or one of your own).

``answer_questions(questions, evidence, rules) -> [Answer]``, one per question, from the
question's own cards (``Evidence.question``):

1. **Weight** of a card: a card from a letter, opinion piece or blog (``Evidence.genre``)
   weighs ``rules.genre_weight``, any other 1. A card that is not independent (the claimant's
   own words, a syndicated copy) weighs 0 for support; for refutation the claimant's own words
   weigh 1 (an admission refutes) and a copy 0 (its original counts already). A card that gives
   the question's figure only for another thing (``Evidence.figure_of_other``: "the fixed
   charge rose 40 percent" for "have water bills risen 40 percent?") weighs 0 for support.
2. **Mass** of each side: ``1 - prod(1 - weight x p)`` over that side's cards (cards labelled
   ``supports`` with their calibrated p(supports), cards labelled ``refutes`` with
   p(refutes)), the strongest card per site only, so one outlet saying it twice is one voice:
   the probability that at least one of the independent cards is right, were they independent
   (``rules.combine="noisy-or"``); with ``"max"`` the strongest card's ``weight x p`` alone, so
   weak cards never add up to a decision.
3. The answer, first that applies:
   - **yes**: support mass >= ``rules.decide``, refutation mass < ``rules.weak``, and some
     supporting card weighs 1 (letters, opinion and blogs are never the only support);
   - **no**: refutation mass >= ``rules.decide`` and support mass < ``rules.weak``;
   - **conflicting**: both masses >= ``rules.weak``;
   - **unknown**, with the reason: "no evidence found" (no card), "no card takes a side" (only
     cards read ``nei``), "only the claimant's own words or copies support it", "only cards
     that give the question's figure for another thing support it", "only letters, opinion
     pieces or blogs support it", or "too weak to decide" (the best card of each side
     is named); then the cards that take no side but give a figure to compare (figure cards,
     ``summarize.evidence`` rule 5), cited as "figures to compare: E13, E14".
   So a lone card decides only when its own calibrated probability (times its weight) reaches
   ``decide``, and a weak misread (below ``weak``) cannot turn a well-supported answer.
   The confidence of yes / no / conflicting is the deciding mass (for conflicting: the smaller
   one); the answer cites its cards, strongest first.

``aggregate(claim, answers, evidence, judge=..., rules=...)`` (``StanceRules.judge``), the
first rule that applies, questions being the claim and its yes/no subquestions:

4. **refuted**: some question is answered no (strength: the largest refutation mass); the
   rationale names that question first, then every other question answered no with its cards.
5. **conflicting-evidence**: some question is answered conflicting (strength: its smaller mass).
6. **supported**: every question answered yes/no/conflicting is answered yes, and the claim
   itself or at least half of the questions are (strength: the smallest support mass).
7. otherwise **not-enough-evidence**.

8. **Confidence** of 4-6 is ``rules.calibrate(label, strength, verdict_features(...))``: the
   probability that the label is right, fitted on the cross-validation claims (a logistic map
   per label of the strength and, where the rules have weights for them, of how many questions
   gave the label's answer, whether the claim's own question did, whether any was answered
   the other way or conflicting, and how much of the claim a cited card on its side repeats;
   the raw strength when the rules carry no map, and the rationale says so). When it is below the label's level
   ``rules.abstain[label]`` the judge **abstains**: the label becomes not-enough-evidence, ``abstained=True``, and the
   rationale names what it leaned to and the best card on each side. A not-enough-evidence
   verdict carries no confidence of its own.
9. ``Verdict.precision`` is how often the label was right on ``rules.precision_basis``
   (AVeriTeC dev for the shipped rules: how often the label the evidence leaned to was right,
   before abstention), so a reader sees "when factseek says refuted it was right N% of the time"
   beside the verdict; an abstention names the measured precision of what it leaned to.

The rationale names the rule and cites evidence ids; ``Verdict.evidence_ids`` lists them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from factseek.judge.rules import VerdictRules, default_rules
from factseek.labels import AVERITEC
from factseek.text import stem, tokenize
from factseek.types import Answer, Claim, Evidence, Passage, Question, Verdict


def _short_below(value: float, level: float) -> str:
    """``value`` with two decimals, or as many more (up to four) as it takes not to read as
    ``level`` or above it: 0.798 against 0.80 is "0.798", not "0.80"."""
    for digits in (2, 3, 4):
        text = f"{value:.{digits}f}"
        if float(text) < level:
            return text
    return f"{value:.4f}"


__all__ = ["StanceRules", "aggregate", "answer_questions", "question_masses", "verdict_features"]

NO_EVIDENCE = "no evidence found"
NO_SIDE = "no card takes a side"
CONFLICT = "conflicting evidence"
ONLY_CLAIMANT = "only the claimant's own words or copies support it"
ONLY_OPINION = "only letters, opinion pieces or blogs support it"
OTHER_THING = "only cards that give the question's figure for another thing support it"
TOO_WEAK = "too weak to decide"


def _p(e: Evidence, label: str) -> float:
    return float(e.stance.probs.get(label, 0.0)) if e.stance is not None else 0.0


def _weight(e: Evidence, side: str, rules: VerdictRules) -> float:
    """Rule 1."""
    base = rules.genre_weight if e.genre else 1.0
    if side == "supports" and e.figure_of_other:
        return 0.0
    if e.independent:
        return base
    if side == "refutes" and "near-copy" not in e.note:
        return base  # the claimant's own admission
    return 0.0


@dataclass(frozen=True)
class _Side:
    mass: float
    cards: tuple[Evidence, ...]  # strongest first
    full: bool  # some card of weight 1


def _side(cards: Sequence[Evidence], label: str, rules: VerdictRules) -> _Side:
    """Rule 2 for one side of one question."""
    best: dict[str, tuple[float, Evidence]] = {}
    for e in cards:
        if e.stance is None or e.stance.label != label:
            continue
        w = _weight(e, label, rules)
        if w <= 0:
            continue
        site = e.domain or e.url
        s = w * _p(e, label)
        if site not in best or s > best[site][0]:
            best[site] = (s, e)
    ranked = sorted(best.values(), key=lambda x: (-x[0], x[1].id))
    miss = 1.0
    for s, _ in ranked[: None if rules.combine == "noisy-or" else 1]:
        miss *= 1.0 - s
    full = any(_weight(e, label, rules) >= 1.0 for _, e in ranked)
    return _Side(mass=1.0 - miss, cards=tuple(e for _, e in ranked), full=full)


def question_masses(
    cards: Sequence[Evidence], rules: VerdictRules | None = None
) -> tuple[float, float]:
    """(support mass, refutation mass) of one question's cards (rules 1-2)."""
    rules = rules or default_rules()
    return _side(cards, "supports", rules).mass, _side(cards, "refutes", rules).mass


#: After a cited card whose figure a reviewer should compare with the question's
#: (``Evidence.figures``): its reading rests on a figure that is not the question's, or on one
#: that is yet reads as refuting it (docs/verdicts.md, "Evidence cards" 7).
FIGURES_FLAG = "; compare its figures"


def _how(e: Evidence, label: str) -> str:
    """A card's strength as cited: its probability of ``label`` ("0.74"), or "set by NAME"
    for a stance a reviewer set (``review.apply``), which is no probability."""
    who = e.stance.set_by if e.stance is not None else ""
    return f"set by {who}" if who else f"{_p(e, label):.2f}"


def _cite(cards: Sequence[Evidence], label: str) -> str:
    return ", ".join(
        f"{e.id} ({e.domain or e.url}, {_how(e, label)}{FIGURES_FLAG if e.compare_figures else ''})"
        for e in cards
    )


def _answer(question: str, cards: Sequence[Evidence], rules: VerdictRules) -> Answer:
    """Rule 3."""
    sup, ref = _side(cards, "supports", rules), _side(cards, "refutes", rules)

    def answer(label: str, conf: float, ids: Sequence[Evidence], why: str) -> Answer:
        return Answer(
            question=question,
            answer=label,  # type: ignore[arg-type]
            confidence=round(conf, 4),
            evidence_ids=tuple(e.id for e in ids),
            method="stance",
            rationale=why,
        )

    if sup.mass >= rules.decide and ref.mass < rules.weak and sup.full:
        return answer("yes", sup.mass, sup.cards, f"supported by {_cite(sup.cards, 'supports')}")
    if ref.mass >= rules.decide and sup.mass < rules.weak:
        return answer("no", ref.mass, ref.cards, f"refuted by {_cite(ref.cards, 'refutes')}")
    if sup.mass >= rules.weak and ref.mass >= rules.weak:
        why = f"{CONFLICT}: {_cite(sup.cards, 'supports')} support; {_cite(ref.cards, 'refutes')} refute"
        return answer("conflicting", min(sup.mass, ref.mass), (*sup.cards, *ref.cards), why)
    deciding = [e for e in cards if e.stance and e.stance.decides]
    if not cards:
        why, ids = NO_EVIDENCE, ()
    elif not deciding:
        why, ids = NO_SIDE, ()
    elif not sup.cards and not ref.cards:
        backing = [e for e in deciding if e.stance.label == "supports"]  # type: ignore[union-attr]
        other = bool(backing) and all(e.figure_of_other for e in backing)
        why, ids = OTHER_THING if other else ONLY_CLAIMANT, tuple(deciding)
    elif sup.cards and not sup.full and ref.mass < rules.weak:
        why, ids = ONLY_OPINION, sup.cards
    else:
        best = [f"support {_cite(sup.cards[:1], 'supports')}"] if sup.cards else []
        best += [f"refutation {_cite(ref.cards[:1], 'refutes')}"] if ref.cards else []
        why, ids = f"{TOO_WEAK} (best {'; best '.join(best)})", (*sup.cards[:1], *ref.cards[:1])
    if figured := [e for e in cards if e not in deciding and e.compare_figures]:
        why += f"; figures to compare: {', '.join(e.id for e in figured)}"
        ids = (*ids, *figured)
    return Answer(
        question=question,
        answer="unknown",
        evidence_ids=tuple(e.id for e in ids),
        method="stance",
        rationale=why,
    )


def answer_questions(
    questions: Sequence[Question],
    evidence: Sequence[Evidence],
    rules: VerdictRules | None = None,
) -> list[Answer]:
    """One answer per question, in order (rules 1-3 of the module docstring); ``rules``
    default to ``judge.rules.default_rules()``."""
    rules = rules or default_rules()
    return [
        _answer(q.text, [e for e in evidence if e.question == q.text], rules) for q in questions
    ]


def _short(text: str, n: int = 80) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _strength(label: str, answers: Sequence[Answer]) -> float:
    return (
        float(max((a.confidence or 0.0) for a in answers))
        if label == "refuted"
        else float(min((a.confidence or 0.0) for a in answers))
    )


def aggregate(
    claim: Claim,
    answers: Sequence[Answer],
    evidence: Sequence[Evidence],
    *,
    judge: str,
    rules: VerdictRules | None = None,
) -> Verdict:
    """The AVeriTeC verdict from answers (rules 4-9 of the module docstring)."""
    rules = rules or default_rules()
    by_id = {e.id: e for e in evidence}
    yes = [a for a in answers if a.answer == "yes"]
    no = [a for a in answers if a.answer == "no"]
    conflict = [a for a in answers if a.answer == "conflicting"]

    def verdict(
        label: str, rationale: str, cited: Sequence[Answer], strength: float | None
    ) -> Verdict:
        ids = tuple(dict.fromkeys(i for a in cited for i in a.evidence_ids))
        confidence = (
            None
            if strength is None
            else rules.calibrate(
                label, strength, verdict_features(label, answers, claim.text, evidence)
            )
        )
        abstained = False
        level = rules.abstain.get(label, 0.0)
        if confidence is not None and confidence < level:
            sides = _best_cards(evidence)
            measured = rules.precision.get(label)
            seen = (
                f"; where it was measured ({rules.precision_basis}), {label} was right "
                f"{100 * measured:.0f}% of the time when the evidence leaned to it"
                if measured is not None
                else ""
            )
            rationale = (
                f"not enough evidence to decide: the evidence leans {label} with probability "
                f"{_short_below(confidence, level)}, below the {level:.2f} at which factseek says {label}{seen} "
                f"({rationale})" + (f"; best cards: {sides}" if sides else "")
            )
            label, confidence, abstained = "not-enough-evidence", None, True
        elif confidence is not None and not rules.calibrated(label):
            rationale += " (confidence not calibrated: the raw strength of the evidence)"
        return Verdict(
            judged=True,
            label=label,
            judge=judge,
            scale=AVERITEC.name,
            confidence=None if confidence is None else round(confidence, 4),
            rationale=rationale,
            explanation=rationale,
            evidence_ids=ids,
            precision=rules.precision.get(label),
            precision_basis=rules.precision_basis if label in rules.precision else "",
            abstained=abstained,
        )

    if no:
        best = max(no, key=lambda a: a.confidence or 0.0)
        why = f"refuted: “{_short(best.question)}” is answered no ({best.rationale})"
        if others := sorted((a for a in no if a is not best), key=lambda a: -(a.confidence or 0)):
            why += "; also answered no: " + "; ".join(
                f"“{_short(a.question)}” ({a.rationale})" for a in others
            )
        return verdict("refuted", why, no, _strength("refuted", no))
    if conflict:
        a = max(conflict, key=lambda x: x.confidence or 0.0)
        why = f"conflicting evidence on “{_short(a.question)}”: {a.rationale.split(': ', 1)[-1]}"
        return verdict("conflicting-evidence", why, conflict, _strength("conflicting", conflict))
    claim_yes = any(a.question == claim.text for a in yes)
    if yes and (claim_yes or 2 * len(yes) >= len(answers)):
        why = f"supported: {len(yes)} of {len(answers)} question(s) answered yes ({'; '.join(a.rationale for a in yes)})"
        return verdict("supported", why, yes, _strength("supported", yes))
    if yes:
        open_ = len(answers) - len(yes)
        why = f"not enough evidence: {len(yes)} question(s) answered yes, {open_} without an answer"
        return verdict("not-enough-evidence", why, yes, None)
    weak = [a for a in answers if a.rationale.startswith(TOO_WEAK)]
    if weak:
        why = "not enough evidence: the evidence found is " + "; ".join(
            f"on “{_short(a.question)}” {a.rationale}" for a in weak
        )
        return verdict("not-enough-evidence", why, weak, None)
    cited = [a for a in answers if a.evidence_ids and any(i in by_id for i in a.evidence_ids)]
    why = "not enough evidence: no question is answered by evidence that takes a stance"
    if cited:
        why += " (" + "; ".join(f"“{_short(a.question)}”: {a.rationale}" for a in cited) + ")"
    return verdict("not-enough-evidence", why, cited, None)


_ANSWER_OF = {"refuted": "no", "supported": "yes", "conflicting-evidence": "conflicting"}
_OPPOSITE = {"refuted": "yes", "supported": "no"}


_SIDES = {"refuted": ("refutes",), "supported": ("supports",)}


def _content(text: str) -> set[str]:
    return {stem(w) for w in tokenize(text)}  # tokenize drops stop words already


def verdict_features(
    label: str, answers: Sequence[Answer], claim_text: str, evidence: Sequence[Evidence] = ()
) -> dict[str, float]:
    """What the verdict's calibration reads beside its strength (``judge.rules.FEATURES``):
    how many more questions than one gave the label's answer (at most 2), whether the claim's
    own question did, whether some question gave the opposite answer, whether some was answered
    conflicting, and the largest share of the claim's content words (stems) found in one card
    that those answers cite on the label's side (on AVeriTeC train, a supporting card that
    shares most of the claim's words was right far more often: docs/verdicts.md, table 1c)."""
    mine = [a for a in answers if a.answer == _ANSWER_OF.get(label)]
    cited = {i for a in mine for i in a.evidence_ids}
    sides = _SIDES.get(label, ("supports", "refutes"))
    claim = _content(claim_text)
    shares = [
        len(claim & _content(e.text)) / len(claim)
        for e in evidence
        if claim and e.id in cited and e.stance is not None and e.stance.label in sides
    ]
    return {
        "more": float(min(max(len(mine) - 1, 0), 2)),
        "claim": float(any(a.question == claim_text for a in mine)),
        "against": float(any(a.answer == _OPPOSITE.get(label) for a in answers)),
        "conflict": float(any(a.answer == "conflicting" for a in answers)),
        "overlap": round(max(shares, default=0.0), 4),
    }


def counts_fully(e: Evidence, label: str) -> bool:
    """A card that counts fully toward an answer on the side ``label``: independent, not from a
    letter, an opinion piece or a blog, and, for support, not one that gives the question's
    figure for another thing (``Evidence.figure_of_other``), as ``summarize.evidence`` ranks
    cards."""
    return e.independent and not e.genre and not (label == "supports" and e.figure_of_other)


def strongest(cards: Sequence[Evidence], label: str) -> Evidence | None:
    """The card of ``label`` to name first (an abstention's best card on a side): one that
    counts fully before one that does not, as cards are ranked, then the most probable."""
    mine = [e for e in cards if e.stance and e.stance.label == label]
    return max(mine, key=lambda e: (counts_fully(e, label), _p(e, label), e.id), default=None)


def named(e: Evidence, label: str) -> str:
    """ "E4 (ledger.example, 0.74)", with what keeps it from counting fully: "E15
    (ledger.example, letter, 0.89)", "E8 (tribune.example, not independent, 0.60)", and
    ``FIGURES_FLAG`` when its figures are to be compared; a stance a reviewer set is "set by
    NAME", not a probability."""
    kind = e.genre or ("" if e.independent else "not independent")
    flag = FIGURES_FLAG if e.compare_figures else ""
    return f"{e.id} ({e.domain or e.url}{', ' + kind if kind else ''}, {_how(e, label)}{flag})"


def _best_cards(evidence: Sequence[Evidence]) -> str:
    """The strongest supporting and refuting card of the whole report, for an abstention."""
    out = []
    for label in ("supports", "refutes"):
        if (e := strongest(evidence, label)) is not None:
            out.append(f"{label} {named(e, label)}")
    return "; ".join(out)


class StanceRules:
    """The default evidence judge: ``answer_questions`` then ``aggregate``, no training."""

    scale = AVERITEC.name

    def __init__(self, stance_name: str = "", rules: VerdictRules | None = None) -> None:
        self.name = f"stance-rules:{stance_name}" if stance_name else "stance-rules"
        self.rules = rules or default_rules()

    def judge(
        self,
        claim: Claim,
        questions: Sequence[Question],
        evidence: Sequence[Evidence],
        answers: Sequence[Answer] | None = None,
        passages: Sequence[Passage] = (),
    ) -> Verdict:
        """The verdict. ``answers`` from the stance (``method="stance"``) or none at all are
        recomputed with these rules (``answer_questions``); others (an LLM's, a reviewer's) are
        kept. The rules read the cards' stance only (``passages`` are ignored)."""
        mine = answer_questions(questions, evidence, self.rules)
        if answers is not None and len(answers) == len(mine):
            answers = [
                a if a.method not in ("stance", "") else m
                for a, m in zip(answers, mine, strict=True)
            ]
        else:
            answers = mine
        return aggregate(claim, answers, evidence, judge=self.name, rules=self.rules)
