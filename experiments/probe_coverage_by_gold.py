"""Probe: would better retrieval, or a looser reading of conflicting answers, lift the verdict's coverage?

    python experiments/probe_coverage_by_gold.py --run runs/dev-split \
        --claims "$FACTSEEK_DATA/averitec/dev.json"

Issue 24 asks the default verdict to commit ("refuted" right >= 80%, "supported" >= 60%) on
at least 40% of AVeriTeC dev claims; it commits on about 21%. Two questions, answered from an
``eval pipeline`` run's reports with the shipped verdict rules (or ``--rules``); no model is
read, the cards keep their stance:

1. **Retrieval.** The claims split by where their gold pages (the annotators' sources) got to:
   among the cards that take a side, kept as documents but not carded, not kept, or no gold
   page at all. For each group: how many claims, the share the verdict commits on, and each
   committed label's precision. If claims whose gold page reached the cards committed on 40%
   or more, a retrieval that brought every claim's gold page to its cards would meet the
   target; if not, retrieval is not what holds coverage back.
2. **Conflicting answers.** The verdict leans "conflicting-evidence" when some question has
   both a support and a refutation mass of at least ``weak`` and none is answered no; that
   lean is almost never right. For those claims, the largest margin of one side's mass over
   the other's on a conflicting question, and how often the claim's label is that side's, by
   mass level and margin: whether a margin rule could lean such claims to refuted or supported
   at the target precisions.
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict
from pathlib import Path

SIDE = {"refuted": "refutes", "supported": "supports"}
GROUPS = (
    "a gold page among the cards",
    "a gold page kept, not carded",
    "no gold page kept",
    "no gold page",
)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--run", type=Path, required=True, help="an eval pipeline run folder")
    p.add_argument("--claims", type=Path, required=True, help="that run's AVeriTeC claims file")
    p.add_argument("--rules", default="mpnet", help="verdict rules: a stance name or a file")
    args = p.parse_args()

    from factseek.datasets.claims import data_format, with_ids
    from factseek.judge.rules import load_rules
    from factseek.judge.verdict import aggregate, answer_questions, question_masses
    from factseek.runs.batch import claim_id
    from factseek.runs.evaluate import load_reports

    rules = load_rules(args.rules)
    rows = {
        claim_id(r.claim): r
        for r in with_ids(data_format("averitec", args.claims).load(args.claims))
    }
    reports = load_reports(args.run)
    print(f"{args.run}: {len(reports)} claims; rules {args.rules}")

    groups: dict[str, list[tuple[str, str]]] = defaultdict(list)  # group -> (verdict, gold)
    pool: list[tuple[str, float, float]] = []  # leaning conflicting: (side, its mass, margin), gold
    pool_gold: list[str] = []
    held: Counter[tuple[str, str]] = Counter()  # gold-card claims that abstain: why
    for cid, report in reports.items():
        row = rows[cid]
        answers = answer_questions(report.questions, report.evidence, rules)
        v = aggregate(report.claim, answers, report.evidence, judge="probe", rules=rules)
        gold = {u for u in row.evidence_urls if u}
        carded = {e.url for e in report.evidence if e.stance is not None and e.stance.decides}
        if not gold:
            group = GROUPS[3]
        elif gold & carded:
            group = GROUPS[0]
        elif gold & {d.url for d in report.documents}:
            group = GROUPS[1]
        else:
            group = GROUPS[2]
        groups[group].append((str(v.label) if not v.abstained else "abstained", str(row.label)))
        if group == GROUPS[0] and v.abstained and row.label in SIDE:
            want = SIDE[row.label]
            read = [
                float(e.stance.probs.get(want, 0.0))
                for e in report.evidence
                if e.url in gold and e.stance is not None and e.stance.label == want
            ]
            why = (
                "no gold card reads the claim's side"
                if not read
                else f"a gold card reads the claim's side at {'0.7 or more' if max(read) >= 0.7 else 'under 0.7'}"
            )
            held[(str(row.label), why)] += 1
        if any(a.answer == "no" for a in answers) or not any(
            a.answer == "conflicting" for a in answers
        ):
            continue
        by_question = defaultdict(list)
        for e in report.evidence:
            by_question[e.question].append(e)
        best: tuple[str, float, float] | None = None
        for a in answers:
            if a.answer != "conflicting":
                continue
            s, r = question_masses(by_question[a.question], rules)
            side = ("refuted", r, r - s) if r >= s else ("supported", s, s - r)
            if best is None or side[2] > best[2]:
                best = side
        if best is not None:
            pool.append(best)
            pool_gold.append(str(row.label))

    print("\n1. coverage by where the gold pages got to")
    print("| claims | n | committed | refuted right | supported right | gold labels |")
    print("|---|---:|---:|---:|---:|---|")
    total = sum(len(g) for g in groups.values())
    for name in GROUPS:
        xs = groups.get(name, [])
        if not xs:
            continue
        committed = [(v, g) for v, g in xs if v in ("refuted", "supported")]
        cells = []
        for label in ("refuted", "supported"):
            mine = [g for v, g in committed if v == label]
            right = sum(g == label for g in mine)
            cells.append(
                f"{right} of {len(mine)}" + (f" ({100 * right / len(mine):.0f}%)" if mine else "")
            )
        shares = Counter(g for _, g in xs)
        print(
            f"| {name} | {len(xs)} ({100 * len(xs) / total:.0f}%) | {100 * len(committed) / len(xs):.1f}% "
            f"| {cells[0]} | {cells[1]} | "
            + ", ".join(f"{k} {100 * n / len(xs):.0f}%" for k, n in shares.most_common())
            + " |"
        )

    print("\n1b. refuted or supported claims with a gold page among the cards that abstain")
    for (label, why), n in sorted(held.items()):
        print(f"- {label}: {why}: {n}")

    print(f"\n2. leaning conflicting: {len(pool)} claims, labels {dict(Counter(pool_gold))}")
    print("| side | its mass >= | margin >= | claims | the claim's label is that side |")
    print("|---|---:|---:|---:|---:|")
    for side in ("refuted", "supported"):
        for level in (0.6, 0.7, 0.8, 0.9):
            for margin in (0.0, 0.2, 0.4):
                sel = [
                    g
                    for (s, m, d), g in zip(pool, pool_gold, strict=True)
                    if s == side and m >= level and d >= margin
                ]
                if sel:
                    right = sum(g == side for g in sel)
                    print(
                        f"| {side} | {level} | {margin} | {len(sel)} | {100 * right / len(sel):.1f}% ({right}) |"
                    )


if __name__ == "__main__":
    main()
