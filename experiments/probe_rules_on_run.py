"""Probe: how verdict rules files judge the reports of a run they were not fitted on.

    python experiments/probe_rules_on_run.py --run runs/train-heldout \
        --claims train-1000-2000.json RULES.json [RULES.json ...]

For each rules file (``judge fit-rules`` output, or a shipped ``models/verdict/*.json``), the
rules verdict of every report of an ``eval pipeline`` run over AVeriTeC-labelled claims (its
``--claims`` file as ``--claims``): how often each label was right and on what share of the
claims, and the calibration error of the committed verdicts' confidences (as ``judge
fit-rules`` reports it). It reads no model: the reports' cards keep their stance. Used for the
held-out train check of docs/verdicts.md, table 1c (train claims 1,001-2,000, never fitted on).
"""

from __future__ import annotations

import argparse
from pathlib import Path


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--run", type=Path, required=True, help="an eval pipeline run folder")
    p.add_argument("--claims", type=Path, required=True, help="that run's AVeriTeC claims file")
    p.add_argument("rules", type=Path, nargs="+", help="verdict rules files")
    args = p.parse_args()

    from factseek.datasets.claims import data_format, with_ids
    from factseek.judge.rules import load_rules
    from factseek.judge.verdict import aggregate, answer_questions
    from factseek.metrics.calibration import expected_calibration_error
    from factseek.runs.batch import claim_id
    from factseek.runs.evaluate import load_reports

    gold = {
        claim_id(r.claim): r.label
        for r in with_ids(data_format("averitec", args.claims).load(args.claims))
    }
    reports = load_reports(args.run)
    print(f"{args.run}: {len(reports)} claims")
    for path in args.rules:
        rules = load_rules(path)
        right: dict[str, list[bool]] = {}
        sure: list[tuple[float, bool]] = []
        for cid, report in reports.items():
            answers = answer_questions(report.questions, report.evidence, rules)
            v = aggregate(report.claim, answers, report.evidence, judge="probe", rules=rules)
            ok = gold[cid] == v.label
            right.setdefault(str(v.label), []).append(ok)
            if v.confidence is not None:
                sure.append((v.confidence, ok))
        ece = expected_calibration_error([c for c, _ in sure], [k for _, k in sure]) if sure else 0
        cells = "; ".join(
            f"{label} {100 * sum(v) / len(v):.1f}% of {100 * len(v) / len(reports):.1f}% ({sum(v)} of {len(v)})"
            for label, v in sorted(right.items())
        )
        print(f"{path.name}: {cells}; ECE of committed verdicts {float(ece):.3f}")


if __name__ == "__main__":
    main()
