"""Rewriter inference speed: milliseconds per edit step per query, on one CPU thread.

    python bench/bench_rewrite_infer.py [--model DIR] [--queries 64] [--threads 1] [--data DIR]

One edit step = tag the current query (spaCy, WordNet synonyms), encode it (MiniLM), run the
decision transformer on the history, apply the chosen edit. Target: <= 20 ms per step per query.
Without ``--model`` a SMALL model with random weights and STOP disabled is used, so every query
takes all K steps (speed does not depend on the weights). Queries: Climate-FEVER claims from
``DATA/climate_fever/climate-fever.jsonl`` when present (``--data``, default ``$FACTSEEK_DATA``;
docs/data.md), else built-in sentences. Peers measured in the same run: MiniLM
encoding alone per query, spaCy tagging alone per query, and one BM25 top-50 reward evaluation
(factseek's exact scorer over the Climate-FEVER evidence sentences or a synthetic corpus).
Also measured: the same step with the word-vector pointer head (``--head words``, random weights)
and with a ``FeedbackGuard`` choosing among the model's top 5 edits by BM25 top-50 feedback
(corpus embeddings cached under ``~/.cache/factseek/rewrite-eval``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from factseek.datasets import data_root

FALLBACK = [
    "The city council voted to ban plastic bags in every grocery store last year",
    "Scientists say the new vaccine causes serious side effects in children",
    "Unemployment fell to its lowest level in fifty years under the governor",
    "Sea levels have risen faster over the past decade than in the previous century",
    "The senator claimed that crime doubled after the police budget was cut",
    "Electric cars produce more pollution than gasoline cars over their lifetime",
    "Most of the new jobs created this year went to immigrants",
    "The president signed a law that raised taxes on the middle class",
]


def load_queries(n: int, data: Path | None) -> tuple[list[str], list[tuple[str, str]]]:
    """(queries, corpus) from Climate-FEVER when available, else synthetic."""
    folder = (data or Path("(FACTSEEK_DATA not set)")) / "climate_fever"
    if (folder / "climate-fever.jsonl").is_file():
        claims, corpus = [], {}
        for line in (folder / "climate-fever.jsonl").read_text().splitlines():
            rec = json.loads(line)
            claims.append(rec["claim"])
            for ev in rec["evidences"]:
                corpus[ev["evidence_id"]] = ev["evidence"]
        print(f"queries: Climate-FEVER claims; corpus: {len(corpus)} evidence sentences")
        return claims[: 2 * n], list(corpus.items())
    print(f"({folder} absent: built-in sentences and a synthetic corpus)")
    rng = np.random.default_rng(0)
    words = " ".join(FALLBACK).lower().split()
    corpus = [(f"d{i}", " ".join(rng.choice(words, 20))) for i in range(5000)]
    reps = [f"{FALLBACK[i % len(FALLBACK)]} in case {i}" for i in range(2 * n)]
    return reps, corpus


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--queries", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument(
        "--data",
        type=Path,
        default=data_root(),
        help="folder of the public data sets (docs/data.md); default $FACTSEEK_DATA",
    )
    args = ap.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    import dataclasses
    import os

    from factseek.ml.encode import default_encoder
    from factseek.rewrite.environment import actions
    from factseek.rewrite.environment.bm25_index import BM25Index
    from factseek.rewrite.environment.env import BM25Retriever
    from factseek.rewrite.environment.guard import FeedbackGuard
    from factseek.rewrite.environment.scorer import IncrementalBM25
    from factseek.rewrite.transformer.infer import ActionsEditor, Rewriter
    from factseek.rewrite.transformer.model import SMALL, DecisionTransformer

    queries, corpus = load_queries(args.queries, args.data)
    warm, measured = queries[: args.queries], queries[args.queries : 2 * args.queries]
    encoder = default_encoder()
    editor = ActionsEditor()
    if args.model:
        rw = Rewriter.load(args.model, encoder=encoder, editor=editor, device="cpu")
    else:
        model = DecisionTransformer(SMALL).eval()
        with torch.no_grad():
            model.head.weight[SMALL.stop_index] = -1e3  # never STOP: every query takes K steps
        meta = {"kinds": list(editor.kinds), "returns": {"target_return": 0.2, "rtg_step": 0.05}}
        rw = Rewriter(model, meta, encoder=encoder, editor=editor)
    k = rw.cfg.max_edits
    print(
        f"model: {rw.cfg.n_layer} layers, {rw.cfg.n_embd}-d, K={k}; torch threads: {args.threads}"
    )

    rw.rewrite(warm[:8])  # load spaCy, WordNet, MiniLM

    def timed(fn, n: int) -> tuple[float, float]:
        """(wall ms, CPU ms of this process) per unit; CPU time is robust to a busy machine."""
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        return 1000 * (time.perf_counter() - w0) / n, 1000 * (time.process_time() - c0) / n

    def per_step(
        batch_size: int, texts: list[str], rewriter: Rewriter = rw, **kw: object
    ) -> tuple[float, float]:
        res: list = []
        w, c = timed(lambda: res.extend(rewriter.rewrite(texts, batch_size=batch_size, **kw)), 1)
        decisions = max(sum(r.steps + (r.stopped in ("stop", "guard")) for r in res), 1)
        return w / decisions, c / decisions

    rows = {}
    rows[f"ours: one edit step, batch of {len(measured)}"] = per_step(64, measured)
    rows["ours: one edit step, batch of 1"] = per_step(1, warm[8 : 8 + 16])
    word_cfg = dataclasses.replace(SMALL, pointer_head=True, word_dim=encoder.dim)
    word_model = DecisionTransformer(word_cfg).eval()
    with torch.no_grad():
        word_model.stop_head.bias.fill_(-1e3)  # never STOP
    word_rw = Rewriter(word_model, rw.meta, encoder=encoder, editor=editor)
    word_rw.rewrite(warm[:8])
    rows[f"ours: one edit step, word head, batch of {len(measured)}"] = per_step(
        64, [q + " today" for q in measured], word_rw
    )
    cache = Path(os.environ.get("FACTSEEK_CACHE") or Path.home() / ".cache" / "factseek")
    guard = FeedbackGuard.from_docs(
        BM25Retriever.from_docs(corpus), corpus, encoder, cache_dir=cache / "rewrite-eval"
    )
    rows[f"ours: one edit step + guard top-5, batch of {len(measured)}"] = per_step(
        64, [q + " now" for q in measured], guard=guard
    )
    enc = encoder.inner if hasattr(encoder, "inner") else encoder  # no cache hits
    fresh = [q + " really" for q in measured]
    rows[f"peer: MiniLM encoding alone, batch of {len(fresh)}"] = timed(
        lambda: enc.encode(fresh), len(fresh)
    )
    single = [q + " indeed" for q in measured[:32]]
    rows["peer: MiniLM encoding alone, batch of 1"] = timed(
        lambda: [enc.encode([q]) for q in single], len(single)
    )
    fresh3 = [q + " surely" for q in measured]
    rows[f"peer: spaCy+WordNet tagging alone, batch of {len(fresh3)}"] = timed(
        lambda: actions.tag_many(fresh3), len(fresh3)
    )
    index = BM25Index.build(corpus)
    scorer = IncrementalBM25(index)
    ids = [index.term_ids(q) for q in measured]
    scorer.score_dense(ids[0], 50)
    rows[f"peer: one BM25 top-50 reward ({index.n_docs} docs)"] = timed(
        lambda: [scorer.score_dense(x, 50) for x in ids], len(ids)
    )

    print()
    print("| what | wall ms per query | CPU ms per query |")
    print("|---|---|---|")
    for name, (w, c) in rows.items():
        print(f"| {name} | {w:.2f} | {c:.2f} |")
    print()
    w, c = rows[f"ours: one edit step, batch of {len(measured)}"]
    _, ec = rows[f"peer: MiniLM encoding alone, batch of {len(fresh)}"]
    verdict = "meets" if c <= 20 else "misses"
    print(
        f"batched: {c:.1f} CPU ms ({w:.1f} wall) per step per query {verdict} the 20 ms target;"
        f" {c / ec:.1f}x the CPU cost of encoding alone"
    )


if __name__ == "__main__":
    main()
