"""The numba kernels of the incremental BM25 scorer (``scorer.py`` holds the algorithm).

Every kernel sums a document's score over the query's distinct terms in ascending term-id order
with the same float64 operations (``qtf * idf * tf / (tf + norm)``), so every path gives
bit-identical scores; bounds carry ``EPS`` slack (float32 impacts a further ``IMP_SLACK`` factor).
Heaps keep the k best ``(score, doc)`` with ties broken by ``(-score, doc)``.
"""

from __future__ import annotations

import numba
import numpy as np

EPS = 1e-9
#: float32 impacts are rounded; bounds use them scaled up by this much.
IMP_SLACK = 1.0 + 1e-6


@numba.njit(cache=True)
def accumulate(terms, qtf, idf, norm, post_ptr, post_doc, post_tf, scores, touched, n_touched):
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
def accumulate_blocked(
    terms, qtf, idf, norm, post_ptr, post_doc, post_tf, scores, touched, n_touched, shift,
    b_doc, b_tf, b_q,
):  # fmt: skip
    """As ``accumulate``, cache-friendly for long postings: impact-ordered postings hit
    documents at random, so they are first bucketed by document block (``2**shift`` documents,
    whose scores and norms fit in cache) and then applied block by block. Within a block the
    entries stay in term order, so every document sums its terms in the same order as
    ``accumulate`` and gets bit-identical scores. ``b_*``: buffers of at least the query's
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


@numba.njit(cache=True)
def collect_above(scores, touched, thr, dense, out):
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
def exact(d, terms, qtf, idf, norm, fwd_ptr, fwd_term, fwd_tf):
    """The query's score of document ``d`` (same float operations as ``accumulate``)."""
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
def contribution(d, t, q, idf, norm, fwd_ptr, fwd_term, fwd_tf):
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
def worse(s1, d1, s2, d2):
    return s1 < s2 or (s1 == s2 and d1 > d2)


@numba.njit(cache=True)
def push(hs, hd, size, k, s, d):
    """Keep the k best (score, doc) in a min-heap (worst at the root). Returns the new size."""
    if size < k:
        i = size
        hs[i] = s
        hd[i] = d
        while i > 0:
            p = (i - 1) // 2
            if worse(hs[i], hd[i], hs[p], hd[p]):
                hs[i], hs[p] = hs[p], hs[i]
                hd[i], hd[p] = hd[p], hd[i]
                i = p
            else:
                break
        return size + 1
    if not worse(hs[0], hd[0], s, d):
        return size
    hs[0] = s
    hd[0] = d
    i = 0
    while True:
        left = 2 * i + 1
        right = left + 1
        m = i
        if left < size and worse(hs[left], hd[left], hs[m], hd[m]):
            m = left
        if right < size and worse(hs[right], hd[right], hs[m], hd[m]):
            m = right
        if m == i:
            break
        hs[i], hs[m] = hs[m], hs[i]
        hd[i], hd[m] = hd[m], hd[i]
        i = m
    return size


@numba.njit(cache=True)
def sorted_heap(hs, hd, size, out_s, out_d):
    order = np.argsort(hd[:size])  # doc ascending, then stable by score descending
    tmp_s = hs[:size][order]
    tmp_d = hd[:size][order]
    order2 = np.argsort(-tmp_s, kind="mergesort")
    for i in range(size):
        out_s[i] = tmp_s[order2[i]]
        out_d[i] = tmp_d[order2[i]]


@numba.njit(cache=True)
def top_from_dense(scores, touched, n_touched, k, out_s, out_d):
    hs = np.empty(k)
    hd = np.empty(k, np.int64)
    size = 0
    for i in range(n_touched):
        d = touched[i]
        s = scores[d]
        if s > 0.0:
            size = push(hs, hd, size, k, s, d)
    sorted_heap(hs, hd, size, out_s, out_d)
    return size


@numba.njit(cache=True)
def walk(neg_sorted, tail, level):
    """How many ranked docs have S_p >= level (huge when the ranking may not reach it)."""
    if level <= tail:
        return 1e18
    return float(np.searchsorted(neg_sorted, -level, side="right"))


@numba.njit(cache=True)
def postings_above(post_ptr, post_imp, t, weight, g):
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
def presence(ranking, terms, fwd_ptr, fwd_term):
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
def reduced(ranking, parent_vals, present, touched, terms, qtf, idf, norm, fwd_ptr, fwd_term,
             fwd_tf):  # fmt: skip
    """Exact scores of the parent's ranked docs for the parent minus a group's removed terms.
    A doc with none of the removed terms (``present & touched == 0``) keeps its parent score:
    the same terms summed in the same order."""
    out = np.empty(len(ranking))
    for i in range(len(ranking)):
        if present[i] & touched == 0:
            out[i] = parent_vals[i]
        else:
            out[i] = exact(ranking[i], terms, qtf, idf, norm, fwd_ptr, fwd_term, fwd_tf)
    return out


@numba.njit(cache=True)
def edit_batch(
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
            cost = walk(neg_sorted, tail, theta_est - g)
            for a in range(a0, a1):
                t = add_terms[a]
                b = add_delta[a] * max_c[t]
                cost += scan_cost * postings_above(
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
                gain = contribution(d, add_terms[a], add_delta[a], idf, norm, fwd_ptr, fwd_term, fwd_tf)  # fmt: skip
                if gain > 0.0:
                    approx += gain
                    changed = True
            if size == k and approx + EPS < hs[0]:
                continue
            s = exact(d, terms, qtf, idf, norm, fwd_ptr, fwd_term, fwd_tf) if changed else approx
            if s > 0.0:
                size = push(hs, hd, size, k, s, d)
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
                s = exact(d, terms, qtf, idf, norm, fwd_ptr, fwd_term, fwd_tf)
                if s > 0.0:
                    size = push(hs, hd, size, k, s, d)
        sorted_heap(hs, hd, size, out_s[c], out_d[c])
        out_n[c] = size
    counters[0] += visited
    counters[1] += scanned


@numba.njit(cache=True)
def quantize_up(scores, touched, ub, step):
    """``ub[d] * step >= scores[d]`` for the touched docs, in one byte each (a bound that stays
    in cache while phase 2 reads postings at random documents); untouched docs stay 0."""
    for i in range(len(touched)):
        d = touched[i]
        ub[d] = min(255, int(scores[d] / step) + 2)
