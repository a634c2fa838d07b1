"""Metrics for page extraction: main-text token F1 and publication-date outcomes.

Token F1 follows the article-extraction benchmarks (ScrapingHub's, trafilatura's evaluation):
the extracted text and the gold text are bags of tokens; precision is the share of extracted
tokens found in the gold bag (counted with multiplicity), recall the share of gold tokens
extracted. Tokens are lower-cased words split on anything that is not a letter or digit, and
every character of a script written without spaces (Han, kana, Thai...) is a token of its own,
so Chinese and Japanese pages are measured at the same grain as the rest.

Date outcomes compare a chosen date with the true one: ``"exact"``, ``"early"`` (the dangerous
error for a before-the-claim filter), ``"late"``, or ``"none"`` (no date chosen).
"""

from __future__ import annotations

import datetime as _dt
import re
from collections import Counter
from collections.abc import Iterable
from typing import Literal

from factseek.text import UNSPACED_CHARS

DateOutcome = Literal["exact", "early", "late", "none"]
OUTCOMES: tuple[DateOutcome, ...] = ("exact", "early", "late", "none")

_PUNCT = "\u3000-\u303f"  # CJK punctuation: not a token
_TOKEN = re.compile(rf"(?![{_PUNCT}])[{UNSPACED_CHARS}]|[^\W_{UNSPACED_CHARS}]+")


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens; each character of an unspaced script is one token."""
    return _TOKEN.findall(text.lower())


def token_prf(predicted: str, gold: str) -> tuple[float, float, float]:
    """(precision, recall, F1) of the predicted text's tokens against the gold text's.

    Two empty texts score (1, 1, 1); one empty text scores 0 on the side it empties.
    """
    p, g = Counter(tokens(predicted)), Counter(tokens(gold))
    if not p and not g:
        return 1.0, 1.0, 1.0
    overlap = sum((p & g).values())
    precision = overlap / sum(p.values()) if p else 0.0
    recall = overlap / sum(g.values()) if g else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def date_outcome(predicted: _dt.date | None, true: _dt.date) -> DateOutcome:
    """How a chosen date compares with the true publication date."""
    if predicted is None:
        return "none"
    if predicted == true:
        return "exact"
    return "early" if predicted < true else "late"


def outcome_rates(outcomes: Iterable[DateOutcome]) -> dict[DateOutcome, float]:
    """The share of each outcome (all four keys; an empty input raises ``ValueError``)."""
    counts = Counter(outcomes)
    n = sum(counts.values())
    if n == 0:
        raise ValueError("no outcomes to rate")
    return {o: counts[o] / n for o in OUTCOMES}
