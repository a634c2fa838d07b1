import json

import pytest

from factseek.datasets.fever import (
    evidence_groups,
    group_split,
    load_fever_dev,
    split_claims,
)
from factseek.datasets.retrieval import load_retrieval
from factseek.errors import DataError


def _write(folder, claims, evidence):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "claims.jsonl").write_text("".join(json.dumps(c) + "\n" for c in claims))
    (folder / "evidence.jsonl").write_text("".join(json.dumps(e) + "\n" for e in evidence))
    return folder


@pytest.fixture
def fever(tmp_path):
    evidence = [{"id": f"e{i}", "text": f"Evidence sentence number {i} ."} for i in range(6)]
    claims = [
        {
            "id": "c1",
            "claim": '"""Quoted"" title is a film."',
            "label": "SUPPORTS",
            "evidence": ["e0"],
        },
        {"id": "c2", "claim": "Second claim.", "label": "REFUTES", "evidence": ["e0", "e1"]},
        {"id": "c3", "claim": "Third claim.", "label": "SUPPORTS", "evidence": ["e2"]},
        {"id": "c4", "claim": "No info.", "label": "NOT ENOUGH INFO", "evidence": []},
        {"id": "c5", "claim": "Missing evidence.", "label": "SUPPORTS", "evidence": ["zz"]},
        {"id": "c6", "claim": "Sixth claim.", "label": "REFUTES", "evidence": ["e1", "e3"]},
    ]
    fmt = tmp_path / "fmt"
    fmt.mkdir()
    rows = [
        {
            "gold_evidence": [{"text": "A gold sentence."}],
            "retrieved_evidence": [{"text": "A retrieved sentence."}, {"text": "A gold sentence."}],
        },
        {"gold_evidence": [], "retrieved_evidence": [{"text": "Evidence sentence number 2 ."}]},
    ]
    (fmt / "dev.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return _write(tmp_path / "fever", claims, evidence), fmt


def test_loader_cleans_quotes_drops_nei_and_adds_distractors(fever):
    folder, fmt = fever
    data = load_fever_dev(folder, fmt)
    assert [c.id for c in data.claims] == ["c1", "c2", "c3", "c6"]
    assert data.claims[0].text == '"Quoted" title is a film.'
    assert data.dropped == {"not enough info": 1, "evidence not found": 1}
    texts = sorted(d.text for d in data.distractors)
    assert texts == ["A gold sentence.", "A retrieved sentence."]  # evidence duplicate left out
    assert all(d.id.startswith("fmt-") for d in data.distractors)
    again = load_fever_dev(folder, fmt)
    assert again == data  # deterministic


def test_retrieval_format_fever_dev(fever):
    folder, fmt = fever
    r = load_retrieval(folder, fmt, format="fever-dev")
    assert len(r.corpus) == 6 + 2
    assert {c.id: c.relevant for c in r.claims}["c2"] == ("e0", "e1")


def test_groups_follow_shared_evidence():
    groups = evidence_groups([("a", ["x"]), ("b", ["y"]), ("c", ["x", "z"]), ("d", ["z", "y"]), ("e", ["w"])])  # fmt: skip
    assert groups == {"a": "a", "b": "a", "c": "a", "d": "a", "e": "e"}


def test_group_split_never_puts_one_evidence_on_both_sides(tmp_path):
    import random

    rng = random.Random(3)
    evidence = [{"id": f"e{i}", "text": f"text {i}"} for i in range(300)]
    claims = [
        {
            "id": f"c{i}",
            "claim": f"claim {i}",
            "label": "SUPPORTS",
            "evidence": [f"e{rng.randrange(300)}" for _ in range(rng.choice([1, 1, 2]))],
        }
        for i in range(500)
    ]
    data = load_fever_dev(_write(tmp_path / "f", claims, evidence))
    sides = group_split(data.claims)
    where: dict[str, set[str]] = {}
    for c in data.claims:
        for e in c.evidence:
            where.setdefault(e, set()).add(sides[c.id])
    assert all(len(s) == 1 for s in where.values())
    counts = {s: sum(1 for v in sides.values() if v == s) for s in ("train", "validation", "test")}
    assert all(n > 0 for n in counts.values())
    # A claim's side does not depend on the order of the others.
    assert group_split(list(reversed(data.claims))) == sides
    assert len(split_claims(data.claims, "test")) == counts["test"]


def test_bad_lines_name_file_and_line(tmp_path):
    folder = _write(
        tmp_path / "f", [{"id": "c1", "claim": "x", "label": "MAYBE", "evidence": []}], []
    )
    with pytest.raises(DataError, match=r"claims.jsonl:1: label must be"):
        load_fever_dev(folder)
