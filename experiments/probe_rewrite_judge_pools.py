"""Pools of the edit scorer's judge, written once for the judge probes.

For every claim of one side of a FEVER-format split: the BM25 top-k of the claim and of each of
its single edits (``actions.expand``), as the edit scorer sees them at its first step. Writes
JSONL: ``id``, ``relevant``, ``claim_ranking`` (the claim's top-k), ``pool`` (every document in
any of those lists, first-seen order) and ``lists`` (per pooled document, how many of the lists
hold it). Resumable: claims already in OUT are skipped.

    python experiments/probe_rewrite_judge_pools.py --claims DATA/fever_dev \
        --corpus DATA/fever_train --corpus DATA/fool_me_twice --split validation --out pools.jsonl
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from factseek.datasets.retrieval import load_retrieval
from factseek.rewrite.edits.judge import list_counts
from factseek.rewrite.environment import actions
from factseek.rewrite.environment.env import BM25Retriever
from factseek.rewrite.splits import select_split


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--claims", type=Path, required=True)
    ap.add_argument("--corpus", type=Path, action="append", default=[])
    ap.add_argument("--format", default="fever-dev")
    ap.add_argument("--split", default="validation")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--k", type=int, default=50)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    data = load_retrieval(a.claims, a.corpus, a.format)
    claims = select_split(data.claims, a.split)
    claims = claims[: a.limit] if a.limit else claims
    done = set()
    if a.out.exists():
        done = {json.loads(line)["id"] for line in a.out.open()}
    bm25 = BM25Retriever.from_docs(data.pairs())
    t0 = time.perf_counter()
    with a.out.open("a") as f:
        for n, c in enumerate(claims, 1):
            if c.id in done:
                continue
            tq = actions.tag(c.text)
            texts = [t for _, t in actions.expand(tq)]
            current = bm25.rank([tq.text], a.k)[0]
            lists = [current, *(bm25.rank_edits(tq.text, texts, a.k) if texts else [])]
            count = list_counts(lists)
            row = {"id": c.id, "relevant": list(c.relevant), "claim_ranking": current,
                   "pool": list(count), "lists": list(count.values()), "n_lists": len(lists)}  # fmt: skip
            f.write(json.dumps(row) + "\n")
            if n % 200 == 0:
                print(f"{n}/{len(claims)} {time.perf_counter() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
