"""Probe: are figure cards worth a reviewer's time? How often is each kind of card on a gold page?

    python experiments/probe_figure_cards.py --run runs/train-figcards \
        --claims "$FACTSEEK_DATA/averitec/train.json"

Figure cards (``summarize.evidence``, rule 5) are candidates the stance model read as taking no
side that give a figure in the question's unit: the question's own figure (within 5%, noted
"this gives ...") or another one ("this says ..."). For an ``eval pipeline`` run over AVeriTeC
(its ``--claims`` file as ``--claims``), this counts the run's cards by kind and how many come
from one of the claim's gold answer pages (the annotators' sources: a proxy for a card worth
reading), beside the cards that take a side. It reads no model; a run of 1,000 claims takes
seconds.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path


def kind(label: str, figures: str) -> str:
    if label != "nei":
        return "takes a side"
    if figures.startswith("this gives"):
        return "figure card: the question's own figure"
    return "figure card: another figure of its unit"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--run", type=Path, required=True, help="an eval pipeline run folder")
    p.add_argument("--claims", type=Path, required=True, help="that run's AVeriTeC claims file")
    args = p.parse_args()

    from factseek.datasets.claims import data_format, with_ids
    from factseek.runs.batch import claim_id
    from factseek.runs.evaluate import load_reports

    gold = {
        claim_id(r.claim): {u for u in r.evidence_urls if u}
        for r in with_ids(data_format("averitec", args.claims).load(args.claims))
    }
    cards: Counter[tuple[str, bool]] = Counter()
    only_figures = questions = claims_with = 0
    reports = load_reports(args.run)
    for cid, report in reports.items():
        pages = gold.get(cid, set())
        claims_with += any(e.stance and e.stance.label == "nei" for e in report.evidence)
        for e in report.evidence:
            cards[(kind(e.stance.label if e.stance else "", e.figures), e.url in pages)] += 1
        for q in report.questions:
            questions += 1
            mine = [e for e in report.evidence if e.question == q.text]
            only_figures += bool(mine) and all(e.stance and e.stance.label == "nei" for e in mine)
    print(f"{args.run}: {len(reports)} claims, {claims_with} with a figure card")
    print(f"questions whose only cards are figure cards: {only_figures} of {questions}")
    print("| card | cards | from a gold page |")
    print("|---|---:|---:|")
    for k in sorted({k for k, _ in cards}, reverse=True):
        n, hit = cards[(k, True)] + cards[(k, False)], cards[(k, True)]
        print(f"| {k} | {n} | {100 * hit / n:.1f}% ({hit}) |")


if __name__ == "__main__":
    main()
