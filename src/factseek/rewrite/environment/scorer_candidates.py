"""Candidate queries as edits of a parent: the changed terms, and groups by what they remove.

``prepare(candidates, parent_terms, parent_qtf)`` turns a batch of candidate queries (term ids,
with repetition) into flat arrays the scorer's kernels read: each candidate's distinct terms
ascending with their counts, the terms it has more of than the parent (added, with the count
difference) and those it has fewer of (removed). Candidates that remove the same terms share a
group (every remove/swap of one token does), so the scorer re-sorts the parent's ranking once per
group, not once per candidate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numba
import numpy as np


@dataclass(frozen=True, kw_only=True, eq=False)
class Candidates:
    """A batch of candidates as flat arrays; ``*_ptr[c]:*_ptr[c + 1]`` slices candidate c."""

    cand_ptr: np.ndarray  # int64 (n + 1,)
    cand_terms: np.ndarray  # int32: distinct terms ascending
    cand_qtf: np.ndarray  # float64 counts, parallel to cand_terms
    add_ptr: np.ndarray  # int64 (n + 1,)
    add_terms: np.ndarray  # int32: terms the candidate has more of than the parent
    add_delta: np.ndarray  # float64: by how many
    group: np.ndarray  # int64 (n,): index into ``groups``
    groups: tuple[tuple[np.ndarray, np.ndarray], ...]  # (removed terms int32, counts float64)

    def __len__(self) -> int:
        return len(self.group)


def prepare(
    candidates: Sequence[np.ndarray], parent_terms: np.ndarray, parent_qtf: np.ndarray
) -> Candidates:
    """The candidates (term ids each) as edits of the parent (distinct terms ascending, counts)."""
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
     rem_ptr, rem_terms, rem_delta) = _prepare(flat, ptr, parent_terms, parent_qtf)  # fmt: skip
    keys: dict[tuple[bytes, bytes], int] = {}
    group = np.empty(n, np.int64)
    for i in range(n):
        r0, r1 = rem_ptr[i], rem_ptr[i + 1]
        key = (rem_terms[r0:r1].tobytes(), rem_delta[r0:r1].tobytes())
        group[i] = keys.setdefault(key, len(keys))
    groups = tuple((np.frombuffer(t, np.int32), np.frombuffer(d, np.float64)) for t, d in keys)
    return Candidates(
        cand_ptr=cand_ptr, cand_terms=cand_terms, cand_qtf=cand_qtf, add_ptr=add_ptr,
        add_terms=add_terms, add_delta=add_delta, group=group, groups=groups,
    )  # fmt: skip


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
