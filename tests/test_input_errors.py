"""Issue 14 case 8: bad inputs that escaped as unconverted errors. Each must be one line naming
the file and line or the field, exit code 2, and be found before the expensive work starts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from factseek import api
from factseek.cli import app
from factseek.datasets.claims import load_averitec, load_claimdecomp, load_liar
from factseek.datasets.retrieval import load_retrieval
from factseek.errors import DataError, InputError
from factseek.store import build_store

runner = CliRunner()
DEEP = "[" * 100_000 + "]" * 100_000
DOC = {"url": "https://a.example/1", "title": "t", "text": "Buses were approved.", "published": ""}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("input-store")
    (tmp / "d.jsonl").write_text(json.dumps(DOC) + "\n")
    build_store([tmp / "d.jsonl"], tmp / "s")
    return tmp / "s"


def invoke(*args: str) -> Any:
    return runner.invoke(app, list(args))


def one_line_usage_error(r: Any, *needles: str) -> None:
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("error:") and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "unexpected" not in r.stderr and "Traceback" not in r.output
    for needle in needles:
        assert needle in r.stderr, r.stderr


@pytest.fixture
def no_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail if the expensive part starts: the error must come first."""

    def boom(*a: Any, **k: Any) -> Any:
        raise AssertionError("the check ran before the input error was found")

    monkeypatch.setattr(api, "build_parts", boom)


# ----------------------------------------------------------------------------- lone surrogates


def test_lone_surrogate_in_a_batch_field(store: Path, tmp_path: Path, no_check: None) -> None:
    claims = tmp_path / "c.jsonl"
    claims.write_text('{"text": "ok claim"}\n{"text": "bad \\ud800 claim"}\n')
    r = invoke("batch", str(claims), "--out", str(tmp_path / "run"), "--store", str(store), "-q")
    one_line_usage_error(r, "c.jsonl:2", "text", "surrogate")


def test_lone_surrogate_in_a_store_document_is_skipped_with_on_error_skip(tmp_path: Path) -> None:
    src = tmp_path / "d.jsonl"
    src.write_text(json.dumps(DOC) + "\n" + '{"url": "https://a.example/2", "text": "x \\udc80"}\n')
    r = invoke("index", "build", str(src), "--store", str(tmp_path / "s"), "--on-error", "skip")
    assert r.exit_code == 0, r.output
    r = invoke("index", "build", str(src), "--store", str(tmp_path / "s2"), "-q")
    one_line_usage_error(r, "d.jsonl:2", "surrogate")


# ----------------------------------------------------------------------------- deep JSON


def test_deeply_nested_json_is_a_data_error(store: Path, tmp_path: Path, no_check: None) -> None:
    claims = tmp_path / "c.jsonl"
    claims.write_text('{"text": "fine"}\n' + DEEP + "\n")
    r = invoke("batch", str(claims), "--out", str(tmp_path / "run"), "--store", str(store), "-q")
    one_line_usage_error(r, "c.jsonl:2")
    docs = tmp_path / "d.jsonl"
    docs.write_text(DEEP + "\n")
    r = invoke("index", "build", str(docs), "--store", str(tmp_path / "s"), "-q")
    one_line_usage_error(r, "d.jsonl:1")
    with pytest.raises(DataError, match=r"d\.jsonl:1"):
        load_claimdecomp(docs)
    with pytest.raises(DataError, match=r"d\.jsonl:1"):
        load_retrieval(docs, docs, format="jsonl")


# ----------------------------------------------------------------------------- unwritable paths


def test_unwritable_out_is_found_before_the_check(store: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    args = ["check", "Buses were approved.", "--date", "2023-01-01", "--store", str(store), "-q"]
    r = invoke(*args, "--out", str(blocker / "report.md"))
    one_line_usage_error(r, "--out")
    r = invoke(*args, "--out", str(tmp_path))  # a folder
    one_line_usage_error(r, "--out")
    r = invoke(*args, "--record", str(blocker / "bundle"))
    one_line_usage_error(r, "bundle")


def test_unwritable_store_path(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    src = tmp_path / "d.jsonl"
    src.write_text(json.dumps(DOC) + "\n")
    r = invoke("index", "build", str(src), "--store", str(blocker / "s"), "-q")
    one_line_usage_error(r, "store folder")


# ----------------------------------------------------------------------------- field types


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"text": "a claim", "date": 20230101}, "date"),
        ({"text": "a claim", "date": ["2023-01-01"]}, "date"),
        ({"text": "a claim", "speaker": {"name": "x"}}, "speaker"),
        ({"text": "a claim", "venue": 3}, "venue"),
        ({"text": "a claim", "id": ["x"]}, "id"),
    ],
)
def test_non_string_fields_name_the_field(
    store: Path, tmp_path: Path, no_check: None, row: dict[str, Any], field: str
) -> None:
    claims = tmp_path / "c.jsonl"
    claims.write_text(json.dumps(row) + "\n")
    r = invoke("batch", str(claims), "--out", str(tmp_path / "run"), "--store", str(store), "-q")
    one_line_usage_error(r, "c.jsonl:1", field)


def test_api_rejects_non_string_fields() -> None:
    with pytest.raises(InputError, match="speaker"):
        api.make_claim("a claim", speaker=["x"])  # type: ignore[arg-type]
    with pytest.raises(InputError, match="date"):
        api.make_claim("a claim", date=5)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- data sets


def test_averitec_numeric_questions(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text(json.dumps([{"claim": "x", "label": "Supported", "questions": 5}]))
    with pytest.raises(DataError, match="questions"):
        load_averitec(path)


LIAR_ROW = ["1.json", "false", "Says x.", "s", "john-doe", "", "", "", "0", "1", "0", "0", "0", "c"]


def test_liar_infinite_credit_count(tmp_path: Path) -> None:
    row = list(LIAR_ROW)
    row[9] = "inf"
    path = tmp_path / "l.tsv"
    path.write_text("\t".join(row) + "\n")
    with pytest.raises(DataError, match=r"l\.tsv:1: .*credit"):
        load_liar(path)


def test_liar_huge_field(tmp_path: Path) -> None:
    row = list(LIAR_ROW)
    row[13] = "y" * 131_073
    path = tmp_path / "l.tsv"
    path.write_text("\t".join(row) + "\n")
    rows = load_liar(path)  # a long field is data, not an error: kept within the field limit
    assert len(rows) == 1 and rows[0].claim.venue is not None
