"""Which evidence selection decides real claims better? Candidates, cards and the rules verdict.

    python bench/bench_evidence_selection.py --data "$FACTSEEK_DATA" --run runs/dev-rules \
        [--variants words,stems,quantities] [--stance small] [--limit N]

``--run`` is a run folder of ``factseek eval pipeline`` over ``averitec/dev.json`` (docs/verdicts.md,
"Reproduce", step 1). Nothing is searched again: for every claim, the run's report gives the
questions and the kept documents, and each variant of ``summarize.evidence`` picks candidates from
them, the stance model reads them (all variants' pairs in one call, so a pair shared by two
variants gets the same reading), cards are selected, and the rules judge (``judge.verdict``)
gives the verdict. Variants are choices of ``EvidenceConfig`` (``VARIANTS``):

- ``words``: relevance on the words alone (the selection before stems and slots; the peer);
- ``stems``: on stemmed words;
- ``quantities``: stems plus quantity slots ("40 percent" matches "18 percent");
- ``typed``: and up to 2 more units per question that state the figure, date or name it asks
  for, sharing one of its rarer words;
- ``quoted``: and up to 4 more that the report's summaries quote;
- ``figures``: and up to 2 more that state the question's own figure ("about $61.8 million" for
  "$62 million"), in a document that shares one of its rarer words (the default).

Per variant: stance pairs per claim (the cost), the share of claims whose candidates / cards hold
a gold answer's page (of the claims with a gold page among the kept documents), the refuting
cards per claim, and the rules verdict's accuracy and macro-F1 against the AVeriTeC labels with
a paired bootstrap 95% CI against ``words``. The numbers are in docs/verdicts.md.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

#: Variant -> what it changes in the run's evidence settings.
VARIANTS: dict[str, dict[str, Any]] = {
    "words": {"terms": "words", "typed": 0, "quoted": 0, "figures": 0},
    "stems": {"terms": "stems", "typed": 0, "quoted": 0, "figures": 0},
    "quantities": {"terms": "quantities", "typed": 0, "quoted": 0, "figures": 0},
    "typed": {"terms": "quantities", "quoted": 0, "typed": 2, "figures": 0},
    "quoted": {"terms": "quantities", "typed": 2, "quoted": 4, "figures": 0},
    "figures": {"terms": "quantities", "typed": 2, "quoted": 4, "figures": 2},
}


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--data",
        type=Path,
        default=os.environ.get("FACTSEEK_DATA"),
        help="data root holding averitec/dev.json (default: $FACTSEEK_DATA)",
    )
    p.add_argument("--run", type=Path, required=True, help="eval pipeline run folder (dev)")
    p.add_argument(
        "--variants", default=",".join(VARIANTS), help="comma-separated: " + ", ".join(VARIANTS)
    )
    p.add_argument(
        "--stance", default="small", help="stance model: 'small', 'mpnet', 'default' or a folder"
    )
    p.add_argument("--limit", type=int, default=0, help="first N claims only (0: all)")
    p.add_argument("--resamples", type=int, default=2000)
    return p.parse_args()


def main() -> int:
    args = _args()
    variants = [v for v in args.variants.split(",") if v]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        print(f"unknown variants {unknown}; choose from {', '.join(VARIANTS)}", file=sys.stderr)
        return 2
    data = Path(args.data or ".") / "averitec" / "dev.json"
    if not data.is_file() or not (args.run / "journal.jsonl").is_file():
        print(f"skipped: needs {data} and a run folder at {args.run}")
        return 0
    from factseek.datasets.claims import data_format, with_ids
    from factseek.runs.batch import claim_id
    from factseek.runs.evaluate import load_reports
    from factseek.stance import load_stance

    df = data_format("averitec", data)
    rows = [r for r in with_ids(df.load(data)) if r.label is not None]
    found = load_reports(args.run)
    items = [(r, found[claim_id(r.claim)]) for r in rows if claim_id(r.claim) in found]
    if args.limit:
        items = items[: args.limit]
    print(f"{len(items)} claims with a report in {args.run}", file=sys.stderr)

    from factseek.stance import engine_for_many

    stance = load_stance(args.stance, engine=engine_for_many())  # torch: the run's engine
    rows_out = measure(items, variants, stance, resamples=args.resamples)
    print(
        "| selection | pairs / claim | gold page among candidates | among cards "
        "| refuting cards / claim | rules verdict acc / F1 "
        f"| Δ acc vs {variants[0]} [95% CI] | Δ F1 vs {variants[0]} [95% CI] "
        "| verdicts (S / R / N / C) | right when S / R |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for row in rows_out:
        delta = {
            k: f"{100 * d[0]:+.1f} [{100 * d[1]:+.1f}, {100 * d[2]:+.1f}]" if d else ""
            for k, d in row["delta"].items()
        }
        short = "/".join(str(row["verdicts"].get(k, 0)) for k in LABELS)
        print(
            f"| {row['variant']} | {row['pairs_per_claim']:.1f} "
            f"| {100 * row['gold_in_candidates']:.1f}% | {100 * row['gold_in_cards']:.1f}% "
            f"| {row['refuting_cards_per_claim']:.2f} "
            f"| {100 * row['accuracy']:.1f} / {100 * row['macro_f1']:.1f} | {delta['accuracy']} "
            f"| {delta['macro_f1']} | {short} | {row['right']} |"
        )
    has_gold = rows_out[0]["claims_with_gold_page"] if rows_out else 0
    print(f"({has_gold} of {len(items)} claims have a gold page among their kept documents)")
    return 0


LABELS = ("supported", "refuted", "not-enough-evidence", "conflicting-evidence")


def measure(
    items: Sequence[tuple[Any, Any]],
    variants: Sequence[str],
    model: Any,
    *,
    resamples: int = 2000,
) -> list[dict[str, Any]]:
    """One row per variant for ``(labelled claim, report)`` items; ``model`` is a stance model.

    All variants' pairs are read in one call, so a pair two variants share gets one reading. The
    first variant is the peer the others' verdict deltas are measured against."""
    from factseek.judge.verdict import StanceRules
    from factseek.labels import AVERITEC
    from factseek.metrics.veracity import paired_test, veracity_metrics
    from factseek.pipeline import quoted_spans
    from factseek.runs.evaluate import PAGE_SCHEMES
    from factseek.summarize.evidence import EvidenceConfig, evidence_candidates, select_evidence
    from factseek.types import from_dict

    picked: dict[str, list[tuple[Any, list[Any]]]] = {}
    for v in variants:
        picked[v] = []
        for _, rep in items:
            base = from_dict(EvidenceConfig, rep.config.get("evidence") or {})
            cfg = replace(base, **VARIANTS[v])
            quoted = quoted_spans(rep.documents, rep.summaries)
            picked[v].append(
                (cfg, evidence_candidates(rep.claim, rep.questions, rep.documents, cfg, quoted))
            )
    pairs = list(
        dict.fromkeys((c.question, c.text) for v in variants for _, cs in picked[v] for c in cs)
    )
    print(f"{len(pairs)} distinct pairs for the stance model", file=sys.stderr)
    reading = dict(zip(pairs, model.classify(pairs), strict=True))
    judge = StanceRules(model.name)
    gold = [r.label for r, _ in items]
    preds: dict[str, list[str]] = {}
    out = []
    for v in variants:
        n_pairs = n_ref = has_gold = in_cands = in_cards = 0
        preds[v] = []
        for (r, rep), (cfg, cands) in zip(items, picked[v], strict=True):
            stances = [reading[(c.question, c.text)] for c in cands]
            cards = select_evidence(rep.claim, cands, stances, rep.documents, cfg)
            verdict = judge.judge(rep.claim, rep.questions, cards)
            preds[v].append(verdict.label if verdict.label in AVERITEC else "not-enough-evidence")
            n_pairs += len(cands)
            n_ref += sum(1 for e in cards if e.stance and e.stance.label == "refutes")
            pages = {u for u in r.evidence_urls if u.startswith(PAGE_SCHEMES)}
            if pages & {d.url for d in rep.documents}:
                has_gold += 1
                in_cands += bool(pages & {rep.documents[c.doc].url for c in cands})
                in_cards += bool(pages & {e.url for e in cards})
        m = veracity_metrics(gold, preds[v], AVERITEC)
        right = []
        for label in ("supported", "refuted"):
            said = [g for g, p in zip(gold, preds[v], strict=True) if p == label]
            right.append(f"{100 * sum(g == label for g in said) / len(said):.1f}%" if said else "-")
        delta: dict[str, tuple[float, float, float] | None] = {"accuracy": None, "macro_f1": None}
        if v != variants[0]:
            for metric in delta:
                t = paired_test(
                    gold,
                    preds[v],
                    preds[variants[0]],
                    AVERITEC,
                    metric=metric,  # type: ignore[arg-type]
                    method="bootstrap",
                    resamples=resamples,
                )
                delta[metric] = (t.delta, t.ci_low, t.ci_high)
        out.append(
            {
                "variant": v,
                "pairs_per_claim": n_pairs / max(len(items), 1),
                "claims_with_gold_page": has_gold,
                "gold_in_candidates": in_cands / max(has_gold, 1),
                "gold_in_cards": in_cards / max(has_gold, 1),
                "refuting_cards_per_claim": n_ref / max(len(items), 1),
                "accuracy": m.accuracy,
                "macro_f1": m.macro_f1,
                "delta": delta,
                "verdicts": dict(Counter(preds[v])),
                "right": " / ".join(right),
                "predictions": preds[v],
            }
        )
    return out


if __name__ == "__main__":
    sys.exit(main())
