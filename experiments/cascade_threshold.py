"""Choose the cascade's threshold (``stance.cascade.THRESHOLD``) on claims that are not dev.

Runs the pipeline over the first ``--limit`` claims of a labelled claims file (AVeriTeC *train*,
never dev) with ``mpnet`` reading every pair, while the ``small`` screen reads them too, and
prints, for each threshold, the share of the pairs the cascade would skip, the share of the
skipped pairs ``mpnet`` read as taking a side, and how many skipped pairs were cards of the
read-all run (deciding cards and figure cards). Pairs the cascade always reads (quoted, or
giving the question's figure) are never counted as skipped.

    python experiments/cascade_threshold.py --claims $FACTSEEK_DATA/averitec/train.json \\
        --format averitec --store STORE --limit 300 --out cascade-threshold.json
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from factseek.api import CheckOptions, build_parts, check_config
from factseek.datasets.claims import data_format, with_ids
from factseek.files import cache_root
from factseek.pipeline import run
from factseek.stance import load_stance
from factseek.stance.cascade import CascadeStance, Reads

GRID = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.92, 0.94, 0.96, 0.98)


class Recording(CascadeStance):
    """Reads every pair with both models, returns the strong model's readings (read-all), and
    keeps ``(claim, question, text, always, screen reading, strong reading)`` rows."""

    def __init__(self, screen: Any, strong: Any) -> None:
        super().__init__(screen, strong)
        self.claim = ""
        self.rows: list[dict[str, Any]] = []

    def read(self, pairs: Sequence[tuple[str, str]], always: Sequence[bool] = ()) -> Reads:
        fast = self.screen.classify(pairs)
        strong = self.strong.classify(pairs)
        forced = list(always) or [False] * len(pairs)
        for (q, t), f, s, a in zip(pairs, fast, strong, forced, strict=True):
            self.rows.append(
                {
                    "claim": self.claim,
                    "question": q,
                    "text": t,
                    "always": a,
                    "screen": f.label,
                    "screen_nei": float(f.probs.get("nei", 0.0)),
                    "strong": s.label,
                }
            )
        return Reads(tuple(strong), {self.strong.name: len(pairs)}, 0)


def table(rows: Sequence[dict[str, Any]], cards: set[tuple[str, str, str]]) -> list[dict]:
    out = []
    n = len(rows)
    for t in GRID:
        skipped = [
            r for r in rows if not r["always"] and r["screen"] == "nei" and r["screen_nei"] >= t
        ]
        decides = sum(r["strong"] in ("supports", "refutes") for r in skipped)
        carded = sum((r["claim"], r["question"], r["text"]) in cards for r in skipped)
        claims = {r["claim"] for r in skipped if (r["claim"], r["question"], r["text"]) in cards}
        out.append(
            {
                "threshold": t,
                "pairs": n,
                "skipped": len(skipped),
                "skipped_share": round(len(skipped) / n, 4) if n else None,
                "skipped_deciding": decides,
                "skipped_deciding_share": round(decides / len(skipped), 4) if skipped else None,
                "skipped_cards": carded,
                "claims_with_a_skipped_card": len(claims),
            }
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--claims", type=Path, required=True)
    ap.add_argument("--format", default="averitec")
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--limit", type=int, default=300)
    ap.add_argument("--undated", default="keep")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument(
        "--verdicts",
        default="",
        help="thresholds (comma-separated) to run the cascade at and compare verdicts with",
    )
    args = ap.parse_args()
    spec = data_format(args.format, args.claims)
    rows = with_ids(spec.load(args.claims))[: args.limit]
    options = CheckOptions(
        store=args.store,
        stance="mpnet",
        read_all=True,
        stance_engine="torch",
        cache_dir=cache_root(),
    )
    parts = build_parts(options)
    screen = load_stance("small", engine="torch", readings=cache_root())
    recorder = Recording(screen, parts.stance)
    parts = replace(parts, stance=recorder)
    config = check_config(k=10, undated=args.undated)
    cards: set[tuple[str, str, str]] = set()
    verdicts: list[str] = []
    t0 = time.perf_counter()
    for i, row in enumerate(rows):
        recorder.claim = str(i)
        report = run(row.claim, parts, config)
        cards.update((str(i), e.question, e.text) for e in report.evidence)
        verdicts.append(report.verdict.label)
        if (i + 1) % 25 == 0:
            print(f"{i + 1} claims, {len(recorder.rows)} pairs, {time.perf_counter() - t0:.0f} s")
    gold = [str(r.label) for r in rows]
    compared = []
    for t in [float(x) for x in args.verdicts.split(",") if x.strip()]:
        cascade = CascadeStance(screen, recorder.strong, threshold=t)
        theirs, skipped, read = [], 0, 0
        for row in rows:
            report = run(row.claim, replace(parts, stance=cascade), config)
            theirs.append(report.verdict.label)
            counts = report.usage.get("stance_pairs", {})
            skipped += counts.get("skipped", 0)
            read += counts.get(cascade.strong.name, 0)
        changed = [i for i, (a, b) in enumerate(zip(verdicts, theirs, strict=True)) if a != b]
        compared.append(
            {
                "threshold": t,
                "strong_read": read,
                "skipped": skipped,
                "verdicts_changed": len(changed),
                "changed": [[i, verdicts[i], theirs[i], gold[i]] for i in changed],
                "right_read_all": sum(a == g for a, g in zip(verdicts, gold, strict=True)),
                "right_cascade": sum(a == g for a, g in zip(theirs, gold, strict=True)),
            }
        )
        print(json.dumps({k: v for k, v in compared[-1].items() if k != "changed"}))
    result = {
        "claims": len(rows),
        "verdicts": compared,
        "pairs": len(recorder.rows),
        "always": sum(r["always"] for r in recorder.rows),
        "strong_deciding": sum(r["strong"] != "nei" for r in recorder.rows),
        "table": table(recorder.rows, cards),
    }
    args.out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    with args.out.with_suffix(".rows.jsonl").open("w", encoding="utf-8") as f:
        for r in recorder.rows:
            card = (r["claim"], r["question"], r["text"]) in cards
            f.write(json.dumps({**r, "card": card}) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "table"}))
    print("threshold  skipped  share  mpnet-decides  share  skipped-cards  claims")
    for r in result["table"]:
        print(
            f"{r['threshold']:<9}  {r['skipped']:>7}  {r['skipped_share']:.3f}  "
            f"{r['skipped_deciding']:>13}  {r['skipped_deciding_share'] or 0:.3f}  "
            f"{r['skipped_cards']:>13}  {r['claims_with_a_skipped_card']}"
        )


if __name__ == "__main__":
    main()
