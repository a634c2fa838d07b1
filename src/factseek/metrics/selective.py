"""How far a verdict with a confidence can be trusted: per-label precision, risk-coverage, ECE.

Pure functions over parallel lists of gold labels, predicted labels and confidences (``None``
for a verdict that carries none: an abstention or "not enough evidence").

- ``label_precision(gold, pred)``: per predicted label, how often it was right (``precision``),
  how many claims got it (``n``) and their share of all claims (``share``), most frequent first.
- ``risk_coverage(gold, pred, confidence, points)``: the verdicts with a confidence, most
  confident first (ties: input order); at each coverage in ``points`` (a share of *all*
  claims), the accuracy of the verdicts answered so far. Coverage beyond what the confident
  verdicts reach is not reported (``max_coverage`` says how far they go).
- ``selective_ece(gold, pred, confidence)``: the expected calibration error
  (``metrics.calibration.expected_calibration_error``) of the verdicts with a confidence.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from factseek.errors import InputError

POINTS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def _check(
    gold: Sequence[str], pred: Sequence[str], confidence: Sequence[Any] | None = None
) -> None:
    if len(gold) != len(pred) or (confidence is not None and len(confidence) != len(gold)):
        raise InputError("gold, predictions and confidences must be parallel lists")
    if not gold:
        raise InputError("no verdicts to score")


def label_precision(gold: Sequence[str], pred: Sequence[str]) -> dict[str, dict[str, float]]:
    """Per predicted label: precision, n and share (module docstring)."""
    _check(gold, pred)
    out = {}
    for label, n in Counter(pred).most_common():
        right = sum(1 for g, p in zip(gold, pred, strict=True) if p == label and g == label)
        out[label] = {"precision": round(right / n, 4), "n": n, "share": round(n / len(pred), 4)}
    return out


def risk_coverage(
    gold: Sequence[str],
    pred: Sequence[str],
    confidence: Sequence[float | None],
    points: Sequence[float] = POINTS,
) -> dict[str, Any]:
    """``{"max_coverage", "rows": [{"coverage", "n", "accuracy"}]}`` (module docstring)."""
    _check(gold, pred, confidence)
    ranked = sorted(
        (i for i, c in enumerate(confidence) if c is not None),
        key=lambda i: (-(confidence[i] or 0.0), i),
    )
    rows = []
    for c in points:
        k = round(c * len(gold))
        if k < 1 or k > len(ranked):
            continue
        right = sum(1 for i in ranked[:k] if gold[i] == pred[i])
        rows.append({"coverage": c, "n": k, "accuracy": round(right / k, 4)})
    return {"max_coverage": round(len(ranked) / len(gold), 4), "rows": rows}


def selective_ece(
    gold: Sequence[str], pred: Sequence[str], confidence: Sequence[float | None]
) -> float | None:
    """ECE of the verdicts that carry a confidence (None when none does)."""
    from factseek.metrics.calibration import expected_calibration_error  # numpy, on first use

    _check(gold, pred, confidence)
    idx = [i for i, c in enumerate(confidence) if c is not None]
    if not idx:
        return None
    return round(
        float(
            expected_calibration_error(
                [float(confidence[i] or 0.0) for i in idx], [gold[i] == pred[i] for i in idx]
            )
        ),
        4,
    )


__all__ = ["POINTS", "label_precision", "risk_coverage", "selective_ece"]
