"""Probe: does a judge that reads (claim, evidence) text end to end beat claim-only on AVeriTeC?

    python experiments/probe_crossencoder_judge.py --data "$FACTSEEK_DATA" \
        --train-run runs/train --dev-run runs/dev --out /tmp/xjudge

``--train-run`` / ``--dev-run`` are ``factseek eval pipeline`` run folders over
``averitec/train.json`` and ``averitec/dev.json`` (docs/verdicts.md, "Reproduce"). One
configuration, fixed before it saw dev (nothing is chosen on dev): the stance network's
cross-encoder (``stance/model.py``: the first ``--layers`` MiniLM layers with LoRA adapters, rank
16, end to end) with a 4-way head reads ``[CLS] claim [SEP] evidence [SEP]``, the evidence being
the texts ``judge train-evidence`` reads (``--reads passages``) joined by " | ", cut to
``--max-length`` tokens. It trains on every train claim three times, as that judge does (alone,
with its gold answers, with what the pipeline retrieved), with class weights
``(n / count) ** 0.5`` (the judge's ``balance`` 0.5), then judges dev's three inputs: accuracy,
macro-F1, and retrieved and gold against claim-only with paired-bootstrap 95% CIs (2,000
resamples). Results go to ``--out`` (results.json, probabilities), never the repository.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

KINDS = ("claim-only", "gold", "retrieved")


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--data",
        type=Path,
        default=os.environ.get("FACTSEEK_DATA"),
        help="data root holding averitec/ (default: $FACTSEEK_DATA)",
    )
    p.add_argument("--train-run", type=Path, required=True, help="run folder over train.json")
    p.add_argument("--dev-run", type=Path, required=True, help="run folder over dev.json")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--max-length", type=int, default=256)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--threads", type=int, default=2)
    return p.parse_args()


def inputs(data: Path, run: Path) -> tuple[list[dict[str, Any]], Any]:
    """Every labelled claim alone, with its gold answers, and with its run's passages."""
    from factseek.datasets.claims import data_format, with_ids
    from factseek.judge.evidence_model import judge_texts
    from factseek.runs.batch import claim_id
    from factseek.runs.evaluate import load_reports

    df = data_format("averitec", data)
    found = load_reports(run)
    out = []
    for r in with_ids(df.load(data)):
        if r.label is None:
            continue
        cid = claim_id(r.claim)
        row = {"claim": r.claim.text, "label": r.label, "group": cid}
        out.append({**row, "kind": "claim-only", "texts": []})
        if r.evidence:
            out.append({**row, "kind": "gold", "texts": list(r.evidence)})
        if cid in found:
            rep = found[cid]
            texts = [t for _, t in judge_texts("passages", rep.evidence, rep.passages)]
            out.append({**row, "kind": "retrieved", "texts": texts})
    return out, df.labels


def main() -> int:
    args = _args()
    root = Path(args.data or ".") / "averitec"
    needed = [root / "train.json", root / "dev.json"]
    needed += [args.train_run / "journal.jsonl", args.dev_run / "journal.jsonl"]
    if not all(p.is_file() for p in needed):
        print(f"skipped: needs {', '.join(str(p) for p in needed)}")
        return 0
    import torch
    from torch.nn import functional as F

    from factseek.metrics.veracity import paired_test, veracity_metrics
    from factseek.ml.training import adamw, length_batches, smooth, train_step
    from factseek.stance.crossencoder import pad, read_probabilities, tokenize
    from factseek.stance.model import NetConfig, StanceNet, load_tokenizer

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    train, labels = inputs(root / "train.json", args.train_run)
    dev, _ = inputs(root / "dev.json", args.dev_run)
    names = list(labels.labels)
    tokenizer = load_tokenizer("minilm", args.max_length)

    def tokens(rows: list[dict[str, Any]]) -> tuple[list[list[int]], list[list[int]]]:
        return tokenize(tokenizer, [(r["claim"], " | ".join(r["texts"])) for r in rows])

    ids, types = tokens(train)
    y = torch.tensor([names.index(r["label"]) for r in train])
    counts = np.bincount(y.numpy(), minlength=len(names)).clip(min=1)
    weight = (counts.sum() / counts) ** 0.5
    weight = torch.tensor(weight / weight.mean(), dtype=torch.float32)
    net = StanceNet.from_base(
        NetConfig(
            layers=args.layers,
            train_layers=args.layers,
            lora_rank=16,
            lora_alpha=32.0,
            n_labels=len(names),
        )
    )
    params = net.trainable()
    batch = 16
    total = math.ceil(len(train) / batch) * args.epochs
    optimizer, scheduler = adamw(params, lr=1e-3, weight_decay=0.01, warmup=0.06, total_steps=total)
    started = time.perf_counter()
    for epoch in range(args.epochs):
        net.train()
        running = 0.0
        batches = length_batches([len(x) for x in ids], batch, random.Random(epoch))
        for i, idx in enumerate(batches, start=1):
            logits, _ = net(*pad([ids[j] for j in idx], [types[j] for j in idx]))
            loss = F.cross_entropy(logits, y[idx], weight=weight)
            running = smooth(running, train_step(loss, params, optimizer, scheduler), i)
            if i % 100 == 0 or i == len(batches):
                print(f"epoch {epoch + 1}: {i}/{len(batches)} batches, loss {running:.3f}", file=sys.stderr, flush=True)  # fmt: skip
    seconds = time.perf_counter() - started

    net.eval()
    probs = read_probabilities(net, *tokens(dev), 32)
    by_kind: dict[str, dict[str, str]] = {k: {} for k in KINDS}
    for r, p in zip(dev, probs, strict=True):
        by_kind[r["kind"]][r["group"]] = names[int(p.argmax())]
    gold_label = {r["group"]: r["label"] for r in dev}
    groups = sorted(by_kind["claim-only"])
    gold = [gold_label[g] for g in groups]
    pred = {k: [by_kind[k].get(g, by_kind["claim-only"][g]) for g in groups] for k in KINDS}
    results: dict[str, Any] = {"n": len(groups), "train_seconds": round(seconds), "systems": {}}
    print("| system | n | accuracy | macro-F1 | Δ accuracy [95% CI] | Δ macro-F1 [95% CI] |")
    print("|---|---|---|---|---|---|")
    for k in KINDS:
        m = veracity_metrics(gold, pred[k], labels)
        row: dict[str, Any] = {"accuracy": m.accuracy, "macro_f1": m.macro_f1}
        cells = ["", ""]
        if k != "claim-only":
            for j, metric in enumerate(("accuracy", "macro_f1")):
                t = paired_test(gold, pred[k], pred["claim-only"], labels, metric=metric, method="bootstrap", resamples=2000)  # fmt: skip
                row[f"delta_{metric}"] = [t.delta, t.ci_low, t.ci_high]
                cells[j] = f"{100 * t.delta:+.1f} [{100 * t.ci_low:+.1f}, {100 * t.ci_high:+.1f}]"
        results["systems"][k] = row
        print(f"| {k} | {len(groups)} | {100 * m.accuracy:.1f} | {100 * m.macro_f1:.1f} | {cells[0]} | {cells[1]} |")  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    np.save(args.out / "dev-probabilities.npy", probs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
