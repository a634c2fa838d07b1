"""How often a stance reader, read on the fused judge's top N pooled documents, puts the evidence
first (docs/rewrite-model.md, "What changed: the judge").

    python experiments/probe_rewrite_judge_reader.py --data "$FACTSEEK_DATA" --pools pools-val.jsonl \
        [--reads 10] [--limit 300] [--model small|mpnet]

``--pools``: FEVER dev validation pools from ``probe_rewrite_judge_pools.py``. Prints, over the
claims whose pool holds the evidence, how often it is first by the fused judge, by the reader
alone (``1 - p(nei)``), by the reader plus 5 times the fused score, and how often it is among the
N read at all; and the reader's pairs per second.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from factseek.datasets.retrieval import load_retrieval
from factseek.files import cache_root
from factseek.ml.encode import encoder_from_name
from factseek.rewrite.environment.env import KNNRetriever
from factseek.stance import load_stance


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--pools", type=Path, required=True)
    ap.add_argument("--reads", type=int, default=10)
    ap.add_argument("--limit", type=int, default=300)
    ap.add_argument("--model", default="small")
    a = ap.parse_args()
    d = a.data
    ev = load_retrieval(d / "fever_dev", [d / "fever_train", d / "fool_me_twice"], "fever-dev")
    text, claim = dict(ev.pairs()), {c.id: c.text for c in ev.claims}
    enc = encoder_from_name("minilm")
    knn = KNNRetriever.build(ev.pairs(), enc, cache_dir=cache_root())
    row = {doc: i for i, doc in enumerate(knn.doc_ids)}
    rows = [json.loads(line) for line in a.pools.open()][: a.limit]
    vec = np.asarray(enc.encode([claim[r["id"]] for r in rows]), np.float32)
    reader = load_stance(a.model)
    res: dict[str, list[bool]] = {"fused": [], "reader": [], "reader+fused": [], "read": []}
    t0, pairs = time.perf_counter(), 0
    for r, v in zip(rows, vec, strict=True):
        rel, pool = set(r["relevant"]), r["pool"]
        if not rel & set(pool):
            continue
        cos = knn.embeddings[[row[x] for x in pool]] @ v
        r_cos = {pool[i]: j for j, i in enumerate(np.argsort(-cos, kind="stable"), 1)}
        r_end = {x: i for i, x in enumerate(r["claim_ranking"], 1)}
        miss = len(r["claim_ranking"]) + 1
        fused = {x: 1 / (10 + r_cos[x]) + 1 / (10 + r_end.get(x, miss)) for x in pool}
        top = sorted(pool, key=lambda x: -fused[x])[: a.reads]
        out = reader.classify([(claim[r["id"]], text[x]) for x in top])
        pairs += len(top)
        side = {x: 1 - o.probs["nei"] for x, o in zip(top, out, strict=True)}
        res["fused"].append(top[0] in rel)
        res["reader"].append(max(top, key=lambda x: side[x]) in rel)
        res["reader+fused"].append(max(top, key=lambda x: side[x] + 5 * fused[x]) in rel)
        res["read"].append(bool(rel & set(top)))
    dt = time.perf_counter() - t0
    print(
        f"{a.model}, top {a.reads} read, {len(res['fused'])} claims whose pool holds the evidence"
    )
    for name, hits in res.items():
        print(f"  evidence first by {name:13s} {np.mean(hits):.3f}" if name != "read" else f"  evidence among those read    {np.mean(hits):.3f}")  # fmt: skip
    print(f"  {pairs / dt:.0f} pairs per second")


if __name__ == "__main__":
    main()
