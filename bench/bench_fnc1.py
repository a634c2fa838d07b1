"""News stance and relevance on FNC-1: the stance readers as `check` uses them, on article bodies.

For each headline / body pair of one side of factseek's FNC-1 split (`datasets/fnc1.py`: by
body, 70/10/20; tune on `dev`, report `test`), the headline is the claim and the body one page:
the body's candidate sentences are chosen as `check` chooses them for a claim (docs/verdicts.md,
Evidence cards), the stance model reads them, and the page's reading is its first card (none:
`nei`). FNC-1's agree -> supports, disagree -> refutes, discuss and unrelated -> nei.

Printed per model: 3-way macro-F1, "disagree" recall (read as refutes) and "agree" recall (read
as supports), and the share of readings at confidence 0.7 or above that are wrong;  for the
evidence selection before issue 50 (every candidate read, the reader alone) and now (only
sentences about the headline's subject are read, `summarize/relevance.py`; figures compared,
`summarize/compare.py`). Relevance alone is scored as FNC-1's related / unrelated task
(ROC AUC, and accuracy at the gate). The sample takes at most `--per-stance` pairs of each FNC-1
stance (seeded), so the rare "disagree" is measured on enough pairs: the mix is not FNC-1's.

    python bench/bench_fnc1.py --data "$FACTSEEK_DATA" --split dev --per-stance 150 --models small,mpnet
    python bench/bench_fnc1.py --data "$FACTSEEK_DATA" --split test --per-stance 250 --models small,mpnet --out results/fnc1

Prints `skipped: ...` and exits 0 when `fnc1/` is not under the data folder.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from factseek.datasets.fnc1 import NewsPair, load_fnc1, sample
from factseek.summarize.evidence import (
    DEFAULT_EVIDENCE,
    EvidenceConfig,
    evidence_candidates,
    select_evidence,
)
from factseek.summarize.relevance import RelevanceModel
from factseek.types import Claim, Document, Question

LABELS = ("supports", "refutes", "nei")
CONFIDENT = 0.7


#: The variants compared: how `check` read evidence before issue 50, and now.
VARIANTS = {
    "before (the reader alone)": EvidenceConfig(
        compare=False, off_topic=False, yielding=False, hearsay=False
    ),
    "figures compared, yielding": replace(DEFAULT_EVIDENCE, hearsay=False),
    "now (and hearsay takes no side)": DEFAULT_EVIDENCE,
}


def page_candidates(pair: NewsPair, cfg: EvidenceConfig) -> tuple[Claim, Document, list]:
    """The headline as the claim and its question, the body as one page, and the body's
    candidate sentences as ``check`` chooses them."""
    claim = Claim(text=pair.headline)
    doc = Document(url=f"fnc1://body/{pair.body_id}", text=pair.body)
    question = Question(text=pair.headline, source="claim", kind="claim")
    return claim, doc, evidence_candidates(claim, [question], [doc], cfg)


def first_card(pair: NewsPair, stance, cfg: EvidenceConfig) -> tuple[Any, int]:
    """The body's first card that takes a side for the headline (None if none), and how many
    pairs were read."""
    claim, doc, cands = page_candidates(pair, cfg)
    if not cands:
        return None, 0
    readings = stance.classify([(c.question, c.text) for c in cands])
    cards = select_evidence(claim, cands, readings, [doc], cfg)
    cards = [e for e in cards if e.stance is not None and e.stance.decides]
    return (cards[0] if cards else None), len(cands)


def page_reading(pair: NewsPair, stance, cfg: EvidenceConfig) -> tuple[str, float, int]:
    """(label, confidence, pairs read) of the body's first card for the headline."""
    card, read = first_card(pair, stance, cfg)
    if card is None:
        return "nei", 0.0, read
    s = card.stance
    return s.label, float(s.probs.get(s.label, 0.0)), read


def scores(gold: Sequence[str], pred: Sequence[str], conf: Sequence[float]) -> dict[str, float]:
    f1s = []
    for lab in LABELS:
        tp = sum(g == p == lab for g, p in zip(gold, pred, strict=True))
        fp = sum(p == lab != g for g, p in zip(gold, pred, strict=True))
        fn = sum(g == lab != p for g, p in zip(gold, pred, strict=True))
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    confident = [
        (g, p) for g, p, c in zip(gold, pred, conf, strict=True) if p != "nei" and c >= CONFIDENT
    ]
    recall = {
        lab: sum(g == p == lab for g, p in zip(gold, pred, strict=True)) / max(1, gold.count(lab))
        for lab in ("supports", "refutes")
    }
    return {
        "macro_f1": sum(f1s) / 3,
        "f1_supports": f1s[0],
        "f1_refutes": f1s[1],
        "f1_nei": f1s[2],
        "agree_recall": recall["supports"],
        "disagree_recall": recall["refutes"],
        "confident": len(confident),
        "confident_wrong": sum(g != p for g, p in confident) / max(1, len(confident)),
    }


def auc(pos: Sequence[float], neg: Sequence[float]) -> float:
    """ROC AUC by ranks (ties count half)."""
    both = sorted([(v, 1) for v in pos] + [(v, 0) for v in neg])
    i, total = 0, 0.0
    while i < len(both):
        j = i
        while j < len(both) and both[j][0] == both[i][0]:
            j += 1
        mean_rank = (i + j + 1) / 2
        total += mean_rank * sum(lab for _, lab in both[i:j])
        i = j
    n1, n0 = len(pos), len(neg)
    return (total - n1 * (n1 + 1) / 2) / max(1, n1 * n0) if n1 and n0 else float("nan")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.environ.get("FACTSEEK_DATA", ""))
    ap.add_argument("--split", default="dev", choices=("train", "dev", "test"))
    ap.add_argument("--per-stance", type=int, default=150)
    ap.add_argument("--models", default="small")
    ap.add_argument("--gate", type=float, default=None, help="page relevance gate to score")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--out", type=Path, default=None, help="write per-pair rows and the scores here"
    )
    args = ap.parse_args(argv)
    folder = Path(args.data) / "fnc1" if args.data else None
    if folder is None or not (folder / "train_stances.csv").is_file():
        print(f"skipped: no fnc1/ under {args.data or '$FACTSEEK_DATA'}")
        return 0
    from factseek.stance import load_stance

    allpairs = load_fnc1(folder)
    pairs = sample(load_fnc1(folder, args.split), args.per_stance, args.seed)
    relevance = RelevanceModel.fit([p.body for p in allpairs])  # document frequencies: bodies only
    gate = relevance.gate if args.gate is None else args.gate
    from factseek.summarize.relevance import about

    print(f"FNC-1 {args.split}: {len(pairs)} pairs {dict(Counter(p.stance for p in pairs))}")
    rel = [relevance.score(p.headline, p.body) for p in pairs]
    related = [r for r, p in zip(rel, pairs, strict=True) if p.related]
    unrelated = [r for r, p in zip(rel, pairs, strict=True) if not p.related]
    acc = sum((r >= gate) == p.related for r, p in zip(rel, pairs, strict=True)) / len(pairs)
    result: dict[str, object] = {
        "split": args.split,
        "pairs": len(pairs),
        "relevance": {"auc": auc(related, unrelated), "gate": gate, "accuracy_at_gate": acc},
    }
    print(
        f"relevance (related vs unrelated): AUC {auc(related, unrelated):.3f}; "
        f"at the gate {gate:.2f}: accuracy {acc:.3f}"
    )
    for kind, want in (("related", True), ("unrelated", False)):
        share = [about(p.headline, p.body) for p in pairs if p.related == want]
        print(
            f"  bodies about the headline's subject (summarize.relevance.about): "
            f"{kind} {sum(share) / max(1, len(share)):.1%} of {len(share)}"
        )
    gold = [p.reading for p in pairs]
    rows = []
    for name in args.models.split(","):
        stance = load_stance(name)
        for variant, cfg in VARIANTS.items():
            cpu0, read = time.process_time(), 0
            got = []
            for i, p in enumerate(pairs):
                lab, conf, n = page_reading(p, stance, cfg)
                read += n
                got.append((lab, conf))
                if (i + 1) % 100 == 0:
                    print(f"  {name}: {i + 1}/{len(pairs)}", file=sys.stderr)
            s = scores(gold, [g[0] for g in got], [g[1] for g in got])
            s["pairs_read"] = read
            for stance_name, reading in (
                ("disagree", "supports"),
                ("discuss", "supports"),
                ("unrelated", "nei"),
            ):
                of = [g[0] for g, p in zip(got, pairs, strict=True) if p.stance == stance_name]
                s[f"{stance_name}_read_{reading}"] = of.count(reading) / max(1, len(of))
            result[f"{name} / {variant}"] = s
            print(
                f"{name:>6} {variant:<42} macro-F1 {s['macro_f1']:.3f}  F1 sup/ref/nei "
                f"{s['f1_supports']:.3f}/{s['f1_refutes']:.3f}/{s['f1_nei']:.3f}  "
                f"agree->supports {s['agree_recall']:.1%}  disagree->refutes "
                f"{s['disagree_recall']:.1%}  >=0.7 wrong {s['confident_wrong']:.1%} of "
                f"{s['confident']}  read {read} pairs, {time.process_time() - cpu0:.0f} CPU s\n"
                f"{'':>7}read as supports: disagree {s['disagree_read_supports']:.1%}, discuss "
                f"{s['discuss_read_supports']:.1%}; unrelated read as nei "
                f"{s['unrelated_read_nei']:.1%}"
            )
            rows.append((f"{name} / {variant}", got))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"fnc1-{args.split}.json").write_text(json.dumps(result, indent=1))
        with (args.out / f"fnc1-{args.split}-pairs.jsonl").open("w") as f:
            for i, p in enumerate(pairs):
                f.write(
                    json.dumps(
                        {
                            "body_id": p.body_id,
                            "stance": p.stance,
                            "relevance": rel[i],
                            **{n: got[i] for n, got in rows},
                        }
                    )
                    + "\n"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
