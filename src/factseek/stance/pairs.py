"""One training or evaluation pair of the stance model, and the BM25 neighbour finder that
makes "not enough information" pairs (``stance.data`` for the Wikipedia sets, ``stance.realworld``
for the real-world ones).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from factseek.text import tokenize
from factseek.types import StanceLabel


@dataclass(frozen=True, kw_only=True)
class StancePair:
    """One (claim or question, evidence) pair with its gold stance."""

    question: str
    evidence: str
    label: StanceLabel
    source: str
    group: str  # the claim (or claim group) the pair comes from
    form: Literal["statement", "question"] = "statement"


def bm25_nearest(
    queries: Sequence[str],
    docs: Sequence[str],
    exclude: Sequence[set[int]],
    *,
    k1: float = 1.2,
    b: float = 0.75,
) -> list[int | None]:
    """For each query, the index of the BM25-best document not in its ``exclude`` set (ties by
    index; None when every document is excluded or none shares a term)."""
    import numpy as np
    from scipy import sparse

    if not docs:
        return [None] * len(queries)
    vocab: dict[str, int] = {}
    rows, cols, vals = [], [], []
    lengths = np.zeros(len(docs))
    for d, text in enumerate(docs):
        terms = tokenize(text)
        lengths[d] = len(terms)
        counts: dict[int, int] = {}
        for t in terms:
            j = vocab.setdefault(t, len(vocab))
            counts[j] = counts.get(j, 0) + 1
        rows.extend([d] * len(counts))
        cols.extend(counts)
        vals.extend(counts.values())
    tf = sparse.csr_matrix((vals, (rows, cols)), shape=(len(docs), len(vocab)), dtype=np.float64)
    df = np.bincount(tf.indices, minlength=len(vocab))
    idf = np.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
    norm = k1 * (1 - b + b * lengths / max(lengths.mean(), 1e-9))
    tf.data = tf.data * (k1 + 1) / (tf.data + np.repeat(norm, np.diff(tf.indptr)))
    weights = (tf @ sparse.diags(idf)).T.tocsr()  # (terms, docs)
    out: list[int | None] = []
    for start in range(0, len(queries), 512):
        qr, qc = [], []
        for i, q in enumerate(queries[start : start + 512]):
            ids = {vocab[t] for t in tokenize(q) if t in vocab}
            qr.extend([i] * len(ids))
            qc.extend(ids)
        qm = sparse.csr_matrix(
            (np.ones(len(qr)), (qr, qc)), shape=(min(512, len(queries) - start), len(vocab))
        )
        scores = (qm @ weights).toarray()  # (queries, docs)
        for i, row in enumerate(scores):
            row[list(exclude[start + i])] = -1.0
            best = int(np.argmax(row))  # first index among ties
            out.append(best if row[best] > 0 else None)
    return out
