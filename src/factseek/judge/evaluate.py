"""Run a judge over a labelled data set; predictions files; comparing two systems.

A predictions file is JSONL, one object per claim: ``{"id", "label", "gold", "scores", "judge"}``
(``gold`` may be null). Two files are compared on the claims they share by ``id``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from factseek.datasets.claims import LabeledClaim
from factseek.errors import DataError, InputError
from factseek.files import atomic_write
from factseek.judge.classifier import ClassifierJudge
from factseek.judge.inputs import ReportSummaries, build_examples
from factseek.labels import LabelSet
from factseek.metrics.veracity import (
    METRICS,
    PairedTest,
    VeracityMetrics,
    paired_test,
    veracity_metrics,
)
from factseek.sanitize import json_loads

MAX_PREDICTION_LINES = 10_000_000


@dataclass(frozen=True, kw_only=True)
class Prediction:
    id: str
    label: str
    gold: str | None = None
    scores: Mapping[str, float] = field(default_factory=dict)
    judge: str = ""


def predict_rows(
    judge: ClassifierJudge, rows: Sequence[LabeledClaim], summaries: ReportSummaries | None = None
) -> tuple[list[Prediction], int]:
    """Predictions for every row (batched), and how many rows had no report in summaries mode."""
    examples, missing = build_examples(rows, judge.mode, summaries)
    verdicts = judge.predict_examples(examples)
    preds = [
        Prediction(
            id=ex.id, label=v.label or "", gold=ex.label, scores=dict(v.scores), judge=v.judge
        )
        for ex, v in zip(examples, verdicts, strict=True)
    ]
    return preds, missing


def score(preds: Sequence[Prediction], labels: LabelSet) -> VeracityMetrics:
    """The four metrics over predictions that carry a gold label (all must)."""
    unlabeled = [p.id for p in preds if p.gold is None]
    if unlabeled:
        raise InputError(f"{len(unlabeled)} claims have no gold label (e.g. {unlabeled[0]})")
    return veracity_metrics([p.gold for p in preds], [p.label for p in preds], labels)  # type: ignore[misc]


def write_predictions(path: str | Path, preds: Sequence[Prediction]) -> Path:
    """Atomically write a predictions JSONL file."""
    path = Path(path)
    rows = (
        {"id": p.id, "label": p.label, "gold": p.gold, "scores": dict(p.scores), "judge": p.judge}
        for p in preds
    )
    atomic_write(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return path


def read_predictions(path: str | Path, labels: LabelSet) -> list[Prediction]:
    """Read a predictions JSONL file; labels must be canonical names of ``labels``."""
    from factseek.files import input_lines, os_errors

    path = Path(path)
    with os_errors(path, "predictions file"):
        if not path.is_file():
            raise InputError(f"predictions file not found: {path}")

    out = []  # streamed with the input caps (factseek.files)
    for n, raw in input_lines(path, "predictions file", max_line=2**20):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise DataError("not valid UTF-8", str(path), n) from None
        if n > MAX_PREDICTION_LINES:
            raise DataError("too many lines", str(path), n)
        if not line.strip():
            continue
        try:
            r = json_loads(line)
        except json.JSONDecodeError as e:
            raise DataError(f"not valid JSON ({e.msg})", str(path), n) from None
        if not isinstance(r, dict) or "id" not in r or not isinstance(r.get("label"), str):
            raise DataError("expected an object with 'id' and 'label'", str(path), n)
        if r["label"] not in labels:
            raise DataError(f"{r['label']!r} is not a {labels.name} label", str(path), n)
        scores = r.get("scores") or {}
        out.append(
            Prediction(
                id=str(r["id"]),
                label=r["label"],
                gold=r.get("gold"),
                scores={str(k): float(v) for k, v in scores.items()}
                if isinstance(scores, dict)
                else {},
                judge=str(r.get("judge", "")),
            )
        )
    return out


def compare(
    ours: Sequence[Prediction],
    theirs: Sequence[Prediction],
    labels: LabelSet,
    *,
    resamples: int = 10_000,
    method: str = "permutation",
    seed: int = 0,
) -> list[PairedTest]:
    """Paired tests, one per metric (ordinal ones only for ordinal sets), on the shared ids.

    Every id of ``ours`` must be in ``theirs``; gold labels come from ``ours``."""
    by_id = {p.id: p for p in theirs}
    missing = [p.id for p in ours if p.id not in by_id]
    if missing:
        raise InputError(
            f"{len(missing)} claims have no prediction in the compared file (e.g. {missing[0]!r})"
        )
    if any(p.gold is None for p in ours):
        raise InputError("comparison needs gold labels")
    gold = [p.gold for p in ours]
    a = [p.label for p in ours]
    b = [by_id[p.id].label for p in ours]
    metrics = [m for m in METRICS if labels.ordinal or m in ("accuracy", "macro_f1")]
    return [
        paired_test(gold, a, b, labels, metric=m, method=method, resamples=resamples, seed=seed)  # type: ignore[arg-type]
        for m in metrics
    ]
