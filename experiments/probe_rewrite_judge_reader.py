"""How often a stance reader, read on the fused judge's top N pooled documents, puts the evidence
first (docs/rewrite-model.md, "What changed: the judge").

    python experiments/probe_rewrite_judge_reader.py --data "$FACTSEEK_DATA" --pools pools-val.jsonl \
        [--reads 10] [--limit 300] [--model small|mpnet]

``--pools``: FEVER dev validation pools from ``probe_rewrite_judge_pools.py``. Prints, over the
claims whose pool holds the evidence, how often it is first by the fused judge, by the reader
alone (``1 - p(nei)``), by the reader plus 5 times the fused score, how often that last one's
first is the evidence or a near-copy of it (``rewrite_near_copies.near_copy``), and how often the
evidence is among the N read at all; and the reader's pairs per second.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from factseek.datasets.retrieval import load_retrieval
from factseek.files import cache_root
from factseek.ml.encode import encoder_from_name
from factseek.rewrite.edits.judge import RRF_K
from factseek.rewrite.environment.env import KNNRetriever
from factseek.stance import load_stance
from rewrite_near_copies import near_copy, normal


class Pools:
    """FEVER dev's texts and claims (the corpus the pools were drawn from) and the MiniLM vectors
    the fused judge reads, for rows of a pools file."""

    def __init__(self, data: Path) -> None:
        d = data
        ev = load_retrieval(d / "fever_dev", [d / "fever_train", d / "fool_me_twice"], "fever-dev")
        self.text, self.claim = dict(ev.pairs()), {c.id: c.text for c in ev.claims}
        self.encoder = encoder_from_name("minilm")
        self.knn = KNNRetriever.build(ev.pairs(), self.encoder, cache_dir=cache_root())
        self.row = {doc: i for i, doc in enumerate(self.knn.doc_ids)}

    def claim_vectors(self, rows: list[dict[str, Any]]) -> np.ndarray:
        return np.asarray(self.encoder.encode([self.claim[r["id"]] for r in rows]), np.float32)

    def fused(self, r: dict[str, Any], vector: np.ndarray) -> dict[str, float]:
        """Per pooled document, the fused judge's score: ``1/(RRF_K + its cosine rank) +
        1/(RRF_K + its rank in the claim's own top-k)`` (the judge's ``fused`` feature)."""
        pool = r["pool"]
        cos = self.knn.embeddings[[self.row[x] for x in pool]] @ vector
        r_cos = {pool[i]: j for j, i in enumerate(np.argsort(-cos, kind="stable"), 1)}
        r_end = {x: i for i, x in enumerate(r["claim_ranking"], 1)}
        miss = len(r["claim_ranking"]) + 1
        return {x: 1 / (RRF_K + r_cos[x]) + 1 / (RRF_K + r_end.get(x, miss)) for x in pool}

    def read_order(self, r: dict[str, Any], vector: np.ndarray, reads: int) -> tuple[list[str], dict[str, float]]:  # fmt: skip
        """The ``reads`` pooled documents the judge's reader reads (best fused first), and the
        fused scores."""
        fused = self.fused(r, vector)
        return sorted(r["pool"], key=lambda x: -fused[x])[:reads], fused


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--pools", type=Path, required=True)
    ap.add_argument("--reads", type=int, default=10)
    ap.add_argument("--limit", type=int, default=300)
    ap.add_argument("--model", default="small")
    a = ap.parse_args()
    pools = Pools(a.data)
    text, claim = pools.text, pools.claim
    rows = [json.loads(line) for line in a.pools.open()][: a.limit]
    vec = pools.claim_vectors(rows)
    reader = load_stance(a.model)
    res: dict[str, list[bool]] = {"fused": [], "reader": [], "reader+fused": [], "near": [], "read": []}  # fmt: skip
    t0, pairs = time.perf_counter(), 0
    for r, v in zip(rows, vec, strict=True):
        rel, pool = set(r["relevant"]), r["pool"]
        if not rel & set(pool):
            continue
        top, fused = pools.read_order(r, v, a.reads)
        out = reader.classify([(claim[r["id"]], text[x]) for x in top])
        pairs += len(top)
        side = {x: 1 - o.probs["nei"] for x, o in zip(top, out, strict=True)}
        first = max(top, key=lambda x: side[x] + 5 * fused[x])
        golds = [normal(text[x]) for x in rel]
        res["fused"].append(top[0] in rel)
        res["reader"].append(max(top, key=lambda x: side[x]) in rel)
        res["reader+fused"].append(first in rel)
        res["near"].append(first in rel or any(near_copy(normal(text[first]), g) for g in golds))
        res["read"].append(bool(rel & set(top)))
    dt = time.perf_counter() - t0
    print(
        f"{a.model}, top {a.reads} read, {len(res['fused'])} claims whose pool holds the evidence"
    )
    for name in ("fused", "reader", "reader+fused"):
        print(f"  evidence first by {name:13s} {np.mean(res[name]):.3f}")
    print(f"  evidence or a near-copy first by reader+fused {np.mean(res['near']):.3f}")
    print(f"  evidence among those read    {np.mean(res['read']):.3f}")
    print(f"  {pairs / dt:.0f} pairs per second")


if __name__ == "__main__":
    main()
