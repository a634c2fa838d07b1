"""Claim decomposition: claim -> yes/no subquestions (plus the claim itself as a query).

``Decomposer`` is the protocol; ``rules.RuleDecomposer`` works offline from a spaCy parse,
``llm.LLMDecomposer`` samples a few-shot prompt as in the paper.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from factseek.types import Claim, Question


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


def claim_question(claim: Claim) -> Question:
    return Question(text=" ".join(claim.text.split()), source="claim", kind="claim")
