"""How much of the FEVER corpus's headroom is ordering a claim's evidence among near-copies of it
(docs/rewrite-model.md, "Near-copies of the evidence").

A FEVER dev evidence text is the text of one claim's evidence set, so two claims made from the
same Wikipedia sentence have two evidence texts that begin alike or hold one another ("S." and
"S. T."), and only the claim's own is relevant. This script finds, for every claim of one side,
the corpus documents that are *near-copies* of its relevant ones (after lower-casing and keeping
letters and digits: one text inside the other, or the same first 60 characters), prints how
common they are, and writes the side twice in the ``jsonl`` retrieval format, with the same
corpus, so ``rewrite eval`` and ``rewrite bfs`` measure a rewriter and the BFS oracle both ways:

- ``OUT/corpus.jsonl``: every document (id, text) of the ``fever-dev`` corpus, as it is searched;
- ``OUT/claims-exact.jsonl``: the side's claims with their relevant documents (the usual rows);
- ``OUT/claims-near.jsonl``: the same claims, a near-copy of a relevant document relevant too.

    python experiments/rewrite_near_copies.py --data "$FACTSEEK_DATA" --split test --out near
    factseek rewrite eval --model mpnet --claims near/claims-near.jsonl --corpus near/corpus.jsonl \
        --format jsonl --split all --threads 2 --out near/eval-near     # and claims-exact.jsonl
    factseek rewrite bfs --claims near/claims-near.jsonl --corpus near/corpus.jsonl --format jsonl \
        --split all --workers 2 --out near/bfs-near && factseek rewrite summarize near/bfs-near

The rewriter never reads the judgements, so its queries are the same both ways; only what counts
as found changes. Writes nothing into the repository; the data stay under OUT.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np

from factseek.datasets.retrieval import load_retrieval
from factseek.rewrite.environment.env import BM25Retriever
from factseek.rewrite.splits import select_split

PREFIX = 60  # characters two texts must share at their start to be near-copies
CANDIDATES = 30  # BM25 neighbours of a relevant text looked at


def normal(text: str) -> str:
    """Lower-case letters and digits, single spaces."""
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def near_copy(a: str, b: str) -> bool:
    """Whether two normalised texts are near-copies: one inside the other or one start."""
    return a in b or b in a or a[:PREFIX] == b[:PREFIX]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="data root ($FACTSEEK_DATA)")
    ap.add_argument("--split", default="test", help="side of FEVER dev's group split")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    d = a.data
    data = load_retrieval(d / "fever_dev", [d / "fever_train", d / "fool_me_twice"], "fever-dev")
    claims = select_split(data.claims, a.split)
    docs = data.pairs()
    text = dict(docs)
    bm25 = BM25Retriever.from_docs(docs)
    a.out.mkdir(parents=True, exist_ok=True)
    with (a.out / "corpus.jsonl").open("w") as f:
        for doc_id, t in docs:
            f.write(json.dumps({"id": doc_id, "text": t}) + "\n")
    relevant = sorted({r for c in claims for r in c.relevant})
    found = bm25.rank([text[r] for r in relevant], CANDIDATES)
    copies: dict[str, list[str]] = {}
    for r, ranking in zip(relevant, found, strict=True):
        mine = normal(text[r])
        copies[r] = [x for x in ranking if x != r and near_copy(mine, normal(text[x]))]
    n_near = []
    with (a.out / "claims-exact.jsonl").open("w") as fe, (a.out / "claims-near.jsonl").open("w") as fn:  # fmt: skip
        for c in claims:
            near = sorted({x for r in c.relevant for x in copies[r]} - set(c.relevant))
            n_near.append(len(near))
            row = {"id": c.id, "claim": c.text}
            fe.write(json.dumps({**row, "relevant": list(c.relevant)}) + "\n")
            fn.write(json.dumps({**row, "relevant": [*c.relevant, *near]}) + "\n")
    n = np.asarray(n_near)
    print(f"{len(claims)} {a.split} claims, {len(docs):,} documents")
    print(f"  claims whose evidence has a near-copy in the corpus: {np.mean(n > 0):.1%}")
    print(f"  near-copies per claim: mean {n.mean():.2f}, median {np.median(n):.0f}, max {n.max()}")
    print(f"wrote {a.out}/corpus.jsonl, claims-exact.jsonl, claims-near.jsonl")


if __name__ == "__main__":
    main()
