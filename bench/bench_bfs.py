"""BFS candidate scoring: factseek's incremental exact BM25 against bm25s (numba), same run.

Workload (see bench/README.md): one-token edits of claims (remove a token, swap one
for a word drawn from the corpus's own token distribution, or add such a word), top-50, scored one
candidate at a time by bm25s (numba backend, 1 thread) and as edits of their claim by
``IncrementalBM25`` (1 thread; the claim's own scoring is included in our time). Both engines get
the same token ids (factseek's tokenizer), so their rankings must agree: the benchmark checks the
top-50 of every candidate: identical lists, or lists whose documents have the same bm25s score
at every rank (bm25s stores float32 scores and does not order ties; factseek breaks them by
document order), else a difference.

Then a real BFS (``factseek.rewrite.environment.bfs``, depth 4, the paper's pruning, AP@50) runs on claims
made from corpus documents (a 2-3 word window of the document plus 5-8 words drawn from the
corpus, shuffled; relevant = that document), and the per-claim time projects 100,000 claims at depth 4 on 2 cores.

Usage:
    python bench/corpus.py 1000000 /tmp/corpus1m
    python bench/bench_bfs.py /tmp/corpus1m [--claims 10] [--edits 1000] [--bfs-claims 30] \
        [--data "$FACTSEEK_DATA"]
Skips with a message when the corpus is absent. The real BFS adds Climate-FEVER
(``DATA/climate_fever/climate-fever.jsonl``, docs/data.md) to the corpus when ``--data`` (default:
``$FACTSEEK_DATA``) has it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

for var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import numpy as np  # noqa: E402

from factseek.datasets import data_root  # noqa: E402
from factseek.rewrite.environment.bm25_index import BM25Index  # noqa: E402
from factseek.rewrite.environment.scorer import IncrementalBM25  # noqa: E402
from factseek.text import tokenize  # noqa: E402

PAPER_DAYS = (0.5, 2.0)


def load_corpus(prefix: str):
    ids, texts = [], []
    with open(prefix + ".jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            ids.append(d["id"])
            texts.append(d["text"])
    queries = Path(prefix + "_queries.txt").read_text(encoding="utf-8").splitlines()
    return ids, texts, queries


def token_ids(texts: list[str]):
    vocab: dict[str, int] = {}
    flat: list[int] = []
    lens = np.empty(len(texts), np.int64)
    for i, text in enumerate(texts):
        toks = tokenize(text)
        lens[i] = len(toks)
        flat.extend(vocab.setdefault(t, len(vocab)) for t in toks)
    return vocab, np.array(flat, np.int64), lens


def make_edits(rng, claim: list[int], flat: np.ndarray, n: int) -> list[list[int]]:
    out = []
    for j in range(n):
        q = list(claim)
        kind = j % 3
        i = int(rng.integers(len(q)))
        word = int(flat[rng.integers(len(flat))])  # corpus token distribution
        if kind == 0 and len(q) > 1:
            del q[i]
        elif kind == 1:
            q[i] = word
        else:
            q.insert(i, word)
        out.append(q)
    return out


def compare(ours, theirs, peer, queries):
    """identical / equivalent (same bm25s score at every rank: float32 ties) / different."""
    identical = equivalent = different = 0
    for a, (b, bs), q in zip(ours, theirs, queries, strict=True):
        b = b[bs > 0]
        if a.tolist() == b.tolist():
            identical += 1
            continue
        dense = peer.get_scores_from_ids(q)  # bm25s's own float32 score of every document
        sa, sb = dense[a], dense[b]
        if len(a) == len(b) and np.allclose(sa, sb, rtol=1e-6, atol=1e-6):
            equivalent += 1
        else:
            different += 1
    return identical, equivalent, different


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("prefix")
    ap.add_argument("--claims", type=int, default=10)
    ap.add_argument("--edits", type=int, default=1000)
    ap.add_argument("--k", type=int, default=50)
    ap.add_argument("--bfs-claims", type=int, default=30)
    ap.add_argument(
        "--data",
        type=Path,
        default=data_root(),
        help="folder of the public data sets (docs/data.md); default $FACTSEEK_DATA",
    )
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if not Path(args.prefix + ".jsonl").exists():
        print(f"skip: {args.prefix}.jsonl not found; make it with "
              f"python bench/corpus.py 1000000 {args.prefix}")  # fmt: skip
        return 0
    rng = np.random.default_rng(args.seed)
    t = time.perf_counter()
    ids, texts, queries = load_corpus(args.prefix)
    real = None
    real_path = (
        (args.data or Path("(FACTSEEK_DATA not set)")) / "climate_fever" / "climate-fever.jsonl"
    )
    if args.bfs_claims and real_path.exists():
        from factseek.datasets.retrieval import load_retrieval

        real = load_retrieval(real_path, format="climate-fever")
        ids += [f"cf:{d.id}" for d in real.corpus]
        texts += [d.text for d in real.corpus]
    elif args.bfs_claims:
        print(f"BFS projection skipped: {real_path} not found")
    vocab, flat, lens = token_ids(texts)
    print(f"corpus: {len(ids):,} docs, {len(flat):,} tokens, {len(vocab):,} terms; "
          f"load+tokenize {time.perf_counter() - t:.1f}s")  # fmt: skip

    t = time.perf_counter()
    index = BM25Index.from_token_ids(tuple(ids), vocab, flat, lens)
    print(f"factseek index: {time.perf_counter() - t:.1f}s")
    import bm25s

    t = time.perf_counter()
    doc_lists, start = [], 0
    for n in lens.tolist():
        doc_lists.append(flat[start : start + n].tolist())
        start += n
    peer = bm25s.BM25(backend="numba")
    peer.index((doc_lists, vocab), show_progress=False)
    del doc_lists
    print(f"bm25s-numba index: {time.perf_counter() - t:.1f}s")

    claims = []
    for q in queries:
        ids_q = [vocab[w] for w in tokenize(q) if w in vocab]
        if len(ids_q) >= 3:
            claims.append(ids_q)
        if len(claims) == args.claims:
            break
    workload = [(c, make_edits(rng, c, flat, args.edits)) for c in claims]
    n_cand = sum(len(e) for _, e in workload)

    # warm-up both JITs
    peer.retrieve([workload[0][1][0]], k=args.k, show_progress=False, n_threads=1)
    scorer = IncrementalBM25(index)
    scorer.parent(np.array(workload[0][0], np.int32), args.k)
    scorer.edits([np.array(e, np.int32) for e in workload[0][1][:3]], args.k)
    scorer.stats.__init__()

    t = time.perf_counter()
    theirs = []
    for _, edits in workload:
        for e in edits:
            d, s = peer.retrieve([e], k=args.k, show_progress=False, n_threads=1)
            theirs.append((d[0], s[0]))
    peer_s = time.perf_counter() - t

    t = time.perf_counter()
    ours = []
    for claim, edits in workload:
        scorer.parent(np.array(claim, np.int32), args.k)
        ours.extend(d for d, _ in scorer.edits([np.array(e, np.int32) for e in edits], args.k))
    ours_s = time.perf_counter() - t

    queries = [e for _, edits in workload for e in edits]
    identical, ties, different = compare(ours, theirs, peer, queries)
    peer_cps, ours_cps = n_cand / peer_s, n_cand / ours_s
    st = scorer.stats
    print(f"\ncandidates: {n_cand} ({len(workload)} claims x {args.edits} one-token edits), "
          f"top-{args.k}")  # fmt: skip
    print(f"bm25s-numba (one at a time): {peer_cps:10,.0f} candidates/s")
    print(f"factseek incremental:        {ours_cps:10,.0f} candidates/s   "
          f"ratio {ours_cps / peer_cps:.1f}x (target >= 20x)")  # fmt: skip
    print(f"  fallbacks {st.fallbacks}/{st.candidates}, "
          f"docs scored exactly per candidate {st.visited / max(st.candidates, 1):.0f}")  # fmt: skip
    print(f"top-{args.k} check: {identical} identical, {ties} equal up to float32 ties (bm25s "
          f"gives the same score at every rank), {different} different")  # fmt: skip
    if real is not None:
        project_bfs(index, real, rng, args)
    return 1 if different else 0


def project_bfs(index: BM25Index, real, rng, args) -> None:
    from factseek.rewrite.environment.bfs import BfsConfig, search_claim
    from factseek.rewrite.environment.env import BM25Retriever, Environment

    env = Environment(retriever=BM25Retriever(index), reward="ap@50")
    config = BfsConfig()
    pick = rng.choice(len(real.claims), size=min(args.bfs_claims, len(real.claims)), replace=False)
    claims = [real.claims[i] for i in sorted(pick.tolist())]
    rel = {c.id: tuple(f"cf:{r}" for r in c.relevant) for c in claims}
    search_claim(env, "warm-up", "Sea levels are rising", rel[claims[0].id], config)
    t = time.perf_counter()
    nodes = cands = 0
    status: dict[str, int] = {}
    for c in claims:
        res = search_claim(env, c.id, c.text, rel[c.id], config)
        nodes += res.stats.expanded
        cands += res.stats.candidates
        status[res.status] = status.get(res.status, 0) + 1
    per_claim = (time.perf_counter() - t) / len(claims)
    days = per_claim * 100_000 / 2 / 86_400
    print(f"\nBFS depth {config.depth}, {len(claims)} Climate-FEVER claims against "
          f"{index.n_docs:,} docs (AP@50, 1 core): {per_claim:.2f}s/claim, "
          f"{nodes / len(claims):.0f} queries expanded and {cands / len(claims):.0f} candidates "
          f"scored per claim; {status}")  # fmt: skip
    print(f"projected 100,000 claims on 2 cores: {days:.2f} days "
          f"(paper: {PAPER_DAYS[0]}-{PAPER_DAYS[1]} days of parallel runs)")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
