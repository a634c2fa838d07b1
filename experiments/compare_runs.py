"""Claim by claim: where two `eval pipeline` runs of the same claims give different verdicts.

    python experiments/compare_runs.py runs/dev-before runs/dev-after

Prints each claim whose retrieved-evidence verdict differs, with the gold label, and counts of
changes that fixed a verdict, broke one, or moved between two wrong labels.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def verdicts(run: Path) -> dict[str, tuple[str, str]]:
    lines = (run / "predictions-retrieved.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    return {str(r["id"]): (r["label"], r["gold"]) for r in rows}


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    before, after = (verdicts(Path(a)) for a in argv)
    fixed = broke = moved = 0
    print("| claim | gold | before | after |\n|---|---|---|---|")
    for cid in sorted(set(before) & set(after), key=lambda x: (len(x), x)):
        (b, gold), (a, _) = before[cid], after[cid]
        if a == b:
            continue
        print(f"| {cid} | {gold} | {b} | {a} |")
        fixed += a == gold
        broke += b == gold
        moved += a != gold and b != gold
    print(
        f"\nchanged: {fixed + broke + moved}; right now, wrong before: {fixed}; "
        f"wrong now, right before: {broke}; wrong both ways: {moved}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
