"""Query rewriting on held-out FEVER claims: every rewriter against the claim, one table.

    python experiments/rewrite_fever.py --data "$FACTSEEK_DATA" --edit-model MODEL \\
        [--dt DT_MODEL ...] [--oracle BFS_TEST_DIR] [--split test] [--out DIR] [--limit N] \
        [--with-train]

Claims: the ``--split`` side (default ``test``) of FEVER's group split (``fever_dev`` with the
Fool Me Twice distractors as the corpus; ``--with-train``: FEVER train's evidence sentences
too, the corpus of rewriters trained on FEVER train, docs/rewrite-model.md); the endpoint is
exact BM25 top-50 over the whole corpus; metric AP@50 (with one relevant text per claim, about the reciprocal rank). Rows, each on
the same claims:

- ``claim``: the claim as the query;
- ``random edits``: as many uniformly random valid edits per claim as the edit model made on a
  claim drawn at random (its edit-length distribution), seeded;
- ``RM3 expansion``: ``baselines.RM3Rewriter``, its ``(fb_docs, fb_terms)`` chosen on the
  validation side;
- ``feedback guard``: the greedy policy on the guard's estimate alone (``edit_model.guard_scorer``),
  its threshold and budget chosen on the validation side exactly as the edit model's;
- ``decision transformer``: each ``--dt`` model at its default target (uncalibrated) and as
  calibrated (``rewrite calibrate``: abstains unless its validation gain is clearly above 0);
- ``edit scorer``: the ``--edit-model`` (``rewrite train-edits``), as trained and calibrated;
- ``BFS oracle``: the best sequence the BFS found per claim (``--oracle``: a ``rewrite bfs``
  folder on the same claims; it reads the judgements, so it is an upper bound).

Per row: mean AP@50, relative change, claims better / worse, mean edits, and the paired bootstrap
95% CI of the mean AP change against the claim (1,000 resamples over claims, seeded). Writes
``table.md``, ``per_claim.npz`` and the figures (per-step mAP; gain by system) to ``--out``.
Prints ``skipped: ...`` and exits 0 without the data.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import numpy as np  # noqa: E402

RM3_GRID = ((3, 3), (3, 5), (5, 5), (10, 5), (10, 10))


def ap_of(ranker, texts, relevant, k=50) -> np.ndarray:
    from factseek.metrics.retrieval import average_precision

    distinct = list(dict.fromkeys(texts))
    ranked = dict(zip(distinct, ranker.rank(distinct, k), strict=True))
    return np.array(
        [average_precision(ranked[t], r, k) for t, r in zip(texts, relevant, strict=True)]
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=None)
    ap.add_argument("--edit-model", type=Path, required=True)
    ap.add_argument("--dt", type=Path, nargs="*", default=[])
    ap.add_argument("--oracle", type=Path, default=None)
    ap.add_argument("--split", default="test")
    ap.add_argument("--out", type=Path, default=Path("rewrite-fever"))
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--with-train", action="store_true", help="add FEVER train's sentences")
    args = ap.parse_args()

    from factseek.datasets import data_root

    root = data_root(args.data)
    if root is None or not (root / "fever_dev").is_dir():
        print("skipped: no FEVER data (pass --data DIR holding fever_dev/ and fool_me_twice/)")
        return
    import torch

    torch.set_num_threads(1)
    from factseek.datasets.retrieval import load_retrieval
    from factseek.rewrite.baselines import RM3Rewriter
    from factseek.rewrite.edits import model as edit_model
    from factseek.rewrite.edits import train as edit_train
    from factseek.rewrite.environment.env import BM25Retriever
    from factseek.rewrite.evaluate import load_edit_rewriter, paired_ci, random_paths
    from factseek.rewrite.splits import check_disjoint, claims_fingerprint, select_split

    t0 = time.perf_counter()
    distractors = [root / "fool_me_twice"]
    if args.with_train:
        distractors.insert(0, root / "fever_train")
    data = load_retrieval(root / "fever_dev", distractors, "fever-dev")
    data_claims = claims_fingerprint(data.claims)
    claims = list(select_split(data.claims, args.split))[: args.limit]
    val = list(select_split(data.claims, "validation"))
    texts = [" ".join(c.text.split()) for c in claims]
    rel = [frozenset(c.relevant) for c in claims]
    ranker = BM25Retriever.from_docs(data.pairs())
    text_of = dict(data.pairs()).__getitem__
    base = ap_of(ranker, texts, rel)
    rows: dict[str, tuple[np.ndarray, float, str]] = {}  # name -> (per-claim AP, edits, note)
    steps: dict[str, list[float]] = {}

    def log(msg: str) -> None:
        print(f"[{time.perf_counter() - t0:6.0f} s] {msg}", file=sys.stderr, flush=True)

    # the edit scorer (also gives the endpoint, encoder and random-edit lengths)
    rw = load_edit_rewriter(args.edit_model, ranker, data.pairs())
    check_disjoint(rw.meta, args.split, "be evaluated", data_claims)
    res = rw.rewrite(texts)
    lengths = [r.steps for r in res]
    rows["edit scorer (calibrated)"] = (ap_of(ranker, [r.text for r in res], rel), float(np.mean(lengths)),
                                        f"threshold {rw.policy.threshold:g}, budget {rw.policy.max_edits}")  # fmt: skip
    k_max = rw.policy.max_edits
    steps["edit scorer"] = [float(ap_of(ranker, [r.path[min(s, len(r.path) - 1)] for r in res], rel).mean()) for s in range(k_max + 1)]  # fmt: skip
    log("edit scorer")

    # random edits with the edit scorer's lengths
    rand = random_paths(texts, lengths, rw.editor, args.seed, rw.cfg.max_positions)
    rows["random edits"] = (ap_of(ranker, [p[-1] for p in rand], rel), float(np.mean([len(p) - 1 for p in rand])), "edit scorer's lengths")  # fmt: skip
    steps["random edits"] = [float(ap_of(ranker, [p[min(s, len(p) - 1)] for p in rand], rel).mean()) for s in range(k_max + 1)]  # fmt: skip
    log("random")

    # RM3, chosen on validation
    vtexts = [" ".join(c.text.split()) for c in val]
    vrel = [frozenset(c.relevant) for c in val]

    def rm3(fb_docs, fb_terms, xs):
        return [
            r.text
            for r in RM3Rewriter(ranker, text_of, fb_docs=fb_docs, fb_terms=fb_terms).rewrite(xs)
        ]

    best = max(RM3_GRID, key=lambda g: (ap_of(ranker, rm3(*g, vtexts), vrel).mean(), -g[0], -g[1]))
    rows["RM3 expansion"] = (ap_of(ranker, rm3(*best, texts), rel), 1.0, f"fb_docs {best[0]}, fb_terms {best[1]} (validation)")  # fmt: skip
    log("rm3")

    # the feedback guard alone, calibrated on validation like the edit scorer
    guard = edit_model.guard_scorer()
    roll = edit_train.rollout(guard, val, rw.endpoint, rw.encoder, max_edits=4)
    choice = edit_train.choose(roll, seed=args.seed)
    tau = choice.best_threshold  # the guard's own best setting, even if not clearly above 0
    g = edit_model.EditRewriter(guard, edit_model.EditPolicy(threshold=tau, max_edits=choice.max_edits, k=50), rw.endpoint, rw.encoder)  # fmt: skip
    gres = g.rewrite(texts)
    rows["feedback guard"] = (ap_of(ranker, [r.text for r in gres], rel), float(np.mean([r.steps for r in gres])),
                              f"margin {tau:g}, budget {choice.max_edits} (validation)")  # fmt: skip
    steps["feedback guard"] = [float(ap_of(ranker, [r.path[min(s, len(r.path) - 1)] for r in gres], rel).mean()) for s in range(k_max + 1)]  # fmt: skip
    log("guard")

    # decision transformers
    for path in args.dt:
        from factseek.rewrite.transformer.infer import Rewriter

        dt = Rewriter.load(path)
        check_disjoint(dt.meta, args.split, "be evaluated", data_claims)
        for label, kw in (("", {"target_return": dt.default_target}), (" (calibrated)", {})):
            if label and not dt.meta.get("calibration"):
                continue
            out = dt.rewrite(texts, **kw)
            rows[f"decision transformer {path.name}{label}"] = (
                ap_of(ranker, [r.text for r in out], rel), float(np.mean([r.steps for r in out])),
                f"target {kw.get('target_return', 'calibrated')}",
            )  # fmt: skip
        log(f"dt {path.name}")

    # the BFS oracle
    if args.oracle is not None:
        from factseek.rewrite.transformer import trajectories as tj

        best_r = {r.claim_id: max([r.reward0, *(s.rewards[-1] for s in r.sequences if not s.negative)]) for r in tj.read(args.oracle)}  # fmt: skip
        journal = tj.read_journal(args.oracle)
        got = np.array([best_r.get(c.id, b) for c, b in zip(claims, base, strict=True)])
        covered = sum(1 for c in claims if c.id in journal)
        rows["BFS oracle"] = (
            got,
            float("nan"),
            f"upper bound; {covered}/{len(claims)} claims searched",
        )

    b = base.mean()
    gains = {}
    lines = [
        f"FEVER {args.split} side: {len(claims)} claims, {len(data.corpus)} documents, BM25 top-50, AP@50",
        "",
        "| system | mAP@50 | vs claim | better | worse | edits/claim | AP change [95% CI] | note |",
        "|---|---|---|---|---|---|---|---|",
        f"| claim | {b:.4f} | | | | 0.00 | | |",
    ]
    for name, (got, edits, note) in rows.items():
        d = got - base
        lo, hi = paired_ci(d, seed=args.seed)  # as `rewrite eval`: 1,000 resamples over claims
        gains[name] = (float(d.mean()), lo, hi)
        lines.append(
            f"| {name} | {got.mean():.4f} | {100 * (got.mean() / b - 1):+.1f}% | {(d > 1e-12).sum()} "
            f"| {(d < -1e-12).sum()} | {edits:.2f} | {d.mean():+.4f} [{lo:+.4f}, {hi:+.4f}] | {note} |"
        )  # fmt: skip
    table = "\n".join(lines) + "\n"
    print(table)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "table.md").write_text(table, encoding="utf-8")
    np.savez(args.out / "per_claim.npz", claim=base, ids=np.array([c.id for c in claims]),
             **{n.replace(" ", "_"): v[0] for n, v in rows.items()})  # fmt: skip
    (args.out / "steps.json").write_text(json.dumps({"claim": float(b), **steps}, indent=1))
    from factseek.rewrite.plots import plot_step_curves, plot_system_gains

    plot_system_gains(gains, args.out / "fever-systems.png", "AP@50",
                      title=f"FEVER {args.split}, {len(claims)} claims, BM25: AP@50 change")  # fmt: skip

    plot_step_curves(steps, args.out / "fever-steps.png", "mAP@50",
                     title=f"FEVER {args.split}, {len(claims)} claims: mAP@50 per edit step")  # fmt: skip
    log("done")


if __name__ == "__main__":
    main()
