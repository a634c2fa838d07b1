"""Knowledge-store speed against bm25s (numba) on the benchmark corpus, in one process.

Targets (exit 1 if missed):
* top-10 search WITH a date filter and a site filter (``StoreBackend.search``, hits included)
  reaches at least the queries/s of bm25s-numba WITHOUT filters (``retrieve``, ids only), one
  thread each, same queries, same machine, same run;
* build (parse JSONL + tokenize + index + write) at >= 15,000 documents/s;
* exactness: pruned equals exhaustive on 200 queries, and the block-skipping kernel gives the
  plain pruned kernel's top-k (ids, scores, order) on every query, filtered and unfiltered
  (block skipping is opt-in, ``StoreBackend.blocks``; its rate is printed beside the default's).

Both are judged in CPU seconds of this (single-threaded) process (``time.process_time``), which
other agents' load on a shared machine does not inflate the way it does wall time; wall-clock
figures and the load average are printed beside them.

Usage: python bench/bench_store.py [--docs 1000000] [--workdir /tmp] [--corpus PREFIX] [--rounds 3]
The corpus comes from ``bench/corpus.py`` (generated once into --workdir unless --corpus names one).
"""

from __future__ import annotations

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import datetime as dt  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

CORPUS_SCRIPT = Path(__file__).with_name("corpus.py")
BUILD_TARGET = 15_000
CLOCK = time.perf_counter
CPU = time.process_time


def corpus(n_docs: int, workdir: Path) -> Path:
    prefix = workdir / f"corpus_{n_docs}"
    if not Path(f"{prefix}.jsonl").exists() or not Path(f"{prefix}_queries.txt").exists():
        print(f"generating {n_docs:,} documents into {prefix}.jsonl ...", flush=True)
        subprocess.run([sys.executable, str(CORPUS_SCRIPT), str(n_docs), str(prefix)], check=True)
    return prefix


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def warm_up(workdir: Path) -> None:
    """Compile the numba kernels on a tiny store so the timed build measures work, not the JIT."""
    from factseek.constraints.hits import Constraints
    from factseek.store import StoreBackend, build_store

    tiny = Path(tempfile.mkdtemp(dir=workdir))
    src = tiny / "w.jsonl"
    src.write_text(
        "".join(
            json.dumps({"url": f"https://w.example/{i}", "text": f"word{i % 3} alpha"}) + "\n"
            for i in range(30)
        )
    )
    build_store([src], tiny / "s")
    StoreBackend.open(tiny / "s").search("alpha word1", 10, Constraints())
    shutil.rmtree(tiny)


def qps(fn, queries: list) -> tuple[float, float]:
    """(wall, cpu) queries per second."""
    t, c = CLOCK(), CPU()
    for q in queries:
        fn(q)
    return len(queries) / (CLOCK() - t), len(queries) / (CPU() - c)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp"))
    ap.add_argument("--rounds", type=int, default=3, help="alternating timing rounds; best kept")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument(
        "--corpus", help="an existing corpus.py OUT_PREFIX (else generated in --workdir)"
    )
    args = ap.parse_args()
    from factseek.constraints.hits import Constraints
    from factseek.store import StoreBackend, build_store

    prefix = args.corpus or corpus(args.docs, args.workdir)
    queries = Path(f"{prefix}_queries.txt").read_text().splitlines()
    warm_up(args.workdir)

    # ---- ours: build
    store = args.workdir / f"store_bench_{args.docs}"
    if store.exists():
        shutil.rmtree(store)
    t, c = CLOCK(), CPU()
    report = build_store([f"{prefix}.jsonl"], store)
    build_s, build_cpu = CLOCK() - t, CPU() - c
    build_rate, build_rate_wall = report.n_docs / build_cpu, report.n_docs / build_s
    rss_after_build = rss_mb()
    t, c = CLOCK(), CPU()
    backend = StoreBackend.open(store)  # sizes and the small arrays' checksums are checked here
    open_s, open_cpu = CLOCK() - t, CPU() - c
    filtered = Constraints(before=dt.date(2020, 1, 1))  # + the default fact-check/video site list
    k = args.k
    # the first pass over the queries on a freshly opened store: pays the gate and, where the
    # store has checksums, the verification of every posting list and hit card it touches
    first_wall, first_cpu = qps(lambda q: backend.search(q, k, filtered), queries)

    # exactness of pruning on a sample
    exact, n_exact = 0, min(200, len(queries))
    for q in queries[:n_exact]:
        backend.prune = True
        a = backend.bm25(q, k, filtered)
        backend.prune = False
        b = backend.bm25(q, k, filtered)
        exact += bool(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]))
    backend.prune = True
    unfiltered = Constraints(
        excluded_sites=(), excluded_markers=(), exclude_pdf=False, exclude_video=False
    )
    # block skipping (a store with block maxima) against the plain pruned kernel, every query
    mismatches, n_compared = 0, 0
    if getattr(backend, "block_stats", None) is not None:
        for c in (filtered, unfiltered):
            for q in queries:
                a = backend.bm25(q, k, c)
                backend.blocks = True
                b = backend.bm25(q, k, c)
                backend.blocks = False
                mismatches += not (np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]))
                n_compared += 1
    hits = backend.search(queries[0], k, filtered)
    assert all(h.published < filtered.before for h in hits)

    # ---- peer: bm25s numba, no filters, one thread (its own tokenizer with English stopwords)
    import bm25s
    from bm25s.tokenization import Tokenizer

    with open(f"{prefix}.jsonl") as f:
        texts = [json.loads(line)["text"] for line in f]
    tok = Tokenizer(stopwords="en", stemmer=None)
    c = CPU()
    ids = tok.tokenize(texts, return_as="ids", show_progress=False)
    peer = bm25s.BM25(backend="numba")
    peer.index((ids, tok.get_vocab_dict()), show_progress=False)
    peer_build_rate = len(texts) / (CPU() - c)
    del texts, ids
    q_ids = tok.tokenize(queries, update_vocab=False, return_as="ids", show_progress=False)
    q_ids = [x if x else [peer.vocab_dict[""]] for x in q_ids]
    peer.retrieve(q_ids[:5], k=k, show_progress=False, n_threads=1)

    ours_f, ours_u, peer_u, ours_blocks = [], [], [], []
    stats = getattr(backend, "block_stats", np.zeros(2))
    stats[:] = 0
    for _ in range(args.rounds):
        ours_f.append(qps(lambda q: backend.search(q, k, filtered), queries))
        backend.blocks = True  # opt-in block skipping (ignored by a tree without it)
        ours_blocks.append(qps(lambda q: backend.search(q, k, filtered), queries))
        backend.blocks = False
        peer_u.append(
            qps(lambda q: peer.retrieve([q], k=k, show_progress=False, n_threads=1), q_ids)
        )
        ours_u.append(
            qps(
                lambda q: backend.search(q, k, unfiltered),
                queries,
            )
        )

    kept = np.mean([len(backend.search(q, k, filtered)) for q in queries[:100]])
    best = {
        name: max(x[1] for x in runs)
        for name, runs in (("f", ours_f), ("u", ours_u), ("p", peer_u), ("blocks", ours_blocks))
    }
    wall = {
        name: max(x[0] for x in runs)
        for name, runs in (("f", ours_f), ("u", ours_u), ("p", peer_u))
    }
    out = {
        "docs": report.n_docs,
        "queries": len(queries),
        "k": k,
        "load_average_1min": os.getloadavg()[0],
        "build_docs_per_cpu_s": round(build_rate),
        "build_docs_per_wall_s": round(build_rate_wall),
        "build_wall_s": round(build_s, 1),
        "peer_build_docs_per_cpu_s (tokenize+index only, texts in memory)": round(peer_build_rate),
        "open_s_wall": round(open_s, 4),
        "open_s_cpu": round(open_cpu, 4),
        "qps_cpu_ours_first_pass_after_open": round(first_cpu),
        "qps_wall_ours_first_pass_after_open": round(first_wall),
        "qps_cpu_ours_date+site_filter": round(best["f"]),
        "qps_cpu_ours_date+site_filter_with_block_skipping (opt-in)": round(best["blocks"]),
        "blocks_skipped_share (filtered, lists searched block by block)": round(
            float(stats[1] / max(stats.sum(), 1)), 3
        ),
        "qps_cpu_ours_no_filter": round(best["u"]),
        "qps_cpu_bm25s_numba_no_filter": round(best["p"]),
        "qps_wall_ours_date+site_filter": round(wall["f"]),
        "qps_wall_bm25s_numba_no_filter": round(wall["p"]),
        "ratio_ours_filtered/peer": round(best["f"] / best["p"], 2),
        "ratio_build_ours/peer": round(build_rate / peer_build_rate, 2),
        "pruned_equals_exhaustive": f"{exact}/{n_exact}",
        "block_skipping_differs_from_plain_kernel": (
            f"{mismatches}/{n_compared} queries" if n_compared else "n/a (no block maxima)"
        ),
        "mean_hits_per_filtered_query": float(kept),
        "peak_rss_mb_after_build": round(rss_after_build),
        "peak_rss_mb": round(rss_mb()),
    }
    print(json.dumps(out, indent=1))
    print(
        f"\nsearch q/s (top-{k}, one thread, per CPU second): ours with date+site filter "
        f"{best['f']:,.0f}  |  bm25s-numba without filter {best['p']:,.0f}"
    )
    print(
        f"build docs/s (per CPU second): ours {build_rate:,.0f} (target {BUILD_TARGET:,})"
        f"  |  bm25s {peer_build_rate:,.0f}  (ratio {build_rate / peer_build_rate:.2f})"
    )
    shutil.rmtree(store, ignore_errors=True)
    ok = best["f"] >= best["p"] and build_rate >= BUILD_TARGET and exact == n_exact
    ok = ok and mismatches == 0
    print("TARGET MET" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
