"""Endpoint feedback for rewriting without relevance judgements: keep an edit only when the
search results of the edited query look more like the claim.

``FeedbackGuard.estimate(claim_vector, queries)`` runs each query on the retriever (the same
opaque endpoint the rewrites are for) and scores its top-k as the DCG-weighted mean cosine
between the claim's embedding and the documents' embeddings:
``sum_i w_i cos(claim, d_i) / sum_i w_i`` with ``w_i = 1 / log2(i + 1)``, ``i = 1..k``. Nothing
about relevance is known; the estimate only says whether the results moved toward the claim.

With a guard, ``Rewriter.rewrite(..., guard=...)`` changes how an edit is chosen: the model
ranks the allowed edits (STOP left out), the guard estimates the top ``candidates`` of them
(0: every allowed edit; the model then only breaks ties) and the query takes the best one if it
raises the estimate by more than ``margin`` over the current query; else it stops ("guard").
Each step costs one search per candidate, so use it with a local index or a cheap endpoint.

Measured in docs/rewrite-model.md; ``experiments/probe_rewrite_ceiling.py`` has the same proxy as a
training-free policy.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from factseek.errors import ConfigError


class FeedbackGuard:
    """DCG-weighted claim/result similarity of a retriever's top-k; see the module doc."""

    def __init__(
        self,
        retriever: Any,
        doc_ids: Sequence[str],
        doc_vectors: np.ndarray,
        *,
        k: int = 50,
        candidates: int = 5,
        margin: float = 0.0,
    ) -> None:
        if len(doc_ids) != len(doc_vectors):
            raise ConfigError(f"{len(doc_ids)} documents but {len(doc_vectors)} vectors")
        if k < 1 or candidates < 0:
            raise ConfigError("the guard needs k >= 1 and candidates >= 0")
        self.retriever = retriever
        self.row = {d: i for i, d in enumerate(doc_ids)}
        self.vectors = np.ascontiguousarray(doc_vectors, dtype=np.float32)
        self.k, self.candidates, self.margin = k, candidates, margin
        self.weights = 1.0 / np.log2(np.arange(2, k + 2))

    @classmethod
    def from_docs(
        cls,
        retriever: Any,
        docs: Sequence[tuple[str, str]],
        encoder: Any,
        *,
        cache_dir: str | Path | None = None,
        **options: Any,
    ) -> FeedbackGuard:
        """Embed ``(id, text)`` documents with ``encoder`` (cached on disk like the kNN index)."""
        from factseek.rewrite.environment.env import KNNRetriever

        index = KNNRetriever.build(docs, encoder, cache_dir=cache_dir)
        return cls(retriever, index.doc_ids, index.embeddings, **options)

    def estimate(self, claim_vector: np.ndarray, queries: Sequence[str]) -> np.ndarray:
        """(len(queries),) estimates for one claim; documents without a vector count as 0."""
        out = np.zeros(len(queries))
        for j, ranking in enumerate(self.retriever.rank(list(queries), self.k)):
            rows = np.array([self.row.get(d, -1) for d in ranking[: self.k]], dtype=np.int64)
            if not len(rows):
                continue
            sims = np.where(rows >= 0, self.vectors[rows] @ claim_vector, 0.0)  # -1: unknown
            w = self.weights[: len(rows)]
            out[j] = float((w * sims).sum() / w.sum())
        return out
