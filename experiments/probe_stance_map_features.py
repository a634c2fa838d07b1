"""Probe: does a calibration map that also reads the pair's shape meet 0.05 on every side?

    python experiments/probe_stance_map_features.py --data "$FACTSEEK_DATA" [--model mpnet]
        [--max-pairs 300] [--features 01234]

The shipped map (``stance.calibrate``) is one temperature and two label biases for every pair,
and one map cannot be right on Wikipedia and on news at once (docs/stance.md, "Why one
calibration map cannot meet 0.05 on every side"). This probe lets the map's temperature and
biases move with five features of the pair that tell the sources apart without naming them:

    0  log of the evidence's words       1  log of the question's content words
    2  share of the question's content words found in the evidence
    3  the question states a figure      4  the question is a yes/no question

``--features`` picks them (e.g. ``02``). The model reads ``--max-pairs`` seeded pairs per source
of the validation and test sides (statement form, as the tables of docs/stance.md) once, raw;
then, on the validation side with every source weighing the same (as ``stance train`` fits):

- the T/bias map refitted on these pairs, and the feature map (``1/T = exp(a0 + a.x)``,
  ``bias_k = b_k + v_k.x``, L2 0.01 on the feature weights, L-BFGS), each with thresholds tuned
  as ``stance train`` tunes them;
- every validation source's ECE when the map is fitted on the other sources only (how well a
  map carries to a source it never saw, as the test sides are).

It prints each side's macro-F1 / ECE (scored as ``stance eval`` scores it) for the shipped map,
the refitted one and the feature map. About 5 minutes for ``mpnet`` on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

import numpy as np

WORD = re.compile(r"[a-z0-9]+")
STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "of",
        "to",
        "in",
        "and",
        "or",
        "is",
        "was",
        "were",
        "are",
        "be",
        "been",
        "for",
        "on",
        "at",
        "by",
        "with",
        "that",
        "this",
        "it",
        "as",
        "from",
        "did",
        "does",
        "do",
        "has",
        "have",
        "had",
        "not",
    ]
)


def features(question: str, evidence: str) -> list[float]:
    """The five features of the module docstring, in order."""
    q = [w for w in WORD.findall(question.lower()) if w not in STOP]
    e = WORD.findall(evidence.lower())
    seen = set(e)
    overlap = sum(w in seen for w in q) / max(1, len(q))
    return [
        float(np.log1p(len(e))),
        float(np.log1p(len(q))),
        overlap,
        float(bool(re.search(r"\d", question))),
        float(question.strip().endswith("?")),
    ]


class FeatureMap:
    """``softmax(log p * exp(a0 + a.x) + b + V x)``, nei's bias fixed at 0."""

    def __init__(self, n_features: int, l2: float = 0.01) -> None:
        self.n, self.l2 = n_features, l2
        self.theta = np.zeros(3 + 3 * n_features)

    def log_probs(self, theta: np.ndarray, logp: np.ndarray, x: np.ndarray) -> np.ndarray:
        n = self.n
        inv_t = np.exp(theta[0] + x @ theta[1 : 1 + n])[:, None]
        bias = np.zeros((len(logp), 3))
        bias[:, :2] = theta[1 + n : 3 + n] + x @ theta[3 + n :].reshape(2, n).T
        z = logp * inv_t + bias
        z -= z.max(1, keepdims=True)
        return z - np.log(np.exp(z).sum(1, keepdims=True))

    def fit(self, logp: np.ndarray, x: np.ndarray, y: np.ndarray, w: np.ndarray) -> FeatureMap:
        from scipy.optimize import minimize

        n = self.n

        def loss(theta: np.ndarray) -> float:
            lq = self.log_probs(theta, logp, x)
            penalty = (theta[1 : 1 + n] ** 2).sum() + (theta[3 + n :] ** 2).sum()
            return float(-(w * lq[np.arange(len(y)), y]).mean() + self.l2 * penalty)

        self.theta = minimize(loss, np.zeros_like(self.theta), method="L-BFGS-B").x
        return self

    def apply(self, logp: np.ndarray, x: np.ndarray) -> np.ndarray:
        return np.exp(self.log_probs(self.theta, logp, x))


def source_weights(sources: np.ndarray) -> np.ndarray:
    """Every source weighs the same (as ``stance.calibrate.fit_calibration`` with groups)."""
    names, counts = np.unique(sources, return_counts=True)
    size = dict(zip(names, counts, strict=True))
    return np.array([len(sources) / (len(names) * size[s]) for s in sources])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=os.environ.get("FACTSEEK_DATA"))
    p.add_argument("--model", default="mpnet", help="a shipped stance model's name or a folder")
    p.add_argument("--max-pairs", type=int, default=300, help="per source and side")
    p.add_argument("--features", default="01234", help="which features, by number")
    args = p.parse_args()
    if args.data is None or not Path(args.data).is_dir():
        print("skipped: no data (pass --data DIR or set FACTSEEK_DATA)")
        return

    from factseek.metrics.calibration import expected_calibration_error
    from factseek.stance import engine_for_many, model_folder
    from factseek.stance.calibrate import fit_calibration
    from factseek.stance.crossencoder import CrossEncoderStance
    from factseek.stance.data import EVAL_SOURCES, build_pairs, subsample
    from factseek.stance.evaluate import score_pairs, scored_confidence
    from factseek.stance.realworld import scoring
    from factseek.stance.thresholds import decide_many, tune_thresholds
    from factseek.types import STANCE_LABELS, StanceResult

    model = CrossEncoderStance.load(model_folder(args.model), engine=engine_for_many())
    sides = build_pairs(args.data, EVAL_SOURCES)
    pairs, side = [], []
    for name in ("validation", "test"):
        for source in EVAL_SOURCES:
            chosen = subsample([q for q in sides[name] if q.source == source], args.max_pairs)
            pairs += chosen
            side += [name] * len(chosen)
    print(f"reading {len(pairs)} pairs with {model.name} ...", flush=True)
    raw = model.raw_probabilities([(q.question, q.evidence) for q in pairs])
    side_a, source = np.array(side), np.array([q.source for q in pairs])
    gold = np.array([STANCE_LABELS.index(q.label) for q in pairs])
    use = [int(c) for c in args.features]
    x = np.array([features(q.question, q.evidence) for q in pairs])[:, use]
    val = side_a == "validation"
    x = (x - x[val].mean(0)) / (x[val].std(0) + 1e-9)
    logp = np.log(np.clip(raw, 1e-9, 1.0))
    weights = source_weights(source[val])
    labels = [STANCE_LABELS[k] for k in gold]

    def table(title: str, probs: np.ndarray, thresholds: dict[str, float] | None) -> None:
        chosen = decide_many(probs, thresholds)
        print(f"\n{title} (thresholds {thresholds})")
        for name in ("validation", "test"):
            cells = []
            for s in dict.fromkeys(source[side_a == name]):
                m = (side_a == name) & (source == s)
                said = [STANCE_LABELS[k] for k in chosen[m]]
                results = [
                    StanceResult(label=lab, probs=dict(zip(STANCE_LABELS, row, strict=True)))  # type: ignore[arg-type]
                    for lab, row in zip(said, probs[m], strict=True)
                ]
                g = [labels[i] for i in np.flatnonzero(m)]
                f1 = score_pairs(scoring(s), g, said).macro_f1
                ece = expected_calibration_error(*scored_confidence(scoring(s), results, g))
                cells.append(f"{s} {100 * f1:.1f} / {ece:.3f}")
            print(f"  {name}: " + ", ".join(cells))

    shipped = model.calibration
    table("shipped map: macro-F1 / ECE", shipped.apply(raw), model.thresholds)
    refit = fit_calibration(raw[val], [labels[i] for i in np.flatnonzero(val)], groups=list(source[val]))  # fmt: skip
    tuned, _ = tune_thresholds(refit.apply(raw)[val], [labels[i] for i in np.flatnonzero(val)], list(source[val]))  # fmt: skip
    table(
        f"T/bias map refitted on these pairs (T {refit.temperature:.2f})", refit.apply(raw), tuned
    )
    fmap = FeatureMap(len(use)).fit(logp[val], x[val], gold[val], weights)
    probs = fmap.apply(logp, x)
    tuned, _ = tune_thresholds(probs[val], [labels[i] for i in np.flatnonzero(val)], list(source[val]))  # fmt: skip
    table(f"feature map, features {args.features}", probs, tuned)

    print("\neach validation source, its map fitted on the other sources: ECE feature / T-bias")
    for s in dict.fromkeys(source[val]):
        train, held = val & (source != s), val & (source == s)
        f = FeatureMap(len(use)).fit(logp[train], x[train], gold[train], source_weights(source[train]))  # fmt: skip
        t = fit_calibration(raw[train], [labels[i] for i in np.flatnonzero(train)], groups=list(source[train]))  # fmt: skip

        def ece(p: np.ndarray, held: np.ndarray = held) -> float:
            k = p.argmax(1)
            return float(expected_calibration_error(p[np.arange(len(k)), k], k == gold[held]))

        print(f"  {s}: {ece(f.apply(logp[held], x[held])):.3f} / {ece(t.apply(raw[held])):.3f}")


if __name__ == "__main__":
    main()
