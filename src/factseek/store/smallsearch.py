"""Exact BM25 top-k in numpy for small stores: the same hits and scores as ``kernels.bm25_search``.

Loading numba and its cached kernel costs a process about 1.5 CPU-s (numba's import and its CPU
target's registries), far more than every search of a small store together: the demo store's
72 documents, a newsroom's few hundred. Below ``NUMPY_MAX_POSTINGS`` postings the store is
therefore searched here, with no pruning and no numba import. The arithmetic is the kernel's:
terms in the order of decreasing upper bound (a stable sort of the same float64 bounds), each
posting adding ``float32(weight) * impact`` to a float32 accumulator, so every score is the same
float32 number and the ranking (score, then document number) the same list
(``tests/test_store.py`` compares the two on random stores, queries and gates).
"""

from __future__ import annotations

import numpy as np

#: stores with at most this many postings are searched in numpy (about 1 ms a search at the
#: limit; numba's start-up is paid only above it)
NUMPY_MAX_POSTINGS = 300_000


def bm25_search_numpy(
    indptr: np.ndarray,
    pdoc: np.ndarray,
    pimpact: np.ndarray,
    term_max: np.ndarray,
    qterms: np.ndarray,
    qweights: np.ndarray,
    gate: np.ndarray,
    lo: int,
    hi: int,
    k: int,
    n_docs: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Document numbers (int32) and scores (float32) of the top ``k`` documents with
    ``lo <= gate[d] < hi``, best first, ties by lower document number."""
    ub = np.empty(len(qterms), np.float64)
    ub[:] = qweights * term_max[qterms]  # float32 products, as the kernel stores them
    acc = np.zeros(n_docs, np.float32)
    seen = np.zeros(n_docs, bool)
    for i in np.argsort(-ub, kind="mergesort"):
        t = int(qterms[i])
        w = np.float32(qweights[i])
        start, end = int(indptr[t]), int(indptr[t + 1])
        docs = pdoc[start:end]
        g = gate[docs]
        keep = (g >= lo) & (g < hi)
        docs = docs[keep]
        acc[docs] += w * pimpact[start:end][keep]  # a term lists a document once
        seen[docs] = True
    cand = np.flatnonzero(seen).astype(np.int32)
    scores = acc[cand]
    best = np.lexsort((cand, -scores))[:k]
    return cand[best], scores[best]
