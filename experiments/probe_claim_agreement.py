"""Probe: is a subquestion's card worth more when the stance model reads it the same way
against the claim itself?

    python experiments/probe_claim_agreement.py --run RUN --claims CLAIMS.json [--model mpnet]

Reads the cards of an ``eval pipeline`` run over AVeriTeC-labelled claims. Every card of a
subquestion (not the claim's own question) read as ``supports`` or ``refutes`` is read again by
the stance model against the claim's text (pairs already read come from ``stance.readings``).
Prints, for each side, how often the card's claim has the label the card points to ("Supported"
for a supporting card, "Refuted" for a refuting one) when the claim reading agrees, takes no
side, or disagrees. A card of the claim's own question is its own claim reading, so it is left
out. Then the leaning verdicts (the rules ``--rules`` without abstention): "refuted" and
"supported", committed (confidence at the rules' level) or not, split by whether some card the
verdict cites on its side is read that way against the claim too (a card of the claim's own
question is, by construction). Used for docs/verdicts.md, "Tried, not shipped: the claim's own
reading of a card".
"""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

GROUPS = ("agrees", "takes no side", "disagrees")
SIDE = {"refuted": "refutes", "supported": "supports"}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--run", type=Path, required=True, help="an eval pipeline run folder")
    p.add_argument("--claims", type=Path, required=True, help="that run's AVeriTeC claims file")
    p.add_argument("--model", default="mpnet", help="a stance model's name or folder")
    p.add_argument("--rules", default="mpnet", help="verdict rules: small, mpnet or a file")
    args = p.parse_args()

    from factseek.datasets.claims import data_format, with_ids
    from factseek.files import cache_root
    from factseek.runs.batch import claim_id
    from factseek.runs.evaluate import load_reports
    from factseek.stance import engine_for_many, load_stance

    gold = {claim_id(c.claim): c.label for c in with_ids(data_format("averitec", args.claims).load(args.claims))}  # fmt: skip
    reports = load_reports(args.run)
    cards = []
    for cid, report in sorted(reports.items()):
        for e in report.evidence:
            if cid not in gold or e.question == report.claim.text or e.stance is None:
                continue
            if e.stance.label in ("supports", "refutes"):
                cards.append((gold[cid], report.claim.text, e.stance.label, e.text))
    model = load_stance(args.model, engine=engine_for_many(), readings=cache_root())
    print(f"reading {len(cards)} (claim, card) pairs with {model.name} ...", flush=True)
    read = model.classify([(claim, text) for _, claim, _, text in cards])
    tally: Counter[tuple[str, str, bool]] = Counter()
    opposite = {"supports": "refutes", "refutes": "supports"}
    for (label, _, side, _), r in zip(cards, read, strict=True):
        group = GROUPS[0] if r.label == side else GROUPS[2] if r.label == opposite[side] else GROUPS[1]  # fmt: skip
        tally[(side, group, label == ("supported" if side == "supports" else "refuted"))] += 1
    print(f"\n{args.run}: subquestion cards, right when their claim has the card's side")
    print("| card | " + " | ".join(f"claim reading {g}" for g in GROUPS) + " |")
    print("|---|" + "---:|" * len(GROUPS))
    for side in ("supports", "refutes"):
        cells = []
        for g in GROUPS:
            ok, bad = tally[(side, g, True)], tally[(side, g, False)]
            cells.append(f"{100 * ok / (ok + bad):.0f}% ({ok} / {ok + bad})" if ok + bad else "-")
        print(f"| {side} | " + " | ".join(cells) + " |")
    verdicts(reports, gold, model, args.rules)


def verdicts(reports: dict[str, Any], gold: dict[str, str], model: Any, rules_name: str) -> None:
    """The second table of the module docstring."""
    from factseek.judge.rules import load_rules
    from factseek.judge.verdict import aggregate, answer_questions

    rules = load_rules(rules_name)
    lean = replace(rules, abstain={})
    rows = []
    for cid, r in sorted(reports.items()):
        if cid not in gold:
            continue
        v = aggregate(r.claim, answer_questions(r.questions, r.evidence, rules), r.evidence, judge="probe", rules=lean)  # fmt: skip
        if v.label not in SIDE:
            continue
        by_id = {e.id: e for e in r.evidence}
        cited = [by_id[i] for i in v.evidence_ids if i in by_id]
        cited = [e for e in cited if e.stance is not None and e.stance.label == SIDE[v.label]]
        level = rules.abstain.get(v.label, 0.0)
        rows.append((v.label, (v.confidence or 0.0) >= level, gold[cid] == v.label, r.claim.text, cited))  # fmt: skip
    pairs = sorted({(claim, e.text) for *_, claim, cited in rows for e in cited})
    read = dict(zip(pairs, model.classify(pairs), strict=True))
    tally: Counter[tuple[str, bool, bool, bool]] = Counter()
    for label, committed, right, claim, cited in rows:
        agrees = any(read[(claim, e.text)].label == SIDE[label] for e in cited)
        tally[(label, committed, agrees, right)] += 1
    print(f"\nleaning verdicts ({rules_name} rules, no abstention), right / given")
    print("| verdict | committed, a cited card agrees | committed, none | not committed, a cited card agrees | not committed, none |")  # fmt: skip
    print("|---|---:|---:|---:|---:|")
    for label in SIDE:
        cells = []
        for committed in (True, False):
            for agrees in (True, False):
                ok, bad = tally[(label, committed, agrees, True)], tally[(label, committed, agrees, False)]  # fmt: skip
                cells.append(f"{100 * ok / (ok + bad):.1f}% ({ok} / {ok + bad})" if ok + bad else "-")  # fmt: skip
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
