"""Second-stage retrieval: BM25 over short word windows of the kept documents.

``select_passages(documents, queries, cfg)`` does what the paper describes and its public code
does (see docs/passages.md for every decision):

1. Words are ``document.text.split()`` tokens. Each document is cut into windows of
   ``cfg.window`` words every ``cfg.stride`` words; when the strided windows stop short of the
   end, one more window covers the last ``cfg.window`` words. A document shorter than a
   window is one window; an empty document has none.
2. Every window is scored with BM25 against every query. Terms are ``factseek.text.tokenize``
   terms; statistics (document frequency, average length) are over all windows of this call.
   IDF is Lucene's ``log(1 + (N - df + 0.5) / (df + 0.5))``; each distinct query term counts once.
3. Each query nominates its ``cfg.per_query`` best windows (5, the paper code's ``--num``);
   the nominations are pooled, a window nominated by several queries counting once at its best
   nominated score, and the ``cfg.top_windows`` best pooled windows are kept. Windows with
   score 0 are never nominated; a window whose words repeat an earlier window's words exactly
   is that earlier window (the paper's code keys windows by their text), so a query's
   nominations are distinct texts.
4. Each kept window is widened by ``cfg.context`` words on both sides within its document,
   and overlapping or touching spans are merged.
5. Documents are ranked by their best kept window; the top ``cfg.top_docs`` are returned with
   all their merged spans. Ties are broken by document order, then by window start.

Ranking ties are broken by window order (document order, then start) everywhere. The
implementation is vectorised with numpy over one concatenated text, so a claim's 45 pages
(~70k words, 10 questions) take about 10 ms of one core; ``tests/test_passages.py`` checks it
against a plain Python reference on randomised inputs.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from factseek.errors import ConfigError
from factseek.text import STOPWORDS, tokenize
from factseek.types import Document, Passage

__all__ = ["DEFAULT_SPANS", "SpanConfig", "select_passages", "window_starts"]


@dataclass(frozen=True, kw_only=True)
class SpanConfig:
    """Second-stage settings. Defaults are the paper's (k1=30 words, stride 15, K1=10, k2=150, K2=4).

    ``window`` is the paper's k1 (a window size in words); ``per_query`` is how many windows
    each query nominates (its code's ``--num``); ``bm25_k1``/``bm25_b`` are BM25's saturation and
    length-normalisation parameters (rank_bm25's and bm25s's defaults).
    """

    window: int = 30
    stride: int = 15
    per_query: int = 5
    top_windows: int = 10
    context: int = 150
    top_docs: int = 4
    bm25_k1: float = 1.5
    bm25_b: float = 0.75

    def __post_init__(self) -> None:
        if self.window < 1:
            raise ConfigError(f"window must be >= 1 word, got {self.window}")
        if not 1 <= self.stride <= self.window:
            raise ConfigError(f"stride must be in 1..window ({self.window}), got {self.stride}")
        if min(self.per_query, self.top_windows, self.top_docs) < 1:
            raise ConfigError("per_query, top_windows and top_docs must be >= 1")
        if self.context < 0:
            raise ConfigError(f"context must be >= 0 words, got {self.context}")
        if not (self.bm25_k1 >= 0 and 0 <= self.bm25_b <= 1):
            raise ConfigError(
                f"need bm25_k1 >= 0 and 0 <= bm25_b <= 1, got {self.bm25_k1}, {self.bm25_b}"
            )


DEFAULT_SPANS = SpanConfig()


def window_starts(n_words: int, window: int, stride: int) -> list[int]:
    """Start word of each window of a document of ``n_words`` words (see the module docstring)."""
    if n_words <= 0:
        return []
    if n_words <= window:
        return [0]
    starts = list(range(0, n_words - window + 1, stride))
    if starts[-1] + window < n_words:
        starts.append(n_words - window)
    return starts


# ----------------------------------------------------------------------------- text analysis

_CONTROL_SPACE = np.array([chr(i).isspace() for i in range(32)], dtype=bool)


def _codes(text: str) -> np.ndarray:
    """Code points of ``text``: uint8 when it is ASCII, else uint32 (lone surrogates pass)."""
    if text.isascii():
        return np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")


def _fix_high(out: np.ndarray, codes: np.ndarray, test: Callable[[str], bool]) -> np.ndarray:
    """Apply ``test`` to the non-ASCII code points, once per distinct code point."""
    if codes.dtype != np.uint8:
        high = np.flatnonzero(codes > 127)
        if high.size:
            uniq, inverse = np.unique(codes[high], return_inverse=True)
            out[high] = np.array([test(chr(c)) for c in uniq.tolist()], dtype=bool)[inverse]
    return out


def _is_space(codes: np.ndarray) -> np.ndarray:
    """``str.isspace`` of every code point (the separators of ``str.split``)."""
    out = codes <= 32
    control = np.flatnonzero(codes < 32)
    out[control] = _CONTROL_SPACE[codes[control]]
    return _fix_high(out, codes, str.isspace)


def _is_token(codes: np.ndarray) -> np.ndarray:
    """``str.isalnum`` of every code point (the characters of ``factseek.text.WORD_RE``)."""
    out = ((codes - 48) < 10) | (((codes | 32) - 97) < 26)  # unsigned wrap-around: 0-9, a-z, A-Z
    if codes.dtype != np.uint8:
        out &= codes <= 127
    return _fix_high(out, codes, str.isalnum)


def _runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive) of every run of True."""
    pad = np.zeros(1, dtype=bool)
    edge = np.flatnonzero(np.diff(np.concatenate((pad, mask, pad))))
    return edge[::2], edge[1::2]


_PACKED = 16  # a token's first 16 UTF-8 bytes, as two uint64 words; longer ones go through a dict
_LOW_BYTES = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)
_M64 = (1 << 64) - 1
_MIX_A = 0x9E3779B97F4A7C15
_MIX_B = tuple(((0xBF58476D1CE4E5B9 * (2 * i + 1)) & _M64) | 1 for i in range(16))  # odd


def _words(token: str) -> tuple[int, int] | None:
    """A token's UTF-8 bytes as two little-endian uint64 words (None if over 16 bytes)."""
    b = token.encode("utf-8")
    if len(b) > _PACKED:
        return None
    return int.from_bytes(b[:8], "little"), int.from_bytes(b[8:], "little")


def _slot(k0: int, k1: int, mul: int, bits: int) -> int:
    """The table slot of a packed key; the vectorised twin is in ``_term_ids``."""
    return (((((k0 * _MIX_A) & _M64) ^ k1) * mul) & _M64) >> (64 - bits)


def _perfect_slots(keys: list[tuple[int, int]]) -> tuple[int, int] | None:
    """A multiplier and table size (bits) giving every key its own slot.

    With more slots than keys squared each multiplier succeeds with probability > 0.6, so
    one of the 16 fails to be found about once in ten million calls (up to 1,000 keys).
    """
    bits = min(20, max(10, (len(keys) ** 2).bit_length()))
    for mul in _MIX_B:
        if len({_slot(k0, k1, mul, bits) for k0, k1 in keys}) == len(keys):
            return mul, bits
    return None


def _term_ids(
    data: np.ndarray, start: np.ndarray, end: np.ndarray, lookup: dict[str, int]
) -> np.ndarray:
    """``lookup.get(token, -2)`` for every token ``data[start:end]`` (UTF-8 bytes).

    Vectorised: each token's first 16 bytes are read as two uint64 words, hashed into a small
    collision-free table of the keys, and compared word for word, so the result is exact; the
    rare longer tokens are looked up one by one.
    """
    packed = {w: v for t, v in lookup.items() if (w := _words(t)) is not None}
    table = _perfect_slots(list(packed))
    if table is None:  # no collision-free table (thousands of query terms): one by one
        raw_bytes = data.tobytes()
        get = {t.encode("utf-8"): v for t, v in lookup.items()}.get
        pairs = zip(start.tolist(), end.tolist(), strict=True)
        return np.fromiter((get(raw_bytes[s:e], -2) for s, e in pairs), np.int64, start.size)
    mul, bits = table
    length = end - start
    padded = np.concatenate((data, np.zeros(_PACKED, dtype=np.uint8)))
    raw = np.ndarray(shape=(data.size + 9,), dtype="<u8", buffer=padded, strides=(1,))
    w0 = raw[start] & _LOW_BYTES[np.minimum(length, 8)]
    w1 = raw[start + 8] & _LOW_BYTES[np.minimum(np.maximum(length, 8) - 8, 8)]
    slot = (((w0 * np.uint64(_MIX_A)) ^ w1) * np.uint64(mul)) >> np.uint64(64 - bits)
    t0 = np.zeros(1 << bits, dtype=np.uint64)  # empty slots hold (0, 0): no token is empty
    t1 = np.zeros(1 << bits, dtype=np.uint64)
    tv = np.zeros(1 << bits, dtype=np.int32)  # value + 2
    for (k0, k1), v in packed.items():
        at = _slot(k0, k1, mul, bits)
        t0[at], t1[at], tv[at] = k0, k1, v + 2
    ids = np.where((t0[slot] == w0) & (t1[slot] == w1), tv[slot], 0).astype(np.int64) - 2
    for i in np.flatnonzero(length > _PACKED).tolist():
        ids[i] = lookup.get(bytes(data[start[i] : end[i]]).decode("utf-8"), -2)
    return ids


@dataclass(frozen=True)
class _Analysis:
    """Words (``str.split``) and terms of one text; ids: term index, -1 stop word, -2 other."""

    first_char: np.ndarray  # (n_words,) offset of each word's first character
    end_char: np.ndarray  # (n_words,) offset past each word's last character
    token_word: np.ndarray  # (n_tokens,) word holding each token, nondecreasing
    token_id: np.ndarray  # (n_tokens,)


def _analyse(text: str, terms: list[str]) -> _Analysis:
    """Split ``text`` into words and ``factseek.text`` tokens in a few vectorised passes.

    Tokens are found in the lower-cased text, as ``tokenize`` does; lower-casing keeps every
    character's whitespace status (checked for all code points in the tests), so it has the same
    words in the same order, and a token never spans two words.
    """
    lower = text.lower()
    lcodes = _codes(lower)
    lspace = _is_space(lcodes)
    lword_first, lword_end = _runs(~lspace)
    if len(lower) == len(text):  # every character lower-cased to one: same offsets
        first_char, end_char = lword_first, lword_end
    else:
        first_char, end_char = _runs(~_is_space(_codes(text)))
    token = _is_token(lcodes)
    token_start, token_end = _runs(token)
    token_word = np.searchsorted(lword_first, token_start, side="right") - 1
    lookup = dict.fromkeys(STOPWORDS, -1) | {t: i for i, t in enumerate(terms)}
    if lcodes.dtype == np.uint8:  # ASCII: the characters are the UTF-8 bytes
        token_id = _term_ids(lcodes, token_start, token_end, lookup)
    else:  # tokens as UTF-8, one space between them: the tokens of WORD_RE.findall(lower)
        masked = np.where(token, lcodes, 32).astype("<u4").tobytes().decode("utf-32-le")
        data = np.frombuffer(masked.encode("utf-8"), dtype=np.uint8)
        token_id = _term_ids(data, *_runs(data != 32), lookup)
    return _Analysis(
        first_char=first_char, end_char=end_char, token_word=token_word, token_id=token_id
    )


# ----------------------------------------------------------------------------- the stage


@dataclass(frozen=True)
class _Windows:
    """All windows of a call in (document, start) order; starts and ends strictly increase."""

    doc: np.ndarray  # (W,) document index
    start: np.ndarray  # (W,) first word (global word index)
    end: np.ndarray  # (W,) past the last word
    length: np.ndarray  # (W,) number of terms (tokens that are not stop words)


def select_passages(
    documents: Sequence[Document], queries: Sequence[str], cfg: SpanConfig = DEFAULT_SPANS
) -> list[Passage]:
    """The passages of the best ``cfg.top_docs`` documents, ordered by ``(doc_rank, start_word)``."""
    if isinstance(queries, str):
        raise TypeError("queries must be a sequence of strings, not one string")
    terms = sorted({t for q in queries for t in tokenize(q)})
    if not documents or not terms:
        return []
    big = "\n".join(d.text for d in documents)  # words never span the separator
    text = _analyse(big, terms)
    doc_char0 = np.cumsum([0] + [len(d.text) + 1 for d in documents])
    doc_word0 = np.searchsorted(text.first_char, doc_char0)  # (D + 1,) each document's first word
    win = _windows(doc_word0, text, cfg)
    if win.doc.size == 0:
        return []
    tf_term, tf_win, tf = _term_frequencies(win, text)
    weight = _bm25(tf_term, tf_win, tf, win, len(terms), cfg)
    pooled = _pool(queries, terms, tf_term, tf_win, weight, _WindowText(big, win, text), cfg)
    chosen = sorted(pooled, key=lambda j: (-pooled[j], j))[: cfg.top_windows]
    return _passages(chosen, pooled, win, documents, doc_word0, doc_char0, text, cfg)


def _windows(doc_word0: np.ndarray, text: _Analysis, cfg: SpanConfig) -> _Windows:
    docs: list[np.ndarray] = []
    starts: list[np.ndarray] = []
    ends: list[np.ndarray] = []
    bounds = doc_word0.tolist()
    for d, (w0, w1) in enumerate(itertools.pairwise(bounds)):
        s = np.asarray(window_starts(w1 - w0, cfg.window, cfg.stride), dtype=np.int64)
        docs.append(np.full(s.size, d, dtype=np.int64))
        starts.append(s + w0)
        ends.append(np.minimum(s + cfg.window, w1 - w0) + w0)
    start, end = np.concatenate(starts), np.concatenate(ends)
    content = np.concatenate([[0], (text.token_id != -1).astype(np.int64).cumsum()])
    first, past = np.searchsorted(text.token_word, start), np.searchsorted(text.token_word, end)
    return _Windows(
        doc=np.concatenate(docs), start=start, end=end, length=content[past] - content[first]
    )


def _term_frequencies(win: _Windows, text: _Analysis) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Non-zero term frequencies as (term, window, tf) arrays sorted by (term, window)."""
    occ = np.flatnonzero(text.token_id >= 0)
    word = text.token_word[occ]
    lo = np.searchsorted(win.end, word, side="right")  # first window ending after the word
    hi = np.searchsorted(win.start, word, side="right")  # past the last starting at/before it
    count = hi - lo  # windows holding this occurrence (1 or 2 with stride = window / 2)
    first = np.repeat(np.cumsum(count) - count, count)
    window = np.repeat(lo, count) + (np.arange(first.size) - first)
    n = win.doc.size
    key, tf = np.unique(np.repeat(text.token_id[occ], count) * n + window, return_counts=True)
    return key // n, key % n, tf


def _bm25(
    tf_term: np.ndarray,
    tf_win: np.ndarray,
    tf: np.ndarray,
    win: _Windows,
    n_terms: int,
    cfg: SpanConfig,
) -> np.ndarray:
    """BM25 weight of each (term, window) pair, in the reference's order of float operations."""
    n = win.doc.size
    idf = np.array(
        [
            math.log(1.0 + (n - f + 0.5) / (f + 0.5))
            for f in np.bincount(tf_term, minlength=n_terms).tolist()
        ]
    )
    if tf.size == 0:
        return np.zeros(0)
    avg = int(win.length.sum()) / n  # > 0 since some window holds a term
    k1, b = cfg.bm25_k1, cfg.bm25_b
    return idf[tf_term] * (tf * (k1 + 1)) / (tf + k1 * (1 - b + b * win.length[tf_win] / avg))


class _WindowText:
    """A window's words, computed once per window: the identity used to drop repeated windows."""

    def __init__(self, big: str, win: _Windows, text: _Analysis) -> None:
        self.big, self.win, self.text = big, win, text
        self.cache: dict[int, tuple[str, ...]] = {}

    def __call__(self, j: int) -> tuple[str, ...]:
        if j not in self.cache:
            first = self.text.first_char[self.win.start[j]]
            self.cache[j] = tuple(self.big[first : self.text.end_char[self.win.end[j] - 1]].split())
        return self.cache[j]


def _pool(
    queries: Sequence[str],
    terms: list[str],
    tf_term: np.ndarray,
    tf_win: np.ndarray,
    weight: np.ndarray,
    words: _WindowText,
    cfg: SpanConfig,
) -> dict[int, float]:
    """Window -> best score among the queries that nominated it."""
    index = {t: i for i, t in enumerate(terms)}
    n = words.win.doc.size
    pooled: dict[int, float] = {}
    seen: set[frozenset[int]] = set()
    for q in queries:
        qterms = frozenset(index[t] for t in tokenize(q))
        if not qterms or qterms in seen:
            continue
        seen.add(qterms)
        member = np.zeros(len(terms), dtype=bool)
        member[list(qterms)] = True
        keep = member[tf_term]  # pairs are sorted by term, and bincount adds in input order
        scores = np.bincount(tf_win[keep], weights=weight[keep], minlength=n)
        for j in _nominate(scores, cfg.per_query, words):
            pooled[j] = max(pooled.get(j, 0.0), float(scores[j]))
    return pooled


def _nominate(scores: np.ndarray, k: int, words: _WindowText) -> list[int]:
    """The ``k`` best windows with a positive score by ``(-score, window)``, distinct in words."""
    positive = np.flatnonzero(scores > 0)
    cand = positive
    if positive.size > 4 * k:  # sort only the best 4k (and their ties) unless repeats use them up
        cut = np.partition(scores[positive], positive.size - 4 * k)[positive.size - 4 * k]
        cand = positive[scores[positive] >= cut]
    while True:
        chosen: list[int] = []
        seen: set[tuple[str, ...]] = set()
        for j in cand[np.lexsort((cand, -scores[cand]))].tolist():
            if words(j) not in seen:
                seen.add(words(j))
                chosen.append(j)
                if len(chosen) == k:
                    return chosen
        if cand.size == positive.size:
            return chosen
        cand = positive


def _passages(
    chosen: list[int],
    best: dict[int, float],
    win: _Windows,
    documents: Sequence[Document],
    doc_word0: np.ndarray,
    doc_char0: np.ndarray,
    text: _Analysis,
    cfg: SpanConfig,
) -> list[Passage]:
    """Widen, merge, rank documents by their best window, and build the records."""
    by_doc: dict[int, list[int]] = {}
    for j in chosen:  # best first, so each document's first window is its best
        by_doc.setdefault(int(win.doc[j]), []).append(j)
    ranked = sorted(by_doc, key=lambda d: (-best[by_doc[d][0]], d))[: cfg.top_docs]
    out: list[Passage] = []
    for rank, d in enumerate(ranked):
        doc, w0, c0 = documents[d], int(doc_word0[d]), int(doc_char0[d])
        n = int(doc_word0[d + 1]) - w0
        spans: list[tuple[int, int, float]] = []  # (start word, end word, best score), merged
        for j in sorted(by_doc[d], key=lambda j: int(win.start[j])):
            s = max(0, int(win.start[j]) - w0 - cfg.context)
            e = min(n, int(win.end[j]) - w0 + cfg.context)
            score = best[j]
            if spans and s <= spans[-1][1]:
                ps, pe, pscore = spans[-1]
                spans[-1] = (ps, max(pe, e), max(pscore, score))
            else:
                spans.append((s, e, score))
        for s, e, score in spans:
            cs = int(text.first_char[w0 + s]) - c0
            ce = int(text.end_char[w0 + e - 1]) - c0
            out.append(
                Passage(
                    url=doc.url,
                    title=doc.title,
                    text=doc.text[cs:ce],
                    doc_rank=rank,
                    score=score,
                    start_word=s,
                    end_word=e,
                    start_char=cs,
                    end_char=ce,
                )
            )
    return out
