"""The numbers in docs/stance.md: stance accuracy on held-out pairs, and pairs/s on one CPU core.

    python bench/bench_stance.py --data "$FACTSEEK_DATA" --out /tmp/stance-bench
    python bench/bench_stance.py --data "$FACTSEEK_DATA" --only speed

Accuracy: the test side of each source (``stance.data.build_pairs``: FEVER split by shared
evidence with BM25 NEI pairs from test-side evidence only, Climate-FEVER claim-level, Fool Me
Twice), in statement form and in yes/no question form, for the model as it ships (int8) and
unquantised (fp32), beside the majority class of its training data. ``--max-pairs`` subsamples
each source (seeded) to keep the run short on a shared machine.

Speed: pairs per CPU-second with ``torch.set_num_threads(--threads)`` (default 1) on
``--speed-pairs`` FEVER test pairs (realistic lengths, batches of 32 sorted by length), for the
model (int8 and fp32) and a peer measured in the same run on the same pairs and tokens: the plain
fp32 MiniLM-L6 forward pass (all six layers, no head), i.e. a standard cross-encoder over the same
base. CPU seconds (``time.process_time``) rather than wall seconds, because the machine is shared;
wall pairs/s are printed too. The torch rows are one per ``--quantize`` mode: ``int8`` and
``int8-mixed`` (torch's dynamic int8, one pair per pass), ``int8-rows`` (one scale per token,
packed batches: ``stance.rowint8``) and ``none`` (fp32, batches of 32). With ``--threads`` above 1 an int8 model reads its one-pair passes
side by side on that many threads (``ml.threads.spread``); the row "int8, each pass on every
thread" reads the same passes one after another with the threads inside each pass, as before. Results go to ``--out`` (results.json, results.md), never into the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from functools import partial
from pathlib import Path


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--data",
        type=Path,
        default=os.environ.get("FACTSEEK_DATA"),
        help="data root (default: $FACTSEEK_DATA)",
    )
    p.add_argument("--model", default="small", help="'small', 'mpnet' or a stance model folder")
    p.add_argument("--sources", default="fever,climate,fmt")
    p.add_argument("--max-pairs", type=int, default=1000, help="per source (0: all)")
    p.add_argument("--speed-pairs", type=int, default=512)
    p.add_argument(
        "--max-length",
        type=int,
        default=None,
        help="read pairs cut to this many tokens instead of the model's own max_length",
    )
    p.add_argument("--only", choices=("accuracy", "speed"), default=None)
    p.add_argument(
        "--batch-size", type=int, default=0, help="pairs per forward pass (0: the model's own)"
    )
    p.add_argument("--threads", type=int, default=1, help="torch threads for the speed rows")
    p.add_argument(
        "--quantize",
        default="int8,int8-mixed,int8-rows,none",
        help="the torch engine's speed rows: quantisation modes, comma-separated",
    )
    p.add_argument("--out", type=Path, default=Path("/tmp/factseek-stance-bench"))
    return p.parse_args()


def _load(args: argparse.Namespace, quantize: str, engine: str = "numpy"):
    from factseek.stance import model_folder
    from factseek.stance.crossencoder import CrossEncoderStance
    from factseek.stance.model import load_tokenizer

    path = model_folder(args.model)
    model = CrossEncoderStance.load(
        path, quantize=quantize, name=f"{path.name}/{quantize}/{engine}", engine=engine
    )
    if args.max_length:
        model.tokenizer = load_tokenizer(model.config["net"]["base"], args.max_length)
        model.max_length = args.max_length
    if args.batch_size:
        model.batch_size = args.batch_size
    return model


def accuracy(args: argparse.Namespace, results: dict) -> list[str]:
    from factseek.stance.data import build_pairs, parse_sources, subsample, with_form
    from factseek.stance.evaluate import evaluate_pairs, stance_metrics

    names = parse_sources(args.sources)
    test = build_pairs(args.data, names)["test"]
    models = {q: _load(args, q, "torch") for q in ("int8", "none")}  # the docs' tables
    counts = models["int8"].config.get("train", {}).get("label_counts") or {"nei": 1}
    majority = max(counts, key=lambda k: counts[k])
    lines = [
        "| source | form | pairs | model int8: acc / macro-F1 | fp32: acc / macro-F1 | majority class: acc / macro-F1 |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for name in names:
        pairs = subsample([p for p in test if p.source == name], args.max_pairs or None)
        for form in ("statement", "question"):
            scored = with_form(pairs, form)
            row = {}
            for q, model in models.items():
                ev = evaluate_pairs(model, scored)
                m, seconds = ev.metrics, ev.seconds
                row[q] = {**m.to_dict(), "seconds": round(seconds, 2)}
                print(
                    f"{name} {form} {q}: acc {m.accuracy:.3f} macro-F1 {m.macro_f1:.3f} ({seconds:.0f}s)",
                    flush=True,
                )
            base = stance_metrics([p.label for p in scored], [majority] * len(scored))
            row["majority"] = base.to_dict()
            results.setdefault("accuracy", {})[f"{name}/{form}"] = row
            cells = [
                f"{100 * row[k]['accuracy']:.1f} / {100 * row[k]['macro_f1']:.1f}"
                for k in ("int8", "none", "majority")
            ]
            lines.append(f"| {name} | {form} | {len(scored)} | " + " | ".join(cells) + " |")
    return lines


def speed(args: argparse.Namespace, results: dict) -> list[str]:
    import torch

    from factseek.ml.threads import use_threads
    from factseek.stance import crossencoder
    from factseek.stance.crossencoder import BATCH_SIZE, encode
    from factseek.stance.data import build_pairs, subsample
    from factseek.stance.model import NetConfig, StanceNet

    threads = max(1, args.threads)
    torch.set_num_threads(threads)
    use_threads(threads)  # the numpy engine's count
    test = [p for p in build_pairs(args.data, ["fever"])["test"]]
    pairs = [(p.question, p.evidence) for p in subsample(test, args.speed_pairs)]
    ours = {q: _load(args, q) for q in ("int8", "none")}
    modes = [q.strip() for q in args.quantize.split(",") if q.strip()]
    torch_ours = {q: _load(args, q, "torch") for q in modes}
    tokenizer = ours["none"].tokenizer
    peer = StanceNet.from_base(NetConfig(layers=6, train_layers=1)).merge().eval()
    order = sorted(pairs, key=lambda x: len(x[0]) + len(x[1]))
    batches = [
        encode(tokenizer, order[i : i + BATCH_SIZE]) for i in range(0, len(order), BATCH_SIZE)
    ]
    tokens = sum(int(b[1].sum()) for b in batches) / len(pairs)

    def peer_run() -> None:
        with torch.inference_mode():
            for ids, mask, types in batches:
                peer.lower(ids, mask, types)  # embeddings + six fp32 layers

    def int8_in_turn() -> None:  # the same passes one after another, the threads inside each
        side_by_side = crossencoder.spread
        crossencoder.spread = lambda fn, items: [fn(x) for x in items]
        try:
            torch_ours["int8"].classify(pairs)
        finally:
            crossencoder.spread = side_by_side

    label = {"int8": "int8", "int8-mixed": "int8-mixed", "int8-rows": "int8-rows", "none": "fp32"}
    runs = {
        f"model {label[q]}, numpy engine (classify)": partial(m.classify, pairs)
        for q, m in ours.items()
        if m.config["engine"] == "numpy"  # an MPNet base is read by torch only
    }
    for q, m in torch_ours.items():
        per = "packed batches of 32" if q == "int8-rows" else m.batch_size
        runs[f"model {label[q]}, torch engine (classify; {per} per pass)"] = partial(
            m.classify, pairs
        )
    runs["peer: MiniLM-L6 fp32 forward"] = peer_run
    if threads > 1 and "int8" in torch_ours:
        runs["int8 torch, each pass on every thread"] = int8_in_turn
    rows = {}
    for name, fn in runs.items():
        fn()  # warm-up
        best = None
        for _ in range(3):
            c, w = time.process_time(), time.perf_counter()
            fn()
            c, w = time.process_time() - c, time.perf_counter() - w
            if best is None or c < best[0]:
                best = (c, w)
        assert best is not None
        rows[name] = {
            "pairs_per_cpu_s": len(pairs) / best[0],
            "pairs_per_wall_s": len(pairs) / best[1],
        }
        print(
            f"{name}: {rows[name]['pairs_per_cpu_s']:.0f} pairs/CPU-s ({rows[name]['pairs_per_wall_s']:.0f} wall)",
            flush=True,
        )
    results["speed"] = {
        "pairs": len(pairs),
        "mean_tokens": tokens,
        "threads": threads,
        "rows": rows,
    }
    peer_rate = rows["peer: MiniLM-L6 fp32 forward"]["pairs_per_cpu_s"]
    lines = [
        f"{len(pairs)} FEVER test pairs, {tokens:.1f} tokens on average, {threads} thread(s),"
        " best of 3",
        "",
        "| system | pairs / CPU-s | vs peer | pairs / wall-s |",
        "|---|---:|---:|---:|",
    ]
    for name, r in rows.items():
        lines.append(
            f"| {name} | {r['pairs_per_cpu_s']:.0f} | {r['pairs_per_cpu_s'] / peer_rate:.2f}x | {r['pairs_per_wall_s']:.0f} |"
        )
    return lines


def main() -> int:
    args = _args()
    if args.data is None or not Path(args.data).is_dir():
        print("no data: give --data DIR or set FACTSEEK_DATA (skipping)", file=sys.stderr)
        return 0
    results: dict = {
        "model": args.model,
        "max_pairs": args.max_pairs,
        "max_length": args.max_length,
    }
    md: list[str] = []
    if args.only in (None, "accuracy"):
        md += ["## Accuracy (test side)", "", *accuracy(args, results), ""]
    if args.only in (None, "speed"):
        md += ["## Speed", "", *speed(args, results), ""]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    (args.out / "results.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    print(f"wrote {args.out / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
