"""Claim decomposition: claim -> yes/no subquestions (plus the claim itself as a query).

``Decomposer`` is the protocol; ``rules.RuleDecomposer`` works offline from a spaCy parse,
``llm.LLMDecomposer`` samples a few-shot prompt as in the paper.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

from factseek.text import stem, tokenize
from factseek.types import Claim, Question

#: Words a yes/no question adds to a statement; they say nothing about what it asks.
_ASKING = frozenset({"did", "does", "do", "is", "was", "were", "are", "has", "have", "had", "true"})


@runtime_checkable
class Decomposer(Protocol):
    name: str

    def decompose(self, claim: Claim) -> list[Question]:
        """Subquestions for ``claim``; includes the claim itself (``source="claim"``)."""
        ...


def dedup(questions: Iterable[Question]) -> list[Question]:
    """Exact-match dedup on whitespace-normalised text, keeping the first occurrence."""
    seen: set[str] = set()
    out: list[Question] = []
    for q in questions:
        key = " ".join(q.text.split())
        if key and key not in seen:
            seen.add(key)
            out.append(q)
    return out


_FIXED = ("claim", "user", "gold")  # sources merge_same never merges away


def _asks_about(q: Question) -> frozenset[str]:
    return frozenset(stem(w) for w in tokenize(q.text) if w not in _ASKING)


def _mergeable(q: Question, asks: frozenset[str]) -> bool:
    return q.source not in _FIXED and len(asks) >= 2


def _asks_same(a: frozenset[str], b: frozenset[str], extra: int) -> bool:
    small, big = (a, b) if len(a) <= len(b) else (b, a)
    return small <= big and len(big - small) <= extra


def same_question(a: Question, b: Question, extra: int = 2) -> bool:
    """Whether ``a`` and ``b`` are one question: the same text (whitespace aside), or two that
    ``merge_same`` would merge."""
    if " ".join(a.text.split()) == " ".join(b.text.split()):
        return True
    mine, theirs = _asks_about(a), _asks_about(b)
    return _mergeable(a, mine) and _mergeable(b, theirs) and _asks_same(mine, theirs, extra)


def merge_same(questions: Sequence[Question], extra: int = 2) -> list[Question]:
    """Subquestions that ask the same thing, merged into one: the more specific.

    Two decomposer's subquestions ask the same thing when the content words (stems, numbers
    included) of one are all in the other and the other adds at most ``extra`` of them: "Did the
    jobless rate fall to 3.1 percent?" and "Did the jobless rate fall to 3.1 percent in June?"
    are one question, kept as the second (a page that answers it answers the first) at the place
    of the first. A different number, name or verb keeps them apart. The claim itself and the
    questions a user wrote (``source`` "claim", "user", "gold") are never merged away.
    """
    kept: list[tuple[Question, frozenset[str]]] = []
    for q in questions:
        mine = _asks_about(q)
        if not _mergeable(q, mine):
            kept.append((q, mine))
            continue
        for k, (other, theirs) in enumerate(kept):
            if _mergeable(other, theirs) and _asks_same(mine, theirs, extra):
                if len(mine) > len(theirs):
                    kept[k] = (q, mine)  # the more specific stays
                break
        else:
            kept.append((q, mine))
    return [q for q, _ in kept]


def claim_question(claim: Claim) -> Question:
    return Question(text=" ".join(claim.text.split()), source="claim", kind="claim")
