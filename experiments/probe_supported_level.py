"""Probe: the "supported" abstention level, chosen on train claims, judged on a dev run.

    python experiments/probe_supported_level.py --train-run runs/train-2000-now \
        --train-claims train-0-2000.json [--dev-run runs/dev-mpnet \
        --dev-claims "$FACTSEEK_DATA/averitec/dev.json"] [--rules RULES.json] \
        [--levels 0.4,0.45,0.5,0.55,0.6]

For every level, the verdicts of the train run are judged with the rules' grid point and
feature sets (the shipped ``mpnet`` rules by default) and their maps **fitted by 5-fold
cross-validation on the train run** (``judge.fit_rules.cross_validate``; refuted and conflicting
keep the rules' own levels, "supported" gets the level tried): how often each label was right,
on what share of the claims, and the calibration error of the committed verdicts. With
``--dev-run`` the same rules, maps fitted on every train claim, judge the dev run too (to
report, not to choose), and both runs are judged with the rules' own maps as well. It reads no model: the reports' cards keep their stance.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--train-run", type=Path, required=True)
    p.add_argument("--train-claims", type=Path, required=True)
    p.add_argument("--dev-run", type=Path, default=None)
    p.add_argument("--dev-claims", type=Path, default=None)
    p.add_argument("--rules", type=Path, default=None, help="a rules file (default: mpnet's)")
    p.add_argument("--levels", default="0.4,0.45,0.5,0.55,0.6,0.65")
    p.add_argument("--folds", type=int, default=5)
    args = p.parse_args()

    from factseek.datasets.claims import data_format, with_ids
    from factseek.judge.fit_rules import (
        RuleItem,
        _calibrated,
        _decide,
        cross_validate,
        raw_verdicts,
        summarize,
    )
    from factseek.judge.rules import load_rules
    from factseek.runs.batch import claim_id
    from factseek.runs.evaluate import load_reports

    def items(run: Path, claims: Path) -> list[RuleItem]:
        reports = load_reports(run)
        rows = with_ids(data_format("averitec", claims).load(claims))
        return [
            RuleItem(
                gold=str(r.label),
                claim=r.claim,
                questions=reports[claim_id(r.claim)].questions,
                evidence=reports[claim_id(r.claim)].evidence,
            )
            for r in rows
            if r.label is not None and claim_id(r.claim) in reports
        ]

    rules = load_rules(args.rules) if args.rules else load_rules("default", stance="mpnet")
    sets = {label: [k for k in m if k not in ("a", "b")] for label, m in rules.calibration.items()}
    train = items(args.train_run, args.train_claims)
    raw = raw_verdicts(train, rules)
    dev = items(args.dev_run, args.dev_claims) if args.dev_run and args.dev_claims else []
    dev_raw = raw_verdicts(dev, rules) if dev else []
    maps = _calibrated(raw, train, range(len(train)), sets)
    print(
        f"rules: decide {rules.decide}, weak {rules.weak}, genre {rules.genre_weight}, "
        f"{rules.combine}; features {sets}; train {len(train)} claims, dev {len(dev)}"
    )

    def cells(stats: dict) -> str:
        return (
            "; ".join(
                f"{label} {100 * stats['precision'].get(label, 0):.1f}% of {100 * stats['share'][label]:.1f}%"
                for label in ("refuted", "supported")
            )
            + f"; ECE {stats['ece']:.3f}"
        )

    for level in (float(x) for x in args.levels.split(",")):
        levels = dict(rules.abstain) | {"supported": level}
        cv = summarize(train, cross_validate(train, raw, levels, args.folds, sets))
        line = f"supported >= {level:.2f}: train (cross-validated) {cells(cv)}"
        if dev:
            pred = [_decide(r, maps, levels) for r in dev_raw]
            line += f" | dev {cells(summarize(dev, pred))}"
        print(line)
        own = [_decide(r, rules.calibration, levels) for r in raw]
        line = f"  the rules' own maps: train {cells(summarize(train, own))}"
        if dev:
            pred = [_decide(r, rules.calibration, levels) for r in dev_raw]
            line += f" | dev {cells(summarize(dev, pred))}"
        print(line)


if __name__ == "__main__":
    main()
