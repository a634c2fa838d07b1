"""Probe: supporting cards that give the question's own figure, split by what the figure is
said of (``summarize.measures.elsewhere``), and how often each kind was right.

    python experiments/probe_figure_things.py --run runs/train-2000 --claims train-0-2000.json

Reads the cards of an ``eval pipeline`` run over AVeriTeC-labelled claims (no model: the cards
keep their stance) and, for every card read as supporting whose text gives one of its
question's figures (``summarize.figures.gives_figure``), asks whether the figure is said of
another thing than the question's. A supporting card counts as right when its claim's label is
"Supported" (a subquestion's card is scored by its claim, as ``eval pipeline`` scores
subquestion answers). Prints both groups' counts and rates, and the flagged cards' text and
notes for reading. Used for docs/verdicts.md, "A figure said of another thing".
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from factseek.judge.rules import VerdictRules
    from factseek.types import Report


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--run", type=Path, required=True, help="an eval pipeline run folder")
    p.add_argument("--claims", type=Path, required=True, help="that run's AVeriTeC claims file")
    p.add_argument("--show", type=int, default=40, help="flagged cards to print")
    p.add_argument(
        "--before",
        type=Path,
        help="a run of the same claims made before the rule: also count what changed against it",
    )
    p.add_argument(
        "--rules",
        default="mpnet",
        help="verdict rules both runs are judged by for --before (default: mpnet's shipped)",
    )
    args = p.parse_args()

    from factseek.datasets.claims import data_format, with_ids
    from factseek.runs.batch import claim_id
    from factseek.runs.evaluate import load_reports
    from factseek.summarize.figures import gives_figure
    from factseek.summarize.measures import elsewhere

    gold = {
        claim_id(r.claim): r.label
        for r in with_ids(data_format("averitec", args.claims).load(args.claims))
    }
    reports = load_reports(args.run)
    groups: dict[str, list[bool]] = {"flagged": [], "not flagged": []}
    shown = []
    for cid, report in sorted(reports.items()):
        for e in report.evidence:
            if e.stance is None or e.stance.label != "supports":
                continue
            if not gives_figure(e.question, e.text):
                continue
            ok = gold[cid] == "supported"
            note = elsewhere(e.question, e.text)
            groups["flagged" if note else "not flagged"].append(ok)
            if note:
                shown.append((cid, gold[cid], e.question, e.text, note))
    print(f"{args.run}: {len(reports)} claims; supporting cards that give the question's figure:")
    for name, oks in groups.items():
        rate = f"{100 * sum(oks) / len(oks):.1f}%" if oks else "-"
        print(f"  {name}: {len(oks)} cards, claim supported {rate} ({sum(oks)} of {len(oks)})")
    for cid, label, q, text, note in shown[: args.show]:
        print(f"\n[{cid}, {label}] {q}\n  {text[:300]}\n  -> {note}")
    if args.before:
        from factseek.judge.rules import load_rules

        rules = load_rules(args.rules)  # "small", "mpnet" (the shipped files) or a file
        compare(reports, load_reports(args.before), rules)


def compare(after: dict[str, Report], before: dict[str, Report], rules: VerdictRules) -> None:
    """Cards marked ``figure_of_other`` in ``after``, and the claims whose cards, answers or
    verdict (both runs' cards judged by ``rules``) differ from ``before``'s."""
    from factseek.judge.verdict import aggregate, answer_questions

    marked = [e for r in after.values() for e in r.evidence if e.figure_of_other]
    sup = sum(e.stance is not None and e.stance.label == "supports" for e in marked)
    shared = sorted(set(after) & set(before))

    def judged(r: Report) -> tuple[list[tuple[str, float | None]], tuple[str, float | None]]:
        answers = answer_questions(r.questions, r.evidence, rules)
        v = aggregate(r.claim, answers, r.evidence, judge="probe", rules=rules)
        return [(a.answer, a.confidence) for a in answers], (v.label, v.confidence)

    old = {c: judged(before[c]) for c in shared}
    new = {c: judged(after[c]) for c in shared}
    cards = sum(
        [(e.question, e.text) for e in after[c].evidence]
        != [(e.question, e.text) for e in before[c].evidence]
        for c in shared
    )
    answers = sum(old[c][0] != new[c][0] for c in shared)
    verdicts = sum(old[c][1] != new[c][1] for c in shared)
    print(
        f"\nmarked figure_of_other: {len(marked)} cards ({sup} supporting); of {len(shared)} "
        f"claims in both runs, cards differ for {cards}, answers for {answers}, verdicts for "
        f"{verdicts}"
    )


if __name__ == "__main__":
    main()
