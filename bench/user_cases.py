"""Five claims a new user might check, on a small store of their own: what the verdict says.

Issue 24's targets for "the demo and the five cases": no true claim refuted at confidence 0.7
or more, and the deciding sentence of a question among its cards even when it shares few words
with the question. The demo covers one claim; these five are a second, independent check:
``tests/data/user_cases/`` holds 25 invented local-news pages (reopened bridge, library grant,
school budget, county unemployment, electric buses; a letter, an opinion piece, a blog, two
fact-checks that the constraints remove) and five claims dated after them, three true and two
false (``label``). Written for factseek like the demo; nothing is copied from a data set.

For each stance model named (each is the peer of the others, read on the same store), every
claim is checked as ``factseek check`` would (``api.check``, default settings), and the script
prints the verdict beside the truth, what an abstention leaned to, and the cards of the claim's
own question, then a line per model: true claims refuted at 0.7 or more, false claims supported
at 0.7 or more, verdicts right, abstentions.

``mpnet+cascade`` names mpnet behind the small model's screen (``check --cascade``); each
model's line then says how many pairs each model read.

    python bench/user_cases.py [--stance mpnet,mpnet+cascade,small] [--show-cards]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

CASES = Path(__file__).resolve().parent.parent / "tests" / "data" / "user_cases"


def claims() -> list[dict[str, str]]:
    """The five claims (``id``, ``text``, ``date``, ``label``: supported or refuted)."""
    lines = (CASES / "claims.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def build(store: Path) -> Path:
    """The cases' store at ``store``."""
    from factseek.store import build_store

    build_store([CASES / "docs.jsonl"], store, overwrite=True)
    return store


def check_all(store: Path, stance: str) -> list[tuple[dict[str, str], object]]:
    """Each claim's ``Report`` with ``stance`` (the defaults of ``factseek check`` otherwise;
    ``MODEL+cascade``: ``MODEL`` behind the small model's screen, ``check --cascade``)."""
    from factseek.api import check

    model, _, cascade = stance.partition("+")
    return [
        (c, check(c["text"], date=c["date"], store=store, stance=model, cascade=bool(cascade)))
        for c in claims()
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stance", default="mpnet,small", help="stance models, comma-separated")
    ap.add_argument("--show-cards", action="store_true", help="print every question's cards")
    args = ap.parse_args(argv)
    from factseek.errors import FactseekError

    store = build(Path(tempfile.mkdtemp(prefix="factseek-user-cases-")) / "store")
    for stance in [s.strip() for s in args.stance.split(",") if s.strip()]:
        t0 = time.perf_counter()
        try:
            done = check_all(store, stance)
        except FactseekError as e:  # a model that is not installed: say so, go on
            print(f"\n{stance}: skipped ({e})")
            continue
        seconds = time.perf_counter() - t0
        print(f"\n## stance {stance} ({seconds:.1f} s for {len(done)} claims)\n")
        print("| claim | truth | verdict | confidence | leaned to |")
        print("|---|---|---|---:|---|")
        bad_true = bad_false = right = abstained = 0
        for c, report in done:
            v = report.verdict  # type: ignore[attr-defined]
            lean = ""
            if v.abstained:
                abstained += 1
                words = v.rationale.split("the evidence leans ", 1)
                lean = words[1].split(",", 1)[0] if len(words) > 1 else "nothing"
            conf = "" if v.confidence is None else f"{v.confidence:.2f}"
            print(f"| {c['id']}: {c['text']} | {c['label']} | {v.label} | {conf} | {lean} |")
            sure = v.confidence is not None and v.confidence >= 0.7
            bad_true += c["label"] == "supported" and v.label == "refuted" and sure
            bad_false += c["label"] == "refuted" and v.label == "supported" and sure
            right += v.label == c["label"]
            for e in report.evidence:  # type: ignore[attr-defined]
                if args.show_cards or e.question == report.claim.text:  # type: ignore[attr-defined]
                    s = e.stance
                    read = f"{s.label} {s.probs[s.label]:.2f}" if s is not None else "-"
                    print(f"|  | {e.id} {read} | {e.domain} | | {e.text[:110]} |")
        pairs: dict[str, int] = {}
        for _, report in done:
            for k, n in report.usage.get("stance_pairs", {}).items():  # type: ignore[attr-defined]
                pairs[k] = pairs.get(k, 0) + n
        print(
            f"\n{stance}: pairs read: {', '.join(f'{k} {n}' for k, n in pairs.items())}; "
            f"true claims refuted at 0.7 or more: {bad_true} of 3; false claims "
            f"supported at 0.7 or more: {bad_false} of 2; verdicts right: {right} of "
            f"{len(done)}; abstentions: {abstained}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
