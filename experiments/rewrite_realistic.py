"""Does the shipped rewriter edit realistic claims on a realistic store, and does it help there?

    python experiments/rewrite_realistic.py --data "$FACTSEEK_DATA" [--split dev] [--limit N] \\
        [--thresholds 0.08,0.04,0.02,0] [--choose-on train] [--model default|mpnet|small|DIR]

The store is the AVeriTeC small world of ``experiments/averitec_store.py`` (one document per evidence
page, the answers' text; real-world claims of 20-40 words, several relevant pages each). For
each claim of ``--split`` the shipped rewriter (``--rewrite default``: the edit scorer trained on
FEVER; ``--model`` names another) runs against that store with ``explain=True``, so the best candidate edit of the first
step and its predicted AP change are known. Relevant documents: the claim's own answer pages.
AP@50 of the claim and of the rewrite on the store (BM25, no constraints). Printed:

- how many claims the shipped threshold edits, the mean AP change and its paired bootstrap 95%
  CI (1,000 resamples, seeded);
- the distribution of the best predicted change per claim, against the FEVER validation claims'
  threshold (0.08);
- for each of ``--thresholds``: the claims whose best edit passes it and the mean AP change if
  those one-step edits were taken. These rows are diagnostics on the evaluated claims themselves,
  not a tuned setting; ``--choose-on train`` picks the threshold with the best mean AP change on
  the train side's own store and claims and reports it on ``--split`` once.

Prints ``skipped: ...`` without the data. The AVeriTeC data is CC BY-NC 4.0 (evaluation only).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import numpy as np  # noqa: E402

K = 50


def claims_and_relevant(path: Path, urls: set[str]) -> list[tuple[str, set[str]]]:
    from factseek.runs.evaluate import PAGE_SCHEMES

    out = []
    for c in json.loads(path.read_text(encoding="utf-8")):
        rel = set()
        for q in c.get("questions") or []:
            for a in q.get("answers") or []:
                u = " ".join(str(a.get("source_url") or "").split())
                if u.startswith(PAGE_SCHEMES) and u in urls:
                    rel.add(u)
        if rel and str(c.get("claim") or "").strip():
            out.append((" ".join(str(c["claim"]).split()), rel))
    return out


def build_store(source: Path, folder: Path) -> tuple[Path, int]:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from averitec_store import corpus
    from factseek.store import build_store as build

    records, _ = corpus(source)
    folder.mkdir(parents=True, exist_ok=True)
    jsonl = folder / "corpus.jsonl"
    jsonl.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    build([jsonl], folder / "store", overwrite=True)
    return folder / "store", len(records)


def run_side(
    data: Path, split: str, limit: int | None, tmp: Path, model: str = "default"
) -> list[dict]:
    from factseek.metrics.retrieval import average_precision
    from factseek.rewrite.edits.shipped import NO_CONSTRAINTS, load_rewriter
    from factseek.search.base import make_backend

    store, n_docs = build_store(data / "averitec" / f"{split}.json", tmp / split)
    backend = make_backend("local", store=store)
    rewriter = load_rewriter(model, search=backend)
    threshold = rewriter.policy.threshold
    pairs = claims_and_relevant(data / "averitec" / f"{split}.json", _all_urls(store))
    pairs = pairs[:limit] if limit else pairs
    print(f"{split}: {n_docs} documents, {len(pairs)} claims with a page in the store", flush=True)

    def ap(query: str, rel: set[str]) -> float:
        ranking = [h.url for h in backend.search(query, K, NO_CONSTRAINTS)]
        return average_precision(ranking, rel, K)

    rows, t0 = [], time.process_time()
    for i, (claim, rel) in enumerate(pairs):
        (res,) = rewriter.rewrite([claim], explain=True)
        first = res.weighed[0] if res.weighed else None
        best = first.candidates[0] if first and first.candidates else None
        rows.append(
            {
                "words": len(claim.split()),
                "candidates": len(first.candidates) if first else 0,
                "best": best.predicted if best else float("-inf"),
                "ap_claim": ap(claim, rel),
                "ap_best": ap(best.text, rel) if best else None,
                "ap_shipped": ap(res.text, rel),
                "edited": bool(res.trace),
                "threshold": threshold,
            }
        )
        if (i + 1) % 50 == 0:
            print(f"  {i + 1} claims, {time.process_time() - t0:.0f} CPU s", flush=True)
    return rows


def _all_urls(store: Path) -> set[str]:
    return {json.loads(line)["url"] for line in (store.parent / "corpus.jsonl").open()}


def ci(diffs: list[float], seed: int = 0) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    d = np.asarray(diffs)
    means = [d[rng.integers(0, len(d), len(d))].mean() for _ in range(1000)]
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def diffs_at(rows: list[dict], tau: float) -> list[float]:
    """Per claim, the AP change of taking its best first edit when it passes ``tau`` (else 0)."""
    return [
        (r["ap_best"] - r["ap_claim"]) if r["best"] > tau and r["ap_best"] is not None else 0.0
        for r in rows
    ]


def at(rows: list[dict], tau: float) -> tuple[int, float]:
    """Claims whose best first edit passes ``tau``, and the mean AP change of taking it."""
    return sum(r["best"] > tau for r in rows), float(np.mean(diffs_at(rows, tau)))


def report(rows: list[dict], thresholds: list[float], name: str) -> None:
    n = len(rows)
    edited = sum(r["edited"] for r in rows)
    diffs = [r["ap_shipped"] - r["ap_claim"] for r in rows]
    lo, hi = ci(diffs)
    mean_claim = statistics.mean(r["ap_claim"] for r in rows)
    print(f"\n{name}: {n} claims, {statistics.median(r['words'] for r in rows):.0f} words and"
          f" {statistics.median(r['candidates'] for r in rows):.0f} candidate edits (medians)")  # fmt: skip
    print(f"shipped (threshold {rows[0]['threshold']:g}): edits {edited} of {n} claims;"
          f" mAP@{K} claim {mean_claim:.4f} -> rewrite {mean_claim + np.mean(diffs):.4f},"
          f" change {np.mean(diffs):+.4f} [95% CI {lo:+.4f}, {hi:+.4f}]")  # fmt: skip
    best = np.array([r["best"] for r in rows])
    q = np.percentile(best, [50, 90, 99, 100])
    print(f"best predicted change per claim: median {q[0]:+.3f}, 90th pct {q[1]:+.3f},"
          f" 99th {q[2]:+.3f}, max {q[3]:+.3f}")  # fmt: skip
    print("| threshold | claims edited (one step) | mean AP change [95% CI] | better / worse |")
    print("|---|---|---|---|")
    for tau in thresholds:
        k, mean = at(rows, tau)
        lo, hi = ci(diffs_at(rows, tau))
        better = sum(1 for r in rows if r["best"] > tau and r["ap_best"] > r["ap_claim"])
        worse = sum(1 for r in rows if r["best"] > tau and r["ap_best"] < r["ap_claim"])
        print(f"| {tau:g} | {k} ({100 * k / n:.0f}%) | {mean:+.4f} [{lo:+.4f}, {hi:+.4f}] | {better} / {worse} |")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=os.environ.get("FACTSEEK_DATA"))
    ap.add_argument("--split", choices=("dev", "train"), default="dev")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--thresholds", default="0.08,0.04,0.02,0.01,0")
    ap.add_argument("--choose-on", choices=("train",), default=None)
    ap.add_argument("--model", default="default", help="default, mpnet, small or a folder")
    args = ap.parse_args()
    if args.data is None or not (Path(args.data) / "averitec" / f"{args.split}.json").is_file():
        print("skipped: no AVeriTeC data (pass --data DIR holding averitec/)")
        return
    thresholds = [float(x) for x in args.thresholds.split(",")]
    print(f"load average {os.getloadavg()[0]:.1f} (2 cores: busy above 2)", flush=True)
    with tempfile.TemporaryDirectory(prefix="rewrite-realistic-") as tmpdir:
        tmp = Path(tmpdir)
        rows = run_side(Path(args.data), args.split, args.limit, tmp, args.model)
        report(rows, thresholds, f"AVeriTeC {args.split}, rewriter {args.model}")
        if args.choose_on:
            train = run_side(Path(args.data), "train", args.limit, tmp, args.model)
            report(train, thresholds, "AVeriTeC train (choice side)")
            tau = max(thresholds, key=lambda t: at(train, t)[1])
            k, mean = at(rows, tau)
            lo, hi = ci(diffs_at(rows, tau))
            print(f"\nchosen on train: threshold {tau:g}; on {args.split}: {k} claims edited,"
                  f" mean AP change {mean:+.4f} [95% CI {lo:+.4f}, {hi:+.4f}]")  # fmt: skip


if __name__ == "__main__":
    main()
