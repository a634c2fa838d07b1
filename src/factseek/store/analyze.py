"""Fast, exact equivalents of the shared analyzer and URL parsing, for indexing millions of pages.

* ``Vocabulary`` maps terms to ids; the stop words of ``factseek.text`` map to -1 and are
  dropped, so the kept ids are exactly the terms of ``factseek.text.tokenize`` (same regex, same
  stop words). ``Vocabulary.term_ids`` does it for a batch of lower-cased documents: runs of
  ASCII documents in one numba pass (``kernels.ascii_term_ids``: words are the runs of
  ``[a-z0-9]``, which is what the regex matches in lower-cased ASCII, looked up in an exact hash
  table that mirrors the dict), anything else with the regex and C-speed dict lookups. Term ids
  are given in order of first appearance either way.
* ``record_lines``: a document's stored JSONL line and hit card, the bytes of ``json.dumps``.
* ``host_path`` is ``factseek.constraints.hits.url_host_path`` with a regex fast path for plain
  ``http(s)://host[:port]/path`` URLs; anything unusual goes to ``url_host_path`` itself.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Iterable, Sequence
from json.encoder import encode_basestring as _json_str  # json.dumps's (C) string encoder

import numpy as np

from factseek.constraints.hits import url_host_path
from factseek.text import STOPWORDS, WORD_RE
from factseek.types import Document

STOP = -1
#: A store's first ASCII batch takes the numba path when its text is at least this long: below
#: that, loading the cached kernels (~0.2 s) costs more than the regex (~20k short documents).
ASCII_MIN_CHARS = 1 << 19
#: Common non-ASCII characters that are not word characters (spaces, dashes, quotes, bullets,
#: currency and other signs): a document whose only non-ASCII characters are these gets the same
#: words with them replaced by spaces, so it can take the ASCII path.
_NON_WORD = "".join(
    ch
    for ch in (
        "\u00a0\u00a3\u00a7\u00a9\u00ab\u00ae\u00b0\u00b4\u00b6\u00b7\u00bb\u00d7\u00f7"
        + "".join(map(chr, range(0x2000, 0x2070)))
        + "\u20ac\u2122\u2190\u2192\u2212\u3000\ufeff"
    )
    if WORD_RE.search(ch) is None  # never a word character, whatever the table above says
)
_NON_WORD_RE = re.compile("[" + re.escape(_NON_WORD) + "]")
SNIPPET_CHARS = 300
_SIMPLE_URL = re.compile(r"(?i)https?://([a-z0-9.\-]+)(?::\d+)?([/?#]|$)")
_QUERY_OR_FRAGMENT = re.compile(r"[?#]")


class _AsciiTable:
    """The ASCII entries of a ``Vocabulary`` as the hash table of ``kernels.ascii_term_ids``
    (rows of hash, id and length, first 16 key bytes; every key in ``keys``)."""

    def __init__(self) -> None:
        self.slots = np.zeros((1 << 12, 4), np.int64)
        self.slot_off = np.zeros(1 << 12, np.int64)
        self.keys = np.zeros(1 << 16, np.uint8)
        self.state = np.zeros(4, np.int64)  # entries, key bytes used, next id, new in last call

    def reserve(self, entries: int, key_bytes: int) -> None:
        """Room for ``entries`` more entries (load <= 1/2) and ``key_bytes`` more key bytes."""
        used = int(self.state[1]) + key_bytes
        if used > len(self.keys):  # grows at least twofold
            grown = np.zeros(max(used, 2 * len(self.keys)), np.uint8)
            grown[: len(self.keys)] = self.keys
            self.keys = grown
        need = 2 * (int(self.state[0]) + entries)
        if need > len(self.slots):
            from factseek.store import kernels

            size = 1 << (need - 1).bit_length()
            old, old_off = self.slots, self.slot_off
            self.slots = np.zeros((size, 4), np.int64)
            self.slot_off = np.zeros(size, np.int64)
            kernels.table_rehash(old, old_off, self.slots, self.slot_off)

    def arrays(self) -> tuple[np.ndarray, ...]:
        return (self.slots, self.slot_off, self.keys, self.state)

    def insert(self, terms: Sequence[str], ids: Sequence[int]) -> None:
        """Add ASCII ``terms`` with their ids."""
        from factseek.store import kernels

        if not terms:
            return
        buf, starts, ends = _joined(terms)
        self.reserve(len(terms), len(buf) + len(terms))
        kernels.table_insert(buf, starts, ends, np.asarray(ids, np.int64), *self.arrays())

    def keys_from(self, used: int) -> list[str]:
        """The keys added since ``state[1]`` was ``used``, in order."""
        return self.keys[used : int(self.state[1])].tobytes().decode("ascii").split("\n")[:-1]


def _plain(text: str) -> str:
    """``text`` with its common non-word non-ASCII characters as spaces when that leaves it
    ASCII (the same words), else ``text``."""
    plain = _NON_WORD_RE.sub(" ", text)
    return plain if plain.isascii() else text


def _joined(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ASCII ``texts`` as one byte array joined by newlines, with each one's start and end."""
    buf = np.frombuffer("\n".join(texts).encode("ascii"), np.uint8)
    lens = np.fromiter(map(len, texts), np.int64, len(texts))
    ends = np.cumsum(lens + 1) - 1
    return buf, ends - lens, ends


class Vocabulary(dict[str, int]):
    """term -> id, assigning the next id to an unseen term; stop words map to ``STOP``."""

    def __init__(self, terms: Iterable[str] = ()) -> None:
        super().__init__((w, STOP) for w in STOPWORDS)
        self.terms: list[str] = []
        self._table: _AsciiTable | None = None  # built by the first ASCII batch
        self._untabled: list[str] = []  # ASCII terms added by the regex path since then
        for t in terms:
            self[t]

    def __missing__(self, term: str) -> int:
        i = len(self.terms)
        self.terms.append(term)
        self[term] = i
        if self._table is not None and term.isascii():
            self._untabled.append(term)
        return i

    def known(self, term: str) -> int | None:
        """The id of an indexed term, or None (never assigns)."""
        i = self.get(term)
        return None if i is None or i == STOP else i

    def term_ids(self, lowered: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """For lower-cased documents: the ids of their terms (stop words dropped), in order, and
        each document's number of terms; unseen terms get ids in order of first appearance."""
        ids: list[np.ndarray] = []
        lens: list[np.ndarray] = []
        if self._table is None and sum(map(len, lowered)) < ASCII_MIN_CHARS:
            return self._regex_ids(lowered)  # a small store: never loads the numba kernels
        lowered = [t if t.isascii() else _plain(t) for t in lowered]
        flags = [t.isascii() for t in lowered]
        start = 0
        while start < len(lowered):
            end = start + 1
            while end < len(lowered) and flags[end] == flags[start]:
                end += 1
            run = lowered[start:end]
            i, n = self._ascii_ids(run) if flags[start] else self._regex_ids(run)
            ids.append(i)
            lens.append(n)
            start = end
        if not ids:
            return np.zeros(0, np.int32), np.zeros(0, np.int32)
        return np.concatenate(ids), np.concatenate(lens)

    def _regex_ids(self, lowered: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        findall, word_ids = WORD_RE.findall, self.__getitem__
        tokens, raw_len = array("i"), array("i")
        for text in lowered:
            words = findall(text)
            tokens.extend(map(word_ids, words))  # stop words become STOP, dropped below
            raw_len.append(len(words))
        return drop_stop_words(np.frombuffer(tokens, np.int32), np.frombuffer(raw_len, np.int32))

    def _ascii_ids(self, lowered: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        from factseek.store import kernels

        table = self._table
        if table is None:
            table = self._table = _AsciiTable()
            old = [(w, i) for w, i in self.items() if w.isascii()]
            table.insert([w for w, _ in old], [i for _, i in old])
        elif self._untabled:
            table.insert(self._untabled, [self[w] for w in self._untabled])
        self._untabled = []
        buf, starts, ends = _joined(lowered)
        out = np.empty(len(buf) // 2 + len(lowered), np.int32)  # words at most
        doc_len = np.empty(len(lowered), np.int32)
        first, used = len(self.terms), int(table.state[1])
        table.state[2], table.state[3] = first, 0
        d = n = 0
        while True:
            d, n = kernels.ascii_term_ids(
                buf, starts, ends, d, n, STOP, *table.arrays(), out, doc_len
            )
            if d == len(lowered):
                break
            size, most = int(ends[d] - starts[d]), int(ends[d] - starts[d]) // 2 + 1
            table.reserve(most, size + most)  # room for document d (the table at least doubles)
        fresh = table.keys_from(used)  # the new terms' keys, appended in order of appearance
        assert len(fresh) == table.state[3]
        self.terms.extend(fresh)
        self.update(zip(fresh, range(first, first + len(fresh)), strict=True))
        return out[:n].copy(), doc_len


def drop_stop_words(tokens: np.ndarray, raw_len: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Term ids without ``STOP``, and each document's count of them, from ids with stop words
    and each document's count of words."""
    keep = tokens != STOP
    kept = np.concatenate([[0], np.cumsum(keep, dtype=np.int64)])
    ends = np.cumsum(raw_len, dtype=np.int64)
    doc_len = (kept[ends] - kept[ends - raw_len]).astype(np.int32)
    return tokens[keep], doc_len


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


def record_lines(doc: Document, doc_id: str) -> tuple[bytes, bytes]:
    """The document's JSONL line and its hit card line: the bytes of ``record_lines_json``,
    spelled out with the C string encoder (``json.dumps`` builds an encoder per call)."""
    published = doc.published.isoformat() if doc.published else ""
    domain = doc.domain or url_host_path(doc.url)[0]
    url, title, text = doc.url, doc.title, doc.text
    if not (type(doc_id) is type(url) is type(title) is type(text) is type(domain) is str):
        return record_lines_json(doc, doc_id)
    q = _json_str
    line = (
        f'{{"id": {q(doc_id)}, "url": {q(url)}, "title": {q(title)}, "text": {q(text)}, '
        f'"published": {q(published)}, "domain": {q(domain)}'
    )
    if doc.modified is not None:
        line += f', "modified": {q(doc.modified.isoformat())}'
    if doc.meta:
        line += ', "meta": ' + json.dumps(dict(doc.meta), ensure_ascii=False)
    card = f"[{q(doc_id)}, {q(url)}, {q(title)}, {q(published)}, {q(snippet(text))}]\n"
    return (line + "}\n").encode("utf-8"), card.encode("utf-8")


def record_lines_json(doc: Document, doc_id: str) -> tuple[bytes, bytes]:
    """``record_lines`` by ``json.dumps`` (for fields that are not plain strings)."""
    published = doc.published.isoformat() if doc.published else ""
    rec = {
        "id": doc_id,
        "url": doc.url,
        "title": doc.title,
        "text": doc.text,
        "published": published,
        "domain": doc.domain or url_host_path(doc.url)[0],
    }
    if doc.modified is not None:  # only when known: stores without it read as before
        rec["modified"] = doc.modified.isoformat()
    if doc.meta:
        rec["meta"] = dict(doc.meta)
    card = [doc_id, doc.url, doc.title, published, snippet(doc.text)]
    return (
        (json.dumps(rec, ensure_ascii=False) + "\n").encode("utf-8"),
        (json.dumps(card, ensure_ascii=False) + "\n").encode("utf-8"),
    )
