"""Probe: what the rules' answers alone tell a trained 4-way judge (AVeriTeC), in particular
about the two small labels ("not enough evidence", "conflicting evidence").

    python experiments/probe_answers_judge.py --train-run runs/train-2000-things \
        --train-claims train-0-2000.json --dev-run runs/dev-things \
        --dev-claims "$FACTSEEK_DATA/averitec/dev.json" [--rules mpnet]

Reads the reports of two ``eval pipeline`` runs (no model: the cards keep their stance), answers
each claim's questions again with the verdict rules (``judge.verdict.answer_questions``; the
leaning verdict without abstention) and makes 27 features of a claim's answers: the share of its
questions answered yes / no / conflicting / unknown by reason, the claim's own answer, the
largest and mean support and refutation masses, whether some question has both above 0.4, the
leaning verdict and its calibrated confidence, and how many cards there are and how many
support or refute. A multinomial logistic regression (scikit-learn) on the train run's claims,
for each class weighting ``(n / count) ** balance`` and penalty: 5-fold cross-validated accuracy
and macro-F1 on train, then the same fitted on all of train and scored on dev, with the labels it
gives and per-label F1. Used for docs/verdicts.md, "The answers as a judge's only features".
Fitted on AVeriTeC (CC BY-NC): a measurement, nothing here ships.
"""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np


def features(report: Any, rules: Any) -> list[float]:
    from factseek.judge.verdict import (
        NO_EVIDENCE,
        NO_SIDE,
        TOO_WEAK,
        aggregate,
        answer_questions,
        question_masses,
    )
    from factseek.labels import AVERITEC

    answers = answer_questions(report.questions, report.evidence, rules)
    lean = aggregate(
        report.claim, answers, report.evidence, judge="probe", rules=replace(rules, abstain={})
    )
    kinds: Counter[str] = Counter()
    for a in answers:
        if a.answer != "unknown":
            kinds[a.answer] += 1
        else:
            why = next(
                (w for w in (NO_EVIDENCE, NO_SIDE, TOO_WEAK) if a.rationale.startswith(w)), ""
            )
            kinds[why or "other"] += 1
    own = next((a.answer for a in answers if a.question == report.claim.text), "")
    masses = [
        question_masses([e for e in report.evidence if e.question == q.text], rules)
        for q in report.questions
    ] or [(0.0, 0.0)]
    sup, ref = np.array([m[0] for m in masses]), np.array([m[1] for m in masses])
    stances = Counter(e.stance.label if e.stance else "" for e in report.evidence)
    n, cards = max(len(answers), 1), max(len(report.evidence), 1)
    return [
        *(
            kinds[k] / n
            for k in ("yes", "no", "conflicting", NO_EVIDENCE, NO_SIDE, TOO_WEAK, "other")
        ),
        *(float(own == k) for k in ("yes", "no", "conflicting", "unknown")),
        sup.max(),
        ref.max(),
        sup.mean(),
        ref.mean(),
        float(((sup > 0.4) & (ref > 0.4)).any()),
        *(float(lean.label == x) for x in AVERITEC.labels),
        lean.confidence or 0.0,
        float(np.log1p(len(report.evidence))),
        stances["supports"] / cards,
        stances["refutes"] / cards,
        float(np.log1p(len(report.questions))),
    ]


def load(run: Path, claims: Path, rules: Any) -> tuple[np.ndarray, np.ndarray]:
    from factseek.datasets.claims import data_format, with_ids
    from factseek.labels import AVERITEC
    from factseek.runs.batch import claim_id
    from factseek.runs.evaluate import load_reports

    gold = {claim_id(c.claim): c.label for c in with_ids(data_format("averitec", claims).load(claims))}  # fmt: skip
    reports = load_reports(run)
    ids = sorted(c for c in reports if c in gold)
    x = np.array([features(reports[c], rules) for c in ids])
    return x, np.array([AVERITEC.labels.index(gold[c]) for c in ids])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--train-run", type=Path, required=True)
    p.add_argument("--train-claims", type=Path, required=True)
    p.add_argument("--dev-run", type=Path, required=True)
    p.add_argument("--dev-claims", type=Path, required=True)
    p.add_argument("--rules", default="mpnet", help="verdict rules: small, mpnet or a file")
    args = p.parse_args()

    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import f1_score
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    from factseek.judge.rules import load_rules
    from factseek.labels import AVERITEC
    from factseek.metrics.veracity import veracity_metrics

    rules = load_rules(args.rules)
    xt, yt = load(args.train_run, args.train_claims, rules)
    xd, yd = load(args.dev_run, args.dev_claims, rules)
    mu, sd = xt.mean(axis=0), xt.std(axis=0) + 1e-8
    xt, xd = (xt - mu) / sd, (xd - mu) / sd
    labels = AVERITEC.labels
    print(f"train {len(yt)} claims {np.bincount(yt, minlength=4).tolist()}, dev {len(yd)} {np.bincount(yd, minlength=4).tolist()} ({', '.join(labels)})")  # fmt: skip

    def score(y: np.ndarray, pred: np.ndarray) -> str:
        m = veracity_metrics([labels[i] for i in y], [labels[i] for i in pred], AVERITEC)
        return f"{100 * m.accuracy:.1f} / {100 * m.macro_f1:.1f}"

    print("| balance | penalty C | train, 5-fold CV: acc / macro-F1 | dev: acc / macro-F1 | dev labels given | dev F1 per label |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for balance in (0.0, 0.5, 1.0):
        counts = np.bincount(yt, minlength=4)
        weight = (len(yt) / counts / 4) ** balance
        for c in (0.1, 1.0):
            model = LogisticRegression(
                C=c, max_iter=2000, class_weight={i: weight[i] for i in range(4)}
            )
            folds = StratifiedKFold(5, shuffle=True, random_state=0)
            cv = cross_val_predict(model, xt, yt, cv=folds)
            pred = model.fit(xt, yt).predict(xd)
            per = f1_score(yd, pred, labels=range(4), average=None, zero_division=0)
            print(
                f"| {balance:g} | {c:g} | {score(yt, cv)} | {score(yd, pred)} | "
                f"{np.bincount(pred, minlength=4).tolist()} | "
                f"{' / '.join(f'{100 * f:.0f}' for f in per)} |"
            )


if __name__ == "__main__":
    main()
