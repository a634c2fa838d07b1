"""What an answer to a question would state (a figure, a date, a named actor), and whether a
sentence states one: rule 3b of ``summarize.evidence`` (the candidates that state what the
question asks for)."""

from __future__ import annotations

import re

from factseek.summarize.figures import QUANTITY, YEAR
from factseek.text import MONTH_NAME

__all__ = ["answer_types", "states"]

_MONTH = re.compile(
    rf"\b(?:{MONTH_NAME})\b\.?\s*\d{{1,2}}\b|"
    r"\b(?:january|february|march|april|june|july|august|september|october|november|december)\b",
    re.IGNORECASE,
)
_NAME = re.compile(r"(?<![.!?:]\s)(?<!^)\b[A-Z][a-z]+(?:\s+[A-Z][a-z.]+)+")
_ASKS_NUMBER = re.compile(
    r"\b(how (?:many|much)|number of|amount|percent|cost|price|rate|total|million|billion)\b",
    re.IGNORECASE,
)
_ASKS_DATE = re.compile(r"\b(when|what year|which year|date|since|until|before|after)\b", re.I)
_ASKS_ACTOR = re.compile(r"^\s*(who|whom|whose)\b|\bby whom\b", re.IGNORECASE)


def answer_types(question: str) -> frozenset[str]:
    """What an answer to ``question`` would state (rule 3b): ``number`` (a figure), ``date``,
    ``actor`` (a named person or body)."""
    out = set()
    if QUANTITY.search(question) or re.search(r"\d", question) or _ASKS_NUMBER.search(question):
        out.add("number")
    if YEAR.search(question) or _MONTH.search(question) or _ASKS_DATE.search(question):
        out.add("date")
    if _ASKS_ACTOR.search(question):
        out.add("actor")
    return frozenset(out)


def states(text: str, kinds: frozenset[str]) -> bool:
    """Whether ``text`` states an answer of one of ``kinds``."""
    return (
        ("number" in kinds and re.search(r"\d", YEAR.sub("", text)) is not None)
        or ("date" in kinds and (YEAR.search(text) or _MONTH.search(text)) is not None)
        or ("actor" in kinds and _NAME.search(text) is not None)
    )
