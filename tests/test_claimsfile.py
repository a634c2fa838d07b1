"""The one claims format: each field optional or required as documented, bad lines as file:line,
and every command that reads claims reading it."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factseek.cli import app
from factseek.datasets.claims import data_format, load_claims, sniff_format
from factseek.datasets.claimsfile import FIELDS, read_claims_file
from factseek.datasets.retrieval import load_retrieval
from factseek.errors import DataError, InputError

runner = CliRunner()


def write(path: Path, *lines: object) -> Path:
    """One JSON line per object; strings are written as they are (for broken lines)."""
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines),
        encoding="utf-8",
    )
    return path


FULL = {
    "claim": "The council approved 4 new buses in March.",
    "id": "c1",
    "date": "2023-06-01",
    "speaker": "Ann Ames",
    "venue": "a council meeting",
    "label": "half-true",
    "relevant": ["d1", 7],
    "questions": ["Did the council approve buses?"],
}


def test_every_documented_field_is_read(tmp_path):
    (r,) = read_claims_file(write(tmp_path / "c.jsonl", FULL))
    assert r.claim.text == FULL["claim"]
    assert r.claim.id == "c1"
    assert r.claim.date == dt.date(2023, 6, 1)
    assert (r.claim.speaker, r.claim.venue) == ("Ann Ames", "a council meeting")
    assert r.label == "half-true"
    assert r.relevant == ("d1", "7")
    assert r.questions == ("Did the council approve buses?",)
    assert r.line == 1
    assert set(FIELDS) == set(FULL)


def test_only_the_claim_is_required_and_text_or_query_may_name_it(tmp_path):
    path = write(
        tmp_path / "c.jsonl",
        {"claim": "one"},
        "",
        {"text": "two", "id": 5},
        {"query": "three", "date": None, "speaker": None},
        {"claim": "four", "text": "four"},  # the same text twice is not ambiguous
    )
    rows = read_claims_file(path)
    assert [(r.claim.text, r.claim.id, r.line) for r in rows] == [
        ("one", None, 1),
        ("two", "5", 3),
        ("three", None, 4),
        ("four", None, 5),
    ]
    assert all(r.label is None and r.relevant is None and r.questions == () for r in rows)
    assert all(r.claim.date is None and r.claim.speaker is None for r in rows)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{broken", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ({"id": "x"}, "missing field 'claim'"),
        ({"claim": "   "}, "the claim is empty"),
        ({"claim": 42}, "'claim' must be a string"),
        ({"claim": "a", "text": "b"}, "not several"),
        ({"claim": "x" * 2001}, "the limit is 2000"),
        ({"claim": "a", "date": "01/06/2023"}, "is not YYYY-MM-DD"),
        ({"claim": "a", "date": "2023-02-30"}, "is not YYYY-MM-DD"),
        ({"claim": "a", "date": 20230601}, "'date' must be a YYYY-MM-DD string"),
        ({"claim": "a", "speaker": ["x"]}, "'speaker' must be a string"),
        ({"claim": "a", "id": ""}, "'id' is empty"),
        ({"claim": "a", "id": True}, "'id' must be a string or an integer"),
        ({"claim": "a", "relevant": "d1"}, "'relevant' must be a list"),
        ({"claim": "a", "questions": [1]}, "'questions' must be a list of strings"),
        ({"claim": "a", "label": 3}, "'label' must be a string"),
    ],
)
def test_a_bad_line_is_named_by_file_and_line(tmp_path, line, message):
    path = write(tmp_path / "claims.jsonl", {"claim": "fine"}, line)
    with pytest.raises(DataError) as e:
        read_claims_file(path)
    assert str(e.value).startswith(f"{path}:2: ")
    assert message in str(e.value)


def test_repeated_ids_and_required_fields(tmp_path):
    path = write(tmp_path / "c.jsonl", {"claim": "a", "id": "x"}, {"claim": "b", "id": "x"})
    with pytest.raises(DataError, match=r"c\.jsonl:2: id 'x' repeats line 1"):
        read_claims_file(path)
    path = write(tmp_path / "r.jsonl", {"claim": "a", "id": "x", "relevant": []}, {"claim": "b"})
    with pytest.raises(DataError, match=r"r\.jsonl:2: missing field 'id' \(required here\)"):
        read_claims_file(path, require=("id", "relevant"))
    assert len(read_claims_file(path)) == 2  # optional when not required


def test_missing_file_and_bad_encoding(tmp_path):
    with pytest.raises(InputError, match="claims file not found"):
        read_claims_file(tmp_path / "nope.jsonl")
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes('{"claim": "caf\xe9"}\n'.encode("latin-1"))
    with pytest.raises(DataError, match="not UTF-8"):
        read_claims_file(bad)


# ----------------------------------------------------------------------------- the loaders on top


def test_judge_loader_reads_claims_files_and_infers_the_label_set(tmp_path):
    pf = write(tmp_path / "pf.jsonl", {"claim": "a", "label": "Pants on Fire!"}, {"text": "b"})
    assert sniff_format(pf) == "claims"
    assert data_format("auto", pf).labels.name == "politifact"
    rows = load_claims(pf)
    assert [(r.claim.text, r.label, r.claim.id) for r in rows] == [
        ("a", "pants-fire", "line-1"),
        ("b", None, "line-2"),
    ]
    av = write(tmp_path / "av.jsonl", {"claim": "a", "label": "Refuted"}, {"claim": "b"})
    assert data_format("claims", av).labels.name == "averitec"
    assert load_claims(av, "claims")[0].label == "refuted"
    mixed = write(
        tmp_path / "mixed.jsonl",
        {"claim": "a", "label": "true"},
        {"claim": "b", "label": "half-true"},
        {"claim": "c", "label": "refuted"},
    )
    with pytest.raises(DataError, match=r"mixed\.jsonl:3: the labels do not all belong"):
        load_claims(mixed)


def test_rewrite_loader_reads_claims_files_and_the_stores_jsonl(tmp_path):
    claims = write(
        tmp_path / "claims.jsonl",
        {"id": "q1", "claim": "cats purr loudly", "relevant": ["https://a.example/cats"]},
        {"id": "q2", "text": "dogs bark", "relevant": ["d2"], "date": "2020-01-01"},
    )
    corpus = write(
        tmp_path / "docs.jsonl",  # the store's input: url, title, text, published; no id
        {"url": "https://a.example/cats", "title": "Cats", "text": "Cats purr.", "published": ""},
        {"id": "d2", "url": "https://b.example/dogs", "text": "Dogs bark."},
    )
    data = load_retrieval(claims, corpus, format="jsonl")
    assert [(c.id, c.relevant) for c in data.claims] == [
        ("q1", ("https://a.example/cats",)),
        ("q2", ("d2",)),
    ]
    assert data.pairs() == [("https://a.example/cats", "Cats Cats purr."), ("d2", "Dogs bark.")]
    no_relevant = write(tmp_path / "bad.jsonl", {"id": "q1", "claim": "cats"})
    with pytest.raises(DataError, match=r"bad\.jsonl:1: missing field 'relevant'"):
        load_retrieval(no_relevant, corpus, format="jsonl")
    bad_corpus = write(tmp_path / "badc.jsonl", {"text": "no id, no url"})
    with pytest.raises(DataError, match=r"badc\.jsonl:1: corpus lines need an id \(or a url\)"):
        load_retrieval(claims, bad_corpus, format="jsonl")


def test_eval_decompose_reads_a_claims_file_with_questions(tmp_path, monkeypatch):
    import numpy as np

    import factseek.ml.encode
    from factseek.ml.encode import FunctionEncoder

    vocab = ["bus", "council", "march", "approve"]
    enc = FunctionEncoder(
        lambda ts: np.array([[t.lower().count(w) + 1e-6 for w in vocab] for t in ts]),
        dim=len(vocab),
        name="bag",
    )
    monkeypatch.setattr(factseek.ml.encode, "encoder_from_name", lambda *a, **k: enc)
    data = write(tmp_path / "gold.jsonl", FULL, {"claim": "No questions here."})
    r = runner.invoke(app, ["eval", "decompose", "--data", str(data), "--format", "claims"])
    assert r.exit_code == 0, r.output
    assert "claims=1 gold=1" in r.output  # the line without questions has nothing to recall


def test_the_example_in_docs_formats_md_reads_as_documented(tmp_path):
    import re

    doc = Path(__file__).resolve().parents[1] / "docs" / "formats.md"
    (block,) = re.findall(r"```jsonl\n(.*?)```", doc.read_text(encoding="utf-8"), flags=re.S)
    path = tmp_path / "example.jsonl"
    path.write_text(block, encoding="utf-8")
    rows = read_claims_file(path)
    assert [r.claim.id for r in rows] == ["c1", "c2", None, "q7"]
    assert rows[0].claim.date == dt.date(2023, 6, 1) and rows[0].claim.speaker == "Ann Ames"
    assert rows[2].questions and rows[3].relevant == ("d12", "d40")
    assert [r.label for r in load_claims(path)] == [None, "false", None, None]
    # every field the docs' table lists is one the reader knows
    table = re.findall(r"^\| `(\w+)` \|", doc.read_text(encoding="utf-8"), flags=re.M)
    assert set(table) >= set(FIELDS)
