"""Make the ``fever_dev/`` folder (docs/data.md) from the official FEVER release.

    python experiments/prepare_fever_dev.py --claims shared_task_dev.jsonl --wiki wiki-pages/ \\
        --out "$FACTSEEK_DATA/fever_dev"

Inputs, as fever.ai publishes them: the labelled development claims (``shared_task_dev.jsonl``:
``id``, ``label``, ``claim``, ``evidence`` = a list of evidence sets, each a list of
``[annotation_id, evidence_id, page, sentence]``) and the Wikipedia pages dump (``wiki-pages/``,
JSONL files whose pages have ``id`` and ``lines``: one ``"N\\tsentence\\t..."`` line per sentence).

Output (``factseek.datasets.fever`` reads it): ``claims.jsonl`` with ``id`` ("fever-dev-" + the
FEVER id), ``claim``, ``label`` (SUPPORTS or REFUTES; NOT ENOUGH INFO claims are left out and
counted) and ``evidence`` (ids into ``evidence.jsonl``), and ``evidence.jsonl`` with ``id``
("e" + the first 10 hex digits of the text's SHA-1) and ``text``: the sentences of one evidence set
in the order given, joined by a space. An evidence set whose sentences are not all in the dump is
left out; a claim left with no evidence is left out too; both are counted. Deterministic: claims
in file order, evidence texts in first-use order.

Two passes over the inputs, memory for the referenced sentences only. Every count is printed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

LABELS = ("SUPPORTS", "REFUTES")


def _jsonl(path: Path) -> Iterator[dict]:
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except ValueError:
                    raise SystemExit(f"{path}:{n}: not valid JSON") from None


def _sets(claim: dict) -> list[list[tuple[str, int]]]:
    """The claim's evidence sets as (page, sentence) lists, without duplicates, in order."""
    out: list[list[tuple[str, int]]] = []
    for group in claim.get("evidence") or []:
        refs = [(str(e[2]), int(e[3])) for e in group if len(e) >= 4 and e[2] is not None]
        if refs and refs not in out:
            out.append(refs)
    return out


def _wiki_sentences(wiki: Path, wanted: set[tuple[str, int]]) -> dict[tuple[str, int], str]:
    pages = {p for p, _ in wanted}
    found: dict[tuple[str, int], str] = {}
    files = sorted(wiki.glob("*.jsonl")) if wiki.is_dir() else [wiki]
    for path in files:
        for page in _jsonl(path):
            if page.get("id") not in pages:
                continue
            for line in str(page.get("lines", "")).split("\n"):
                num, _, rest = line.partition("\t")
                if num.isdigit() and (page["id"], int(num)) in wanted:
                    found[(page["id"], int(num))] = rest.split("\t", 1)[0].strip()
    return found


def prepare(claims_path: Path, wiki: Path, out: Path) -> dict[str, int]:
    """Write ``out/claims.jsonl`` and ``out/evidence.jsonl``; return the counts."""
    claims = [c for c in _jsonl(claims_path)]
    wanted = {ref for c in claims if c.get("label") in LABELS for s in _sets(c) for ref in s}
    sentences = _wiki_sentences(wiki, wanted)
    counts = {"claims in": len(claims), "not enough info": 0, "evidence sets missing text": 0}
    counts |= {"claims without evidence text": 0, "claims out": 0, "evidence texts": 0}
    evidence: dict[str, str] = {}  # text -> id
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "claims.jsonl", "w", encoding="utf-8") as f:
        for c in claims:
            if c.get("label") not in LABELS:
                counts["not enough info"] += 1
                continue
            ids = []
            for refs in _sets(c):
                if not all(r in sentences and sentences[r] for r in refs):
                    counts["evidence sets missing text"] += 1
                    continue
                text = " ".join(sentences[r] for r in refs)
                eid = evidence.setdefault(text, "e" + hashlib.sha1(text.encode()).hexdigest()[:10])
                if eid not in ids:
                    ids.append(eid)
            if not ids:
                counts["claims without evidence text"] += 1
                continue
            record = {"id": f"fever-dev-{c['id']}", "claim": c["claim"], "label": c["label"]}
            f.write(json.dumps({**record, "evidence": ids}, ensure_ascii=False) + "\n")
            counts["claims out"] += 1
    with open(out / "evidence.jsonl", "w", encoding="utf-8") as f:
        for text, eid in evidence.items():
            f.write(json.dumps({"id": eid, "text": text}, ensure_ascii=False) + "\n")
    counts["evidence texts"] = len(evidence)
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--claims", type=Path, required=True, help="FEVER shared_task_dev.jsonl")
    ap.add_argument("--wiki", type=Path, required=True, help="the wiki-pages/ folder (or one file)")
    ap.add_argument("--out", type=Path, required=True, help="the fever_dev/ folder to write")
    args = ap.parse_args()
    for name, n in prepare(args.claims, args.wiki, args.out).items():
        print(f"{name}: {n:,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
