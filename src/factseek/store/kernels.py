"""numba kernels of the knowledge store: building CSR postings and exact top-k BM25 search.

Search is term-at-a-time over CSR postings whose BM25 contribution ("impact") is precomputed per
posting. The constraints arrive as one int32 ``gate`` value per document and a range
``[lo, hi)``: a posting counts only when its document's gate lies in the range (see
``factseek.store.filters``), so filtered documents are never scored.

Pruning is exact (MaxScore on a term-at-a-time accumulator): terms are processed by decreasing
upper bound; once the k-th best partial score ``theta`` exceeds the sum of the remaining terms'
upper bounds, no unseen document can enter the top k, so the remaining (long, low-idf) posting
lists are only probed (binary search, or one merge walk when candidates are many) for the
candidates that can still make it. ``theta`` is the k-th best *partial* score, a lower bound of
the final k-th score because impacts are positive. Scores are summed in the same term order either
way, so pruning never changes a score.
"""

from __future__ import annotations

import numba
import numpy as np

_CACHE = True
#: Recompute the threshold before a posting list at least this long.
_CHECK_MIN = 256
#: Relative safety margin on upper bounds (float32 rounding).
_EPS = 1e-5


# ----------------------------------------------------------------------------- term ids


# Term lookup for ASCII text: an open-addressing hash table (linear probing, load <= 1/2) of
# int64 rows ``(hash, (id + 2) << 32 | length, bytes 0-7, bytes 8-15)``; an empty row has 0 in
# column 1. The first 16 bytes are compared in the row itself; a longer key's remaining bytes
# at ``slot_off[row]`` in ``keys``, where every key is also appended, newline-terminated.
# ``state``: [entries, key bytes used, next term id, new terms in the last call].
_FNV_OFFSET = -3750763034362895579  # 14695981039346656037 as int64 (arithmetic wraps)
_FNV_PRIME = 1099511628211


@numba.njit(cache=_CACHE, nogil=True, inline="always")
def _is_word_byte(c):  # pragma: no cover - jitted
    """``[^\\W_]`` on lower-cased ASCII: a-z and 0-9."""
    return (97 <= c <= 122) or (48 <= c <= 57)


@numba.njit(cache=_CACHE, nogil=True)
def _probe(buf, s, n, h, w0, w1, slots, slot_off, keys):  # pragma: no cover - jitted
    """The row of the key ``buf[s:s+n]`` (hash ``h``, first bytes ``w0``/``w1``), and whether
    it holds the key (else it is the empty row where the key goes)."""
    mask = len(slots) - 1
    j = (h ^ (h >> 29)) & mask
    while True:
        meta = slots[j, 1]
        if meta == 0:
            return j, False
        if (
            slots[j, 0] == h
            and (meta & 0xFFFFFFFF) == n
            and slots[j, 2] == w0
            and slots[j, 3] == w1
        ):
            same = True
            o = slot_off[j]
            for q in range(16, n):
                if keys[o + q] != buf[s + q]:
                    same = False
                    break
            if same:
                return j, True
        j = (j + 1) & mask


@numba.njit(cache=_CACHE, nogil=True)
def _key(buf, s, e):  # pragma: no cover - jitted
    """(hash, bytes 0-7, bytes 8-15) of ``buf[s:e]``, as ``ascii_term_ids`` computes them."""
    h = _FNV_OFFSET
    w0 = 0
    w1 = 0
    for q in range(s, e):
        c = np.int64(buf[q])
        h = (h ^ c) * _FNV_PRIME
        if q - s < 8:
            w0 |= c << (8 * (q - s))
        elif q - s < 16:
            w1 |= c << (8 * (q - s - 8))
    return h, w0, w1


@numba.njit(cache=_CACHE, nogil=True)
def _put(buf, s, n, h, w0, w1, term_id, j, slots, slot_off, keys, state):
    # pragma: no cover - jitted
    used = state[1]
    for q in range(n):
        keys[used + q] = buf[s + q]
    keys[used + n] = 10  # newline-terminated: the new keys are read back with one split
    slots[j, 0] = h
    slots[j, 1] = ((term_id + 2) << 32) | n
    slots[j, 2] = w0
    slots[j, 3] = w1
    slot_off[j] = used
    state[0] += 1
    state[1] = used + n + 1


@numba.njit(cache=_CACHE, nogil=True)
def table_insert(buf, starts, ends, ids, slots, slot_off, keys, state):  # pragma: no cover
    """Insert the terms ``buf[starts[i]:ends[i]]`` with ids ``ids[i]`` (absent ones only)."""
    for i in range(len(starts)):
        s = starts[i]
        e = ends[i]
        h, w0, w1 = _key(buf, s, e)
        j, found = _probe(buf, s, e - s, h, w0, w1, slots, slot_off, keys)
        if not found:
            _put(buf, s, e - s, h, w0, w1, ids[i], j, slots, slot_off, keys, state)


@numba.njit(cache=_CACHE, nogil=True)
def table_rehash(old, old_off, slots, slot_off):  # pragma: no cover - jitted
    """Move the rows of ``old`` into the (empty, larger) table ``slots``."""
    mask = len(slots) - 1
    for i in range(len(old)):
        if old[i, 1] == 0:
            continue
        h = old[i, 0]
        j = (h ^ (h >> 29)) & mask
        while slots[j, 1] != 0:
            j = (j + 1) & mask
        for c in range(4):
            slots[j, c] = old[i, c]
        slot_off[j] = old_off[i]


@numba.njit(cache=_CACHE, nogil=True)
def ascii_term_ids(
    buf, starts, ends, d, n, stop, slots, slot_off, keys, state, out, doc_len
):  # pragma: no cover - jitted
    """Term ids of lower-cased ASCII documents ``buf[starts[d]:ends[d]]``, stop words dropped.

    Words are runs of ``[a-z0-9]`` (``factseek.text.WORD_RE`` on lower-cased ASCII). Each is
    looked up in the hash table (exact: hash, length and bytes compared); an absent one gets the
    next id ``state[2]`` (``state[3]`` counts them) and its key is appended to ``keys``.
    Starts at document ``d`` with ``n`` ids already in ``out``; returns (documents done, ids in
    ``out``), stopping early before a document that could fill the table past half or overflow
    ``keys`` (grow them and call again). ``doc_len[d]`` is document d's count of ids.
    """
    limit = len(slots) // 2
    while d < len(starts):
        i = starts[d]
        end = ends[d]
        most = (end - i) // 2 + 1  # words in this document at most
        if state[0] + most > limit or state[1] + (end - i) + most > len(keys):
            return d, n
        kept = 0
        while i < end:
            if not _is_word_byte(buf[i]):
                i += 1
                continue
            s = i
            h = _FNV_OFFSET
            w0 = 0
            w1 = 0
            while i < end and _is_word_byte(buf[i]):
                c = np.int64(buf[i])
                h = (h ^ c) * _FNV_PRIME
                k = i - s
                if k < 8:
                    w0 |= c << (8 * k)
                elif k < 16:
                    w1 |= c << (8 * (k - 8))
                i += 1
            j, found = _probe(buf, s, i - s, h, w0, w1, slots, slot_off, keys)
            if found:
                t = (slots[j, 1] >> 32) - 2
            else:
                t = state[2]
                state[2] = t + 1
                state[3] += 1
                _put(buf, s, i - s, h, w0, w1, t, j, slots, slot_off, keys, state)
            if t != stop:
                out[n] = t
                n += 1
                kept += 1
        doc_len[d] = kept
        d += 1
    return d, n


# ----------------------------------------------------------------------------- postings


@numba.njit(cache=_CACHE, nogil=True)
def postings_from_tokens(terms, doc_len, first_doc, n_terms):  # pragma: no cover - jitted
    """CSR postings (indptr, doc, tf) from a token stream (term id per token, docs in order)."""
    counts = np.zeros(n_terms + 1, np.int64)
    for t in terms:
        counts[t + 1] += 1
    start = np.cumsum(counts)  # token positions per term
    fill = start[:-1].copy()
    tokdoc = np.empty(len(terms), np.int32)
    pos = 0
    for d in range(len(doc_len)):
        for _ in range(doc_len[d]):
            t = terms[pos]
            tokdoc[fill[t]] = first_doc + d
            fill[t] += 1
            pos += 1
    # run-length encode each term's doc list (docs are already in order)
    indptr = np.zeros(n_terms + 1, np.int64)
    out_doc = np.empty(len(terms), np.int32)
    out_tf = np.empty(len(terms), np.int32)
    n = 0
    for t in range(n_terms):
        last = -1
        for p in range(start[t], start[t + 1]):
            d = tokdoc[p]
            if d == last:
                out_tf[n - 1] += 1
            else:
                out_doc[n] = d
                out_tf[n] = 1
                n += 1
                last = d
        indptr[t + 1] = n
    return indptr, out_doc[:n].copy(), out_tf[:n].copy()


@numba.njit(cache=_CACHE, nogil=True)
def merge_postings(indptr_a, doc_a, tf_a, indptr_b, doc_b, tf_b):  # pragma: no cover - jitted
    """Append postings ``b`` (later documents, ``len(indptr_b) >= len(indptr_a)``) to ``a``."""
    n_terms = len(indptr_b) - 1
    n_a = len(indptr_a) - 1
    indptr = np.zeros(n_terms + 1, np.int64)
    doc = np.empty(len(doc_a) + len(doc_b), np.int32)
    tf = np.empty(len(doc_a) + len(doc_b), np.int32)
    n = 0
    for t in range(n_terms):
        if t < n_a:
            for p in range(indptr_a[t], indptr_a[t + 1]):
                doc[n] = doc_a[p]
                tf[n] = tf_a[p]
                n += 1
        for p in range(indptr_b[t], indptr_b[t + 1]):
            doc[n] = doc_b[p]
            tf[n] = tf_b[p]
            n += 1
        indptr[t + 1] = n
    return indptr, doc, tf


@numba.njit(cache=_CACHE, nogil=True)
def bm25_impacts(indptr, doc, tf, doc_len, k1, b):  # pragma: no cover - jitted
    """Per-posting BM25 impacts and per-term maxima (Lucene idf, always positive)."""
    n_docs = len(doc_len)
    avgdl = max(doc_len.sum() / max(n_docs, 1), 1e-9)
    impact = np.empty(len(doc), np.float32)
    term_max = np.zeros(len(indptr) - 1, np.float32)
    for t in range(len(indptr) - 1):
        df = indptr[t + 1] - indptr[t]
        idf = np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
        best = np.float32(0.0)
        for p in range(indptr[t], indptr[t + 1]):
            f = tf[p]
            norm = k1 * (1.0 - b + b * doc_len[doc[p]] / avgdl)
            v = np.float32(idf * f * (k1 + 1.0) / (f + norm))
            impact[p] = v
            best = max(best, v)
        term_max[t] = best
    return impact, term_max


# ----------------------------------------------------------------------------- top-k selection


@numba.njit(cache=_CACHE, inline="always")
def _worse(s1, d1, s2, d2):  # pragma: no cover - jitted
    return s1 < s2 or (s1 == s2 and d1 > d2)


@numba.njit(cache=_CACHE, nogil=True)
def topk_of(cands, n, score, k):  # pragma: no cover - jitted
    """The ``k`` best of ``cands[:n]`` by ``(-score[d], d)``, best first."""
    k = min(k, n)
    hs = np.empty(k, np.float32)
    hd = np.empty(k, np.int32)
    size = 0
    for i in range(n):
        d = cands[i]
        s = score[d]
        if size < k:  # push, sift up (root = worst)
            j = size
            size += 1
            while j > 0:
                parent = (j - 1) // 2
                if _worse(s, d, hs[parent], hd[parent]):
                    hs[j] = hs[parent]
                    hd[j] = hd[parent]
                    j = parent
                else:
                    break
            hs[j] = s
            hd[j] = d
        elif _worse(hs[0], hd[0], s, d):  # replace the root, sift down
            j = 0
            while True:
                c = 2 * j + 1
                if c >= size:
                    break
                if c + 1 < size and _worse(hs[c + 1], hd[c + 1], hs[c], hd[c]):
                    c += 1
                if _worse(hs[c], hd[c], s, d):
                    hs[j] = hs[c]
                    hd[j] = hd[c]
                    j = c
                else:
                    break
            hs[j] = s
            hd[j] = d
    # pop the worst into the back: best first
    out_d = np.empty(k, np.int32)
    out_s = np.empty(k, np.float32)
    while size > 0:
        out_d[size - 1] = hd[0]
        out_s[size - 1] = hs[0]
        size -= 1
        s = hs[size]
        d = hd[size]
        j = 0
        while True:
            c = 2 * j + 1
            if c >= size:
                break
            if c + 1 < size and _worse(hs[c + 1], hd[c + 1], hs[c], hd[c]):
                c += 1
            if _worse(hs[c], hd[c], s, d):
                hs[j] = hs[c]
                hd[j] = hd[c]
                j = c
            else:
                break
        if size > 0:
            hs[j] = s
            hd[j] = d
    return out_d, out_s


# ----------------------------------------------------------------------------- search


@numba.njit(cache=_CACHE, nogil=True)
def _find(pdoc, lo, hi, d):  # pragma: no cover - jitted
    """First position in ``pdoc[lo:hi]`` (sorted) whose doc is >= d."""
    while lo < hi:
        mid = (lo + hi) // 2
        if pdoc[mid] < d:
            lo = mid + 1
        else:
            hi = mid
    return lo


@numba.njit(cache=_CACHE, nogil=True)
def candidates(touched, nt, acc, bound, theta):  # pragma: no cover - jitted
    """The touched documents whose score so far plus ``bound`` (what the lists not read yet can
    add) can still reach ``theta``, sorted by document."""
    cand = np.empty(nt, np.int32)
    nc = 0
    for j in range(nt):
        d = touched[j]
        if acc[d] + bound * (1.0 + _EPS) >= theta:
            cand[nc] = d
            nc += 1
    return np.sort(cand[:nc])


@numba.njit(cache=_CACHE, nogil=True)
def finish_pruned(
    i, order, qterms, qweights, indptr, pdoc, pimpact, rest, theta, k, acc, touched, nt
):  # pragma: no cover - jitted
    """The top-k once the lists ``order[i:]`` can no longer bring a new document past
    ``theta``: only the candidates that can still reach it are scored on them, and dropped as
    ``theta`` grows."""
    nq = len(order)
    cand = candidates(touched, nt, acc, rest[i], theta)
    nc = len(cand)
    while i < nq and nc > 0:
        t = qterms[order[i]]
        w = np.float32(qweights[order[i]])
        pos = indptr[t]
        end = indptr[t + 1]
        if nc * 8 < end - pos:  # few candidates: binary search each
            for j in range(nc):
                d = cand[j]
                pos = _find(pdoc, pos, end, d)
                if pos < end and pdoc[pos] == d:
                    acc[d] += w * pimpact[pos]
        else:  # many: one merge walk
            j = 0
            while j < nc and pos < end:
                d = cand[j]
                e = pdoc[pos]
                if e < d:
                    pos += 1
                elif e > d:
                    j += 1
                else:
                    acc[d] += w * pimpact[pos]
                    pos += 1
                    j += 1
        i += 1
        if nc > k:  # tighten: theta only grows
            _, sc = topk_of(cand, nc, acc, k)
            theta = max(theta, sc[k - 1])
            m = 0
            for j in range(nc):
                d = cand[j]
                if acc[d] + rest[i] * (1.0 + _EPS) >= theta:
                    cand[m] = d
                    m += 1
            nc = m
    return topk_of(cand, nc, acc, k)


@numba.njit(cache=_CACHE, nogil=True)
def term_bounds(qterms, qweights, term_max):  # pragma: no cover - jitted
    """Each query term's upper bound ``ub``, the terms by falling bound (``order``), and
    ``rest[i]``: the bound of the terms ``order[i:]`` together."""
    nq = len(qterms)
    ub = np.empty(nq, np.float64)
    for i in range(nq):
        ub[i] = qweights[i] * term_max[qterms[i]]
    order = np.argsort(-ub, kind="mergesort")
    rest = np.zeros(nq + 1, np.float64)
    for i in range(nq - 1, -1, -1):
        rest[i] = rest[i + 1] + ub[order[i]]
    return ub, order, rest


@numba.njit(cache=_CACHE, nogil=True, inline="always")  # the hot loop, as if written in place
def walk(pdoc, pimpact, p, q, w, gate, lo, span, acc, touched, nt):  # pragma: no cover
    """Score postings ``p:q`` of one list into ``acc`` (documents the gate allows); returns the
    new count of touched documents."""
    for x in range(p, q):
        d = pdoc[x]
        if np.uint64(gate[d] - lo) >= span:
            continue
        if acc[d] == 0:
            touched[nt] = d
            nt += 1
        acc[d] += w * pimpact[x]
    return nt


@numba.njit(cache=_CACHE, nogil=True)
def finish(
    i, order, qterms, qweights, indptr, pdoc, pimpact, rest, theta, k, acc, touched, nt
):  # pragma: no cover - jitted
    """The top k once the lists before ``order[i]`` are read (the rest pruned when ``i`` is
    short of them), with ``acc`` left all zero."""
    if i < len(order):  # pruned: only candidates that can still reach theta
        out_d, out_s = finish_pruned(
            i, order, qterms, qweights, indptr, pdoc, pimpact, rest, theta, k, acc, touched, nt
        )
    else:
        out_d, out_s = topk_of(touched, nt, acc, k)
    for j in range(nt):
        acc[touched[j]] = 0
    return out_d, out_s


@numba.njit(cache=_CACHE, nogil=True)
def bm25_search(
    indptr, pdoc, pimpact, term_max, qterms, qweights, gate, lo, hi, k, acc, touched, prune
):  # pragma: no cover - jitted
    """Exact top-k BM25 over documents with ``lo <= gate[d] < hi``; ``acc`` is left all zero."""
    nq = len(qterms)
    span = np.uint64(max(hi - lo, 0))  # lo <= g < hi as one unsigned compare
    ub, order, rest = term_bounds(qterms, qweights, term_max)
    nt = 0
    i = 0
    theta = -1.0
    done = 0.0  # upper bound of the terms processed so far (theta can never exceed it)
    while i < nq:
        t = qterms[order[i]]
        w = np.float32(qweights[order[i]])
        start = indptr[t]
        end = indptr[t + 1]
        # theta costs O(nt): look only when it could prune and the list is worth skipping
        if (
            prune
            and nt >= k
            and end - start >= _CHECK_MIN
            and 4 * (end - start) >= nt
            and done >= rest[i]
        ):
            _, sc = topk_of(touched, nt, acc, k)
            theta = sc[k - 1]
            if rest[i] * (1.0 + _EPS) < theta:
                break
        nt = walk(pdoc, pimpact, start, end, w, gate, lo, span, acc, touched, nt)
        done += ub[order[i]]
        i += 1
    return finish(
        i, order, qterms, qweights, indptr, pdoc, pimpact, rest, theta, k, acc, touched, nt
    )
