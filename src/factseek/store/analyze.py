"""Fast, exact equivalents of the shared analyzer and URL parsing, for indexing millions of pages.

* ``Vocabulary`` maps terms to ids with C-speed lookups (``map(vocab.__getitem__, words)``); the
  stop words of ``factseek.text`` map to -1 and are dropped afterwards, so the kept ids are
  exactly the terms of ``factseek.text.tokenize`` (same regex, same stop words).
* ``host_path`` is ``factseek.constraints.hits.url_host_path`` with a regex fast path for plain
  ``http(s)://host[:port]/path`` URLs; anything unusual goes to ``url_host_path`` itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from factseek.constraints.hits import url_host_path
from factseek.text import STOPWORDS, WORD_RE

STOP = -1
SNIPPET_CHARS = 300
_SIMPLE_URL = re.compile(r"(?i)https?://([a-z0-9.\-]+)(?::\d+)?([/?#]|$)")
_QUERY_OR_FRAGMENT = re.compile(r"[?#]")


class Vocabulary(dict[str, int]):
    """term -> id, assigning the next id to an unseen term; stop words map to ``STOP``."""

    def __init__(self, terms: Iterable[str] = ()) -> None:
        super().__init__((w, STOP) for w in STOPWORDS)
        self.terms: list[str] = []
        for t in terms:
            self[t]

    def __missing__(self, term: str) -> int:
        i = len(self.terms)
        self.terms.append(term)
        self[term] = i
        return i

    def known(self, term: str) -> int | None:
        """The id of an indexed term, or None (never assigns)."""
        i = self.get(term)
        return None if i is None or i == STOP else i


def raw_words(text: str) -> list[str]:
    """``factseek.text.words``: every lower-cased word, stop words included."""
    return WORD_RE.findall(text.lower())


def host_path(url: str) -> tuple[str, str]:
    """Exactly ``url_host_path(url)``, faster for ordinary URLs."""
    m = _SIMPLE_URL.match(url)
    if m is None:
        return url_host_path(url)
    host = m.group(1).lower()
    if host.startswith("www."):
        host = host[4:]
    rest = url[m.start(2) :]
    path = _QUERY_OR_FRAGMENT.split(rest, maxsplit=1)[0]
    return host, path or "/"


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    """The first ``limit`` characters of ``text`` on a word boundary, whitespace collapsed."""
    flat = " ".join(text[: limit * 2].split())
    if len(flat) <= limit:
        return flat
    return flat[:limit].rsplit(" ", 1)[0] + " …"
