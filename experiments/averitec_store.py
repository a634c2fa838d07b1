"""The AVeriTeC small world: a store corpus from every question-answer pair's answer.

Each record is one evidence page: ``url`` = the answer's ``source_url``, ``text`` = the answer
plus its boolean explanation if any (never the question or the justification), ``title`` empty,
no date (run the pipeline with ``--undated keep``). Answers that cite the same page are joined,
one per line, into one document (a page is one document, as on the web). Answers without a
source URL ("No answer could be found.") have no page and are left out.

    python experiments/averitec_store.py --data "$FACTSEEK_DATA" --split dev --out dev-corpus.jsonl
    factseek index build dev-corpus.jsonl --store averitec-dev-store

The AVeriTeC data is CC BY-NC 4.0: use the corpus for evaluation, never ship it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from factseek.datasets.public import averitec_answer_text
from factseek.runs.evaluate import PAGE_SCHEMES


def corpus(path: Path) -> tuple[list[dict[str, str]], dict[str, Any]]:
    """Store records for every answer of every claim in an AVeriTeC JSON file, and counts."""
    data = json.loads(path.read_text(encoding="utf-8"))
    texts: dict[str, list[str]] = {}
    counts: dict[str, Any] = {"claims": len(data), "answers": 0, "no_url": 0}
    by_label: dict[str, dict[str, int]] = {}  # label -> answers, without a page, "No answer..."
    for claim in data:
        seen = by_label.setdefault(str(claim.get("label")), {"answers": 0, "no_url": 0, "none": 0})
        for q in claim.get("questions") or []:
            for a in q.get("answers") or []:
                counts["answers"] += 1
                seen["answers"] += 1
                url = " ".join(str(a.get("source_url") or "").split())
                text = averitec_answer_text(a)
                seen["none"] += text.startswith("No answer could be found")
                if not url.startswith(PAGE_SCHEMES) or not text:  # as eval pipeline's gold-pages
                    counts["no_url"] += 1
                    seen["no_url"] += 1
                    continue
                page = texts.setdefault(url, [])
                if text not in page:
                    page.append(text)
    records = [{"url": u, "title": "", "text": "\n".join(t)} for u, t in texts.items()]
    counts["documents"] = len(records)
    counts["by_label"] = by_label  # answers per claim label: how many have no page (not in the
    # store) and how many read "No answer could be found." (docs/verdicts.md, gold-pages)
    return records, counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=os.environ.get("FACTSEEK_DATA"))
    ap.add_argument("--split", choices=("dev", "train"), default="dev")
    ap.add_argument("--out", type=Path, required=True, help="JSONL corpus to write")
    args = ap.parse_args(argv)
    if args.data is None:
        ap.error("--data DIR (or FACTSEEK_DATA) is required")
    source = Path(args.data) / "averitec" / f"{args.split}.json"
    if not source.is_file():
        print(f"error: {source} not found", file=sys.stderr)
        return 2
    records, counts = corpus(source)
    with args.out.open("w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(json.dumps(counts), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
