"""The numbers in docs/judge.md: claim-only and oracle veracity classifiers on public data.

    python experiments/judge_results.py --data "$FACTSEEK_DATA" --only claim   # LIAR train -> LIAR test, ClaimDecomp dev
    python experiments/judge_results.py --data "$FACTSEEK_DATA" --only oracle  # LIAR-PLUS val2 (5/6 train, 1/6 dev) -> test2
    python experiments/judge_results.py                # both (--data defaults to $FACTSEEK_DATA), then the table

Needs ``liar/``, ``liar_plus/`` and ``claimdecomp/`` under the data folder (docs/data.md says where
to get them and how to lay them out; skips with a message when absent). Models, predictions and results.json go
to --out (default /tmp/factseek-judge-results), never into the repository. Each step is cached:
a finished model folder or predictions file is reused, so a killed run resumes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from factseek.datasets import data_root
from factseek.datasets.claims import LabeledClaim, dedup, load_claims, with_ids
from factseek.judge.classifier import ClassifierJudge
from factseek.judge.evaluate import (
    Prediction,
    compare,
    predict_rows,
    read_predictions,
    score,
    write_predictions,
)
from factseek.judge.train import PRESETS, preset, train_classifier
from factseek.labels import POLITIFACT
from factseek.metrics.veracity import majority_baseline, veracity_metrics

PAPER = {
    "accuracy": 25.5,
    "soft_accuracy": 68.0,
    "macro_f1": 27.5,
    "mae": 1.12,
}  # DeBERTa-large, claim only


def _train(
    name: str,
    train: list[LabeledClaim],
    dev: list[LabeledClaim],
    out: Path,
    args,
    mode: str,
    info: dict,
) -> Path:
    model = out / name
    if (model / "config.json").is_file():
        print(f"{name}: model exists, reusing", flush=True)
        return model
    cfg = preset(
        args.preset,
        mode=mode,
        epochs=args.epochs,
        freeze_layers=args.freeze,
        lr=args.lr,
        max_train=args.max_train,
        max_length=args.max_length,
    )
    t0 = time.perf_counter()
    r = train_classifier(
        train,
        dev,
        model,
        POLITIFACT,
        cfg,
        preset_name=args.preset,
        info=info,
        progress=False,
        threads=args.threads,
        log=lambda s: print(f"{name}: {s}", flush=True),
    )
    print(f"{name}: trained in {time.perf_counter() - t0:.0f}s; dev {r.best.dev}", flush=True)
    return model


def _predict(model: Path, rows: list[LabeledClaim], path: Path) -> list[Prediction]:
    if path.is_file():
        return read_predictions(path, POLITIFACT)
    judge = ClassifierJudge.load(model, device="cpu")
    t0 = time.perf_counter()
    preds, _ = predict_rows(judge, rows)
    print(f"{path.name}: {len(rows)} predictions in {time.perf_counter() - t0:.0f}s", flush=True)
    write_predictions(path, preds)
    return preds


def _row(name: str, preds: list[Prediction], train_gold: list[str]) -> dict:
    m = score(preds, POLITIFACT)
    gold = [p.gold for p in preds]
    base = majority_baseline(train_gold, len(preds), POLITIFACT)
    b = veracity_metrics(gold, base, POLITIFACT)  # type: ignore[arg-type]
    majority = [Prediction(id=p.id, label=x, gold=p.gold) for p, x in zip(preds, base, strict=True)]
    tests = {t.metric: t.p_value for t in compare(preds, majority, POLITIFACT, resamples=2000)}
    return {
        "eval": name,
        "ours": m.__dict__,
        "majority": {**b.__dict__, "label": base[0]},
        "p_vs_majority": tests,
    }


def claim_only(out: Path, args) -> list[dict]:
    train = load_claims(args.data / "liar" / "train.tsv", "liar")
    dev = load_claims(args.data / "liar" / "valid.tsv", "liar")
    test = load_claims(args.data / "liar" / "test.tsv", "liar")
    cd = with_ids(load_claims(args.data / "claimdecomp" / "dev.jsonl", "claimdecomp"))
    kept, rep = dedup(train, dev, test, cd)
    print(f"claim-liar: {rep.line()}", flush=True)
    info = {
        "data": "liar/train.tsv",
        "dev": "liar/valid.tsv",
        "excluded": ["liar/test.tsv", "claimdecomp/dev.jsonl"],
        "dedup": {"kept": rep.kept, "overlap": rep.overlap, "repeated": rep.repeated},
    }
    model = _train("claim-liar", kept, dev, out, args, "claim", info)
    gold = [x.label for x in kept]
    rows = [
        _row("LIAR test", _predict(model, test, out / "claim-liar.liar-test.jsonl"), gold),
        _row(
            "ClaimDecomp dev", _predict(model, cd, out / "claim-liar.claimdecomp-dev.jsonl"), gold
        ),
    ]
    return rows


def oracle(out: Path, args) -> list[dict]:
    val2 = load_claims(args.data / "liar_plus" / "val2.jsonl", "liar-plus")
    test2 = load_claims(args.data / "liar_plus" / "test2.jsonl", "liar-plus")
    dev = [x for i, x in enumerate(val2) if i % 6 == 0]
    train, rep = dedup([x for i, x in enumerate(val2) if i % 6 != 0], dev, test2)
    print(f"oracle-liarplus: {rep.line()}", flush=True)
    info = {
        "data": "liar_plus/val2.jsonl (5/6)",
        "dev": "liar_plus/val2.jsonl (every 6th)",
        "dedup": {"kept": rep.kept, "overlap": rep.overlap, "repeated": rep.repeated},
    }
    model = _train("oracle-liarplus", train, dev, out, args, "justification", info)
    preds = _predict(model, test2, out / "oracle-liarplus.test2.jsonl")
    row = _row("LIAR-PLUS test2 (oracle)", preds, [x.label for x in train])
    claim_preds = out / "claim-liar.liar-test.jsonl"
    if claim_preds.is_file():  # LIAR-PLUS test2 is LIAR test with justifications: same ids
        theirs = read_predictions(claim_preds, POLITIFACT)
        ids = {p.id for p in theirs}
        shared = [p for p in preds if p.id in ids]
        row["vs_claim_only"] = {
            "n": len(shared),
            **{
                t.metric: {"delta": t.delta, "p": t.p_value}
                for t in compare(shared, theirs, POLITIFACT, resamples=2000)
            },
        }
    return [row]


def _table(rows: list[dict]) -> str:
    def fmt(m: dict) -> str:
        return f"{100 * m['accuracy']:.1f} | {100 * m['soft_accuracy']:.1f} | {100 * m['macro_f1']:.1f} | {m['mae']:.2f}"

    lines = [
        "| evaluation | system | n | Acc | soft Acc | macro-F1 | MAE |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['eval']} | MiniLM (ours) | {r['ours']['n']} | {fmt(r['ours'])} |")
        lines.append(
            f"| {r['eval']} | majority class ({r['majority']['label']}) | {r['majority']['n']} | {fmt(r['majority'])} |"
        )
    p = PAPER
    lines.append(
        f"| ClaimDecomp test | DeBERTa-large claim only (paper) | 200 | {p['accuracy']} | {p['soft_accuracy']} | {p['macro_f1']} | {p['mae']} |"
    )
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--data",
        type=Path,
        default=data_root(),
        help="folder of the public data sets (docs/data.md); default $FACTSEEK_DATA",
    )
    ap.add_argument("--out", type=Path, default=Path("/tmp/factseek-judge-results"))
    ap.add_argument("--only", choices=["claim", "oracle"])
    ap.add_argument("--preset", choices=list(PRESETS), default="cpu")
    ap.add_argument("--epochs", type=int, default=None)
    ap.add_argument("--freeze", type=int, default=None)
    ap.add_argument("--lr", type=float, default=None)
    ap.add_argument("--max-train", type=int, default=None)
    ap.add_argument("--max-length", type=int, default=None)
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args()
    if args.data is None or not (args.data / "liar").is_dir():
        print(
            "skipped: no data folder with liar/ (pass --data DIR or set FACTSEEK_DATA; "
            "docs/data.md says where to get the data sets)"
        )
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    if args.only in (None, "claim"):
        rows += claim_only(args.out, args)
    if args.only in (None, "oracle"):
        rows += oracle(args.out, args)
    name = f"results-{args.only or 'all'}.json"
    (args.out / name).write_text(json.dumps(rows, indent=2) + "\n")
    print(_table(rows))
    print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
