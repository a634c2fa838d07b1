"""Risk-coverage of "supported": how often it is right at each share of claims it is given for.

    python experiments/supported_curve.py --run runs/dev-mpnet \
        --claims "$FACTSEEK_DATA/averitec/dev.json" [--rules RULES.json] [--plot curve.png]

Every report of an ``eval pipeline`` run is judged by the rules (the shipped `mpnet` rules by default) *without abstention*; the claims whose evidence leans to "supported"
are ranked by the verdict's confidence, most confident first, and for each cut the table gives
the share of all claims covered and how often "supported" was right there (the gold label).
The rules' own abstention level for "supported" is marked. It reads no model: the reports'
cards keep their stance. With ``--plot`` (matplotlib, the ``train`` extra) the curve is drawn.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--run", type=Path, required=True, help="an eval pipeline run folder")
    p.add_argument("--claims", type=Path, required=True, help="that run's AVeriTeC claims file")
    p.add_argument("--rules", type=Path, default=None, help="a rules file (default: mpnet's)")
    p.add_argument("--plot", type=Path, default=None, help="write the curve as a PNG")
    args = p.parse_args()

    from factseek.datasets.claims import data_format, with_ids
    from factseek.judge.rules import load_rules
    from factseek.judge.verdict import aggregate, answer_questions
    from factseek.runs.batch import claim_id
    from factseek.runs.evaluate import load_reports

    gold = {
        claim_id(r.claim): r.label
        for r in with_ids(data_format("averitec", args.claims).load(args.claims))
    }
    reports = load_reports(args.run)
    rules = load_rules(args.rules) if args.rules else load_rules("default", stance="mpnet")
    leaning: list[tuple[float, bool]] = []
    level = None
    for cid, report in reports.items():
        level = rules.abstain.get("supported")
        free = dataclasses.replace(rules, abstain={})
        answers = answer_questions(report.questions, report.evidence, free)
        v = aggregate(report.claim, answers, report.evidence, judge="curve", rules=free)
        if v.label == "supported" and v.confidence is not None:
            leaning.append((v.confidence, gold[cid] == "supported"))
    leaning.sort(key=lambda x: -x[0])
    n = len(reports)
    print(f"{args.run}: {n} claims; the evidence leans to supported on {len(leaning)}")
    print("| confidence at least | claims | share of all claims | right |\n|---:|---:|---:|---:|")
    points = []
    for k in range(1, len(leaning) + 1):
        right = sum(ok for _, ok in leaning[:k])
        points.append((k / n, right / k, leaning[k - 1][0]))
        if k % 5 == 0 or k == len(leaning):
            mark = (
                " (abstention level)"
                if level is not None
                and leaning[k - 1][0] >= level > (leaning[k][0] if k < len(leaning) else -1)
                else ""
            )
            print(f"| {leaning[k - 1][0]:.3f}{mark} | {k} | {k / n:.1%} | {right / k:.1%} |")
    print(f"the rules' abstention level for supported: {level}")
    if args.plot and points:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5.5, 3.6))
        ax.plot([100 * c for c, _, _ in points], [100 * a for _, a, _ in points], lw=2)
        if level is not None:
            cut = [c for c, _, conf in points if conf >= level]
            if cut:
                ax.axvline(100 * cut[-1], ls="--", c="grey", label=f"abstention level {level}")
                ax.legend(loc="lower left")
        ax.set_xlabel("claims given 'supported' (% of all claims)")
        ax.set_ylabel("right (%)")
        ax.set_title("'supported': right vs coverage, most confident first")
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
        print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
