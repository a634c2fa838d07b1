"""Stance metrics as pure functions, and a model scored on labelled pairs.

``stance_metrics(gold, pred)``: accuracy, macro-F1 over the three labels (the labels present in
gold or predictions, each class F1 0 without true positives, as ``metrics.veracity``), per-class
precision / recall / F1 / support (a precision or recall with an empty denominator is 0), and
the confusion matrix ``confusion[gold][pred]`` in ``STANCE_LABELS`` order. Empty input raises.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from factseek.errors import InputError
from factseek.types import STANCE_LABELS


@dataclass(frozen=True, kw_only=True)
class ClassScores:
    precision: float
    recall: float
    f1: float
    support: int


@dataclass(frozen=True, kw_only=True)
class StanceMetrics:
    n: int
    accuracy: float
    macro_f1: float
    per_class: dict[str, ClassScores]
    confusion: list[list[int]]  # rows: gold, columns: predicted, in STANCE_LABELS order

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def stance_metrics(gold: Sequence[str], pred: Sequence[str]) -> StanceMetrics:
    """See the module docstring."""
    if len(gold) != len(pred):
        raise InputError(f"{len(gold)} gold labels but {len(pred)} predictions")
    if not gold:
        raise InputError("no stance pairs to score")
    index = {lab: i for i, lab in enumerate(STANCE_LABELS)}
    unknown = sorted({x for x in (*gold, *pred) if x not in index})
    if unknown:
        raise InputError(f"unknown stance labels {unknown} (one of: {', '.join(STANCE_LABELS)})")
    k = len(STANCE_LABELS)
    confusion = [[0] * k for _ in range(k)]
    for g, p in zip(gold, pred, strict=True):
        confusion[index[g]][index[p]] += 1
    per_class: dict[str, ClassScores] = {}
    f1s = []
    for i, lab in enumerate(STANCE_LABELS):
        tp = confusion[i][i]
        predicted = sum(confusion[r][i] for r in range(k))
        support = sum(confusion[i])
        precision = tp / predicted if predicted else 0.0
        recall = tp / support if support else 0.0
        f1 = 2 * tp / (predicted + support) if predicted + support else 0.0
        per_class[lab] = ClassScores(precision=precision, recall=recall, f1=f1, support=support)
        if predicted + support:
            f1s.append(f1)
    accuracy = sum(confusion[i][i] for i in range(k)) / len(gold)
    return StanceMetrics(
        n=len(gold),
        accuracy=accuracy,
        macro_f1=sum(f1s) / len(f1s),
        per_class=per_class,
        confusion=confusion,
    )


def metrics_table(metrics: StanceMetrics) -> str:
    """Markdown: the per-class table and the confusion matrix."""
    lines = [
        f"n={metrics.n}  accuracy {100 * metrics.accuracy:.1f}  macro-F1 {100 * metrics.macro_f1:.1f}",
        "",
        "| label | precision | recall | F1 | support |",
        "|---|---:|---:|---:|---:|",
    ]
    for lab, s in metrics.per_class.items():
        lines.append(
            f"| {lab} | {100 * s.precision:.1f} | {100 * s.recall:.1f} | {100 * s.f1:.1f} | {s.support} |"
        )
    lines += [
        "",
        "| gold \\ predicted | " + " | ".join(STANCE_LABELS) + " |",
        "|---|" + "---:|" * len(STANCE_LABELS),
    ]
    for lab, row in zip(STANCE_LABELS, metrics.confusion, strict=True):
        lines.append(f"| {lab} | " + " | ".join(str(x) for x in row) + " |")
    return "\n".join(lines)


@dataclass(frozen=True, kw_only=True)
class Evaluation:
    """A model scored on one side: its metrics, the seconds it read for, and the expected
    calibration error of each reading's own label as the side is scored (``scored_confidence``)
    and as read in three labels (the same but on a two-way side; figures before 4 December 2026
    are the three-way one)."""

    metrics: StanceMetrics
    seconds: float
    ece: float
    ece_three_way: float
    bins: tuple[dict[str, Any], ...] = ()  # the reliability table behind ``ece``
    predicted: tuple[str, ...] = ()  # each pair's label, in order

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.metrics.to_dict(),
            "ece": self.ece,
            "ece_three_way": self.ece_three_way,
            "reliability": list(self.bins),
            "seconds": round(self.seconds, 2),
        }

    def ece_words(self) -> str:
        """ "0.249 (three-way 0.105)", or "0.118" where the two are one."""
        three = self.ece_three_way
        return f"{self.ece:.3f}" + ("" if three == self.ece else f" (three-way {three:.3f})")


def evaluate_pairs(model: Any, pairs: Sequence[Any], scoring: str = "3way") -> Evaluation:
    """A ``StanceModel`` on labelled pairs (``stance.data.StancePair``), scored as
    ``score_pairs(scoring, ...)``, with its calibration error (``Evaluation``)."""
    import time

    from factseek.metrics.calibration import expected_calibration_error, reliability

    started = time.perf_counter()
    results = model.classify([(p.question, p.evidence) for p in pairs])
    seconds = time.perf_counter() - started
    gold = [p.label for p in pairs]
    ece = [
        round(float(expected_calibration_error(*scored_confidence(way, results, gold))), 4)
        for way in (scoring, "3way")
    ]
    return Evaluation(
        metrics=score_pairs(scoring, gold, [r.label for r in results]),
        seconds=seconds,
        ece=ece[0],
        ece_three_way=ece[1],
        bins=tuple(reliability(*scored_confidence(scoring, results, gold))),
        predicted=tuple(r.label for r in results),
    )


def reliability_table(bins: Sequence[dict[str, Any]]) -> str:
    """Markdown rows of a reliability table: how often readings of each confidence were right."""
    rows = ["| confidence | readings | mean confidence | right |", "|---|---:|---:|---:|"]
    rows += [
        f"| {b['low']:.1f}-{b['high']:.1f} | {b['n']} | {b['confidence']:.2f} | {b['accuracy']:.2f} |"
        for b in bins
    ]
    return "\n".join(rows)


def scored_confidence(
    scoring: str, results: Sequence[Any], gold: Sequence[str]
) -> tuple[list[float], list[bool]]:
    """Each reading's probability of its own label and whether that label is right, in the
    labels the side is scored in: three-way and supports-vs-refutes sides as read (a ``nei``
    reading of a supports-vs-refutes pair is a miss, as ``score_pairs`` counts it); on a
    ``supported-vs-not`` side (WiCE: its gold does not tell refutes from not enough
    information) a reading says "supported" with p(supports) or "not supported" with
    1 - p(supports), so a ``refutes`` reading of an unsupported claim is right, as scored."""
    if scoring == "supported-vs-not":
        said = [r.label == "supports" for r in results]
        p = [float(r.probs.get("supports", 0.0)) for r in results]
        confidence = [x if s else 1.0 - x for x, s in zip(p, said, strict=True)]
        return confidence, [s == (g == "supports") for s, g in zip(said, gold, strict=True)]
    confidence = [float(r.probs.get(r.label, 0.0)) for r in results]
    return confidence, [r.label == g for r, g in zip(results, gold, strict=True)]


def label_ece(probs: Any, gold: Sequence[str], thresholds: Any = None) -> float:
    """Expected calibration error of the probability a reading gives its own label (the label
    ``stance.thresholds.decide_many`` picks), against whether that label is the gold one."""
    import numpy as np

    from factseek.metrics.calibration import expected_calibration_error
    from factseek.stance.thresholds import decide_many

    probs = np.asarray(probs, dtype=np.float64)
    labels = decide_many(probs, thresholds)
    confidence = probs[np.arange(len(labels)), labels]
    correct = [STANCE_LABELS[int(k)] == g for k, g in zip(labels, gold, strict=True)]
    return round(float(expected_calibration_error(confidence, correct)), 4)


def binary_metrics(
    gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]
) -> StanceMetrics:
    """Accuracy and macro-F1 over ``labels`` only (the gold labels of a two-way test side); a
    prediction outside them is simply wrong (it lowers the recall of its gold label)."""
    if len(gold) != len(pred):
        raise InputError(f"{len(gold)} gold labels but {len(pred)} predictions")
    if not gold:
        raise InputError("no stance pairs to score")
    per_class: dict[str, ClassScores] = {}
    for lab in labels:
        tp = sum(1 for g, p in zip(gold, pred, strict=True) if g == p == lab)
        predicted = sum(1 for p in pred if p == lab)
        support = sum(1 for g in gold if g == lab)
        per_class[lab] = ClassScores(
            precision=tp / predicted if predicted else 0.0,
            recall=tp / support if support else 0.0,
            f1=2 * tp / (predicted + support) if predicted + support else 0.0,
            support=support,
        )
    index = {lab: i for i, lab in enumerate(STANCE_LABELS)}
    confusion = [[0] * len(STANCE_LABELS) for _ in STANCE_LABELS]
    for g, p in zip(gold, pred, strict=True):
        confusion[index[g]][index[p]] += 1
    return StanceMetrics(
        n=len(gold),
        accuracy=sum(1 for g, p in zip(gold, pred, strict=True) if g == p) / len(gold),
        macro_f1=sum(s.f1 for s in per_class.values()) / len(labels),
        per_class=per_class,
        confusion=confusion,
    )


def score_pairs(scoring: str, gold: Sequence[str], pred: Sequence[str]) -> StanceMetrics:
    """Metrics of one source's test side as it is scored (``stance.realworld.SCORING``):

    - ``3way``: ``stance_metrics``;
    - ``supported-vs-not``: supports against everything else (refutes and nei are one label,
      counted as ``nei``), macro-F1 over the two;
    - ``supports-vs-refutes``: gold is supports or refutes; macro-F1 over those two, a nei
      reading counting as a miss.
    """
    if scoring == "3way":
        return stance_metrics(gold, pred)
    if scoring == "supported-vs-not":
        fold = [["nei", "supports"][x == "supports"] for x in gold]
        return binary_metrics(
            fold, [["nei", "supports"][x == "supports"] for x in pred], ("supports", "nei")
        )
    if scoring == "supports-vs-refutes":
        return binary_metrics(gold, pred, ("supports", "refutes"))
    raise InputError(f"unknown scoring {scoring!r}")
