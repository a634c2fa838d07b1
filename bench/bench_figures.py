"""Figures compared (`summarize/compare.py`) on gold real-world pairs: how often it speaks, and
how often it is right, beside the stance reader on the same pairs.

For every (claim or question, evidence, gold label) pair of the real-world sources
(Check-COVID, WiCE, LIAR-PLUS, AVeriTeC train and dev Boolean answers; `stance/realworld.py`),
the comparison says `agrees`, `disagrees` or nothing. Printed per source and side: pairs, how
many it spoke on, and of those how often "agrees" was a gold `supports` and "disagrees" a gold
`refutes` (nei and not-supported pairs count as wrong for both). `--model` adds the stance
model's own accuracy on the pairs the comparison spoke on (the peer it would overrule).
The last lines pool every side (compare.py's `AGREE_DATED_RIGHT`, `AGREE_RIGHT`,
`DISAGREE_RIGHT`, `OTHER_TIME_RIGHT`) and, for "agrees", the sides the shipped readers never
trained or were tuned on (every test side, all of AVeriTeC) beside the reader on the same pairs.

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


#: The shipped readers never trained or were tuned on these (docs/stance.md, Training data):
#: every test side, and AVeriTeC, whose terms keep it out of the shipped models.
UNSEEN = ("averitec", "averitec-dev")

RIGHT = {"agrees": "supports", "disagrees": "refutes", "other-time": "nei"}


def _share(rows: Sequence[tuple[str, bool]], result: str) -> str:
    got = [ok for r, ok in rows if r == result]
    return f"{sum(got)}/{len(got)} = {sum(got) / max(1, len(got)):.3f}"


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
    # every pair the comparison spoke on: (its result, right, dated, unseen, the reader right)
    spoke: list[tuple[str, bool, bool, bool, bool | None]] = []
    pairs_seen = 0
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
            pairs_seen += len(pairs)
            found = [(p, c) for p in pairs if (c := compare(p.question, p.evidence)) is not None]
            read = (
                stance.classify([(p.question, p.evidence) for p, _ in found])
                if stance is not None and found
                else [None] * len(found)
            )
            unseen = side == "test" or name in UNSEEN
            rows = [
                (c.result, p.label == RIGHT[c.result], c.dated, unseen,
                 None if r is None else r.label == p.label)
                for (p, c), r in zip(found, read, strict=True)
            ]  # fmt: skip
            spoke.extend(rows)
            cells = [
                f"{sum(r == res for r, *_ in rows)} ({sum(r == res and ok for r, ok, *_ in rows)})"
                for res in ("agrees", "disagrees")
            ]
            reader = ""
            if stance is not None and rows:
                on_agree = [rd for r, *_, rd in rows if r == "agrees"]
                reader = (
                    f"{sum(bool(rd) for *_, rd in rows)}/{len(rows)} "
                    f"(on agrees: {sum(bool(x) for x in on_agree)}/{len(on_agree)})"
                )
            print(f"| {name} | {side} | {len(pairs)} | {cells[0]} | {cells[1]} | {reader} |")
    dated = [(r, ok) for r, ok, d, *_ in spoke if r == "agrees" and d]
    undated = [(r, ok) for r, ok, d, *_ in spoke if r == "agrees" and not d]
    every = [(r, ok) for r, ok, *_ in spoke]
    print(
        f"spoke on {len(spoke)} of {pairs_seen} pairs; every side pooled (compare.py's "
        f"probabilities): agrees, dated: {_share(dated, 'agrees')}; agrees, undated: "
        f"{_share(undated, 'agrees')}; disagrees: {_share(every, 'disagrees')}; "
        f"other time, nei: {_share(every, 'other-time')}"
    )
    agreed = [(ok, rd) for r, ok, _, unseen, rd in spoke if r == "agrees" and unseen]
    line = f"agrees on sides the shipped readers never saw: right {sum(ok for ok, _ in agreed)}/{len(agreed)}"
    if stance is not None:
        line += f"; the reader right on the same pairs: {sum(bool(rd) for _, rd in agreed)}/{len(agreed)}"
    print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
