"""Choose the edit scorer's threshold on several domains' development claims at once.

    python experiments/rewrite_edit_thresholds.py --data "$FACTSEEK_DATA" --model MODEL [--write] [--threads 2]

The scorer's own calibration (``rewrite train-edits``) uses FEVER's validation side only. Out of
its domain a threshold that gains on FEVER can cost a little. This runs the greedy policy (the
model's budget, no threshold) on the development claims of each domain, never their test parts:

- FEVER: the validation side of the group split (the model's own calibration claims), searching
  FEVER train's and Fool Me Twice's texts beside FEVER dev's (the shipped model's corpus);
- Climate-FEVER: the claims ``is_held_out(id, 0.2)`` does *not* hold out (the held-out 20% are
  the evaluation claims of docs/rewrite-model.md);
- CheckThat 2020: the dev split (its test split is the evaluation).

and prints, per threshold of ``edit_train.THRESHOLDS``, each domain's mean AP@50 change. The rule:
the smallest threshold, not below the model's own, at which every domain's mean change is >= 0
and FEVER's paired bootstrap 95% CI stays above 0; +inf (abstain) if none. ``--write`` stores it
in the model's ``config.json`` (``threshold``, ``max_edits`` and ``calibration.domains``).
``--max-edits N`` rolls out N edits (default: the model's budget) and adds a table of each
budget up to N at the chosen threshold, so a deeper budget is chosen on the same claims.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(var, "1")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=None)
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--write", action="store_true", help="store the choice in the model")
    ap.add_argument(
        "--judge-margin",
        type=float,
        default=None,
        help="models with a judge: an edit must raise the judge's expected AP by more than this",
    )
    ap.add_argument("--threads", type=int, default=1, help="torch threads (the judge's reader)")
    ap.add_argument(
        "--max-edits",
        type=int,
        default=None,
        help="the budget to roll out and choose with (default: the model's); a table per budget follows",
    )
    args = ap.parse_args()
    from factseek.datasets import data_root

    root = data_root(args.data)
    if root is None or not (root / "fever_dev").is_dir():
        print(
            "skipped: no data (pass --data DIR with fever_dev/, climate_fever/, checkthat2020_task2/)"
        )
        return
    import numpy as np
    import torch

    torch.set_num_threads(max(1, args.threads))
    from factseek.datasets.retrieval import load_retrieval
    from factseek.rewrite.edits import model as edit_model
    from factseek.rewrite.edits import train as edit_train
    from factseek.rewrite.environment.env import BM25Retriever
    from factseek.rewrite.evaluate import load_edit_rewriter, paired_ci
    from factseek.rewrite.splits import is_held_out, select_split

    # the corpus the shipped model is trained and evaluated on (docs/rewrite-model.md)
    corpus = [p for p in (root / "fever_train", root / "fool_me_twice") if p.is_dir()]
    fever = load_retrieval(root / "fever_dev", corpus, "fever-dev")
    cf = load_retrieval(root / "climate_fever" / "climate-fever.jsonl", None, "climate-fever")
    ct = load_retrieval(root / "checkthat2020_task2" / "dev", None, "checkthat")
    sets = {
        "FEVER validation": (fever, select_split(fever.claims, "validation")),
        "Climate-FEVER dev (not held out)": (
            cf,
            [c for c in cf.claims if not is_held_out(c.id, 0.2)],
        ),
        "CheckThat dev": (ct, ct.claims),
    }
    _, policy = edit_model.load(args.model)
    budget = args.max_edits or policy.max_edits
    grids, rolls = {}, {}
    for name, (data, claims) in sets.items():
        rw = load_edit_rewriter(args.model, BM25Retriever.from_docs(data.pairs()), data.pairs())
        rolls[name] = roll = edit_train.rollout(rw.scorer, claims, rw.endpoint, rw.encoder, max_edits=budget, judge_margin=args.judge_margin)  # fmt: skip
        grids[name] = {tau: edit_train.finals(roll, tau, budget)[0] - roll.reward0 for tau in edit_train.THRESHOLDS}  # fmt: skip
        print(f"{name}: {len(claims)} claims, claim mAP@50 {roll.reward0.mean():.4f}", file=sys.stderr, flush=True)  # fmt: skip
    names = list(sets)
    print("| threshold | " + " | ".join(f"{n}: mean AP change" for n in names) + " |")
    print("|---|" + "---|" * len(names))
    chosen = math.inf
    for tau in edit_train.THRESHOLDS:
        cells = []
        for n in names:
            d = grids[n][tau]
            lo, hi = paired_ci(d)
            cells.append(f"{d.mean():+.4f} [{lo:+.4f}, {hi:+.4f}]")
        ok = (
            tau >= policy.threshold
            and all(grids[n][tau].mean() >= 0 for n in names)
            and paired_ci(grids[names[0]][tau])[0] > 0
        )
        if ok and tau < chosen:
            chosen = tau
        print(f"| {tau:g} | " + " | ".join(cells) + " |")
    print(f"chosen threshold: {chosen:g} (the model's own: {policy.threshold:g}), budget {budget}")
    if not math.isinf(chosen):
        print(f"\n| budget (threshold {chosen:g}) | " + " | ".join(f"{n}: mean AP change (edits)" for n in names) + " | mean |")  # fmt: skip
        print("|---|" + "---|" * (len(names) + 1))
        for b in range(1, budget + 1):
            got = [edit_train.finals(rolls[n], chosen, b) for n in names]
            cells = [f"{(f - rolls[n].reward0).mean():+.4f} ({e.mean():.2f})" for n, (f, e) in zip(names, got, strict=True)]  # fmt: skip
            mean = np.mean([(f - rolls[n].reward0).mean() for n, (f, _) in zip(names, got, strict=True)])  # fmt: skip
            print(f"| {b} | " + " | ".join(cells) + f" | {mean:.4f} |")
    if args.write:
        from factseek.rewrite.transformer.model import update_config

        doc = json.loads((args.model / "config.json").read_text())
        cal = dict(doc.get("calibration", {}))
        cal["domains"] = {
            "threshold": None if math.isinf(chosen) else chosen,
            "rule": "smallest threshold >= the model's own with mean AP change >= 0 on every domain's dev claims and FEVER validation CI above 0",
            "sets": {
                n: {f"{t:g}": round(float(grids[n][t].mean()), 5) for t in edit_train.THRESHOLDS}
                for n in names
            },
        }
        cal["domains"]["judge_margin"] = args.judge_margin
        update_config(args.model, {"threshold": None if math.isinf(chosen) else chosen, "max_edits": budget, "calibration": cal, "judge_margin": args.judge_margin})  # fmt: skip
        print(f"written to {args.model / 'config.json'}")


if __name__ == "__main__":
    main()
