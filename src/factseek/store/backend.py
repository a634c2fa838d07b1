"""``StoreBackend``: the local knowledge store as a ``SearchBackend`` (registered as "local").

Constraints are applied inside the index: every posting's document is checked against a
per-document gate (``factseek.store.filters``) while scoring, so a top-k is the top-k of the
allowed documents, never a short list filtered afterwards. Modes:

* ``bm25`` (default): exact BM25 top-k (``factseek.store.kernels.bm25_search``; with
  ``blocks = True``, ``blockmax.bm25_search_blocks`` where the store has block maxima; a small store
  is searched in numpy with the same results, ``factseek.store.smallsearch``, so a command on it
  never loads numba).
* ``dense``: cosine similarity to the query's vector (store built with ``--dense``).
* ``hybrid``: reciprocal-rank fusion (``1 / (60 + rank)``) of the two lists, each ``depth`` deep.

Ties are broken by document number (insertion order), so results are deterministic.
"""

from __future__ import annotations

import datetime as _dt
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from factseek.constraints.hits import Constraints
from factseek.errors import ConfigError, SearchError, StoreError
from factseek.ml.encode import Encoder
from factseek.redact import redact_url
from factseek.search.base import Capabilities
from factseek.store import smallsearch
from factseek.store.reader import Store
from factseek.text import tokenize
from factseek.types import Document, Hit

SearchMode = Literal["bm25", "dense", "hybrid"]
MODES: tuple[str, ...] = ("bm25", "dense", "hybrid")
MAX_RESULTS = 10_000
RRF_K = 60
HYBRID_DEPTH = 100
PRODUCED_CACHE = 100_000  # recent hits whose documents can be fetched without the id table


class StoreBackend:
    """Search a knowledge store; ``documents(hits)`` gives the full texts of its hits."""

    name = "local"
    capabilities = Capabilities(
        date_filter=True, domain_exclusion=True, max_results=MAX_RESULTS, audit=True
    )

    def __init__(
        self,
        store: Store,
        *,
        mode: SearchMode = "bm25",
        encoder: Encoder | None = None,
        prune: bool = True,
    ) -> None:
        if mode not in MODES:
            raise ConfigError(
                f"unknown store search mode {mode!r}; choose one of: {', '.join(MODES)}"
            )
        if mode != "bm25" and not store.config.dense_encoder:
            raise ConfigError(f"mode {mode!r} needs dense vectors; rebuild the store with --dense")
        self.store = store
        self.mode = mode
        self.prune = prune
        self.blocks = False  # True: skip blocks by their block maxima (exact, not faster here)
        self.block_stats = np.zeros(2, np.int64)  # blocks read / skipped (approximate if threaded)
        self._encoder = encoder
        self._local = threading.local()
        self._dense: list[tuple[int, np.ndarray]] | None = None
        self._produced: dict[str, int] = {}  # doc_id -> number of recent hits (thread-safe ops)

    @classmethod
    def open(
        cls,
        store: str | Path,
        *,
        mode: SearchMode = "bm25",
        encoder: Encoder | None = None,
        prune: bool = True,
    ) -> StoreBackend:
        """Open the store folder ``store`` (``StoreError`` if missing or corrupt)."""
        return cls(Store.open(store), mode=mode, encoder=encoder, prune=prune)

    # ------------------------------------------------------------------ search

    def search(self, query: str, k: int, constraints: Constraints) -> list[Hit]:
        """Up to ``k`` hits for ``query`` among documents that satisfy ``constraints``."""
        k = min(int(k), MAX_RESULTS)
        if k <= 0 or len(self.store) == 0:
            return []
        if self.mode == "bm25":
            docs, scores = self.bm25(query, k, constraints)
        elif self.mode == "dense":
            docs, scores = self.dense(query, k, constraints)
        else:
            docs, scores = self.hybrid(query, k, constraints)
        nums = docs.tolist()
        if len(self._produced) > PRODUCED_CACHE:
            self._produced = {}  # older hits fall back to the full id table
        cards = self.store.cards(nums)
        hits = []
        for rank, (i, score, card) in enumerate(zip(nums, scores.tolist(), cards, strict=True), 1):
            doc_id, url, title, published, snip = card
            self._produced[doc_id] = i
            if doc_id == url and (shown := redact_url(url)) != url:  # a store built before
                self._produced[shown] = i  # redaction at build: hits are redacted at search
            hits.append(
                Hit(
                    url=url,
                    title=title,
                    snippet=snip,
                    published=_dt.date.fromisoformat(published) if published else None,
                    rank=rank,
                    score=score,
                    query=query,
                    backend=self.name,
                    doc_id=doc_id,
                )
            )
        return hits

    def query_terms(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """Known term ids of ``query`` and their counts (a repeated term weighs more)."""
        vocab = self.store.vocab
        counts: dict[int, int] = {}
        for t in tokenize(query):
            i = vocab.get(t)
            if i is not None:
                counts[i] = counts.get(i, 0) + 1
        return (
            np.fromiter(counts.keys(), np.int32, len(counts)),
            np.fromiter(counts.values(), np.float32, len(counts)),
        )

    def bm25(self, query: str, k: int, constraints: Constraints) -> tuple[np.ndarray, np.ndarray]:
        """Document numbers and BM25 scores of the top ``k`` allowed documents."""
        terms, weights = self.query_terms(query)
        if len(terms) == 0:
            return np.zeros(0, np.int32), np.zeros(0, np.float32)
        s = self.store
        s.check_postings(terms)  # a damaged posting list is an error, never a wild read
        args = (s.indptr, s.postings_doc, s.postings_impact, s.term_max, terms, weights)
        if len(s.postings_doc) <= smallsearch.NUMPY_MAX_POSTINGS:
            gate = s.gates.gate(constraints)
            window = (gate.gate, gate.lo, gate.hi, k)
            return smallsearch.bm25_search_numpy(*args, *window, len(s))
        from factseek.store import kernels  # numba: loaded only for a store that needs it

        gate = s.gates.allowed(constraints)  # one byte per document: stays in the cache
        window = (gate.gate, gate.lo, gate.hi, k)

        acc, touched = self._buffers()
        blocks = s.block_max if self.prune and self.blocks else None
        if blocks is None:  # exhaustive, or a store written before block maxima
            return kernels.bm25_search(*args, *window, acc, touched, self.prune)
        from factseek.store.blockmax import bm25_search_blocks

        size, bptr, bmax = blocks
        stats = self.block_stats
        return bm25_search_blocks(
            *args[:4], bptr, bmax, size, *args[4:], *window, acc, touched, stats
        )

    def dense(self, query: str, k: int, constraints: Constraints) -> tuple[np.ndarray, np.ndarray]:
        """Document numbers and cosine similarities of the top ``k`` allowed documents."""
        q = np.asarray(self.encoder.encode([query]), np.float32)[0]
        gate = self.store.gates.gate(constraints)
        best_d: list[np.ndarray] = []
        best_s: list[np.ndarray] = []
        for first, vecs in self.vectors:
            g = gate.gate[first : first + len(vecs)]
            sims = np.asarray(vecs @ q, np.float32)  # one pass over the memory-mapped rows
            allowed = np.flatnonzero((g >= gate.lo) & (g < gate.hi))
            if not len(allowed):
                continue
            sims = sims[allowed]
            if len(sims) > k:  # all ties of the k-th score, so the final cut is by doc order
                kth = np.partition(sims, len(sims) - k)[len(sims) - k]
                top = np.flatnonzero(sims >= kth)
            else:
                top = np.arange(len(sims))
            best_d.append(allowed[top] + first)
            best_s.append(sims[top])
        if not best_d:
            return np.zeros(0, np.int32), np.zeros(0, np.float32)
        d, s = np.concatenate(best_d), np.concatenate(best_s)
        order = np.lexsort((d, -s))[:k]
        return d[order].astype(np.int32), s[order].astype(np.float32)

    def hybrid(self, query: str, k: int, constraints: Constraints) -> tuple[np.ndarray, np.ndarray]:
        """Reciprocal-rank fusion of the BM25 and dense lists (each ``max(k, HYBRID_DEPTH)`` deep)."""
        depth = max(k, HYBRID_DEPTH)
        fused: dict[int, float] = {}
        for docs, _ in (
            self.bm25(query, depth, constraints),
            self.dense(query, depth, constraints),
        ):
            for rank, d in enumerate(docs.tolist(), 1):
                fused[d] = fused.get(d, 0.0) + 1.0 / (RRF_K + rank)
        ranked = sorted(fused.items(), key=lambda x: (-x[1], x[0]))[:k]
        return (
            np.array([d for d, _ in ranked], np.int32),
            np.array([s for _, s in ranked], np.float32),
        )

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            from factseek.ml.encode import encoder_from_name

            self._encoder = encoder_from_name(self.store.config.dense_encoder)
        if self._encoder.dim != self.store.config.dense_dim:
            raise ConfigError(
                f"encoder dim {self._encoder.dim} differs from the store's {self.store.config.dense_dim}"
            )
        return self._encoder

    @property
    def vectors(self) -> list[tuple[int, np.ndarray]]:
        if self._dense is None:
            self._dense = self.store.dense()
        return self._dense

    def _buffers(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-thread score accumulator (all zero between searches) and touched-list."""
        buf = getattr(self._local, "buf", None)
        if buf is None:
            n = len(self.store)
            buf = self._local.buf = (np.zeros(n, np.float32), np.empty(n, np.int32))
        return buf

    # ------------------------------------------------------------------ hits and documents

    def documents(self, hits: Sequence[Hit]) -> list[Document]:
        """Full documents for ``hits`` (in order); a hit this store did not produce is an error."""
        out = []
        for hit in hits:
            i = None
            if hit.doc_id is not None:
                i = self._produced.get(hit.doc_id)
                if i is None:  # not a recent hit: look it up in the full id table
                    i = self.store.ids.get(hit.doc_id)
            if i is None:
                raise SearchError(f"hit {hit.url} has no document in store {self.store.root}")
            out.append(self.store.document(i))
        return out

    def document(self, doc_id: str) -> Document:
        """One document by id (``StoreError`` if absent)."""
        i = self.store.ids.get(doc_id)
        if i is None:
            raise StoreError(f"no document {doc_id!r} in store {self.store.root}")
        return self.store.document(i)
