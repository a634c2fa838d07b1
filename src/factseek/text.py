"""Shared text analysis for lexical retrieval: one tokenizer, one stop-word list.

Every BM25 in factseek (knowledge store, second-stage passages, rewrite environment) uses
``tokenize`` so that the same query means the same terms everywhere: lower-cased runs of
letters and digits (``\\w+`` minus underscores), English stop words removed, no stemming.
"""

from __future__ import annotations

import re

WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)

# A compact English stop-word list (the common core of the NLTK and Lucene lists).
STOPWORDS: frozenset[str] = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
    ]
)


def words(text: str) -> list[str]:
    """Lower-cased word tokens, stop words kept."""
    return WORD_RE.findall(text.lower())


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens without stop words: the terms every factseek BM25 indexes."""
    return [w for w in WORD_RE.findall(text.lower()) if w not in STOPWORDS]


_SUFFIXES = ("ing", "ed", "es", "s")


def stem(token: str) -> str:
    """A light stem for matching words across forms: one suffix (-ing, -ed, -es, -s) off when 3
    letters stay, then the first 5 letters ("bills" and "billing" -> "bill", "rising" ->
    "ris"). Permissive on purpose: used to match words, never shown."""
    for suffix in _SUFFIXES:
        if token.endswith(suffix) and len(token) - len(suffix) >= 3:
            token = token[: -len(suffix)]
            break
    return token[:5]
