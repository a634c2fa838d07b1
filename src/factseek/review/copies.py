"""One sentence, one question, one reading: how far a reviewer's card correction reaches.

The same page sentence can stand on several evidence cards of one report: quoted by two pages (a
syndicated story), twice for one question, or under two questions that ask the same thing. A
reviewer who marks a card irrelevant or sets its stance reads the sentence for the question, so
a ``relevance`` or ``stance`` correction applies to every evidence card of the report that quotes
the same sentence (``sentence_key``: case, spacing, quote marks and dashes aside) for the same
question (the same text, or two questions ``decompose.merge_same`` would merge:
``decompose.same_question``). Never to the same sentence under another question: a sentence can
answer one question and not another.

A card's own correction wins for it: a correction made on a card that shows a copy's reading
applies to that card alone, and a later correction of a copy does not reach a card the reviewer
corrected by itself (one a rerun carried forward, ``carried_from``, gives way).

``force(report, corrections)`` is ``feedback.in_force`` with the copies filled in: a reached
card's entry is the correction of the card it was made on (its ``target`` names that card);
``reached(report, corrections)`` lists, per correction id, the cards it reached.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from factseek.decompose import same_question
from factseek.review.feedback import Correction, in_force
from factseek.types import Question, Report

CARD_KINDS = ("relevance", "stance")  # the corrections of a card's reading
WHY = "same sentence, same question"  # how the notes say why a correction reached a card

_QUOTE = (
    "\"'`\u00ab\u00bb\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u2039\u203a\u2032\u2033\u00b4"
)
_DASH = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"
_FOLD = str.maketrans({**dict.fromkeys(_QUOTE, '"'), **dict.fromkeys(_DASH, "-")})
_ENDS = ' ".,;:'


def sentence_key(text: str) -> str:
    """``text`` as compared for "the same sentence": NFKC, case-folded, every quote mark one
    ``"``, every dash one ``-``, spacing collapsed, surrounding quotes and end punctuation off."""
    folded = unicodedata.normalize("NFKC", text).casefold().translate(_FOLD)
    return " ".join(folded.split()).strip(_ENDS)


def copies(report: Report) -> dict[str, tuple[str, ...]]:
    """Each evidence card's copies: the report's other cards quoting the same sentence for the
    same question, in the report's order (cards without copies are left out)."""
    groups: dict[str, list[tuple[str, Question]]] = {}
    for e in report.evidence:
        key = sentence_key(e.text)
        if key:
            groups.setdefault(key, []).append((e.id, question_of(report, e.question)))
    out: dict[str, tuple[str, ...]] = {}
    for group in groups.values():
        for cid, q in group:
            mine = tuple(o for o, oq in group if o != cid and same_question(q, oq))
            if mine:
                out[cid] = mine
    return out


def question_of(report: Report, text: str) -> Question:
    """The report's question a card's ``question`` names ("": the claim itself)."""
    text = " ".join((text or report.claim.text).split())
    for q in report.questions:
        if " ".join(q.text.split()) == text:
            return q
    if text == " ".join(report.claim.text.split()):
        return Question(text=text, source="claim", kind="claim")
    return Question(text=text)


@dataclass(frozen=True)
class _Reading:
    by: Correction
    own: bool  # made on this card (False: reached it from a copy)


def _replay(report: Report, corrections: Iterable[Correction]) -> dict[tuple[str, str], _Reading]:
    """The reading of each corrected card, the corrections replayed in the order they were made."""
    twins = copies(report)
    state: dict[tuple[str, str], _Reading] = {}
    for c in sorted(corrections, key=lambda c: c.id):
        if c.kind not in CARD_KINDS:
            continue
        prior = state.get((c.kind, c.target))
        state[(c.kind, c.target)] = _Reading(by=c, own=True)
        if prior is not None and not prior.own:
            continue  # a correction of a reached copy: that card alone
        for other in twins.get(c.target, ()):
            was = state.get((c.kind, other))
            if was is None or not was.own or "carried_from" in was.by.value:
                state[(c.kind, other)] = _Reading(by=c, own=False)
    return state


def force(report: Report, corrections: Iterable[Correction]) -> dict[tuple[str, str], Correction]:
    """``feedback.in_force`` with every card a correction reached (see the module docstring)."""
    corrections = list(corrections)
    out = in_force(corrections)
    out.update({key: r.by for key, r in _replay(report, corrections).items()})
    return out


def reached(report: Report, corrections: Iterable[Correction]) -> dict[int, tuple[str, ...]]:
    """Correction id -> the cards it reached besides its own, in the report's order."""
    state = _replay(report, corrections)
    order = {e.id: i for i, e in enumerate(report.evidence)}
    out: dict[int, list[str]] = {}
    for (_, card), r in sorted(state.items(), key=lambda kv: order.get(kv[0][1], len(order))):
        if not r.own and card not in out.get(r.by.id, []):
            out.setdefault(r.by.id, []).append(card)
    return {cid: tuple(cards) for cid, cards in out.items()}


def made_on(c: Correction, card_id: str) -> str:
    """The card ``c`` was made on when it reached ``card_id`` as a copy ("" for its own)."""
    return c.target if c.target != card_id else ""


def note(c: Correction, card_id: str) -> str:
    """A note's tail for a card that a copy's correction reached ("" for the card's own)."""
    return f" ({c.target}'s correction: {WHY})" if c.target != card_id else ""
