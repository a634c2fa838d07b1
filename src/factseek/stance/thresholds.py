"""How a stance model's probabilities become a label, and how the rule is tuned.

The rule (``decide``), with ``thresholds = {"supports": ts, "refutes": tr}``:

1. Without thresholds: the arg-max label (ties: supports, then refutes, then nei).
2. With thresholds: of supports and refutes, the one with the larger probability (tie:
   supports) is the label when its probability is at least its threshold; otherwise ``nei``.
   So a lower threshold asks less of the evidence before it counts as taking a stance, and
   ``nei``'s own probability matters only through the other two.

``tune_thresholds(probs, gold, groups)`` picks ``(ts, tr)`` on a grid (``GRID``: 0.05 to 0.95 by
0.05) maximising macro-F1 over the three labels (with ``groups``, the mean of each group's
macro-F1: every source weighs the same); ties go to the pair closest to (0.5, 0.5), then the
smaller ``ts``, then the smaller ``tr``, so the result is deterministic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from factseek.errors import InputError
from factseek.types import STANCE_LABELS, StanceLabel

GRID: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(1, 20))
Thresholds = Mapping[str, float]


def check_thresholds(thresholds: Thresholds | None) -> dict[str, float] | None:
    """A validated copy: both keys, each in [0, 1]; None stays None (arg-max)."""
    if thresholds is None:
        return None
    if set(thresholds) != {"supports", "refutes"}:
        raise InputError("stance thresholds need exactly the keys 'supports' and 'refutes'")
    out = {k: float(v) for k, v in thresholds.items()}
    if any(not 0.0 <= v <= 1.0 for v in out.values()):
        raise InputError("stance thresholds must be probabilities in [0, 1]")
    return out


def decide_many(probs: np.ndarray, thresholds: Thresholds | None) -> np.ndarray:
    """Label indices (into ``STANCE_LABELS``) for rows of ``(supports, refutes, nei)`` probabilities."""
    probs = np.asarray(probs, dtype=np.float64)
    if probs.ndim != 2 or probs.shape[1] != len(STANCE_LABELS):
        raise InputError(f"expected (n, {len(STANCE_LABELS)}) probabilities, got {probs.shape}")
    if thresholds is None:
        return probs.argmax(axis=1)  # first index among ties
    s, r = probs[:, 0], probs[:, 1]
    side = np.where(r > s, 1, 0)  # the larger of the two; tie: supports
    p = np.where(side == 1, r, s)
    t = np.where(side == 1, thresholds["refutes"], thresholds["supports"])
    return np.where(p >= t, side, 2)


def decide(probs: Mapping[str, float], thresholds: Thresholds | None) -> StanceLabel:
    """The label of one ``{label: probability}`` reading (see the module docstring)."""
    row = np.array([[float(probs.get(lab, 0.0)) for lab in STANCE_LABELS]])
    return STANCE_LABELS[int(decide_many(row, thresholds)[0])]


def macro_f1_indices(gold: np.ndarray, pred: np.ndarray, n_labels: int = 3) -> float:
    """Macro-F1 over the labels present in gold or predictions (per-class F1 0 without TP)."""
    f1s = []
    for k in range(n_labels):
        tp = int(np.sum((pred == k) & (gold == k)))
        fp = int(np.sum((pred == k) & (gold != k)))
        fn = int(np.sum((pred != k) & (gold == k)))
        if tp + fp + fn == 0:
            continue
        f1s.append(2 * tp / (2 * tp + fp + fn))
    return float(np.mean(f1s)) if f1s else 0.0


def tune_thresholds(
    probs: np.ndarray, gold: Sequence[str], groups: Sequence[str] | None = None
) -> tuple[dict[str, float], float]:
    """``(thresholds, macro-F1)`` of the best grid point on ``(probs, gold)``. With ``groups``
    (each example's source), the score is the mean of the groups' macro-F1s, so every source
    counts the same however many pairs it has."""
    if len(gold) == 0:
        raise InputError("no examples to tune stance thresholds on")
    g = np.array([STANCE_LABELS.index(x) for x in gold])  # type: ignore[arg-type]
    names = list(dict.fromkeys(groups)) if groups is not None else [""]
    member = (
        [np.array([x == n for x in groups]) for n in names]
        if groups is not None
        else [np.ones(len(g), bool)]
    )
    best: tuple[float, float, float, float] | None = None  # (-f1, distance, ts, tr)
    for ts in GRID:
        for tr in GRID:
            pred = decide_many(probs, {"supports": ts, "refutes": tr})
            f1 = float(np.mean([macro_f1_indices(g[m], pred[m]) for m in member]))
            key = (-round(f1, 12), abs(ts - 0.5) + abs(tr - 0.5), ts, tr)
            if best is None or key < best:
                best = key
    assert best is not None
    return {"supports": best[2], "refutes": best[3]}, -best[0]
