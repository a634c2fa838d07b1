"""Probe: how often is a stance reading right when the card's figure is not the question's?

    python experiments/probe_figure_notes.py --data "$FACTSEEK_DATA" [--model mpnet]
        [--sources checkcovid,wice,averitec-dev,liarplus] [--max-pairs 300]

An evidence card that states a figure in the question's unit but none within 5% of the
question's carries a note for the reviewer (``summarize.figures.figure_note``, docs/verdicts.md
"Evidence cards", 7). This reads the validation and test sides of the real-world sources
(statement form, ``--max-pairs`` seeded pairs per source and side) with the model as it ships
(calibration map and thresholds) and prints, for its ``supports`` and its ``refutes`` readings,
how often they were right (the side's own labels; on WiCE, "supported" or not) among the pairs
whose evidence would carry the note, the pairs whose question states a figure that the evidence
repeats (apart: those whose evidence repeats it only for another thing, ``summarize.measures``,
"Evidence cards", 8), and the pairs whose question states no figure. About 3 minutes for ``mpnet`` on 2 cores.

With ``--run RUN`` (an ``eval pipeline`` run over AVeriTeC, its ``--claims`` file as
``--claims``) it also counts the run's cards by note and stance, and how often its verdicts were
right when a card they cite carries the second note (a refuting card that repeats the question's
figure) and when none does. It reads no model then: ``--sources ""`` skips the pairs.
"""

from __future__ import annotations

import argparse
import os
from collections import Counter
from pathlib import Path


def run_notes(run: Path, claims: Path | None) -> None:
    """The run's cards by note and stance; its verdicts' precision with and without a cited
    card that repeats the question's figure yet reads as refuting."""
    from factseek.datasets.claims import data_format, with_ids
    from factseek.runs.batch import claim_id
    from factseek.runs.evaluate import load_reports

    if claims is None or not claims.is_file():
        print("skipped --run: give its claims file with --claims")
        return
    gold = {
        claim_id(r.claim): r.label for r in with_ids(data_format("averitec", claims).load(claims))
    }
    cards: Counter[tuple[str, str]] = Counter()
    verdicts: Counter[tuple[str, bool, bool]] = Counter()
    for cid, report in load_reports(run).items():
        for e in report.evidence:
            note = e.figures.split(" ")[1] if e.figures else "no note"
            cards[(note, e.stance.label if e.stance else "")] += 1
        v = report.verdict
        if cid not in gold or not v.judged:
            continue
        cited = set(v.evidence_ids)
        flagged = any(
            e.id in cited and e.figures.startswith("this repeats") for e in report.evidence
        )
        said = "abstained" if v.abstained else v.label
        verdicts[(said, flagged, gold[cid] == v.label)] += 1
    print(f"\n{run}: cards by note (says: figure differs; repeats: repeated, read as refuting)")
    for (note, label), n in sorted(cards.items()):
        print(f"  {note}, {label}: {n}")
    print(
        "verdicts: right / given, with a cited card that repeats the figure yet refutes, and without"
    )
    for said in sorted({k[0] for k in verdicts}):
        cells = []
        for flagged in (True, False):
            ok, bad = verdicts[(said, flagged, True)], verdicts[(said, flagged, False)]
            cells.append(f"{ok} / {ok + bad}")
        print(f"  {said}: {cells[0]} with, {cells[1]} without")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=os.environ.get("FACTSEEK_DATA"))
    p.add_argument("--model", default="mpnet", help="a shipped stance model's name or a folder")
    p.add_argument("--sources", default="checkcovid,wice,averitec-dev,liarplus")
    p.add_argument("--max-pairs", type=int, default=300, help="per source and side")
    p.add_argument("--run", type=Path, default=None, help="an eval pipeline run folder")
    p.add_argument("--claims", type=Path, default=None, help="that run's AVeriTeC claims file")
    args = p.parse_args()
    if args.run is not None:
        run_notes(args.run, args.claims)
    if not args.sources:
        return
    if args.data is None or not Path(args.data).is_dir():
        print("skipped: no data (pass --data DIR or set FACTSEEK_DATA)")
        return

    from factseek.stance import engine_for_many, load_stance
    from factseek.stance.data import build_pairs, parse_sources, per_source
    from factseek.stance.realworld import scoring
    from factseek.summarize.figures import figure_note, figures, same_figure
    from factseek.summarize.measures import elsewhere

    names = parse_sources(args.sources)
    model = load_stance(args.model, engine=engine_for_many())
    sides = build_pairs(args.data, names)
    pairs = [q for side in ("validation", "test") for q in per_source(sides[side], names, args.max_pairs)]  # fmt: skip
    print(f"reading {len(pairs)} pairs with {model.name} ...", flush=True)
    read = model.classify([(q.question, q.evidence) for q in pairs])
    tally: Counter[tuple[str, str, bool]] = Counter()
    for q, r in zip(pairs, read, strict=True):
        if r.label == "nei":
            continue
        asked = figures(q.question)
        if figure_note(q.question, q.evidence):
            kind = "figure differs (noted)"
        elif asked and same_figure(asked, figures(q.evidence)):
            other = elsewhere(q.question, q.evidence)
            kind = "figure repeated, said of another thing" if other else "figure repeated"
        elif asked:
            kind = "figure asked, no figure of its unit"
        else:
            kind = "no figure asked"
        gold = q.label
        if scoring(q.source) == "supported-vs-not":  # WiCE: supported or not
            right = (r.label == "supports") == (gold == "supports")
        else:
            right = r.label == gold
        tally[(kind, r.label, right)] += 1
    print(f"\n{model.name}: how often its readings were right, by what the evidence's figures say")
    print("| evidence | supports: right / readings | refutes: right / readings |")
    print("|---|---:|---:|")
    for kind in (
        "figure differs (noted)",
        "figure repeated",
        "figure repeated, said of another thing",
        "figure asked, no figure of its unit",
        "no figure asked",
    ):
        cells = []
        for label in ("supports", "refutes"):
            ok, n = tally[(kind, label, True)], tally[(kind, label, True)] + tally[(kind, label, False)]  # fmt: skip
            cells.append(f"{100 * ok / n:.0f}% ({ok} / {n})" if n else "-")
        print(f"| {kind} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
