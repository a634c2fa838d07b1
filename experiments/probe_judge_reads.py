"""Probe: does a different reading of the retrieved evidence help the trained evidence judge?

    python experiments/probe_judge_reads.py --data "$FACTSEEK_DATA" --reports runs/train \
        [--variants passages,docs10,...]

``--reports`` is the run folder of ``factseek eval pipeline`` over ``averitec/train.json``
(docs/verdicts.md, "Reproduce"; made with ``--stance none``).

Cross-validates (5 folds of whole claims, AVeriTeC **train** only: never dev) the evidence
judge's features and classifier (``judge/evidence_model.py``: MiniLM embeddings of the claim and
the evidence mean, their product, cosines, hashed bags of words; multinomial logistic
regression, ``l2`` 0.1, ``balance`` 0.5 = what ``judge train-evidence`` selected on one held-out
fifth, before it cross-validated; ``evidence_model.cross_predict``) with the
retrieved evidence read in other ways, each claim alone, with its gold answers and with the
retrieved texts, as in training. Variants:

- ``passages``: the run's top passages (the judge's default, the reference row);
- ``all-words``: the same, but the bags of words keep stop words ("no", "not" are stop words
  of ``factseek.text.tokenize``; AVeriTeC answers start with "Yes." / "No.");
- ``docs10``: the first 10 kept documents instead of the passages;
- ``weighted``: passages, their mean embedding weighted by ``softmax(cosine to claim / 0.05)``;
- ``docs10-weighted``: both;
- ``cards``: the run's evidence cards.

For each it prints accuracy and macro-F1 of claim-only, gold and retrieved inputs pooled over the
folds, the retrieved - claim-only difference and the share of the claim-only -> gold gap it
closes. Also how often a gold answer's page is among what each variant reads (precision: the
share of read texts that hold a gold answer). The numbers are in docs/verdicts.md.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

VARIANTS = ("passages", "all-words", "docs10", "weighted", "docs10-weighted", "cards")


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--data",
        type=Path,
        default=os.environ.get("FACTSEEK_DATA"),
        help="data root holding averitec/train.json (default: $FACTSEEK_DATA)",
    )
    p.add_argument("--reports", type=Path, required=True, help="eval pipeline run folder")
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--bow", type=int, default=2048)
    p.add_argument("--folds", type=int, default=5)
    return p.parse_args()


def main() -> int:
    args = _args()
    variants = [v for v in args.variants.split(",") if v]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        print(f"unknown variants {unknown}; choose from {', '.join(VARIANTS)}", file=sys.stderr)
        return 2
    data = Path(args.data or ".") / "averitec" / "train.json"
    if not data.is_file() or not (args.reports / "journal.jsonl").is_file():
        print(f"skipped: needs {data} and a run folder at {args.reports}")
        return 0
    from factseek.datasets.claims import data_format, with_ids
    from factseek.judge.evidence_model import FitConfig, bag_of_words, cross_predict
    from factseek.metrics.veracity import veracity_metrics
    from factseek.ml.encode import encoder_from_name
    from factseek.runs.batch import claim_id
    from factseek.runs.evaluate import load_reports

    df = data_format("averitec", data)
    rows = [r for r in with_ids(df.load(data)) if r.label is not None]
    found = load_reports(args.reports)
    items = []
    for r in rows:
        rep = found.get(claim_id(r.claim))
        if rep is None:
            continue
        items.append(
            {
                "claim": r.claim.text,
                "label": df.labels.index(r.label),
                "gold": [t for t in r.evidence if t.strip()],
                "passages": [p.text for p in rep.passages],
                "docs10": [d.text for d in rep.documents[:10]],
                "cards": [e.text for e in rep.evidence],
            }
        )
    print(f"{len(items)} claims with a report in {args.reports}", file=sys.stderr)
    texts: dict[str, int] = {}
    for it in items:
        for t in [it["claim"], *it["gold"], *it["passages"], *it["docs10"], *it["cards"]]:
            texts.setdefault(t, len(texts))
    keys = list(texts)
    enc = encoder_from_name("minilm")
    vecs = np.concatenate([enc.encode(keys[i : i + 256]) for i in range(0, len(keys), 256)])

    def features(claim: str, ts: list[str], tau: float, words: str) -> np.ndarray:
        c = vecs[texts[claim]]
        ts = list(dict.fromkeys(t for t in ts if t.strip()))[:20]
        if ts:
            e = vecs[[texts[t] for t in ts]]
            cos = e @ c
            w = np.exp((cos - cos.max()) / tau) if tau else np.ones(len(ts))
            m = (w / w.sum()) @ e
            extra = [cos.max(), cos.mean(), 1.0, np.log1p(len(ts))]
        else:
            m, extra = np.zeros_like(c), [0.0] * 4
        parts = [c, m, c * m, np.array(extra, dtype=np.float32)]
        if args.bow:
            parts += [bag_of_words([claim], args.bow, words), bag_of_words(ts, args.bow, words)]
        return np.concatenate(parts)

    rng = np.random.default_rng(1)
    fold = rng.permutation(len(items)) % args.folds
    labels = df.labels.labels
    print(
        "| variant | claim-only acc / F1 | gold acc / F1 | retrieved acc / F1 "
        "| Δ acc / Δ F1 | gap closed acc / F1 | gold read | precision |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for v in variants:
        source = {"docs10": "docs10", "docs10-weighted": "docs10", "cards": "cards"}.get(
            v, "passages"
        )
        tau = 0.05 if v.endswith("weighted") else 0.0
        words = "all" if v == "all-words" else "index"
        x, y, kind, f = [], [], [], []
        for i, it in enumerate(items):
            for k, ts in (("claim-only", []), ("gold", it["gold"]), ("retrieved", it[source])):
                if k == "gold" and not ts:
                    continue
                x.append(features(it["claim"], ts, tau, words))
                y.append(it["label"])
                kind.append(k)
                f.append(fold[i])
        xa, ya, ka, fa = np.array(x), np.array(y), np.array(kind), np.array(f)
        pred = cross_predict(xa, ya, fa, len(labels), l2=0.1, balance=0.5, cfg=FitConfig())
        m = {}
        for k in ("claim-only", "gold", "retrieved"):
            s = veracity_metrics(
                [labels[i] for i in ya[ka == k]], [labels[i] for i in pred[ka == k]], df.labels
            )
            m[k] = (100 * s.accuracy, 100 * s.macro_f1)
        (ca, cf), (ga, gf), (ra, rf) = m["claim-only"], m["gold"], m["retrieved"]
        hit = [any(g in t for t in it[source] for g in it["gold"]) for it in items]
        prec = [
            np.mean([any(g in t for g in it["gold"]) for t in it[source]])
            for it in items
            if it[source]
        ]
        print(
            f"| {v} | {ca:.1f} / {cf:.1f} | {ga:.1f} / {gf:.1f} | {ra:.1f} / {rf:.1f} "
            f"| {ra - ca:+.1f} / {rf - cf:+.1f} | {_share(ra - ca, ga - ca)} / {_share(rf - cf, gf - cf)} "
            f"| {100 * np.mean(hit):.1f}% | {100 * np.mean(prec):.1f}% |",
            flush=True,
        )
    return 0


def _share(part: float, whole: float) -> str:
    return f"{100 * part / whole:.0f}%" if whole > 0 else "n/a"


if __name__ == "__main__":
    raise SystemExit(main())
