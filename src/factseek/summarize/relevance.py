"""Is a sentence about what the question asks? Relevance before stance.

A stance reader asked "does this sentence support the claim?" answers about whatever the
sentence says, also when it is about something else of the same place or person: for "The state
grant for the new Marlow Heights library was $11 million", "The city council voted 5-2 to buy
two buses for the Marlow Heights transit system" was read as refuting at 0.65 and blocked the
verdict that the deciding sentence (supports 0.88) gave. Local pages share their place and
people; what a claim is *about* is in its other words.

``subject_terms(question)``: the stems of the question's common nouns (spaCy's tagger; without
spaCy, its content words not written with a capital inside the sentence, unless the sentence is
in title case, as headlines often are), not numbers, dates, units or the words a yes/no question
adds ("did", "true"). For the grant: grant, library, state.

``about(question, text)``: ``text`` shares at least one subject term of ``question`` (always
true when the question has none). ``off_topic_reading``: a refuting reading of a sentence that
is not about its question takes no side, with a note (``EvidenceConfig.off_topic``, **off by
default**: on AVeriTeC dev it also set aside right refutations; docs/verdicts.md).
`bench/bench_fnc1.py` prints how many FNC-1 bodies are about their headline.

``RelevanceModel`` scores a whole page: the IDF-weighted share of the question's terms that it
holds, with document frequencies from a collection of pages (FNC-1's bodies in the bench, whose
related / unrelated split it scores).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from factseek.errors import MissingDependency
from factseek.text import MONTHS, STOPWORDS, WORD_RE, stem, tokenize
from factseek.types import StanceResult

#: Words that say nothing of a question's subject: what a yes/no question adds, months, days.
NOT_SUBJECT = frozenset(
    [
        *MONTHS,
        "did",
        "does",
        "do",
        "is",
        "was",
        "were",
        "are",
        "has",
        "have",
        "had",
        "true",
        "false",
        "claim",
        "claimed",
        "say",
        "said",
        "says",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "year",
        "years",
        "month",
        "months",
        "week",
        "weeks",
        "day",
        "days",
        "today",
        "yesterday",
        "percent",
        "million",
        "billion",
        "thousand",
        "hundred",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "twelve",
        "twenty",
        "dozen",
        "new",
        "old",
        "first",
        "last",
        "more",
        "less",
        "many",
        "much",
        "also",
        "just",
        "now",
        "still",
        "since",
        "until",
        "ago",
        "time",
        "times",
        "number",
        "amount",
        "total",
        "percentage",
        "rate",
        "share",
        "level",
        "part",
    ]
)


@lru_cache(maxsize=4096)
def subject_terms(question: str) -> frozenset[str]:
    """The stems of the question's common nouns (by spaCy's tagger), not names, numbers, units
    or dates; without spaCy, of its content words not written with a capital (the module
    docstring)."""
    try:
        from factseek.ml.nlp import load_spacy

        doc = load_spacy()(question[:2_000])
    except MissingDependency:
        return _subject_by_case(question)
    return frozenset(
        stem(t.lower_)
        for t in doc
        if t.pos_ == "NOUN"
        and t.is_alpha
        and len(t) > 2
        and t.lower_ not in NOT_SUBJECT
        and t.lower_ not in STOPWORDS
    )


def _subject_by_case(question: str) -> frozenset[str]:
    tokens = WORD_RE.findall(question)
    words = [w for w in tokens if w.isalpha()]
    title_case = len(words) >= 3 and sum(w[0].isupper() for w in words) > 0.6 * len(words)
    out = set()
    for i, w in enumerate(tokens):
        low = w.lower()
        if not w.isalpha() or low in STOPWORDS or low in NOT_SUBJECT or len(low) < 3:
            continue
        if i > 0 and not title_case and w[0].isupper():
            continue  # a name: shared by every page of its place or person
        out.add(stem(low))
    return frozenset(out)


def about(question: str, text: str | frozenset[str]) -> bool:
    """Whether ``text`` (or its stems) shares a subject term of ``question``."""
    subject = subject_terms(question)
    if not subject:
        return True
    have = text if isinstance(text, frozenset) else stems(text)
    return not subject.isdisjoint(have)


def off_topic_reading(
    question: str, text: str, reading: StanceResult | None
) -> tuple[StanceResult | None, str]:
    """A refuting reading of a sentence that is not ``about`` the question takes no side, with
    the note that says so; any other reading is kept ("")."""
    if reading is None or reading.label != "refutes" or about(question, text):
        return reading, ""
    words = ", ".join(sorted(subject_terms(question)))
    probs = dict(reading.probs)
    return (
        StanceResult(label="nei", probs=probs, model=reading.model),
        f"not about the question (none of its subject words: {words}); the reader said "
        f"refutes {reading.confidence:.2f}, so it takes no side",
    )


def stems(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in re.findall(r"[^\W\d_]+", text.lower()))


#: A page below this share of the question's IDF-weighted terms is not about it (FNC-1 dev).
GATE = 0.2


@dataclass(frozen=True)
class RelevanceModel:
    """Document frequencies of a collection of pages, and the gate."""

    df: dict[str, int] = field(default_factory=dict)
    n: int = 0
    gate: float = GATE

    @classmethod
    def fit(cls, pages: Iterable[str], gate: float = GATE) -> RelevanceModel:
        df: Counter[str] = Counter()
        n = 0
        for text in pages:
            df.update(_terms(text))
            n += 1
        return cls(dict(df), n, gate)

    def idf(self, term: str) -> float:
        return math.log(1.0 + (self.n + 1) / (self.df.get(term, 0) + 0.5))

    def score(self, question: str, page: str | frozenset[str]) -> float:
        """Share of the question's IDF-weighted terms that ``page`` (text or terms) holds."""
        terms = _terms(question)
        if not terms:
            return 0.0
        have = page if isinstance(page, frozenset) else _terms(page)
        ordered = sorted(terms)
        total = math.fsum(self.idf(t) for t in ordered)
        return math.fsum(self.idf(t) for t in ordered if t in have) / total


def _terms(text: str) -> frozenset[str]:
    """The stems of ``text``'s words without stop words (``text.tokenize``)."""
    return frozenset(stem(w) for w in tokenize(text))
