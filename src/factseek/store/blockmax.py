"""Block-max impacts and the top-k kernel that uses them to skip blocks of long posting lists.

Each term's posting list is cut into blocks of ``BLOCK`` postings (the last one shorter);
``blockmax.npy`` holds the largest impact of every block, term after term (``ceil(df / BLOCK)``
blocks per term, so the block pointers follow from ``indptr`` alone).

The search is ``kernels.bm25_search`` (term-at-a-time MaxScore, the same term order and float32
sums) with one addition: before a long list whose upper bound still keeps it "essential"
(``rest[i] >= theta``, so it cannot be merely probed), the k-th best partial score ``theta`` is
taken and every block whose best contribution plus the remaining terms' bounds stays below it
(``w * blockmax + rest[i + 1] < theta``) cannot bring a new document into the top k: only the
candidates already touched that can still reach ``theta`` are looked up in it (binary search),
the rest of the block is not read. A document left out of a block this way has a final score
below ``theta`` (at most the k-th final score), so the top k, their scores and their order are
those of the exhaustive loop.
"""

from __future__ import annotations

import numba
import numpy as np

from factseek.store.kernels import (
    _CHECK_MIN,
    _EPS,
    _find,
    candidates,
    finish,
    term_bounds,
    topk_of,
    walk,
)

_CACHE = True
#: Postings per block.
BLOCK = 128
#: Look for skippable blocks only in lists of at least this many blocks.
_MIN_BLOCKS = 8


def block_pointers(indptr: np.ndarray, block: int) -> np.ndarray:
    """int64 (n_terms + 1): where each term's blocks start in ``blockmax.npy``."""
    df = np.diff(np.asarray(indptr, np.int64))
    out = np.zeros(len(df) + 1, np.int64)
    np.cumsum((df + block - 1) // block, out=out[1:])
    return out


def block_maxima(indptr: np.ndarray, impact: np.ndarray, block: int) -> np.ndarray:
    """float32: the largest impact of every block of ``block`` postings, term after term."""
    bptr = block_pointers(indptr, block)
    total = int(bptr[-1])
    if total == 0:
        return np.zeros(0, np.float32)
    per_term = np.diff(bptr)
    first = np.repeat(np.asarray(indptr[:-1], np.int64), per_term)  # the term's first posting
    starts = first + (np.arange(total, dtype=np.int64) - np.repeat(bptr[:-1], per_term)) * block
    return np.maximum.reduceat(np.asarray(impact, np.float32), starts).astype(np.float32)


@numba.njit(cache=_CACHE, nogil=True)
def bm25_search_blocks(
    indptr,
    pdoc,
    pimpact,
    term_max,
    bptr,
    bmax,
    block,
    qterms,
    qweights,
    gate,
    lo,
    hi,
    k,
    acc,
    touched,
    stats,
):  # pragma: no cover - jitted
    """``kernels.bm25_search`` (pruned) that skips blocks which cannot change the top k.

    ``stats`` (int64, 2) counts the blocks of lists searched block by block: [0] read,
    [1] skipped (only the candidates looked up)."""
    nq = len(qterms)
    span = np.uint64(max(hi - lo, 0))
    ub, order, rest = term_bounds(qterms, qweights, term_max)
    nt = 0
    i = 0
    theta = -1.0
    done = 0.0
    while i < nq:
        t = qterms[order[i]]
        w = np.float32(qweights[order[i]])
        start = indptr[t]
        end = indptr[t + 1]
        n = end - start
        b0 = bptr[t]
        nb = bptr[t + 1] - b0
        if nt >= k and n >= _CHECK_MIN and 4 * n >= nt:
            look = done >= rest[i]
            if not look and nb >= _MIN_BLOCKS and done > rest[i + 1]:
                # theta <= done: could a quarter of the blocks be skipped at best?
                best = (done - rest[i + 1]) / (1.0 + _EPS)
                m = 0
                for b in range(b0, b0 + nb):
                    if w * bmax[b] * (1.0 + _EPS) < best:
                        m += 1
                look = 4 * m >= nb
            if look:
                _, sc = topk_of(touched, nt, acc, k)
                theta = sc[k - 1]
                if rest[i] * (1.0 + _EPS) < theta:
                    break
        # blocks whose best contribution cannot lift a new document to theta
        cut = theta / (1.0 + _EPS) - rest[i + 1]
        skip = 0
        if theta > 0.0 and nb >= _MIN_BLOCKS:
            for b in range(b0, b0 + nb):
                if w * bmax[b] * (1.0 + _EPS) < cut:
                    skip += 1
        if 4 * skip < nb:  # too few blocks to skip: walk the list whole
            nt = walk(pdoc, pimpact, start, end, w, gate, lo, span, acc, touched, nt)
        else:
            cs = candidates(touched, nt, acc, rest[i], theta)
            nc = len(cs)
            cj = 0
            for b in range(nb):
                p = start + b * block
                q = min(p + block, end)
                last = pdoc[q - 1]
                if w * bmax[b0 + b] * (1.0 + _EPS) >= cut:
                    stats[0] += 1
                    nt = walk(pdoc, pimpact, p, q, w, gate, lo, span, acc, touched, nt)
                    while cj < nc and cs[cj] <= last:
                        cj += 1
                else:
                    stats[1] += 1
                    pos = p
                    while cj < nc and cs[cj] <= last:
                        d = cs[cj]
                        pos = _find(pdoc, pos, q, d)
                        if pdoc[pos] == d:
                            acc[d] += w * pimpact[pos]
                        cj += 1
        done += ub[order[i]]
        i += 1
    return finish(
        i, order, qterms, qweights, indptr, pdoc, pimpact, rest, theta, k, acc, touched, nt
    )
