"""Exact BM25 for many small edits of one query: the hot loop of BFS data generation.

A BFS node (the *parent*) yields dozens to hundreds of candidate queries, each one token edit
away. Scoring each from scratch walks the postings of all its terms; here it does not:

1. ``parent(terms)`` scores the parent once (term-at-a-time over its postings into a dense
   array ``S_p``) and sorts its best ``depth`` documents by ``(-S_p, doc)``.
2. For a candidate, only the changed terms matter. Removing a term can only lower a document's
   score; adding one raises it by at most ``max_contribution[t]``. So the top-k is found by
   walking the parent's ranking, scoring each document exactly for the candidate (through the
   forward index), and stopping as soon as ``S_p[d] + (bound of the added common terms)`` falls
   below the current k-th score. An added term whose postings are cheaper to read than the
   deeper walk its bound would cost (judged by the parent's k-th score) is scanned instead: its
   postings are impact-ordered (largest contribution first), so that scan stops too once
   ``(best unvisited S_p) + contribution`` cannot reach the k-th score.
3. When the parent's list runs out before the bound says stop, the candidate is scored from
   scratch (counted in ``stats.fallbacks``). Results never depend on the path taken.

Memory, not arithmetic, bounds all of this on a large corpus (impact-ordered postings hit
documents at random), so: the parent's postings are bucketed by document block before they are
added (``accumulate_blocked``); the postings scan of step 2 checks each document against a
one-byte rounded-up copy of ``S_p`` that stays in cache; and a group's re-scored ranking
re-scores only the documents that contain a removed term (a term mask per ranked document).

Exactness: a document's score is summed over the query's distinct terms in ascending term-id
order, ``qtf * idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))`` (Lucene's BM25, as bm25s), the
same float operations on every path, so scores are bit-identical to ``score_dense``; bounds carry
a 1e-9 slack. Only documents with a positive score are returned; ties break by ``(-score, doc)``.

Modules: ``bm25_index.py`` (the index arrays and their files), ``scorer_candidates.py`` (a batch
of candidates as added/removed terms, grouped by what they remove), ``scorer_kernels.py`` (the
numba loops); this one holds the algorithm that drives them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from factseek.rewrite.environment.bm25_index import BM25Index
from factseek.rewrite.environment.scorer_candidates import prepare
from factseek.rewrite.environment.scorer_kernels import (
    accumulate,
    accumulate_blocked,
    collect_above,
    edit_batch,
    presence,
    quantize_up,
    reduced,
    top_from_dense,
)

__all__ = ["BM25Index", "IncrementalBM25", "ParentState", "ScorerStats", "query_terms"]

#: Cost of reading one posting relative to scoring one ranked document exactly.
SCAN_COST = 0.1
#: How deep the parent's ranking is kept (in multiples of k).
PARENT_DEPTH = 40


#: Postings per document above which the blocked accumulation pays off, and its block size.
BLOCKED_MIN_FILL = 0.05
BLOCK_SHIFT = 12


class _Accumulator:
    """Dense scores of a query from zero: plain, or blocked when its postings are long
    (the blocked path's buffers are kept and grown, not reallocated per query)."""

    def __init__(self) -> None:
        self._buf = (np.empty(0, np.int32), np.empty(0, np.float32), np.empty(0, np.int32))

    def __call__(self, terms, qtf, idf, norm, post_ptr, post_doc, post_tf, scores, touched):
        n_post = int((post_ptr[terms + 1] - post_ptr[terms]).sum())
        if n_post <= BLOCKED_MIN_FILL * len(scores) or len(scores) <= (1 << BLOCK_SHIFT):
            return accumulate(terms, qtf, idf, norm, post_ptr, post_doc, post_tf, scores,
                               touched, 0)  # fmt: skip
        if len(self._buf[0]) < n_post:
            size = max(n_post, 2 * len(self._buf[0]))
            self._buf = (np.empty(size, np.int32), np.empty(size, np.float32),
                         np.empty(size, np.int32))  # fmt: skip
        return accumulate_blocked(terms, qtf, idf, norm, post_ptr, post_doc, post_tf, scores,
                                   touched, 0, BLOCK_SHIFT, *self._buf)  # fmt: skip


# ----------------------------------------------------------------------------- scorer


@dataclass
class ScorerStats:
    parents: int = 0
    candidates: int = 0
    fallbacks: int = 0  # candidates scored from scratch
    deepened: int = 0  # times a parent's ranking was made deeper
    visited: int = 0  # documents scored exactly on the incremental path
    scanned: int = 0  # postings read in phase 2


@dataclass
class ParentState:
    terms: np.ndarray  # distinct term ids, ascending
    qtf: np.ndarray  # their counts (float64)
    ranking: np.ndarray  # docs by (-S_p, doc), at most depth
    neg_sorted: np.ndarray  # -S_p of ranking (ascending)
    tail: float  # an upper bound on S_p of every doc not in ranking
    present: np.ndarray | None = None  # per ranked doc, a mask of the terms it has (lazy)


def query_terms(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct term ids ascending and their counts (float64): the canonical query form."""
    terms, counts = np.unique(np.asarray(ids, np.int32), return_counts=True)
    return terms.astype(np.int32), counts.astype(np.float64)


@dataclass
class IncrementalBM25:
    """Exact top-k BM25 for a query and for many edits of it. One per process (holds buffers)."""

    index: BM25Index
    scan_cost: float = SCAN_COST
    parent_depth: int = PARENT_DEPTH
    stats: ScorerStats = field(default_factory=ScorerStats)

    def __post_init__(self) -> None:
        n = self.index.n_docs
        self._scores = np.zeros(n)  # S_p of the current parent; zero elsewhere
        self._touched = np.empty(n, np.int32)
        self._n_touched = 0
        self._stamp = np.zeros(n, np.int64)
        self._stamp_next = 0
        self._parent: ParentState | None = None
        self._scratch: tuple[np.ndarray, np.ndarray] | None = None
        self._ub = np.zeros(n, np.uint8)  # S_p rounded up to multiples of _ub_step
        self._ub_step = 1.0
        self._accumulate = _Accumulator()

    def _arrays(self):
        ix = self.index
        return ix.idf, ix.norm, ix.post_ptr, ix.post_doc, ix.post_tf

    def _clear(self) -> None:
        if self._n_touched > len(self._scores) // 4:
            self._scores[:] = 0.0
            self._ub[:] = 0
        else:
            self._scores[self._touched[: self._n_touched]] = 0.0
            self._ub[self._touched[: self._n_touched]] = 0
        self._n_touched = 0
        self._parent = None

    def score_dense(self, ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (docs, scores) from scratch: term-at-a-time over all postings."""
        self._clear()
        terms, qtf = query_terms(ids)
        self._n_touched = self._accumulate(terms, qtf, *self._arrays(), self._scores, self._touched)
        out_s, out_d = np.empty(k), np.empty(k, np.int64)
        size = top_from_dense(self._scores, self._touched, self._n_touched, k, out_s, out_d)
        self._clear()
        return out_d[:size], out_s[:size]

    def parent(self, ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Make ``ids`` the parent of the next ``edits`` calls; returns its own top-k."""
        self._clear()
        terms, qtf = query_terms(ids)
        self._n_touched = self._accumulate(terms, qtf, *self._arrays(), self._scores, self._touched)
        self._parent = self._ranked(terms, qtf, self.parent_depth * k)
        top_score = -self._parent.neg_sorted[0] if len(self._parent.ranking) else 1.0
        self._ub_step = max(top_score, 1e-300) / 250.0
        quantize_up(self._scores, self._touched[: self._n_touched], self._ub, self._ub_step)
        self.stats.parents += 1
        top = self._parent.ranking[:k]
        return top, self._scores[top]

    def _ranked(self, terms: np.ndarray, qtf: np.ndarray, depth: int) -> ParentState:
        """The parent's best ``depth`` docs by (-S_p, doc) and a bound on all the others."""
        n = self._n_touched
        touched = self._touched[:n]
        dense = n > len(self._scores) // 4  # a sequential pass beats gathering
        if depth < n:
            # docs above a threshold estimated from a sample, lowered until there are enough
            sample = np.sort(self._scores[touched[:: max(1, n // 4096)]])
            want = min(1.0, 2.0 * depth / n)
            buf = np.empty(min(n, max(8 * depth, 1024)), np.int64)
            lowered = False
            while True:
                q = max(0, int(len(sample) * (1.0 - want)) - 1)
                thr = float(sample[q]) if want < 1.0 else 0.0  # 0: every touched doc
                m = collect_above(self._scores, touched, thr, dense, buf)
                if m < 0 and lowered:  # a plateau of ties at the threshold: a bigger buffer
                    buf = np.empty(min(n, 4 * len(buf)), np.int64)
                elif m < 0:  # too many: aim higher
                    want /= 2
                elif m < depth and thr > 0.0:  # too few: aim lower
                    want = min(1.0, want * 4)
                    lowered = True
                else:
                    break
            sel = buf[:m]
            vals = self._scores[sel]
            if m > depth:
                part = np.argpartition(-vals, depth - 1)[:depth]
                cut = float(vals[part].min())
                keep = vals > cut  # the docs left out all have S_p <= cut
                sel, vals, tail = sel[keep], vals[keep], cut
            else:
                tail = thr
        else:
            sel, vals, tail = touched.astype(np.int64), self._scores[touched], 0.0
        order = np.lexsort((sel, -vals))
        return ParentState(
            terms=terms, qtf=qtf, ranking=sel[order], neg_sorted=-vals[order], tail=tail
        )

    def edits(
        self, candidates: Sequence[np.ndarray], k: int
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Top-k (docs, scores) of each candidate (term ids) as an edit of the current parent."""
        docs, scores, sizes = self.edits_arrays(candidates, k)
        return [(docs[i, : sizes[i]], scores[i, : sizes[i]]) for i in range(len(candidates))]

    def edits_arrays(
        self, candidates: Sequence[np.ndarray], k: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """As ``edits``: docs (n, k) padded with -1, scores (n, k), and the count per row.

        Candidates the parent's ranking is too short for are retried with a ranking 8x deeper
        (kept for the next batch); only if the whole ranking is not enough are they scored from
        scratch.
        """
        p = self._parent
        if p is None:
            raise RuntimeError("call parent() before edits()")
        n = len(candidates)
        cs = prepare(candidates, p.terms, p.qtf)
        out_s = np.zeros((n, k))
        out_d = np.full((n, k), -1, np.int64)
        out_n = np.zeros(n, np.int64)
        which = np.arange(n, dtype=np.int64)
        ix = self.index
        depth = len(p.ranking)
        while len(which):
            grp_ptr, grp_rank, grp_neg = self._group_rankings(p, cs.groups)
            counters = np.zeros(2, np.int64)
            edit_batch(
                cs.cand_ptr, cs.cand_terms, cs.cand_qtf, cs.add_ptr, cs.add_terms, cs.add_delta, cs.group,
                grp_ptr, grp_rank, grp_neg, k, self.scan_cost, self._ub, self._ub_step, p.tail, self._stamp,
                self._stamp_next,
                ix.idf, ix.norm, ix.post_ptr, ix.post_doc, ix.post_imp,
                ix.fwd_ptr, ix.fwd_term, ix.fwd_tf, ix.max_contribution,
                out_s, out_d, out_n, counters, which,
            )  # fmt: skip
            self._stamp_next += len(which) + 1
            self.stats.visited += int(counters[0])
            self.stats.scanned += int(counters[1])
            which = which[out_n[which] < 0]
            if len(which) and p.tail > 0.0:  # grow the parent's ranking, retry
                depth *= 8
                p = self._parent = self._ranked(p.terms, p.qtf, depth)
                self.stats.deepened += 1
            else:
                break
        self.stats.candidates += n
        for i in which.tolist():
            self.stats.fallbacks += 1
            d, s = self._dense_keep_parent(candidates[i], k)
            out_d[i, : len(d)] = d
            out_s[i, : len(s)] = s
            out_n[i] = len(d)
        return out_d, out_s, out_n

    def _group_rankings(
        self, p: ParentState, groups: Sequence[tuple[np.ndarray, np.ndarray]]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per group of removed terms, the parent's ranking re-sorted by the exact scores S_R of
        the parent without those terms (concatenated)."""
        ix = self.index
        ranks, negs = [], []
        if p.present is None and any(len(r) for r, _ in groups):
            p.present = presence(p.ranking, p.terms, ix.fwd_ptr, ix.fwd_term)
        parent_vals = -p.neg_sorted
        for rem_terms, rem_delta in groups:
            if len(rem_terms) == 0:
                ranks.append(p.ranking)
                negs.append(p.neg_sorted)
                continue
            qtf = p.qtf.copy()
            pos = np.searchsorted(p.terms, rem_terms)
            qtf[pos] -= rem_delta
            touched = int(np.bitwise_or.reduce(np.int64(1) << np.minimum(pos, 62)))
            keep = qtf > 0
            vals = reduced(p.ranking, parent_vals, p.present, touched, p.terms[keep], qtf[keep],
                            ix.idf, ix.norm, ix.fwd_ptr, ix.fwd_term, ix.fwd_tf)  # fmt: skip
            order = np.lexsort((p.ranking, -vals))
            ranks.append(p.ranking[order])
            negs.append(-vals[order])
        ptr = np.zeros(len(groups) + 1, np.int64)
        np.cumsum([len(r) for r in ranks], out=ptr[1:])
        return ptr, np.concatenate(ranks), np.concatenate(negs)

    def _dense_keep_parent(self, ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """A from-scratch top-k that leaves the parent's buffers intact."""
        if self._scratch is None:
            self._scratch = (np.zeros(self.index.n_docs), np.empty(self.index.n_docs, np.int32))
        scores, touched = self._scratch
        terms, qtf = query_terms(ids)
        n = self._accumulate(terms, qtf, *self._arrays(), scores, touched)
        out_s, out_d = np.empty(k), np.empty(k, np.int64)
        size = top_from_dense(scores, touched, n, k, out_s, out_d)
        scores[touched[:n]] = 0.0
        return out_d[:size], out_s[:size]
