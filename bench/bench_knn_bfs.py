"""kNN BFS: the level-batched path against the per-parent path (the code before it), same run.

    python bench/bench_knn_bfs.py --data "$FACTSEEK_DATA" [--claims 5] [--reward ap@50] \\
        [--encoder minilm] [--threads 1]

Both runs search the same FEVER training claims (``fever_dev`` + ``fool_me_twice`` distractors,
the train side of the group split, first ``--claims``) with the kNN endpoint (MiniLM cosine over
the ~22k texts, corpus embeddings cached on disk) and the same BFS settings (depth 4, the
paper's pruning). Each run starts with an empty query-embedding cache:

- ``before``: the retriever without ``rank_groups``, so the BFS makes one ``rank_edits`` call per
  expanded query (one encoder call per parent, a per-row top-k), as the code did before;
- ``after``: ``KNNRetriever.rank_groups`` (one encoder call per BFS level, an exact vectorised
  top-k).

It prints claims per second (CPU and wall) of each, the ratio, and whether the trajectories are
identical (every sequence: queries, actions, rewards). One other claim runs first, untimed, so
spaCy, WordNet and the encoder are loaded before either run; each run starts with empty tagging
and query-embedding caches. Torch threads are capped (``--threads``)
for both runs alike. Prints ``skipped: ...`` and exits 0 when the data is absent.
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


class PerParent:
    """A retriever seen through ``rank``/``rank_edits`` only (no batched ``rank_groups``)."""

    def __init__(self, inner) -> None:
        self.inner, self.name = inner, inner.name

    def rank(self, queries, k):
        return self.inner.rank(queries, k)

    def rank_edits(self, parent, queries, k):
        return self.inner.rank_edits(parent, queries, k)


class Timed:
    """An encoder that adds the CPU seconds of its own calls to ``seconds``."""

    def __init__(self, inner) -> None:
        self.inner, self.name, self.seconds = inner, inner.name, 0.0

    def __getattr__(self, attr):
        return getattr(self.inner, attr)

    def encode(self, texts, *a, **k):
        c0 = time.process_time()
        try:
            return self.inner.encode(texts, *a, **k)
        finally:
            self.seconds += time.process_time() - c0


def run(env, claims, config) -> tuple[list[dict], float, float]:
    from factseek.rewrite.environment.bfs import search_claim

    records = []
    c0, w0 = time.process_time(), time.perf_counter()
    for c in claims:
        res = search_claim(env, c.id, c.text, c.relevant, config)
        records.append({"status": res.status, **res.record.to_dict()})
    return records, time.process_time() - c0, time.perf_counter() - w0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=None, help="data folder (default $FACTSEEK_DATA)")
    ap.add_argument("--claims", type=int, default=5)
    ap.add_argument("--reward", default="ap@50")
    ap.add_argument("--encoder", default="minilm")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    from factseek.datasets import data_root

    args.data = data_root(args.data)
    if args.data is None or not (args.data / "fever_dev").is_dir():
        print("skipped: no FEVER data (pass --data DIR holding fever_dev/ and fool_me_twice/)")
        return

    import torch

    torch.set_num_threads(args.threads)
    from factseek.datasets.retrieval import load_retrieval
    from factseek.ml.encode import CachedEncoder, encoder_from_name
    from factseek.rewrite.environment.bfs import BfsConfig
    from factseek.rewrite.environment.env import Environment, KNNRetriever
    from factseek.rewrite.environment.wordnet import cache_root
    from factseek.rewrite.splits import select_split

    data = load_retrieval(args.data / "fever_dev", args.data / "fool_me_twice", "fever-dev")
    claims = select_split(data.claims, "train")[: args.claims]
    shared = encoder_from_name(args.encoder)
    index = KNNRetriever.build(data.pairs(), shared, cache_dir=cache_root())
    config = BfsConfig()
    from factseek.rewrite.environment import actions

    warm = select_split(data.claims, "train")[args.claims : args.claims + 1]
    warm_env = Environment(retriever=KNNRetriever(index.doc_ids, index.embeddings, shared), reward=args.reward)  # fmt: skip
    run(warm_env, warm, config)  # load spaCy, WordNet and the encoder before any timing
    rows = {}
    for name in ("before", "after"):
        actions._CACHE.clear()  # each run tags its own queries
        timed = Timed(getattr(shared, "inner", shared))
        encoder = CachedEncoder(timed)  # empty cache per run
        knn = KNNRetriever(index.doc_ids, index.embeddings, encoder)
        retriever = PerParent(knn) if name == "before" else knn
        env = Environment(retriever=retriever, reward=args.reward)
        rows[name] = run(env, claims, config)
        _, cpu, wall = rows[name]
        print(f"{name}: {len(claims)} claims in {cpu:.1f} CPU s / {wall:.1f} s wall; "
              f"{encoder.misses} texts encoded in {timed.seconds:.1f} CPU s "
              f"({100 * timed.seconds / cpu:.0f}% of the run)", file=sys.stderr, flush=True)  # fmt: skip
    (rb, cb, wb), (ra, ca, wa) = rows["before"], rows["after"]
    same = json.dumps(rb, sort_keys=True) == json.dumps(ra, sort_keys=True)
    n = len(claims)
    print(f"kNN BFS, {args.reward}, {n} FEVER train claims, {len(data.corpus)} documents, "
          f"encoder {args.encoder}, {args.threads} torch thread(s)")  # fmt: skip
    print("| path | claims/CPU s | claims/s (wall) |")
    print("|---|---|---|")
    print(f"| before (per parent) | {n / cb:.3f} | {n / wb:.3f} |")
    print(f"| after (per level) | {n / ca:.3f} | {n / wa:.3f} |")
    print(f"ratio {cb / ca:.2f}x CPU, {wb / wa:.2f}x wall; trajectories identical: {same}")
    print("statuses:", [r["status"] for r in ra])


if __name__ == "__main__":
    main()
