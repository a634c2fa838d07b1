"""Which claims a rewriter trains, calibrates and is evaluated on.

``is_held_out(id, fraction)``: a hash split by claim id (any data set). FEVER's development set
is split instead by connected groups of shared evidence (``factseek.datasets.fever.group_split``),
so no evidence text is on two sides.
"""

from __future__ import annotations

import hashlib


def is_held_out(claim_id: str, fraction: float, seed: int = 0) -> bool:
    """Deterministic split by claim: True for about ``fraction`` of ids (hash of seed + id)."""
    h = hashlib.blake2b(f"{seed}:{claim_id}".encode(), digest_size=8).digest()
    return int.from_bytes(h) / 2**64 < fraction
