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
    with pytest.raises(DataError, match=r"mixed\.jsonl:3: label 'refuted' belongs to the averitec"):
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
    (table,) = re.findall(r"```csv\n(.*?)```", doc.read_text(encoding="utf-8"), flags=re.S)
    path = tmp_path / "example.csv"
    path.write_text(table, encoding="utf-8")
    assert [(r.claim.id, r.claim.speaker, r.label) for r in read_claims_file(path)] == [
        ("c1", "Ann Ames", None),
        ("c2", None, "false"),
    ]
    # every field the docs' table lists is one the reader knows
    table = re.findall(r"^\| `(\w+)` \|", doc.read_text(encoding="utf-8"), flags=re.M)
    assert set(table) >= set(FIELDS)


# ----------------------------------------------------------------------------- CSV and TSV

JSONL_ROWS = [
    {"id": "c1", "claim": "Buses, four of them, were approved.", "date": "2023-06-01",
     "speaker": "Ann Ames", "label": "Supported"},
    {"id": "c2", "claim": "Fares doubled.", "label": "refuted", "relevant": ["d1", "d2"]},
    {"id": "c3", "claim": "The bridge cost 3 million dollars.",
     "questions": ["Did it cost 3 million?", "When was it built?"]},
]  # fmt: skip

CSV_TEXT = (
    "ID,Claim,date,speaker,label,relevant,questions,notes\n"
    'c1,"Buses, four of them, were approved.",2023-06-01,Ann Ames,Supported,,,mine\n'
    "\n"  # a blank line is skipped
    "c2,Fares doubled.,,,refuted,d1|d2,,\n"
    'c3,The bridge cost 3 million dollars.,,,,,"[""Did it cost 3 million?"", ""When was it built?""]",\n'
)


def _as_tsv(text: str) -> str:
    import csv
    import io

    rows = list(csv.reader(io.StringIO(text)))
    return "".join("\t".join(r) + "\n" for r in rows)


def _records(path: Path) -> list[tuple]:
    return [
        (r.line, r.claim.id, r.claim.text, r.claim.date, r.claim.speaker, r.label, r.relevant,
         r.questions)
        for r in read_claims_file(path)
    ]  # fmt: skip


@pytest.mark.parametrize("bom", [False, True])
@pytest.mark.parametrize("kind", ["csv", "tsv", "txt"])
def test_csv_and_tsv_with_a_header_read_as_the_jsonl_does(tmp_path, kind, bom):
    jsonl = _records(write(tmp_path / "c.jsonl", *JSONL_ROWS))
    text = _as_tsv(CSV_TEXT) if kind == "tsv" else CSV_TEXT
    path = tmp_path / f"claims.{kind}"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    rows = _records(path)
    # the same fields; the lines are the table's (row 2 follows a blank line)
    assert [r[1:] for r in rows] == [r[1:] for r in jsonl]
    assert [r[0] for r in rows] == [2, 4, 5]
    assert sniff_format(path) == "claims"
    assert data_format("auto", path).labels.name == "averitec"
    assert [r.label for r in load_claims(path)] == ["supported", "refuted", None]


def test_a_quoted_cell_may_hold_line_breaks_and_text_may_name_the_column(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text('text,id\n"one\ntwo",a\nthree,b\n', encoding="utf-8")
    assert [(r.line, r.claim.text, r.claim.id) for r in read_claims_file(path)] == [
        (2, "one two", "a"),
        (4, "three", "b"),
    ]


def test_every_command_reading_claims_reads_a_csv_file(tmp_path):
    from factseek.runs.batch import gold_labels, read_claims

    claims = tmp_path / "claims.csv"
    claims.write_text("id,claim,relevant,label\nq1,cats purr,d1,true\nq2,dogs bark,d2|d1,\n")
    assert [c.text for _, c in read_claims(claims)] == ["cats purr", "dogs bark"]  # check, batch
    assert gold_labels(claims) == {"q1": "true"}  # batch's summaries
    assert [r.label for r in load_claims(claims)] == ["true", None]  # judge, eval
    corpus = write(
        tmp_path / "docs.jsonl", {"id": "d1", "text": "Cats."}, {"id": "d2", "text": "Dogs."}
    )
    data = load_retrieval(claims, corpus, format="jsonl")  # rewrite
    assert [(c.id, c.relevant) for c in data.claims] == [("q1", ("d1",)), ("q2", ("d2", "d1"))]
    tsv = tmp_path / "claims.tsv"  # a TSV with a claims header is no LIAR file
    tsv.write_text("claim\tlabel\nA claim.\tpants on fire\n")
    assert sniff_format(tsv) == "claims" and load_claims(tsv)[0].label == "pants-fire"


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("id,statement\n1,foo\n", 1, "nor a CSV/TSV header naming a 'claim' or 'text' column (it reads: id, statement)"),
        ("Hello there\n", 1, "not a JSON object, nor a CSV/TSV header"),
        ("id,claim,date\n1,foo\n", 2, "2 cells, but the header (line 1) names 3 columns (id, claim, date)"),
        ("id,claim\n1,a,b\n", 2, "3 cells, but the header (line 1) names 2 columns"),
        ("id,claim,date\n1,foo,2023-06-01\n2,bar,06/01/2023\n", 3, "date '06/01/2023' is not YYYY-MM-DD"),
        ("id,claim,id\n1,foo,2\n", 1, "the header names column 'id' twice"),
        ("id,claim\n1,\n", 2, "the claim is empty (column 'claim')"),
        ('id,claim\n1,"a"b\n', 2, "not valid CSV"),
        ("id,claim,relevant\n1,a,[d1\n", 2, "column 'relevant': not a JSON array"),
        ("id,claim\n1,a\n1,b\n", 3, "id '1' repeats line 2"),
        ("id,claim,label\n1,a,maybe\n", 2, "label 'maybe' is in no label set"),
    ],
)  # fmt: skip
def test_a_bad_table_names_the_line_and_the_field(tmp_path, text, line, message):
    path = tmp_path / "claims.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError) as e:
        read_claims_file(path)
    assert str(e.value).startswith(f"{path}:{line}: "), str(e.value)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_a_cli_command_gives_one_line_for_a_bad_csv_file(tmp_path):
    path = tmp_path / "claims.csv"
    path.write_text("id,claim,date\nc1,Buses,01/06/2023\n", encoding="utf-8")
    r = runner.invoke(app, ["batch", str(path), "--out", str(tmp_path / "run"), "-q"])
    assert r.exit_code == 2
    assert "claims.csv:2: date '01/06/2023' is not YYYY-MM-DD" in r.output
    assert "Traceback" not in r.output and not (tmp_path / "run").exists()


# ----------------------------------------------------------------------------- label sets


@pytest.mark.parametrize("suffix", ["jsonl", "csv"])
def test_a_file_mixing_label_sets_is_refused_naming_both(tmp_path, suffix):
    path = tmp_path / f"mixed.{suffix}"
    if suffix == "jsonl":
        write(path, {"claim": "a", "label": "mostly-true"}, {"claim": "b"},
              {"claim": "c", "label": "supported"})  # fmt: skip
    else:
        path.write_text("claim,label\na,mostly-true\nb,\nc,supported\n", encoding="utf-8")
    want = (
        f"{path}:4: label 'supported' belongs to the averitec label set, but line 2's"
        " 'mostly-true' belongs to politifact: a claims file takes labels of one set"
    )
    if suffix == "jsonl":
        want = want.replace(":4:", ":3:").replace("line 2's", "line 1's")
    with pytest.raises(DataError) as e:
        read_claims_file(path)  # every command reads through it: check, batch, judge, eval
    assert str(e.value) == want
    r = runner.invoke(app, ["batch", str(path), "--out", str(tmp_path / "run"), "-q"])
    assert r.exit_code == 2 and want in r.output.replace("\n", "")
