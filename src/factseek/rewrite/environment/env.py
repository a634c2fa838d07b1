"""The search environment of query rewriting: a retriever plus relevance judgements = a reward.

Retrievers (``Retriever`` protocol: ``rank`` a batch of queries, ``rank_edits`` a batch of edits
of one parent query; both return the top-k document ids of each query, best first):

- ``BM25Retriever``: sparse BM25 over a corpus, ``rank_edits`` through the incremental exact
  scorer (``factseek.rewrite.environment.scorer``), so BFS candidates cost only their changed terms.
- ``KNNRetriever``: dense kNN, cosine over sentence embeddings (``factseek.ml.encode``, MiniLM by
  default). Corpus embeddings are computed in batches once and cached on disk
  (``<cache>/embeddings/<fingerprint>.npy``); query embeddings go through a ``CachedEncoder``, so
  a candidate seen twice is encoded once. ``rank_groups`` ranks the edits of many parents at once
  (a whole BFS level: one encoder call over every distinct unseen text, sorted by length so
  batches carry little padding; scores in blocks of rows; an exact vectorised top-k).
- ``BackendRetriever``: any ``SearchBackend`` as an opaque endpoint (hit ``doc_id``, else URL).

Ties are broken explicitly by ``(-score, corpus position)``, so every run is deterministic.
``rank_edit_groups(retriever, groups, k)`` ranks ``(parent, edits)`` groups with a retriever's
batched ``rank_groups`` when it has one, else one ``rank_edits`` call per parent.
Rewards: ``ap@k`` (default k = 50), ``recall@k`` and ``rr`` (``factseek.metrics.retrieval``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from factseek.constraints.hits import Constraints
from factseek.errors import ConfigError, DataError
from factseek.files import atomic_path
from factseek.metrics.retrieval import METRICS, best_possible, parse_metric
from factseek.rewrite.environment.bm25_index import BM25Index
from factseek.rewrite.environment.scorer import IncrementalBM25

DEFAULT_REWARD = "ap@50"
ENCODE_BATCH = 256
#: Query rows scored against the corpus at once (bounds the score matrix's memory).
SCORE_BLOCK = 512
NO_CONSTRAINTS = Constraints(
    excluded_sites=(), excluded_markers=(), exclude_pdf=False, exclude_video=False
)


@runtime_checkable
class Retriever(Protocol):
    name: str

    def rank(self, queries: Sequence[str], k: int) -> list[list[str]]:
        """Top-k document ids of each query, best first."""
        ...

    def rank_edits(self, parent: str, queries: Sequence[str], k: int) -> list[list[str]]:
        """As ``rank``, for queries that are small edits of ``parent`` (may be much faster)."""
        ...


# ----------------------------------------------------------------------------- BM25


class BM25Retriever:
    """Exact BM25 (Lucene variant, factseek's tokenizer) over an in-memory index."""

    name = "bm25"

    def __init__(self, index: BM25Index, **scorer_options: Any) -> None:
        self.index = index
        self.scorer_options = scorer_options
        self._scorer: IncrementalBM25 | None = None
        self._parent: str | None = None

    @classmethod
    def from_docs(cls, docs: Iterable[tuple[str, str]]) -> BM25Retriever:
        return cls(BM25Index.build(docs))

    def __getstate__(self) -> dict[str, Any]:  # buffers are per process: rebuilt lazily
        return {"index": self.index, "scorer_options": self.scorer_options}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["index"], **state["scorer_options"])

    @property
    def scorer(self) -> IncrementalBM25:
        if self._scorer is None:
            self._scorer = IncrementalBM25(self.index, **self.scorer_options)
        return self._scorer

    def _ids(self, docs: np.ndarray) -> list[str]:
        names = self.index.doc_ids
        return [names[d] for d in docs.tolist()]

    def rank(self, queries: Sequence[str], k: int) -> list[list[str]]:
        self._parent = None
        return [self._ids(self.scorer.score_dense(self.index.term_ids(q), k)[0]) for q in queries]

    def rank_edits(self, parent: str, queries: Sequence[str], k: int) -> list[list[str]]:
        if parent != self._parent or k != getattr(self, "_parent_k", None):
            self.scorer.parent(self.index.term_ids(parent), k)
            self._parent, self._parent_k = parent, k
        docs, _, sizes = self.scorer.edits_arrays([self.index.term_ids(q) for q in queries], k)
        names = self.index.doc_ids
        return [
            [names[d] for d in row[:n]]
            for row, n in zip(docs.tolist(), sizes.tolist(), strict=True)
        ]


# ----------------------------------------------------------------------------- dense kNN


def _fingerprint(parts: Iterable[str]) -> str:
    h = hashlib.blake2b(digest_size=16)
    for p in parts:
        h.update(p.encode("utf-8") + b"\0")
    return h.hexdigest()


def top_k_matrix(scores: np.ndarray, k: int) -> np.ndarray:
    """(n, min(k, m)) indices of each row's k highest scores by ``(-score, index)``, vectorised:
    a partition finds each row's k-th score, every entry at or above it (all ties at the cut)
    is sorted by ``(row, -score, index)``, and the first k of each row are kept."""
    n, m = scores.shape
    k = min(k, m)
    if n == 0 or k == 0:
        return np.zeros((n, k), np.int64)
    if k < m:
        part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        kth = np.take_along_axis(scores, part, axis=1).min(axis=1)
        rows, cols = np.nonzero(scores >= kth[:, None])
    else:
        rows, cols = np.divmod(np.arange(n * m), m)
    order = np.lexsort((cols, -scores[rows, cols], rows))
    rows, cols = rows[order], cols[order]
    starts = np.searchsorted(rows, np.arange(n))
    keep = np.arange(len(rows)) - starts[rows] < k
    return cols[keep].reshape(n, k).astype(np.int64)


def top_k_rows(scores: np.ndarray, k: int) -> list[np.ndarray]:
    """Per row, the indices of the k highest scores by ``(-score, index)`` (the reference that
    ``top_k_matrix`` is tested against)."""
    out = []
    n = scores.shape[1]
    for row in scores:
        if k < n:
            part = np.argpartition(-row, k - 1)[:k]
            cand = np.flatnonzero(row >= row[part].min())  # every tie at the cut
        else:
            cand = np.arange(n)
        out.append(cand[np.lexsort((cand, -row[cand]))][:k])
    return out


class KNNRetriever:
    """Cosine kNN over L2-normalised embeddings (exact, brute force)."""

    name = "knn"

    def __init__(self, doc_ids: Sequence[str], embeddings: np.ndarray, encoder: Any) -> None:
        if len(doc_ids) != len(embeddings):
            raise DataError(f"{len(doc_ids)} documents but {len(embeddings)} embeddings")
        self.doc_ids = tuple(doc_ids)
        self.embeddings = np.ascontiguousarray(embeddings, dtype=np.float32)
        self.encoder = encoder

    @classmethod
    def build(
        cls,
        docs: Sequence[tuple[str, str]],
        encoder: Any = None,
        *,
        cache_dir: str | Path | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> KNNRetriever:
        """Embed the corpus in batches (cached on disk by encoder + corpus fingerprint)."""
        if encoder is None:
            from factseek.ml.encode import default_encoder

            encoder = default_encoder()
        fp = _fingerprint([getattr(encoder, "name", "encoder")] + [f"{i}\1{t}" for i, t in docs])
        path = None
        if cache_dir is not None:
            path = Path(cache_dir) / "embeddings" / f"{fp}.npy"
            if path.exists():
                return cls([i for i, _ in docs], np.load(path), encoder)
        chunks = []
        for start in range(0, len(docs), ENCODE_BATCH):
            batch = [t for _, t in docs[start : start + ENCODE_BATCH]]
            chunks.append(encoder.encode(batch))
            if progress is not None:
                progress(len(batch))
        emb = np.concatenate(chunks) if chunks else np.zeros((0, encoder.dim), np.float32)
        if path is not None:
            with atomic_path(path) as tmp, tmp.open("wb") as f:
                np.save(f, emb)
        return cls([i for i, _ in docs], emb, encoder)

    def rank(self, queries: Sequence[str], k: int) -> list[list[str]]:
        if not queries:
            return []
        q = np.asarray(self.encoder.encode(list(queries)), dtype=np.float32)
        rows = top_k_rows(q @ self.embeddings.T, k)
        return [[self.doc_ids[i] for i in row.tolist()] for row in rows]

    def rank_edits(self, parent: str, queries: Sequence[str], k: int) -> list[list[str]]:
        return self.rank(queries, k)

    def rank_groups(
        self, groups: Sequence[tuple[str, Sequence[str]]], k: int
    ) -> list[list[list[str]]]:
        """``rank_edits`` of many parents at once: each distinct text encoded once, in one call."""
        distinct = list(dict.fromkeys(q for _, qs in groups for q in qs))
        if not distinct:
            return [[] for _ in groups]
        by_length = sorted(distinct, key=len)  # similar lengths share a batch: little padding
        emb = np.asarray(self.encoder.encode(by_length), dtype=np.float32)
        row_of = {text: i for i, text in enumerate(by_length)}
        ranked: list[list[str] | None] = [None] * len(by_length)
        for s in range(0, len(by_length), SCORE_BLOCK):
            block = emb[s : s + SCORE_BLOCK]
            for j, row in enumerate(top_k_matrix(block @ self.embeddings.T, k).tolist()):
                ranked[s + j] = [self.doc_ids[i] for i in row]
        return [[list(ranked[row_of[q]] or []) for q in qs] for _, qs in groups]


def rank_edit_groups(
    retriever: Retriever, groups: Sequence[tuple[str, Sequence[str]]], k: int
) -> list[list[list[str]]]:
    """Top-k of every edit of every ``(parent, edits)`` group: the retriever's batched
    ``rank_groups`` when it has one, else ``rank_edits`` per parent (same results)."""
    batched = getattr(retriever, "rank_groups", None)
    if batched is not None:
        return batched(groups, k)
    return [retriever.rank_edits(parent, qs, k) if qs else [] for parent, qs in groups]


# ----------------------------------------------------------------------------- opaque endpoint


class BackendRetriever:
    """Any ``SearchBackend``: one search per query, no constraints, ids from the hits."""

    def __init__(self, backend: Any, constraints: Constraints = NO_CONSTRAINTS) -> None:
        self.backend = backend
        self.constraints = constraints
        self.name = f"backend:{getattr(backend, 'name', 'search')}"

    def rank(self, queries: Sequence[str], k: int) -> list[list[str]]:
        out = []
        for q in queries:
            hits = self.backend.search(q, k, self.constraints)
            out.append([h.doc_id or h.url for h in hits][:k])
        return out

    def rank_edits(self, parent: str, queries: Sequence[str], k: int) -> list[list[str]]:
        return self.rank(queries, k)


# ----------------------------------------------------------------------------- environment


@dataclass(frozen=True, kw_only=True)
class Environment:
    """Query -> reward, for one retriever and one metric (``"ap@50"``, ``"recall@50"``, ``"rr"``)."""

    retriever: Retriever
    reward: str = DEFAULT_REWARD
    metric: str = field(init=False)
    k: int = field(init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.retriever, Retriever):
            raise ConfigError(f"not a retriever: {type(self.retriever).__name__}")
        metric, k = parse_metric(self.reward)
        object.__setattr__(self, "metric", metric)
        object.__setattr__(self, "k", k)

    def score(self, ranking: Sequence[str], relevant: Collection[str]) -> float:
        return METRICS[self.metric](ranking, relevant, self.k)

    def rewards(self, queries: Sequence[str], relevant: Collection[str]) -> list[float]:
        rel = frozenset(relevant)
        return [self.score(r, rel) for r in self.retriever.rank(queries, self.k)]

    def reward_of(self, query: str, relevant: Collection[str]) -> float:
        return self.rewards([query], relevant)[0]

    def edit_rewards(
        self, parent: str, queries: Sequence[str], relevant: Collection[str]
    ) -> list[float]:
        """Rewards of ``queries``, each a small edit of ``parent`` (the BFS hot loop)."""
        if not queries:
            return []
        rel = frozenset(relevant)
        return [self.score(r, rel) for r in self.retriever.rank_edits(parent, queries, self.k)]

    def group_rewards(
        self, groups: Sequence[tuple[str, Sequence[str]]], relevant: Collection[str]
    ) -> list[list[float]]:
        """``edit_rewards`` of many ``(parent, edits)`` groups at once (a BFS level)."""
        rel = frozenset(relevant)
        ranked = rank_edit_groups(self.retriever, groups, self.k)
        return [[self.score(r, rel) for r in rs] for rs in ranked]

    def max_reward(self, relevant: Collection[str]) -> float:
        return best_possible(self.metric, len(frozenset(relevant)), self.k)


# ----------------------------------------------------------------------------- registry

RETRIEVERS: tuple[str, ...] = ("bm25", "knn", "backend")


def corpus_info(docs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """What a trajectory folder records about its corpus: size and a content fingerprint."""
    return {"documents": len(docs), "fingerprint": _fingerprint(f"{i}\1{t}" for i, t in docs)}


def make_retriever(
    name: str,
    docs: Sequence[tuple[str, str]],
    *,
    encoder: str = "minilm",
    backend: str | None = None,
    options: dict[str, Any] | None = None,
    cache_dir: str | Path | None = None,
    device: str | None = None,
) -> Retriever:
    """``bm25`` or ``knn`` over ``docs``, or ``backend`` (a registered ``SearchBackend``);
    ``device``: where the knn encoder runs (CPU by default; ``cuda`` on a GPU machine)."""
    if name == "bm25":
        return BM25Retriever.from_docs(docs)
    if name == "knn":
        from factseek.files import cache_root
        from factseek.ml.encode import encoder_from_name

        enc = encoder_from_name(encoder, device)
        return KNNRetriever.build(docs, enc, cache_dir=cache_dir or cache_root())
    if name == "backend":
        from factseek.search.base import make_backend

        if not backend:
            raise ConfigError("the backend retriever needs --backend NAME")
        return BackendRetriever(make_backend(backend, **(options or {})))
    raise ConfigError(f"unknown retriever {name!r}; choose one of: {', '.join(RETRIEVERS)}")
