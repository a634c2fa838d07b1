"""Training pairs for a reader of the edit scorer's judge, from the judge's own pools
(docs/rewrite-model.md, "Readers tried as the judge's").

For the claims ``--start`` to ``--stop`` of a pools file (``probe_rewrite_judge_pools.py``, FEVER
dev's train side), each SUPPORTS / REFUTES claim with its evidence text (its label) and with up to
``--negatives`` of the documents the judge's reader would read (the pool's top 10 by the fused
rank: MiniLM cosine and the claim's BM25 rank) that are neither its evidence nor a near-copy of
it (``rewrite_near_copies.near_copy``) as ``nei``. With ``--teacher MODEL`` instead (e.g.
``mpnet``): every claim with each of the 10 documents the reader reads, labelled by the
teacher's most likely reading (its readings kept in the stance readings cache are not read
again), to teach a small reader what the teacher reads. Writes the JSON Lines that
``factseek stance train --extra`` reads:

    python experiments/probe_rewrite_judge_pools.py --claims "$FACTSEEK_DATA/fever_dev" \
        --corpus "$FACTSEEK_DATA/fever_train" --corpus "$FACTSEEK_DATA/fool_me_twice" \
        --split train --out pools-trainside.jsonl
    python experiments/judge_reader_pairs.py --data "$FACTSEEK_DATA" --pools pools-trainside.jsonl \
        --start 3421 --stop 6842 --out reader-pairs.jsonl
    factseek stance train --sources fever --extra reader-pairs.jsonl --init src/factseek/models/stance \
        --out judge-reader --epochs 1 --no-balance --question-share 0 --threads 2

Take the pairs from claims the edit scorer does not fit on (``train-edits --limit`` the rest), so
its judge learns how far to trust the reader on claims the reader never saw.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from factseek.datasets.fever import load_fever_dev
from factseek.files import cache_root
from probe_rewrite_judge_reader import Pools
from rewrite_near_copies import near_copy, normal

LABELS = {"SUPPORTS": "supports", "REFUTES": "refutes"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--pools", type=Path, required=True)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--stop", type=int, default=None)
    ap.add_argument("--negatives", type=int, default=3)
    ap.add_argument("--teacher", default="", help="label the read documents with this model")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    label = {c.id: c.label for c in load_fever_dev(a.data / "fever_dev").claims}
    pools = Pools(a.data)
    text, claim = pools.text, pools.claim
    with a.pools.open() as f:
        rows = [json.loads(line) for line in f][a.start : a.stop]
    vectors = pools.claim_vectors(rows)
    teacher = None
    if a.teacher:
        from factseek.stance import load_stance

        teacher = load_stance(a.teacher, readings=cache_root())
    counts = dict.fromkeys(("supports", "refutes", "nei"), 0)
    with a.out.open("w") as f:
        for r, v in zip(rows, vectors, strict=True):
            lab = LABELS.get(label.get(r["id"], ""))
            if lab is None and teacher is None:
                continue
            rel = set(r["relevant"])
            golds = [normal(text[x]) for x in rel]
            read, _ = pools.read_order(r, v, 10)
            if teacher is not None:
                got = teacher.classify([(claim[r["id"]], text[x]) for x in read])
                for x, o in zip(read, got, strict=True):
                    y = max(o.probs, key=o.probs.get)
                    f.write(json.dumps({"question": claim[r["id"]], "evidence": text[x], "label": y}) + "\n")  # fmt: skip
                    counts[y] += 1
                continue
            negatives = [
                x for x in read
                if x not in rel and not any(near_copy(normal(text[x]), g) for g in golds)
            ][: a.negatives]  # fmt: skip
            for x, y in [*((x, lab) for x in sorted(rel)), *((x, "nei") for x in negatives)]:
                f.write(json.dumps({"question": claim[r["id"]], "evidence": text[x], "label": y}) + "\n")  # fmt: skip
                counts[y] += 1
    print(f"{len(rows)} claims -> {a.out}: {counts}")


if __name__ == "__main__":
    main()
