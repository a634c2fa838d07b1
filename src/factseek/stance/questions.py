"""Claims as yes/no questions, so the stance model learns the form subquestions take.

``as_questions(claims)`` turns each statement into a question with the same truth conditions:

1. The rule decomposer's first ``predicate`` question (auxiliary inversion or do-support, the
   same rules that write the pipeline's subquestions) when it keeps at least
   ``MIN_COVERAGE`` of the claim's content words (so a question about one clause of a longer
   claim, which may have another answer, is not used).
2. Otherwise auxiliary inversion by a plain rule: the first ``is/are/was/...`` after the first
   word moves to the front ("The tower is 300 m tall." -> "Is the tower 300 m tall?").
3. Otherwise "Is it true that <claim>?".

Deterministic; spaCy is loaded once (``factseek.ml.nlp``) when rule 1 is first needed.
"""

from __future__ import annotations

from collections.abc import Sequence

from factseek.text import tokenize

MIN_COVERAGE = 0.8
#: Words rule 2 moves to the front ("has/had/do" are left out: as main verbs they invert badly).
AUXILIARIES = frozenset(
    {"is", "are", "was", "were", "can", "could", "will", "would", "should", "may", "might", "must"}
)
LOWER_STARTS = frozenset({"The", "A", "An", "This", "That", "These", "Those", "There", "It"})


def _strip(text: str) -> str:
    return " ".join(text.split()).rstrip(" .!;:")


def _coverage(question: str, claim: str) -> float:
    want = set(tokenize(claim))
    return len(want & set(tokenize(question))) / len(want) if want else 0.0


def _lower_first(words: list[str]) -> list[str]:
    """Lower-case a sentence-initial function word ("The tower" -> "the tower"), never a name."""
    if words and words[0] in LOWER_STARTS:
        return [words[0].lower(), *words[1:]]
    return words


def invert(claim: str) -> str:
    """Rules 2 and 3 of the module docstring (no parsing)."""
    text = _strip(claim)
    if not text:
        return ""
    words = text.split(" ")
    for i, w in enumerate(words[1:], start=1):
        if w.lower() in AUXILIARIES:
            rest = _lower_first([*words[:i], *words[i + 1 :]])
            return f"{w.capitalize()} {' '.join(rest)}?"
    return f"Is it true that {' '.join(_lower_first(words))}?"


def as_questions(claims: Sequence[str]) -> list[str]:
    """One yes/no question per claim (see the module docstring)."""
    from factseek.decompose.rules import RuleDecomposer
    from factseek.types import Claim

    decomposed = RuleDecomposer().decompose_many(Claim(text=c) for c in claims)
    out = []
    for claim, questions in zip(claims, decomposed, strict=True):
        pick = next(
            (
                q.text
                for q in questions
                if q.kind == "predicate" and _coverage(q.text, claim) >= MIN_COVERAGE
            ),
            None,
        )
        out.append(pick or invert(claim))
    return out
