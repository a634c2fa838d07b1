"""Figures compared (`summarize/compare.py`) on gold real-world pairs: how often it speaks, and
how often it is right, beside the stance reader on the same pairs.

For every (claim or question, evidence, gold label) pair of the real-world sources
(Check-COVID, WiCE, LIAR-PLUS, AVeriTeC train and dev Boolean answers; `stance/realworld.py`),
the comparison says `agrees`, `disagrees` or nothing. Printed per source and side: pairs, how
many it spoke on, and of those how often "agrees" was a gold `supports` and "disagrees" a gold
`refutes` (nei and not-supported pairs count as wrong for both). `--model` adds the stance
model's own accuracy on the pairs the comparison spoke on (the peer it would overrule).
`AGREE_RIGHT` / `DISAGREE_RIGHT` in compare.py are the train + validation rows' pooled figures.

    python bench/bench_figures.py --data "$FACTSEEK_DATA" [--model mpnet]

Prints `skipped: ...` and exits 0 when the data folder lacks the sources.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from factseek.stance import realworld
from factseek.summarize.compare import compare

SOURCES = {
    "checkcovid": ("check_covid", realworld.checkcovid_pairs),
    "wice": ("wice", realworld.wice_pairs),
    "liarplus": ("liar_plus", realworld.liarplus_pairs),
    "averitec": ("averitec", realworld.averitec_pairs),
    "averitec-dev": ("averitec", realworld.averitec_dev_pairs),
}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.environ.get("FACTSEEK_DATA", ""))
    ap.add_argument("--model", default=None, help="a stance model to read the same pairs")
    args = ap.parse_args(argv)
    root = Path(args.data) if args.data else None
    if root is None or not root.is_dir():
        print(f"skipped: no data folder ({args.data or '$FACTSEEK_DATA'})")
        return 0
    stance = None
    if args.model:
        from factseek.stance import load_stance

        stance = load_stance(args.model)
    pooled = {"fit": [0, 0, 0, 0], "test": [0, 0, 0, 0]}  # agrees, right, disagrees, right
    other: dict[str, list[int]] = {}  # other-time: spoke, gold nei
    kinds: dict[str, list[int]] = {}  # agrees with the figure's time written, or not: n, right
    print("| source | side | pairs | agrees (right) | disagrees (right) | reader right on those |")
    print("|---|---|---:|---:|---:|---:|")
    for name, (folder, load) in SOURCES.items():
        if not (root / folder).exists():
            print(f"| {name} | skipped: no {folder}/ | | | | |")
            continue
        sides = load(root / folder)
        for side in ("train", "validation", "test"):
            pairs = sides.get(side) or []
            if not pairs:
                continue
            key = "test" if side == "test" else "fit"
            spoke, spoke_full = [], []
            for p in pairs:
                c = compare(p.question, p.evidence)
                if c is not None:
                    spoke.append((p, c.result))
                    spoke_full.append((p, c))
            agree = [p for p, r in spoke if r == "agrees"]
            disagree = [p for p, r in spoke if r == "disagrees"]
            elsewhen = [p for p, r in spoke if r == "other-time"]
            e_ok = sum(p.label == "nei" for p in elsewhen)
            for p, dated in ((p, c.dated) for p, c in spoke_full if c.result == "agrees"):
                k = "dated" if dated else "undated"
                kinds[k] = [
                    kinds.get(k, [0, 0])[0] + 1,
                    kinds.get(k, [0, 0])[1] + (p.label == "supports"),
                ]
            other[key] = [
                other.get(key, [0, 0])[0] + len(elsewhen),
                other.get(key, [0, 0])[1] + e_ok,
            ]
            a_ok = sum(p.label == "supports" for p in agree)
            d_ok = sum(p.label == "refutes" for p in disagree)
            for i, v in enumerate((len(agree), a_ok, len(disagree), d_ok)):
                pooled[key][i] += v
            reader = ""
            if stance is not None and spoke:
                read = stance.classify([(p.question, p.evidence) for p, _ in spoke])
                ok = sum(r.label == p.label for (p, _), r in zip(spoke, read, strict=True))
                on_agree = [
                    r.label == p.label
                    for (p, c), r in zip(spoke, read, strict=True)
                    if c == "agrees"
                ]
                reader = f"{ok}/{len(spoke)} (on agrees: {sum(on_agree)}/{len(on_agree)})"
            print(
                f"| {name} | {side} | {len(pairs)} | {len(agree)} ({a_ok}) | "
                f"{len(disagree)} ({d_ok}) | {reader} |"
            )
    for key, (a, a_ok, d, d_ok) in pooled.items():
        print(
            f"pooled {key}: agrees right {a_ok}/{a} = {a_ok / max(1, a):.3f}; "
            f"disagrees right {d_ok}/{d} = {d_ok / max(1, d):.3f}; "
            f"other time: gold nei {other.get(key, [0, 0])[1]}/{other.get(key, [0, 0])[0]}"
        )
    every = [sum(pooled[k][i] for k in pooled) for i in range(4)]
    times = [sum(other.get(k, [0, 0])[i] for k in other) for i in range(2)]
    print(
        "every side pooled (compare.py's probabilities): "
        + "; ".join(
            f"agrees, {k}: {v[1]}/{v[0]} = {v[1] / max(1, v[0]):.3f}"
            for k, v in sorted(kinds.items())
        )
        + f"; disagrees: {every[3]}/{every[2]} = {every[3] / max(1, every[2]):.3f}"
        + f"; other time, nei: {times[1]}/{times[0]} = {times[1] / max(1, times[0]):.3f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
