"""Which claims a rewriter trains, calibrates and is evaluated on.

- ``is_held_out(id, fraction)``: a hash split by claim id (the older ``--holdout`` option).
- ``select_split(claims, split)``: ``train`` / ``validation`` / ``test`` by connected groups of
  shared relevant documents (``factseek.datasets.fever.group_sides``, 70/10/20 of the groups), so
  no relevant document is on two sides; on ``fever-dev`` data this is exactly FEVER's
  ``group_split``. ``all`` keeps every claim. The corpus always stays whole.

A trajectory folder records the split its BFS ran on and ``claims_fingerprint`` of the whole
claims set it was drawn from (before the split); a model inherits both, and ``check_disjoint``
refuses to calibrate or evaluate a model on claims of the side it was trained on. A model whose
BFS ran on another claims set (FEVER train, evaluated on FEVER dev) passes on any side.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from factseek.datasets.retrieval import RetrievalClaim
from factseek.errors import ConfigError

#: ``--split`` choices; ``all`` means no split.
SPLITS: tuple[str, ...] = ("all", "train", "validation", "test")


def is_held_out(claim_id: str, fraction: float, seed: int = 0) -> bool:
    """Deterministic split by claim: True for about ``fraction`` of ids (hash of seed + id)."""
    h = hashlib.blake2b(f"{seed}:{claim_id}".encode(), digest_size=8).digest()
    return int.from_bytes(h) / 2**64 < fraction


def select_split(
    claims: Sequence[RetrievalClaim], split: str, *, seed: int = 0
) -> tuple[RetrievalClaim, ...]:
    """The claims on one side of the group split (input order); ``all``: every claim."""
    from factseek.datasets.fever import group_sides

    if split not in SPLITS:
        raise ConfigError(f"unknown split {split!r}; choose one of: {', '.join(SPLITS)}")
    if split == "all":
        return tuple(claims)
    sides = group_sides([(c.id, c.relevant) for c in claims], seed=seed)
    return tuple(c for c in claims if sides[c.id] == split)


def claims_fingerprint(claims: Sequence[RetrievalClaim]) -> str:
    """A digest of the claim ids of a data set (order-free): which claims set a BFS ran on."""
    h = hashlib.blake2b(digest_size=12)
    for cid in sorted(c.id for c in claims):
        h.update(cid.encode("utf-8") + b"\0")
    return h.hexdigest()


def check_disjoint(
    meta: Mapping[str, Any], split: str, what: str, claims: str | None = None
) -> None:
    """Refuse to ``what`` (calibrate, evaluate) a model on the split its BFS data came from.
    ``claims``: ``claims_fingerprint`` of the data at hand; a model trained on another claims
    set (recorded as ``bfs.claims``) is never refused."""
    bfs = meta.get("bfs", {})
    trained = bfs.get("split")
    if claims is not None and bfs.get("claims") not in (None, claims):
        return
    if split == "all" or trained is None:
        return
    if trained in ("all", split):
        raise ConfigError(
            f"the model was trained on BFS data of the {trained!r} split; it cannot {what} on the"
            f" {split!r} split (use the model's own unseen side)"
        )
