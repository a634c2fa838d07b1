"""Shared text analysis for lexical retrieval: one tokenizer, one stop-word list.

Every BM25 in factseek (knowledge store, second-stage passages, rewrite environment) uses
``tokenize`` so that the same query means the same terms everywhere: lower-cased runs of
letters and digits (``\\w+`` minus underscores), English stop words removed, no stemming.

**Text length.** How long a text is, counted the same way in every script.

Chinese, Japanese, Thai, Lao, Khmer and Burmese are written without spaces between words, so
``len(text.split())`` calls a whole Japanese article a handful of "words". ``text_units``
counts space-separated words, plus one word per ``CHARS_PER_WORD`` characters of those scripts
(a Chinese or Japanese word averages about two characters), so a threshold such as "at least 25
words" means about the same amount of text in any language.
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


#: The months' names, lower-cased, January first.
MONTHS: tuple[str, ...] = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip
#: A month's name, whole or abbreviated ("Sept.", "June"), as a regular expression (no groups).
MONTH_NAME = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
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


# ----------------------------------------------------------------------------- text length

#: Characters of scripts written without spaces: CJK punctuation, kana, Han, Thai, Lao, Khmer, Myanmar.
UNSPACED_CHARS = (
    "\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u0e00-\u0eff\u1780-\u17ff\u1000-\u109f"
)
_UNSPACED = re.compile(f"[{UNSPACED_CHARS}]")
CHARS_PER_WORD = 2


def text_units(text: str) -> int:
    """Words, script-aware: spaced words, plus one per ``CHARS_PER_WORD`` unspaced characters.

    ``"The council met."`` is 3; ``"市議会は予算案を可決した。"`` is 6 (13 characters).
    """
    unspaced = len(_UNSPACED.findall(text))
    if not unspaced:
        return len(text.split())
    return len(_UNSPACED.sub(" ", text).split()) + unspaced // CHARS_PER_WORD
