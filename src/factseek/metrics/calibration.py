"""Calibration error of probabilities: top-label ECE and the reliability table behind it.

``expected_calibration_error(confidence, correct)`` puts readings in ``BINS`` equal-width bins of
confidence; the error is the sum over bins of (share of readings in the bin) x |mean confidence -
accuracy|. ``reliability`` gives the bins themselves (for a table or a plot). Used for stance
probabilities (``factseek.stance.calibrate``) and verdict confidences (``metrics.selective``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from factseek.errors import InputError

BINS = 10


def expected_calibration_error(
    confidence: Sequence[float], correct: Sequence[bool], bins: int = BINS
) -> float:
    """Top-label ECE over ``bins`` equal-width bins (module docstring)."""
    table = reliability(confidence, correct, bins)
    n = sum(row["n"] for row in table)
    return sum(row["n"] / n * abs(row["confidence"] - row["accuracy"]) for row in table)


def reliability(
    confidence: Sequence[float], correct: Sequence[bool], bins: int = BINS
) -> list[dict[str, Any]]:
    """The non-empty bins: ``{"low", "high", "n", "confidence", "accuracy"}`` (a confidence of
    exactly 1 goes to the last bin)."""
    conf = np.asarray(confidence, dtype=np.float64)
    ok = np.asarray(correct, dtype=np.float64)
    if len(conf) == 0 or len(conf) != len(ok):
        raise InputError("reliability needs one correctness flag per confidence, and at least one")
    if np.any((conf < 0) | (conf > 1)):
        raise InputError("confidences must be probabilities in [0, 1]")
    which = np.minimum((conf * bins).astype(int), bins - 1)
    out = []
    for k in range(bins):
        sel = which == k
        if sel.any():
            out.append(
                {
                    "low": k / bins,
                    "high": (k + 1) / bins,
                    "n": int(sel.sum()),
                    "confidence": float(conf[sel].mean()),
                    "accuracy": float(ok[sel].mean()),
                }
            )
    return out
