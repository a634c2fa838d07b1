"""How often the edit scorer's judge finds the evidence in its pool, by judge.

Reads pools written by ``probe_rewrite_judge_pools.py`` (train and evaluation sides) and the
corpus, computes per pooled document the judge features (``factseek.rewrite.edits.judge``) and
prints, on the evaluation pools, how often each judge's top document is relevant (among claims
whose pool holds a relevant document): the encoder's cosine, the fused cosine+BM25 rank of the
shipped features, and the learned judge fit on the train pools.

    python experiments/probe_rewrite_judge.py --claims DATA/fever_dev --corpus DATA/fever_train \
        --corpus DATA/fool_me_twice --train-pools train.jsonl --eval-pools val.jsonl
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
from factseek.rewrite.edits import judge as J
from factseek.rewrite.environment.env import KNNRetriever
from factseek.text import tokenize


def read(path: Path, limit: int = 0) -> list[dict]:
    rows = [json.loads(line) for line in path.open()]
    return rows[:limit] if limit else rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--claims", type=Path, required=True, help="claims of the eval pools")
    ap.add_argument("--train-claims", type=Path, help="claims of the train pools")
    ap.add_argument("--corpus", type=Path, action="append", default=[])
    ap.add_argument("--train-corpus", type=Path, action="append", default=[])
    ap.add_argument("--train-pools", type=Path, required=True)
    ap.add_argument("--eval-pools", type=Path, required=True)
    ap.add_argument("--limit", type=int, default=0)
    a = ap.parse_args()
    t0 = time.perf_counter()
    ev = load_retrieval(a.claims, a.corpus, "fever-dev")
    tr = load_retrieval(a.train_claims or a.claims, a.train_corpus or a.corpus, "fever-dev")
    enc = encoder_from_name("minilm")
    knn = KNNRetriever.build(ev.pairs(), enc, cache_dir=cache_root())
    terms = {d: frozenset(tokenize(t)) for d, t in ev.pairs()}
    row_of = {d: i for i, d in enumerate(knn.doc_ids)}
    print(f"corpus ready {time.perf_counter() - t0:.0f} s", flush=True)

    def featurise(rows: list[dict], claims) -> tuple[list[np.ndarray], list[np.ndarray]]:
        text = {c.id: c.text for c in claims}
        ids = [r["id"] for r in rows]
        vec = np.asarray(enc.encode([text[i] for i in ids]), np.float32)
        xs, ys = [], []
        for r, v in zip(rows, vec, strict=True):
            lists = dict(zip(r["pool"], r["lists"], strict=True))
            cos = knn.embeddings[[row_of[d] for d in r["pool"]]] @ v
            x = J.pool_features(
                frozenset(tokenize(text[r["id"]])), cos, r["pool"],
                [terms[d] for d in r["pool"]], r["claim_ranking"], lists,
                r["n_lists"],
            )  # fmt: skip
            rel = set(r["relevant"])
            xs.append(x)
            ys.append(np.array([d in rel for d in r["pool"]]))
        return xs, ys

    train_rows = read(a.train_pools, a.limit)
    xs_tr, ys_tr = featurise(train_rows, tr.claims)
    print(f"train features {len(xs_tr)} {time.perf_counter() - t0:.0f} s", flush=True)
    xs_ev, ys_ev = featurise(read(a.eval_pools), ev.claims)
    judge = J.fit(xs_tr, ys_tr)
    print(f"fit {time.perf_counter() - t0:.0f} s", flush=True)
    has = [y.any() for y in ys_ev]
    cols = {n: J.FEATURES.index(n) for n in ("cos", "fused")}
    print(f"eval claims {len(ys_ev)}, relevant in pool {np.mean(has):.3f}")
    for name, score in (
        ("cosine (shipped w)", lambda x: x[:, cols["cos"]]),
        ("fused cosine + BM25 rank (shipped prf1)", lambda x: x[:, cols["fused"]]),
        ("learned judge", judge.score),
    ):
        hit = [y[int(np.argmax(score(x)))] for x, y, h in zip(xs_ev, ys_ev, has, strict=True) if h]
        print(f"{name:45s} top-1 relevant {np.mean(hit):.3f}")


if __name__ == "__main__":
    main()
