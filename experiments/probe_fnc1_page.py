"""Does reading the whole page, not its first card, read news stance? (FNC-1, issue 50)

    python experiments/probe_fnc1_page.py --data "$FACTSEEK_DATA" --model mpnet \\
        [--per-stance 150] [--test-per-stance 250]

``bench/bench_fnc1.py`` reads a body as ``check`` does: its candidate sentences about the headline
are read and the page's reading is its first card. A body that disputes its headline usually
restates it first ("X claimed that ...") and disputes it later, so the first card reads
"supports". This probe reads every candidate sentence of each body (the same candidates,
``DEFAULT_EVIDENCE``) and scores page rules over their readings:

- ``first reading``: the first candidate whose reading takes a side, for reference (the bench's
  first card without its figures, yielding and hearsay rules);
- ``any refutes``: "refutes" when some sentence reads refutes at ``p >= r``, else "supports" when
  some sentence reads supports at ``p >= s``, else nei;
- ``net``: the page's largest p(refutes) minus its largest p(supports), against a margin.

Thresholds are chosen on the dev side (3-way macro-F1) and reported once on the test side.
Readings are kept in the stance readings cache, so a rerun reads nothing. FNC-1's terms are
unclear: this measures; nothing here ships.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

GRID = (0.5, 0.6, 0.7, 0.8, 0.9)


def read_pages(pairs: Sequence, stance) -> list[list[dict[str, float]]]:
    """Per pair, the probabilities of each candidate sentence in ``check``'s order."""
    from bench_fnc1 import page_candidates
    from factseek.summarize.evidence import DEFAULT_EVIDENCE

    out = []
    for i, p in enumerate(pairs):
        _, _, cands = page_candidates(p, DEFAULT_EVIDENCE)
        got = stance.classify([(c.question, c.text) for c in cands]) if cands else []
        out.append([dict(r.probs) for r in got])
        if (i + 1) % 200 == 0:
            print(f"  read {i + 1}/{len(pairs)} pages", file=sys.stderr, flush=True)
    return out


def first_reading(page: list[dict[str, float]]) -> str:
    for probs in page:
        label = max(probs, key=probs.__getitem__)
        if label != "nei":
            return label
    return "nei"


def any_refutes(page: list[dict[str, float]], r: float, s: float) -> str:
    if any(p.get("refutes", 0.0) >= r for p in page):
        return "refutes"
    if any(p.get("supports", 0.0) >= s for p in page):
        return "supports"
    return "nei"


def net(page: list[dict[str, float]], margin: float, floor: float) -> str:
    ref = max((p.get("refutes", 0.0) for p in page), default=0.0)
    sup = max((p.get("supports", 0.0) for p in page), default=0.0)
    if max(ref, sup) < floor:
        return "nei"
    return "refutes" if ref - sup >= margin else "supports" if sup - ref >= -margin else "nei"


def rules() -> dict[str, object]:
    out: dict[str, object] = {"first reading": first_reading}
    for r, s in itertools.product(GRID, GRID):
        out[f"any refutes r={r} s={s}"] = lambda page, r=r, s=s: any_refutes(page, r, s)
    for m, f in itertools.product((-0.2, -0.1, 0.0, 0.1, 0.2), GRID):
        out[f"net margin={m} floor={f}"] = lambda page, m=m, f=f: net(page, m, f)
    return out


def score(gold: Sequence[str], pred: Sequence[str]) -> tuple[float, float, float]:
    """(3-way macro-F1, disagree -> refutes recall, agree -> supports recall), as the bench
    scores them."""
    from bench_fnc1 import scores

    s = scores(gold, pred, [0.0] * len(pred))
    return s["macro_f1"], s["disagree_recall"], s["agree_recall"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.environ.get("FACTSEEK_DATA", ""))
    ap.add_argument("--model", default="mpnet")
    ap.add_argument("--per-stance", type=int, default=150, help="dev pairs per FNC-1 stance")
    ap.add_argument("--test-per-stance", type=int, default=250)
    args = ap.parse_args()
    folder = Path(args.data) / "fnc1" if args.data else None
    if folder is None or not (folder / "train_stances.csv").is_file():
        print(f"skipped: no fnc1/ under {args.data or '$FACTSEEK_DATA'}")
        return
    from factseek.datasets.fnc1 import load_fnc1, sample
    from factseek.files import cache_root
    from factseek.stance import load_stance

    stance = load_stance(args.model, readings=cache_root())
    sides = {}
    for split, n in (("dev", args.per_stance), ("test", args.test_per_stance)):
        pairs = sample(load_fnc1(folder, split), n, 0)
        sides[split] = ([p.reading for p in pairs], read_pages(pairs, stance))
    table = {name: {} for name in rules()}
    for split, (gold, pages) in sides.items():
        for name, rule in rules().items():
            table[name][split] = score(gold, [rule(page) for page in pages])  # type: ignore[operator]
    best = max((n for n in table if n != "first reading"), key=lambda n: table[n]["dev"][0])
    print(
        f"FNC-1, reader {args.model}; dev {len(sides['dev'][0])} pairs, test {len(sides['test'][0])}"
    )
    print("| page rule (chosen on dev) | dev macro-F1 | test macro-F1 | test disagree -> refutes | test agree -> supports |")  # fmt: skip
    print("|---|---|---|---|---|")
    for name in ("first reading", best):
        d, t = table[name]["dev"], table[name]["test"]
        print(f"| {name} | {d[0]:.3f} | {t[0]:.3f} | {t[1]:.1%} | {t[2]:.1%} |")
    top_ref = max(table, key=lambda n: table[n]["dev"][1] if table[n]["dev"][0] >= table["first reading"]["dev"][0] else -1)  # fmt: skip
    d, t = table[top_ref]["dev"], table[top_ref]["test"]
    print(f"| {top_ref} (most disagree on dev, macro-F1 not below the first card) | {d[0]:.3f} | {t[0]:.3f} | {t[1]:.1%} | {t[2]:.1%} |")  # fmt: skip


if __name__ == "__main__":
    main()
