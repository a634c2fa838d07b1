"""A made-up data set in the shape of FEVER train + FEVER dev + Fool Me Twice (no real text).

``write(root)`` writes ``root/fever_train``, ``root/fever_dev`` (both ``claims.jsonl`` +
``evidence.jsonl``) and ``root/fool_me_twice/dev.jsonl``, with what makes FEVER train unlike
FEVER dev: Penn Treebank brackets (``-LRB-``) in its sentences, NOT ENOUGH INFO claims with no
evidence, a SUPPORTS claim whose evidence is missing, and one sentence that FEVER dev also has
(under another id), so the two folders share a document.
"""

from __future__ import annotations

import json
from pathlib import Path

PLACES = ["Arvale", "Brisk", "Calder", "Dunmore", "Eskholt", "Fenwick", "Garrow", "Holm"]
THINGS = ["bridge", "library", "harbor", "mill", "tower", "market", "school", "chapel"]
SHARED = "The Garrow chapel -LRB- a stone building -RRB- was rebuilt in 1911 ."


def _lines(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def write(root: Path, n_train: int = 48, n_dev: int = 24) -> dict[str, Path]:
    """Write the three folders under ``root``; returns their paths by name."""
    ev_train = [
        {
            "id": f"ft{i:04d}",
            "text": f"The {THINGS[i % 8]} of {PLACES[(i // 8) % 8]} -LRB- built {1850 + i} -RRB-"
            f" stands beside the old road number {i} .",
        }
        for i in range(n_train)
    ] + [{"id": "ftshared", "text": SHARED}]
    claims_train = []
    for i in range(n_train):
        claims_train.append(
            {
                "id": f"fever-train-{i}",
                "claim": f"The {THINGS[i % 8]} of {PLACES[(i // 8) % 8]} was built in {1850 + i}"
                " by the people of the whole county.",
                "label": "SUPPORTS" if i % 3 else "REFUTES",
                "evidence": [f"ft{i:04d}"] + (["ftshared"] if i == 6 else []),
            }
        )
    claims_train.append({"id": "fever-train-nei", "claim": "Nobody knows.",
                         "label": "NOT ENOUGH INFO", "evidence": []})  # fmt: skip
    claims_train.append({"id": "fever-train-lost", "claim": "A lost claim.",
                         "label": "SUPPORTS", "evidence": ["ft-missing"]})  # fmt: skip
    ev_dev = [
        {
            "id": f"e{i:04d}",
            "text": f"The {THINGS[(i + 3) % 8]} in {PLACES[(i + 5) % 8]} opened in the year"
            f" {1920 + i} after a long campaign number {i} .",
        }
        for i in range(n_dev)
    ] + [{"id": "eshared", "text": SHARED.replace("-LRB-", "(").replace("-RRB-", ")")}]
    claims_dev = [
        {
            "id": f"fever-dev-{i}",
            "claim": f"The {THINGS[(i + 3) % 8]} in {PLACES[(i + 5) % 8]} opened in {1920 + i}"
            " after a campaign by the town council.",
            "label": "REFUTES" if i % 4 == 0 else "SUPPORTS",
            "evidence": [f"e{i:04d}"] + (["eshared"] if i == 2 else []),
        }
        for i in range(n_dev)
    ]
    fmt = [
        {
            "gold_evidence": [{"text": f"A {t} by the road was painted in {PLACES[j]} ."}],
            "retrieved_evidence": [{"text": f"The council of {PLACES[j]} met about the {t} ."}],
        }
        for j, t in enumerate(THINGS)
    ]
    paths = {
        "fever_train": root / "fever_train",
        "fever_dev": root / "fever_dev",
        "fool_me_twice": root / "fool_me_twice",
    }
    _lines(paths["fever_train"] / "claims.jsonl", claims_train)
    _lines(paths["fever_train"] / "evidence.jsonl", ev_train)
    _lines(paths["fever_dev"] / "claims.jsonl", claims_dev)
    _lines(paths["fever_dev"] / "evidence.jsonl", ev_dev)
    _lines(paths["fool_me_twice"] / "dev.jsonl", fmt)
    return paths
