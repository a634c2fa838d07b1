"""Retrieval loaders on tiny files written here."""

from __future__ import annotations

import json

import pytest

from factseek.datasets.retrieval import load_retrieval
from factseek.errors import ConfigError, DataError, InputError


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_generic_jsonl(tmp_path):
    claims = write_jsonl(
        tmp_path / "q.jsonl",
        [
            {"id": "q1", "query": "cats purr", "relevant": ["d1"]},
            {"id": "q2", "claim": "dogs bark", "relevant": ["zz"]},  # not in corpus
        ],
    )
    corpus = write_jsonl(
        tmp_path / "c.jsonl",
        [{"id": "d1", "text": "Cats purr.", "title": "Cats"}, {"id": "d2", "text": "Dogs."}],
    )
    data = load_retrieval(claims, corpus, format="jsonl")
    assert [(c.id, c.text, c.relevant) for c in data.claims] == [("q1", "cats purr", ("d1",))]
    assert data.dropped == {"relevant not in corpus": 1}
    assert data.pairs() == [("d1", "Cats Cats purr."), ("d2", "Dogs.")]
    with pytest.raises(InputError):
        load_retrieval(claims, None, format="jsonl")


def test_fever_style_drops_not_enough_info_and_shares_sentences(tmp_path):
    claims = write_jsonl(
        tmp_path / "f.jsonl",
        [
            {"id": "1", "label": "SUPPORTS", "claim": "A is B .", "evidence_sentence": "A is B ."},
            {"id": "2", "label": "'REFUTES'", "claim": "A is C .", "evidence": "A is B ."},
            {"id": "3", "label": "NOT ENOUGH INFO", "claim": "D .", "evidence": "E ."},
        ],
    )
    data = load_retrieval(claims, format="fever")
    assert [c.id for c in data.claims] == ["1", "2"]
    assert data.claims[0].relevant == data.claims[1].relevant == ("s0",)
    assert [d.text for d in data.corpus] == ["A is B ."]
    assert data.dropped == {"not enough info": 1}


def test_climate_fever(tmp_path):
    def ev(eid, label):
        return {"evidence_id": eid, "evidence_label": label, "evidence": f"sentence {eid}"}

    claims = write_jsonl(
        tmp_path / "cf.jsonl",
        [
            {
                "claim_id": "0",
                "claim": "x",
                "evidences": [ev("a:1", "SUPPORTS"), ev("b:2", "NOT_ENOUGH_INFO")],
            },
            {"claim_id": "1", "claim": "y", "evidences": [ev("b:2", "NOT_ENOUGH_INFO")]},
            {"claim_id": "2", "claim": "z", "evidences": [ev("c:3", "REFUTES")]},
        ],
    )
    data = load_retrieval(claims, format="climate-fever")
    assert [(c.id, c.relevant) for c in data.claims] == [("0", ("a:1",)), ("2", ("c:3",))]
    assert {d.id for d in data.corpus} == {"a:1", "b:2", "c:3"}  # all evidence is searchable
    assert data.dropped == {"no supporting or refuting evidence": 1}


def test_checkthat_layout(tmp_path):
    split = tmp_path / "train"
    split.mkdir()
    (tmp_path / "verified_claims.docs.tsv").write_text(
        "\tvclaim\ttitle\n0\tVaccines are safe.\tVaccine safety\n1\tThe moon is cheese.\tMoon\n",
        encoding="utf-8",
    )
    (split / "tweets.queries.tsv").write_text(
        '\ttweet_content\n1\tvaccines r safe "really"\n2\tno qrels here\n', encoding="utf-8"
    )
    (split / "tweet-vclaim-pairs.qrels").write_text("1\t0\t0\t1\n", encoding="utf-8")
    data = load_retrieval(split, format="checkthat")
    assert [(c.id, c.text, c.relevant) for c in data.claims] == [
        ("1", 'vaccines r safe "really"', ("0",))
    ]
    assert data.corpus[0].text == "Vaccines are safe. Vaccine safety"
    assert data.dropped == {"no qrels": 1}


def test_errors_name_file_and_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "1", "query": "x", "relevant": ["a"]}\nnot json\n', encoding="utf-8")
    corpus = write_jsonl(tmp_path / "c.jsonl", [{"id": "a", "text": "x"}])
    with pytest.raises(DataError, match=r"bad.jsonl:2"):
        load_retrieval(bad, corpus, format="jsonl")
    with pytest.raises(ConfigError, match="choose one of"):
        load_retrieval(bad, corpus, format="nope")
