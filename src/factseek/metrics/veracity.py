"""Veracity metrics as pure functions: the paper's four, a paired significance test, a confusion plot.

Predictions and gold labels are sequences of canonical label names of one ``LabelSet``.
Accuracy and macro-F1 work for any set; soft accuracy (off by at most one step counts as
correct) and MAE (mean absolute distance in steps) need an ordinal set and raise otherwise.
Macro-F1 averages over the labels that occur in gold or predictions (scikit-learn's default),
each class F1 being 0 where it has no true positives. Empty input raises: a metric that cannot
be computed is an error, never 0.

>>> from factseek.labels import POLITIFACT
>>> mae(["true", "false"], ["mostly-true", "pants-fire"], POLITIFACT)
1.0
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from factseek.errors import InputError
from factseek.files import atomic_path
from factseek.labels import LabelSet

MetricName = Literal["accuracy", "soft_accuracy", "macro_f1", "mae"]
METRICS: tuple[MetricName, ...] = ("accuracy", "soft_accuracy", "macro_f1", "mae")
LOWER_IS_BETTER: frozenset[str] = frozenset({"mae"})
DEFAULT_RESAMPLES = 10_000


@dataclass(frozen=True, kw_only=True)
class VeracityMetrics:
    """The paper's four numbers (fractions, not percentages); ordinal ones are None for nominal sets."""

    n: int
    accuracy: float
    macro_f1: float
    soft_accuracy: float | None = None
    mae: float | None = None


@dataclass(frozen=True, kw_only=True)
class PairedTest:
    """System A vs system B on one metric over the same examples.

    ``p_value`` is two-sided: how often a difference at least as large as ``delta`` (A minus B)
    arises when the two systems' predictions are swapped at random per example (approximate
    randomisation), or, for ``method="bootstrap"``, from the resampled deltas shifted to zero
    mean. ``ci_low``/``ci_high`` are the 95% paired-bootstrap interval of ``delta``.
    """

    metric: str
    method: str
    a: float
    b: float
    delta: float
    p_value: float
    ci_low: float
    ci_high: float
    resamples: int


# ----------------------------------------------------------------------------- index arrays


def _indices(
    gold: Sequence[str], pred: Sequence[str], labels: LabelSet
) -> tuple[np.ndarray, np.ndarray]:
    if len(gold) != len(pred):
        raise InputError(f"{len(gold)} gold labels but {len(pred)} predictions")
    if not gold:
        raise InputError("no examples to score")
    g = np.fromiter((labels.index(x) for x in gold), dtype=np.int64, count=len(gold))
    p = np.fromiter((labels.index(x) for x in pred), dtype=np.int64, count=len(pred))
    return g, p


def _need_ordinal(labels: LabelSet, what: str) -> None:
    if not labels.ordinal:
        raise InputError(f"{what} needs an ordinal label set; {labels.name} is not ordinal")


def _accuracy(g: np.ndarray, p: np.ndarray) -> float:
    return float(np.mean(g == p))


def _soft_accuracy(g: np.ndarray, p: np.ndarray) -> float:
    return float(np.mean(np.abs(g - p) <= 1))


def _mae(g: np.ndarray, p: np.ndarray) -> float:
    return float(np.mean(np.abs(g - p)))


def _macro_f1(g: np.ndarray, p: np.ndarray, k: int) -> float:
    tp = np.bincount(g[g == p], minlength=k)
    n_gold = np.bincount(g, minlength=k)
    n_pred = np.bincount(p, minlength=k)
    present = (n_gold + n_pred) > 0
    denom = n_gold + n_pred
    f1 = np.divide(2 * tp, denom, out=np.zeros(k), where=denom > 0)
    return float(f1[present].mean())


def _metric_fn(metric: str, labels: LabelSet) -> Callable[[np.ndarray, np.ndarray], float]:
    if metric == "accuracy":
        return _accuracy
    if metric == "macro_f1":
        k = len(labels)
        return lambda g, p: _macro_f1(g, p, k)
    if metric in ("soft_accuracy", "mae"):
        _need_ordinal(labels, metric)
        return _soft_accuracy if metric == "soft_accuracy" else _mae
    raise InputError(f"unknown metric {metric!r} (one of: {', '.join(METRICS)})")


# ----------------------------------------------------------------------------- public metrics


def accuracy(gold: Sequence[str], pred: Sequence[str], labels: LabelSet) -> float:
    return _accuracy(*_indices(gold, pred, labels))


def soft_accuracy(gold: Sequence[str], pred: Sequence[str], labels: LabelSet) -> float:
    """Fraction within one step of gold on the ordinal scale."""
    _need_ordinal(labels, "soft accuracy")
    return _soft_accuracy(*_indices(gold, pred, labels))


def macro_f1(gold: Sequence[str], pred: Sequence[str], labels: LabelSet) -> float:
    return _macro_f1(*_indices(gold, pred, labels), len(labels))


def mae(gold: Sequence[str], pred: Sequence[str], labels: LabelSet) -> float:
    """Mean absolute error in steps of the ordinal scale."""
    _need_ordinal(labels, "MAE")
    return _mae(*_indices(gold, pred, labels))


def veracity_metrics(gold: Sequence[str], pred: Sequence[str], labels: LabelSet) -> VeracityMetrics:
    """All four metrics at once (ordinal ones only for ordinal label sets)."""
    g, p = _indices(gold, pred, labels)
    return VeracityMetrics(
        n=len(g),
        accuracy=_accuracy(g, p),
        macro_f1=_macro_f1(g, p, len(labels)),
        soft_accuracy=_soft_accuracy(g, p) if labels.ordinal else None,
        mae=_mae(g, p) if labels.ordinal else None,
    )


def majority_baseline(train_gold: Sequence[str], n: int, labels: LabelSet) -> list[str]:
    """``n`` predictions of the most frequent training label (ties: the earlier label in the set)."""
    if not train_gold:
        raise InputError("no training labels for a majority baseline")
    counts = np.bincount([labels.index(x) for x in train_gold], minlength=len(labels))
    return [labels.labels[int(np.argmax(counts))]] * n


def confusion_matrix(gold: Sequence[str], pred: Sequence[str], labels: LabelSet) -> np.ndarray:
    """int64 (k, k): rows are gold labels, columns predictions, both in label-set order."""
    g, p = _indices(gold, pred, labels)
    k = len(labels)
    return np.bincount(g * k + p, minlength=k * k).reshape(k, k)


# ----------------------------------------------------------------------------- significance


def paired_test(
    gold: Sequence[str],
    pred_a: Sequence[str],
    pred_b: Sequence[str],
    labels: LabelSet,
    *,
    metric: MetricName = "accuracy",
    method: Literal["permutation", "bootstrap"] = "permutation",
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> PairedTest:
    """Is system A's ``metric`` different from system B's on the same examples? (two-sided)"""
    if resamples < 1:
        raise InputError("resamples must be at least 1")
    fn = _metric_fn(metric, labels)
    g, a = _indices(gold, pred_a, labels)
    _, b = _indices(gold, pred_b, labels)
    n = len(g)
    score_a, score_b = fn(g, a), fn(g, b)
    delta = score_a - score_b
    rng = np.random.default_rng(seed)

    boot = np.empty(resamples)
    for r in range(resamples):
        idx = rng.integers(0, n, size=n)
        boot[r] = fn(g[idx], a[idx]) - fn(g[idx], b[idx])
    ci_low, ci_high = (float(x) for x in np.quantile(boot, [0.025, 0.975]))

    eps = 1e-12
    if method == "bootstrap":
        extreme = int(np.sum(np.abs(boot - boot.mean()) >= abs(delta) - eps))
    elif method == "permutation":
        extreme = 0
        for _ in range(resamples):
            swap = rng.random(n) < 0.5
            pa, pb = np.where(swap, b, a), np.where(swap, a, b)
            extreme += abs(fn(g, pa) - fn(g, pb)) >= abs(delta) - eps
    else:
        raise InputError(f"unknown test method {method!r} (one of: permutation, bootstrap)")
    return PairedTest(
        metric=metric,
        method=method,
        a=score_a,
        b=score_b,
        delta=delta,
        p_value=(extreme + 1) / (resamples + 1),
        ci_low=ci_low,
        ci_high=ci_high,
        resamples=resamples,
    )


# ----------------------------------------------------------------------------- plot


def plot_confusion(
    matrix: np.ndarray, labels: LabelSet, path: str | Path, *, title: str = ""
) -> Path:
    """Write a confusion-matrix heat map (counts, rows = gold) as a PNG; atomic replace."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    k = len(labels)
    if matrix.shape != (k, k):
        raise InputError(
            f"confusion matrix is {matrix.shape}, label set {labels.name} needs {(k, k)}"
        )
    path = Path(path)
    fig, ax = plt.subplots(figsize=(1.1 * k + 2, 1.0 * k + 1.5), dpi=120)
    try:
        ax.imshow(matrix, cmap="Blues")
        ax.set_xticks(range(k), labels.labels, rotation=45, ha="right")
        ax.set_yticks(range(k), labels.labels)
        ax.set_xlabel("predicted")
        ax.set_ylabel("gold")
        if title:
            ax.set_title(title)
        top = matrix.max() if matrix.size else 0
        for i in range(k):
            for j in range(k):
                color = "white" if top and matrix[i, j] > top / 2 else "black"
                ax.text(j, i, str(int(matrix[i, j])), ha="center", va="center", color=color)
        fig.tight_layout()
        with atomic_path(path, suffix=".png") as tmp:
            fig.savefig(tmp, format="png")
    finally:
        plt.close(fig)
    return path
