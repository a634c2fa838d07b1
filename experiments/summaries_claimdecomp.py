"""The extractive-summary check in docs/passages.md: passages and summaries on real articles.

    python experiments/summaries_claimdecomp.py --data "$FACTSEEK_DATA" [--claims 60]

For the first N ClaimDecomp dev claims (``claimdecomp/dev.jsonl`` under ``--data``, default
``$FACTSEEK_DATA``; docs/data.md), the PolitiFact article (``full_article``, paragraphs joined by
blank lines) is the one document; the queries are the claim and its rule-based subquestions.
Prints the CPU time per claim of ``select_passages`` and of ``ExtractiveSummarizer``, how many
summaries are relevant, and whether every quoted sentence equals the article's text at its
offsets. A qualitative check, not a score: no gold summary is compared.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from factseek.datasets import data_root
from factseek.decompose.rules import RuleDecomposer
from factseek.passages import select_passages
from factseek.summarize.extractive import ExtractiveSummarizer
from factseek.types import Claim, Document


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--data",
        type=Path,
        default=data_root(),
        help="folder of the public data sets (docs/data.md); default $FACTSEEK_DATA",
    )
    ap.add_argument("--claims", type=int, default=60, help="the first N claims of the file")
    args = ap.parse_args()
    path = (args.data or Path("(FACTSEEK_DATA not set)")) / "claimdecomp" / "dev.jsonl"
    if not path.is_file():
        print(f"skipped: {path} not found (docs/data.md says where to get ClaimDecomp)")
        return 0
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if r.get("full_article")][: args.claims]
    decomposer, summarizer = RuleDecomposer(), ExtractiveSummarizer()
    decomposer.decompose(Claim(text="Warm-up claim about a bridge."))  # load spaCy untimed
    t_pass = t_sum = 0.0
    relevant = sentences = exact = 0
    for r in rows:
        article = r["full_article"]
        text = "\n\n".join(article) if isinstance(article, list) else str(article)
        doc = Document(url=r.get("url") or f"claimdecomp:{r['example_id']}", text=text)
        claim = Claim(text=r["claim"], speaker=r.get("person"))
        questions = decomposer.decompose(claim)
        c = time.process_time()
        passages = select_passages([doc], [q.text for q in questions])
        t_pass += time.process_time() - c
        c = time.process_time()
        summaries = summarizer.summarize(claim, questions, passages)
        t_sum += time.process_time() - c
        for s in summaries:
            relevant += s.relevant
            for sent in s.sentences or ():
                sentences += 1
                if sent.start_char is not None:
                    exact += text[sent.start_char : sent.end_char] == sent.text
    n = len(rows)
    print(
        f"{n} claims: select_passages {1000 * t_pass / n:.1f} ms/claim, summarizer "
        f"{1000 * t_sum / n:.1f} ms/claim (CPU); {relevant} of {n} summaries relevant; "
        f"{exact} of {sentences} quoted sentences equal the article at their offsets"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
