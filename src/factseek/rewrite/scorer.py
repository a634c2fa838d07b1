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
added (``_accumulate_blocked``); the postings scan of step 2 checks each document against a
one-byte rounded-up copy of ``S_p`` that stays in cache; and a group's re-scored ranking
re-scores only the documents that contain a removed term (a term mask per ranked document).

Exactness: a document's score is summed over the query's distinct terms in ascending term-id
order, ``qtf * idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))`` (Lucene's BM25, as bm25s), the
same float operations on every path, so scores are bit-identical to ``score_dense``; bounds carry
a 1e-9 slack. Only documents with a positive score are returned; ties break by ``(-score, doc)``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numba
import numpy as np

from factseek.errors import DataError
from factseek.text import tokenize

INDEX_FORMAT = 1
K1 = 1.5
B = 0.75
#: Cost of reading one posting relative to scoring one ranked document exactly.
SCAN_COST = 0.1
#: How deep the parent's ranking is kept (in multiples of k).
PARENT_DEPTH = 40
EPS = 1e-9
#: float32 impacts are rounded; bounds use them scaled up by this much.
IMP_SLACK = 1.0 + 1e-6


# ----------------------------------------------------------------------------- index


@dataclass(frozen=True, kw_only=True, eq=False)
class BM25Index:
    """An in-memory BM25 index: impact-ordered postings plus a forward index (numpy arrays)."""

    doc_ids: tuple[str, ...]
    vocab: dict[str, int]
    idf: np.ndarray  # float64 (n_terms,)
    norm: np.ndarray  # float64 (n_docs,): k1 * (1 - b + b * dl / avgdl)
    post_ptr: np.ndarray  # int64 (n_terms + 1,)
    post_doc: np.ndarray  # int32: documents, each term's run by contribution descending
    post_tf: np.ndarray  # float32 term frequencies, parallel to post_doc
    post_imp: np.ndarray  # float32 tf / (tf + norm), parallel to post_doc (descending per term)
    fwd_ptr: np.ndarray  # int64 (n_docs + 1,)
    fwd_term: np.ndarray  # int32: each document's distinct terms, ascending
    fwd_tf: np.ndarray  # float32, parallel to fwd_term
    max_contribution: np.ndarray  # float64 (n_terms,): idf * max tf/(tf+norm) over postings
    k1: float = K1
    b: float = B
    fingerprint: str = ""

    @property
    def n_docs(self) -> int:
        return len(self.doc_ids)

    def df(self, term_id: int) -> int:
        return int(self.post_ptr[term_id + 1] - self.post_ptr[term_id])

    def term_ids(self, text: str) -> np.ndarray:
        """Query terms as ids (unknown terms dropped), with repetition, in text order."""
        get = self.vocab.get
        return np.array([i for i in (get(t) for t in tokenize(text)) if i is not None], np.int32)

    @classmethod
    def build(
        cls,
        docs: Iterable[tuple[str, str]],
        *,
        k1: float = K1,
        b: float = B,
        analyzer=tokenize,
    ) -> BM25Index:
        """Index ``(doc_id, text)`` pairs with ``analyzer`` (factseek's shared tokenizer)."""
        ids: list[str] = []
        vocab: dict[str, int] = {}
        flat: list[int] = []
        lens: list[int] = []
        digest = hashlib.blake2b(digest_size=16)
        for doc_id, text in docs:
            ids.append(doc_id)
            toks = analyzer(text)
            lens.append(len(toks))
            flat.extend(vocab.setdefault(t, len(vocab)) for t in toks)
            digest.update(doc_id.encode() + b"\0" + text.encode() + b"\1")
        return cls.from_token_ids(
            tuple(ids), vocab, np.array(flat, np.int64), np.array(lens, np.int64), k1=k1, b=b,
            fingerprint=digest.hexdigest(),
        )  # fmt: skip

    @classmethod
    def from_token_ids(
        cls,
        doc_ids: tuple[str, ...],
        vocab: dict[str, int],
        tokens: np.ndarray,
        lengths: np.ndarray,
        *,
        k1: float = K1,
        b: float = B,
        fingerprint: str = "",
    ) -> BM25Index:
        """Index documents given as one flat array of term ids and their lengths."""
        n_docs, n_terms = len(doc_ids), len(vocab)
        if len(lengths) != n_docs or int(lengths.sum()) != len(tokens):
            raise DataError("token ids and document lengths disagree")
        doc_of = np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
        width = max(n_terms, 1)
        key, counts = np.unique(doc_of * width + tokens.astype(np.int64), return_counts=True)
        key_doc = (key // width).astype(np.int32)  # sorted by (doc, term)
        key_term = (key % width).astype(np.int32)
        tf = counts.astype(np.float32)  # exact small integers; arithmetic is float64
        avgdl = float(lengths.mean()) if n_docs and lengths.sum() else 1.0
        norm = k1 * (1.0 - b + b * lengths.astype(np.float64) / avgdl)
        fwd_ptr = np.zeros(n_docs + 1, np.int64)
        np.cumsum(np.bincount(key_doc, minlength=n_docs), out=fwd_ptr[1:])
        df = np.bincount(key_term, minlength=n_terms).astype(np.float64)
        idf = np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
        contrib = tf / (tf + norm[key_doc])
        # postings: by term, then contribution descending, then doc ascending
        order = np.lexsort((key_doc, -contrib, key_term))
        post_ptr = np.zeros(n_terms + 1, np.int64)
        np.cumsum(df.astype(np.int64), out=post_ptr[1:])
        best = np.zeros(n_terms)
        if len(key):
            firsts = post_ptr[:-1][df > 0]
            best[df > 0] = contrib[order][firsts]
        return cls(
            doc_ids=tuple(doc_ids),
            vocab=vocab,
            idf=idf,
            norm=norm,
            post_ptr=post_ptr,
            post_doc=key_doc[order],
            post_tf=tf[order],
            post_imp=contrib[order].astype(np.float32),
            fwd_ptr=fwd_ptr,
            fwd_term=key_term,
            fwd_tf=tf,
            max_contribution=idf * best,
            k1=k1,
            b=b,
            fingerprint=fingerprint,
        )

    # -- persistence: a folder of .npy files + config.json (memory-mappable)

    _ARRAYS = ("idf", "norm", "post_ptr", "post_doc", "post_tf", "post_imp", "fwd_ptr",
               "fwd_term", "fwd_tf", "max_contribution")  # fmt: skip

    def save(self, folder: str | Path) -> None:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        for name in self._ARRAYS:
            np.save(folder / f"{name}.npy", getattr(self, name))
        terms = sorted(self.vocab, key=self.vocab.__getitem__)
        (folder / "vocab.json").write_text(json.dumps(terms), encoding="utf-8")
        (folder / "doc_ids.json").write_text(json.dumps(list(self.doc_ids)), encoding="utf-8")
        config = {"format_version": INDEX_FORMAT, "k1": self.k1, "b": self.b,
                  "fingerprint": self.fingerprint, "n_docs": self.n_docs}  # fmt: skip
        (folder / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")

    @classmethod
    def load(cls, folder: str | Path, mmap: bool = True) -> BM25Index:
        folder = Path(folder)
        try:
            config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as e:
            raise DataError(f"not a BM25 index folder: {e}", str(folder)) from None
        if config.get("format_version") != INDEX_FORMAT:
            raise DataError(f"unknown index format {config.get('format_version')!r}", str(folder))
        arrays = {
            n: np.load(folder / f"{n}.npy", mmap_mode="r" if mmap else None) for n in cls._ARRAYS
        }
        terms = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
        ids = json.loads((folder / "doc_ids.json").read_text(encoding="utf-8"))
        return cls(
            doc_ids=tuple(ids),
            vocab={t: i for i, t in enumerate(terms)},
            k1=config["k1"],
            b=config["b"],
            fingerprint=config.get("fingerprint", ""),
            **arrays,
        )


# ----------------------------------------------------------------------------- kernels


@numba.njit(cache=True)
def _accumulate(terms, qtf, idf, norm, post_ptr, post_doc, post_tf, scores, touched, n_touched):
    """scores += the query's BM25 (terms ascending); newly touched docs appended to ``touched``."""
    for i in range(len(terms)):
        t = terms[i]
        w = qtf[i] * idf[t]
        for j in range(post_ptr[t], post_ptr[t + 1]):
            d = post_doc[j]
            tf = post_tf[j]
            if scores[d] == 0.0:
                touched[n_touched] = d
                n_touched += 1
            scores[d] += w * tf / (tf + norm[d])
    return n_touched


@numba.njit(cache=True)
def _accumulate_blocked(
    terms, qtf, idf, norm, post_ptr, post_doc, post_tf, scores, touched, n_touched, shift,
    b_doc, b_tf, b_q,
):  # fmt: skip
    """As ``_accumulate``, cache-friendly for long postings: impact-ordered postings hit
    documents at random, so they are first bucketed by document block (``2**shift`` documents,
    whose scores and norms fit in cache) and then applied block by block. Within a block the
    entries stay in term order, so every document sums its terms in the same order as
    ``_accumulate`` and gets bit-identical scores. ``b_*``: buffers of at least the query's
    total postings."""
    n_blocks = (len(scores) >> shift) + 1
    start = np.zeros(n_blocks + 1, np.int64)
    total = 0
    for i in range(len(terms)):
        t = terms[i]
        for j in range(post_ptr[t], post_ptr[t + 1]):
            start[(post_doc[j] >> shift) + 1] += 1
        total += post_ptr[t + 1] - post_ptr[t]
    for b in range(n_blocks):
        start[b + 1] += start[b]
    pos = start[:-1].copy()
    for i in range(len(terms)):
        t = terms[i]
        for j in range(post_ptr[t], post_ptr[t + 1]):
            d = post_doc[j]
            b = d >> shift
            p = pos[b]
            b_doc[p] = d
            b_tf[p] = post_tf[j]
            b_q[p] = i
            pos[b] = p + 1
    w = np.empty(len(terms))
    for i in range(len(terms)):
        w[i] = qtf[i] * idf[terms[i]]
    for p in range(total):
        d = b_doc[p]
        tf = b_tf[p]
        if scores[d] == 0.0:
            touched[n_touched] = d
            n_touched += 1
        scores[d] += w[b_q[p]] * tf / (tf + norm[d])
    return n_touched


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
            return _accumulate(terms, qtf, idf, norm, post_ptr, post_doc, post_tf, scores,
                               touched, 0)  # fmt: skip
        if len(self._buf[0]) < n_post:
            size = max(n_post, 2 * len(self._buf[0]))
            self._buf = (np.empty(size, np.int32), np.empty(size, np.float32),
                         np.empty(size, np.int32))  # fmt: skip
        return _accumulate_blocked(terms, qtf, idf, norm, post_ptr, post_doc, post_tf, scores,
                                   touched, 0, BLOCK_SHIFT, *self._buf)  # fmt: skip


@numba.njit(cache=True)
def _collect_above(scores, touched, thr, dense, out):
    """Docs with score > thr into ``out`` (doc order when dense); -1 when ``out`` overflows."""
    m = 0
    if dense:
        for d in range(len(scores)):
            if scores[d] > thr:
                if m == len(out):
                    return -1
                out[m] = d
                m += 1
    else:
        for i in range(len(touched)):
            d = touched[i]
            if scores[d] > thr:
                if m == len(out):
                    return -1
                out[m] = d
                m += 1
    return m


@numba.njit(cache=True)
def _exact(d, terms, qtf, idf, norm, fwd_ptr, fwd_term, fwd_tf):
    """The query's score of document ``d`` (same float operations as ``_accumulate``)."""
    s = 0.0
    j = fwd_ptr[d]
    end = fwd_ptr[d + 1]
    for i in range(len(terms)):
        t = terms[i]
        while j < end and fwd_term[j] < t:
            j += 1
        if j == end:
            break
        if fwd_term[j] == t:
            tf = fwd_tf[j]
            s += qtf[i] * idf[t] * tf / (tf + norm[d])
    return s


@numba.njit(cache=True)
def _contribution(d, t, q, idf, norm, fwd_ptr, fwd_term, fwd_tf):
    """``q`` times term ``t``'s BM25 contribution to document ``d`` (0 when absent)."""
    lo = fwd_ptr[d]
    hi = fwd_ptr[d + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        if fwd_term[mid] < t:
            lo = mid + 1
        else:
            hi = mid
    if lo < fwd_ptr[d + 1] and fwd_term[lo] == t:
        tf = fwd_tf[lo]
        return q * idf[t] * tf / (tf + norm[d])
    return 0.0


@numba.njit(cache=True)
def _worse(s1, d1, s2, d2):
    return s1 < s2 or (s1 == s2 and d1 > d2)


@numba.njit(cache=True)
def _push(hs, hd, size, k, s, d):
    """Keep the k best (score, doc) in a min-heap (worst at the root). Returns the new size."""
    if size < k:
        i = size
        hs[i] = s
        hd[i] = d
        while i > 0:
            p = (i - 1) // 2
            if _worse(hs[i], hd[i], hs[p], hd[p]):
                hs[i], hs[p] = hs[p], hs[i]
                hd[i], hd[p] = hd[p], hd[i]
                i = p
            else:
                break
        return size + 1
    if not _worse(hs[0], hd[0], s, d):
        return size
    hs[0] = s
    hd[0] = d
    i = 0
    while True:
        left = 2 * i + 1
        right = left + 1
        m = i
        if left < size and _worse(hs[left], hd[left], hs[m], hd[m]):
            m = left
        if right < size and _worse(hs[right], hd[right], hs[m], hd[m]):
            m = right
        if m == i:
            break
        hs[i], hs[m] = hs[m], hs[i]
        hd[i], hd[m] = hd[m], hd[i]
        i = m
    return size


@numba.njit(cache=True)
def _sorted_heap(hs, hd, size, out_s, out_d):
    order = np.argsort(hd[:size])  # doc ascending, then stable by score descending
    tmp_s = hs[:size][order]
    tmp_d = hd[:size][order]
    order2 = np.argsort(-tmp_s, kind="mergesort")
    for i in range(size):
        out_s[i] = tmp_s[order2[i]]
        out_d[i] = tmp_d[order2[i]]


@numba.njit(cache=True)
def _top_from_dense(scores, touched, n_touched, k, out_s, out_d):
    hs = np.empty(k)
    hd = np.empty(k, np.int64)
    size = 0
    for i in range(n_touched):
        d = touched[i]
        s = scores[d]
        if s > 0.0:
            size = _push(hs, hd, size, k, s, d)
    _sorted_heap(hs, hd, size, out_s, out_d)
    return size


@numba.njit(cache=True)
def _walk(neg_sorted, tail, level):
    """How many ranked docs have S_p >= level (huge when the ranking may not reach it)."""
    if level <= tail:
        return 1e18
    return float(np.searchsorted(neg_sorted, -level, side="right"))


@numba.njit(cache=True)
def _postings_above(post_ptr, post_imp, t, weight, g):
    """How many postings of ``t`` (impact-ordered) may contribute at least ``g``."""
    lo = post_ptr[t]
    hi = post_ptr[t + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        if weight * post_imp[mid] * IMP_SLACK >= g:
            lo = mid + 1
        else:
            hi = mid
    return float(lo - post_ptr[t])


@numba.njit(cache=True)
def _presence(ranking, terms, fwd_ptr, fwd_term):
    """Per ranked doc, a bit mask of the parent's terms it contains (bit i: ``terms[i]``;
    terms from the 63rd on share bit 62, which only makes more documents count as touched)."""
    out = np.zeros(len(ranking), np.int64)
    for i in range(len(ranking)):
        d = ranking[i]
        j = fwd_ptr[d]
        end = fwd_ptr[d + 1]
        m = 0
        for q in range(len(terms)):
            t = terms[q]
            while j < end and fwd_term[j] < t:
                j += 1
            if j == end:
                break
            if fwd_term[j] == t:
                m |= np.int64(1) << min(q, 62)
        out[i] = m
    return out


@numba.njit(cache=True)
def _reduced(ranking, parent_vals, present, touched, terms, qtf, idf, norm, fwd_ptr, fwd_term,
             fwd_tf):  # fmt: skip
    """Exact scores of the parent's ranked docs for the parent minus a group's removed terms.
    A doc with none of the removed terms (``present & touched == 0``) keeps its parent score:
    the same terms summed in the same order."""
    out = np.empty(len(ranking))
    for i in range(len(ranking)):
        if present[i] & touched == 0:
            out[i] = parent_vals[i]
        else:
            out[i] = _exact(ranking[i], terms, qtf, idf, norm, fwd_ptr, fwd_term, fwd_tf)
    return out


@numba.njit(cache=True)
def _edit_batch(
    cand_ptr, cand_terms, cand_qtf, add_ptr, add_terms, add_delta, cand_group, grp_ptr, grp_rank,
    grp_neg, k, scan_cost, parent_ub, ub_step, tail, stamp, stamp0,
    idf, norm, post_ptr, post_doc, post_imp, fwd_ptr, fwd_term, fwd_tf, max_c,
    out_s, out_d, out_n, counters, which,
):  # fmt: skip
    """Top-k of candidates ``which`` as edits of the parent; out_n[c] = -1: ranking too short.

    Candidates are grouped by the terms they remove; a group's ranking is the parent's ranking
    re-sorted by ``S_R``, the exact score without those terms, so a candidate only *adds* to it
    (and one that only removes is answered by the ranking itself). Phase 1 walks
    that ranking until ``max(S_R, tail) + gap < theta``; phase 2 reads each added term's
    impact-ordered postings until ``sigma + contribution + rest < theta``. The gap trades one
    for the other and is chosen per candidate by a cost estimate; any gap is exact.
    """
    hs = np.empty(k)
    hd = np.empty(k, np.int64)
    visited = 0
    scanned = 0
    for ci in range(len(which)):
        c = which[ci]
        g0 = grp_ptr[cand_group[c]]
        g1 = grp_ptr[cand_group[c] + 1]
        plist = grp_rank[g0:g1]
        neg_sorted = grp_neg[g0:g1]
        theta_est = -neg_sorted[k - 1] if len(neg_sorted) >= k else 0.0
        terms = cand_terms[cand_ptr[c] : cand_ptr[c + 1]]
        qtf = cand_qtf[cand_ptr[c] : cand_ptr[c + 1]]
        mark = stamp0 + ci + 1
        a0 = add_ptr[c]
        a1 = add_ptr[c + 1]
        total = 0.0  # the most the added terms can add to any document
        for a in range(a0, a1):
            total += add_delta[a] * max_c[add_terms[a]]
        # choose the gap: walk cost (ranked docs above theta - gap) + scan cost (postings whose
        # contribution may exceed gap - rest)
        gap = 0.0
        best = 1e30
        for f in (0.0, 0.0625, 0.125, 0.25, 0.375, 0.5, 0.75, 1.0):
            g = total * f
            cost = _walk(neg_sorted, tail, theta_est - g)
            for a in range(a0, a1):
                t = add_terms[a]
                b = add_delta[a] * max_c[t]
                cost += scan_cost * _postings_above(
                    post_ptr, post_imp, t, add_delta[a] * idf[t], g - (total - b)
                )
            if cost < best:
                best = cost
                gap = g
        if a0 == a1:  # removals only: the group's ranking is the answer, if deep enough
            m = 0
            while m < k and m < len(plist) and -neg_sorted[m] > 0.0:
                out_s[c, m] = -neg_sorted[m]
                out_d[c, m] = plist[m]
                m += 1
            if tail == 0.0 or (m == k and -neg_sorted[k - 1] > tail):
                out_n[c] = m
            else:
                out_n[c] = -1
            continue
        size = 0
        # phase 1: the group's ranking, while it can still matter
        sigma = tail
        stopped = False
        for i in range(len(plist)):
            d = plist[i]
            sr = max(-neg_sorted[i], tail)  # docs beyond the ranking have S_R <= S_p <= tail
            if size == k and sr + gap + EPS < hs[0]:
                sigma = sr
                stopped = True
                break
            stamp[d] = mark
            visited += 1
            # S_R plus the added terms first; a doc with none of the added terms keeps its
            # group score bit for bit (same terms summed in the same order)
            approx = -neg_sorted[i]
            changed = False
            for a in range(a0, a1):
                gain = _contribution(d, add_terms[a], add_delta[a], idf, norm, fwd_ptr, fwd_term, fwd_tf)  # fmt: skip
                if gain > 0.0:
                    approx += gain
                    changed = True
            if size == k and approx + EPS < hs[0]:
                continue
            s = _exact(d, terms, qtf, idf, norm, fwd_ptr, fwd_term, fwd_tf) if changed else approx
            if s > 0.0:
                size = _push(hs, hd, size, k, s, d)
        if not stopped and tail > 0.0 and not (size == k and tail + gap + EPS < hs[0]):
            out_n[c] = -1  # docs beyond the ranking may matter: retry with a deeper one
            continue
        # phase 2: the added terms' postings, impact-ordered; every unvisited doc has
        # S_R <= sigma, and S_p >= S_R bounds it from the dense parent scores
        for a in range(a0, a1):
            t = add_terms[a]
            w = add_delta[a] * idf[t] * IMP_SLACK
            rest = total - add_delta[a] * max_c[t]
            for j in range(post_ptr[t], post_ptr[t + 1]):
                gain = w * post_imp[j]
                if size == k and sigma + gain + rest + EPS < hs[0]:
                    break
                scanned += 1
                d = post_doc[j]
                if size == k and min(parent_ub[d] * ub_step, sigma) + gain + rest + EPS < hs[0]:
                    continue
                if stamp[d] == mark:
                    continue
                stamp[d] = mark
                visited += 1
                s = _exact(d, terms, qtf, idf, norm, fwd_ptr, fwd_term, fwd_tf)
                if s > 0.0:
                    size = _push(hs, hd, size, k, s, d)
        _sorted_heap(hs, hd, size, out_s[c], out_d[c])
        out_n[c] = size
    counters[0] += visited
    counters[1] += scanned


@numba.njit(cache=True)
def _quantize_up(scores, touched, ub, step):
    """``ub[d] * step >= scores[d]`` for the touched docs, in one byte each (a bound that stays
    in cache while phase 2 reads postings at random documents); untouched docs stay 0."""
    for i in range(len(touched)):
        d = touched[i]
        ub[d] = min(255, int(scores[d] / step) + 2)


@numba.njit(cache=True)
def _prepare(flat, ptr, parent_terms, parent_qtf):
    """Per candidate: distinct terms ascending with counts, the terms it has more of than the
    parent (added) and those it has fewer of (removed), with the count differences."""
    n = len(ptr) - 1
    cand_ptr = np.zeros(n + 1, np.int64)
    add_ptr = np.zeros(n + 1, np.int64)
    cand_terms = np.empty(len(flat), np.int32)
    cand_qtf = np.empty(len(flat), np.float64)
    add_terms = np.empty(len(flat), np.int32)
    add_delta = np.empty(len(flat), np.float64)
    rem_ptr = np.zeros(n + 1, np.int64)
    rem_terms = np.empty(n * len(parent_terms), np.int32)
    rem_delta = np.empty(n * len(parent_terms), np.float64)
    nc = 0
    na = 0
    nr = 0
    for c in range(n):
        c0 = nc
        seg = np.sort(flat[ptr[c] : ptr[c + 1]])
        i = 0
        while i < len(seg):
            t = seg[i]
            j = i
            while j < len(seg) and seg[j] == t:
                j += 1
            q = float(j - i)
            cand_terms[nc] = t
            cand_qtf[nc] = q
            nc += 1
            pos = np.searchsorted(parent_terms, t)
            had = parent_qtf[pos] if pos < len(parent_terms) and parent_terms[pos] == t else 0.0
            if q > had:
                add_terms[na] = t
                add_delta[na] = q - had
                na += 1
            i = j
        cand_ptr[c + 1] = nc
        add_ptr[c + 1] = na
        mine = cand_terms[c0:nc]
        for p in range(len(parent_terms)):
            t = parent_terms[p]
            pos = np.searchsorted(mine, t)
            q = cand_qtf[c0 + pos] if pos < len(mine) and mine[pos] == t else 0.0
            if q < parent_qtf[p]:
                rem_terms[nr] = t
                rem_delta[nr] = parent_qtf[p] - q
                nr += 1
        rem_ptr[c + 1] = nr
    return (
        cand_ptr, cand_terms[:nc], cand_qtf[:nc], add_ptr, add_terms[:na], add_delta[:na],
        rem_ptr, rem_terms[:nr], rem_delta[:nr],
    )  # fmt: skip


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
        size = _top_from_dense(self._scores, self._touched, self._n_touched, k, out_s, out_d)
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
        _quantize_up(self._scores, self._touched[: self._n_touched], self._ub, self._ub_step)
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
                m = _collect_above(self._scores, touched, thr, dense, buf)
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
        lens = np.fromiter((len(c) for c in candidates), np.int64, n)
        ptr = np.zeros(n + 1, np.int64)
        np.cumsum(lens, out=ptr[1:])
        flat = (
            np.concatenate([np.asarray(c, np.int32) for c in candidates])
            if n
            else np.zeros(0, np.int32)
        )
        (cand_ptr, cand_terms, cand_qtf, add_ptr, add_terms, add_delta,
         rem_ptr, rem_terms, rem_delta) = _prepare(flat, ptr, p.terms, p.qtf)  # fmt: skip
        # group candidates by what they remove (every swap/remove of one token shares a group)
        keys: dict[tuple, int] = {}
        cand_group = np.empty(n, np.int64)
        for i in range(n):
            r0, r1 = rem_ptr[i], rem_ptr[i + 1]
            key = (rem_terms[r0:r1].tobytes(), rem_delta[r0:r1].tobytes())
            cand_group[i] = keys.setdefault(key, len(keys))
        groups = [(np.frombuffer(t, np.int32), np.frombuffer(d, np.float64)) for t, d in keys]
        out_s = np.zeros((n, k))
        out_d = np.full((n, k), -1, np.int64)
        out_n = np.zeros(n, np.int64)
        which = np.arange(n, dtype=np.int64)
        ix = self.index
        depth = len(p.ranking)
        while len(which):
            grp_ptr, grp_rank, grp_neg = self._group_rankings(p, groups)
            counters = np.zeros(2, np.int64)
            _edit_batch(
                cand_ptr, cand_terms, cand_qtf, add_ptr, add_terms, add_delta, cand_group,
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
        self, p: ParentState, groups: list[tuple[np.ndarray, np.ndarray]]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per group of removed terms, the parent's ranking re-sorted by the exact scores S_R of
        the parent without those terms (concatenated)."""
        ix = self.index
        ranks, negs = [], []
        if p.present is None and any(len(r) for r, _ in groups):
            p.present = _presence(p.ranking, p.terms, ix.fwd_ptr, ix.fwd_term)
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
            vals = _reduced(p.ranking, parent_vals, p.present, touched, p.terms[keep], qtf[keep],
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
        size = _top_from_dense(scores, touched, n, k, out_s, out_d)
        scores[touched[:n]] = 0.0
        return out_d[:size], out_s[:size]
