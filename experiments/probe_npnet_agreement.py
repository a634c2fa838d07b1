"""Probe: does the numpy stance engine read pairs as torch's int8 network does?

    python experiments/probe_npnet_agreement.py --data DATA_ROOT [--per-source 200] [--model small]

Reads the test sides of the evaluation sources (``factseek stance eval``'s, statement form,
``--per-source`` seeded pairs each) with the same stance folder twice, once through
``stance.npnet`` (numpy) and once through torch's dynamic int8 network, both one pair per pass.
Prints, per source and overall, the mean and largest change of a calibrated probability and the
labels that differ. A difference comes from the order of float additions before a map's
activations are rounded to 7-bit integers: an activation within a rounding error of a half can
round the other way, and that step moves the rest of the pass. The numbers are in
docs/stance.md ("Two engines").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True, help="data root (fever_dev/, wice/, ...)")
    p.add_argument("--per-source", type=int, default=200, help="test pairs per source")
    p.add_argument("--model", default="small", help="'small', 'mpnet' or a stance model folder")
    return p.parse_args()


def main() -> int:
    args = _args()
    if not args.data.is_dir():
        print(f"skipped: no data root at {args.data}")
        return 0
    import numpy as np

    from factseek.ml.threads import use_threads
    from factseek.stance import model_folder
    from factseek.stance.crossencoder import CrossEncoderStance
    from factseek.stance.data import EVAL_SOURCES, build_pairs, subsample, with_form
    from factseek.stance.thresholds import decide_many

    use_threads(1)
    path = model_folder(args.model)
    engines = {e: CrossEncoderStance.load(path, engine=e) for e in ("numpy", "torch")}
    import torch

    torch.set_num_threads(1)
    test = build_pairs(args.data, EVAL_SOURCES)["test"]
    rows = []
    total = {"n": 0, "sum": 0.0, "max": 0.0, "labels": 0}
    for name in EVAL_SOURCES:
        chosen = with_form(subsample([p for p in test if p.source == name], args.per_source), "statement")  # fmt: skip
        if not chosen:
            continue
        pairs = [(p.question, p.evidence) for p in chosen]
        probs = {e: m.probabilities(pairs) for e, m in engines.items()}
        delta = np.abs(probs["numpy"] - probs["torch"]).max(1)  # per pair
        th = engines["numpy"].thresholds
        differ = int((decide_many(probs["numpy"], th) != decide_many(probs["torch"], th)).sum())
        rows.append((name, len(pairs), delta.mean(), delta.max(), differ, (delta > 1e-4).mean()))
        total["n"] += len(pairs)
        total["sum"] += float(delta.sum())
        total["max"] = max(total["max"], float(delta.max()))
        total["labels"] += differ
        print(f"{name}: {len(pairs)} pairs", file=sys.stderr, flush=True)
    print("| source | pairs | mean change | largest change | pairs changed > 1e-4 | labels that differ |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|")
    for name, n, mean, big, differ, moved in rows:
        print(f"| {name} | {n} | {mean:.5f} | {big:.4f} | {100 * moved:.1f}% | {differ} |")
    n = max(1, total["n"])
    print(f"| all | {total['n']} | {total['sum'] / n:.5f} | {total['max']:.4f} | | {total['labels']} ({100 * total['labels'] / n:.2f}%) |")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
