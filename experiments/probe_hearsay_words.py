"""Which words of a news body's first supporting card go with its FNC-1 stance: the counts behind
the hearsay rule's word list (``summarize/hearsay.py``; docs/notes/2026-12-07-supported-side.md).

For each sampled headline / body pair of one side of factseek's FNC-1 split, the body's first
card is chosen and read as ``bench/bench_fnc1.py`` does (the default evidence settings, the
hearsay rule off: these counts are its input); when
it supports the headline, every candidate word of ``WORDS`` in its sentence is counted under the
pair's stance (agree, disagree, discuss). A word that comes with disagree and discuss far more
often than with agree marks hearsay; one spread evenly does not.

    python experiments/probe_hearsay_words.py --data "$FACTSEEK_DATA" [--split dev] [--per-stance 100] [--model small]

Prints `skipped: ...` and exits 0 when `fnc1/` is not under the data folder.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

WORDS = re.compile(
    r"\b(?:reportedly|allegedly|purportedly|apparently|rumou?r\w*|unconfirmed|unverified|"
    r"claim(?:s|ed)?|report(?:s|ed)?|said to|according to|appear(?:s|ed)? to|may|might|could|"
    r"possibl\w*|suggest\w*|believed)\b",
    re.IGNORECASE,
)
STANCES = ("agree", "disagree", "discuss")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.environ.get("FACTSEEK_DATA", ""))
    ap.add_argument("--split", default="dev")
    ap.add_argument("--per-stance", type=int, default=100)
    ap.add_argument("--model", default="small")
    args = ap.parse_args(argv)
    folder = Path(args.data) / "fnc1" if args.data else None
    if folder is None or not folder.is_dir():
        print(f"skipped: no fnc1/ under {args.data or '$FACTSEEK_DATA'}")
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from bench_fnc1 import first_card
    from factseek.datasets.fnc1 import load_fnc1, sample
    from factseek.stance import load_stance
    from factseek.summarize.evidence import DEFAULT_EVIDENCE

    cfg = replace(DEFAULT_EVIDENCE, hearsay=False)
    stance = load_stance(args.model)
    pairs = sample(load_fnc1(folder, args.split), args.per_stance, seed=0)
    counts: Counter[tuple[str, str]] = Counter()
    for p in pairs:
        if p.stance not in STANCES:
            continue
        card, _ = first_card(p, stance, cfg)
        if card is None or card.stance.label != "supports":
            continue
        counts[("(supporting cards)", p.stance)] += 1
        for word in {m.group(0).lower() for m in WORDS.finditer(card.text)}:
            counts[(word, p.stance)] += 1
    print(f"FNC-1 {args.split}, {args.model}: words of the first supporting card, by stance")
    print("| word | " + " | ".join(STANCES) + " |\n|---|" + "---:|" * len(STANCES))
    for word in sorted({w for w, _ in counts}):
        print(f"| {word} | " + " | ".join(str(counts[(word, s)]) for s in STANCES) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
