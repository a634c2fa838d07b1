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


# ----------------------------------------------------------------------------- issue 29 group 5


def report_data() -> dict[str, Any]:
    from factseek.types import Claim, Document, FunnelRow, Report, Verdict, to_dict

    return to_dict(
        Report(
            claim=Claim(text="Buses were approved.", id="c1"),
            documents=(Document(url="https://a.example/1", text="Buses."),),
            verdict=Verdict(judged=True, label="true", confidence=0.5),
            funnel=(FunnelRow(stage="search", hits=3, words=10),),
            timings={"search": 0.5},
        )
    )


def one_line_error(r: Any, code: int, *needles: str) -> None:
    assert r.exit_code == code, (r.exit_code, r.output)
    assert r.stderr.startswith("error:") and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "unexpected" not in r.stderr and "Traceback" not in r.output
    for needle in needles:
        assert needle in r.stderr, r.stderr


@pytest.mark.parametrize(
    ("field", "change"),
    [
        ("verdict.confidence", lambda d: d["verdict"].__setitem__("confidence", "x")),
        ("timings.search", lambda d: d["timings"].__setitem__("search", {})),
        ("funnel[0].words", lambda d: d["funnel"][0].__setitem__("words", "x")),
        ("results", lambda d: d.__setitem__("results", None)),
        ("documents[0]", lambda d: d["documents"].__setitem__(0, None)),
        ("verdict.scores.true", lambda d: d["verdict"].__setitem__("scores", {"true": "1"})),
        ("claim.date", lambda d: d["claim"].__setitem__("date", "2023-13-45")),
        (
            "questions[0].source",
            lambda d: d.__setitem__("questions", [{"text": "q", "source": "x"}]),
        ),
        ("verdict.confidence", lambda d: d["verdict"].__setitem__("confidence", float("inf"))),
    ],
)
def test_render_names_the_bad_field_of_a_report(tmp_path: Path, field: str, change: Any) -> None:
    """Reports that parse but have wrong types ended in 'error: unexpected ...'."""
    data = report_data()
    change(data)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    for fmt in ("html", "md", "json"):
        one_line_error(invoke("render", str(path), "--format", fmt), 2, "r.json", field)
    (tmp_path / "b.json").write_text(json.dumps(report_data()))
    one_line_error(invoke("compare-runs", str(path), str(tmp_path / "b.json")), 2, field)


def test_a_valid_report_still_renders(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report_data()))
    r = invoke("render", str(path), "--format", "md")
    assert r.exit_code == 0 and "Buses were approved" in r.output, r.output


@pytest.mark.parametrize(
    "args",
    [
        ("render", "/dev/zero"),
        ("compare-runs", "/dev/zero", "/dev/zero"),
        ("check", "--claims", "/dev/zero"),
    ],
)
def test_endless_files_stop_at_the_input_cap(
    monkeypatch: pytest.MonkeyPatch, store: Path, tmp_path: Path, args: tuple[str, ...]
) -> None:
    """`factseek render /dev/zero` (also compare-runs, check --claims) grew until killed; now a
    device is refused unread (an endless pipe stops at the cap: test_side_files.py)."""
    monkeypatch.setenv("FACTSEEK_MAX_INPUT_BYTES", str(2**20))
    extra = ("--store", str(store), "-q") if args[0] == "check" else ()
    r = invoke(*args, *extra)
    assert r.exit_code == 2 and "unexpected" not in r.stderr, r.output
    assert "/dev/zero is a device, not a" in r.stderr, r.stderr


def test_batch_of_dev_zero_stops(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTSEEK_MAX_INPUT_BYTES", str(2**20))
    r = invoke("batch", "/dev/zero", "--out", str(tmp_path / "run"), "--store", str(store), "-q")
    one_line_error(r, 2, "/dev/zero")


def test_the_input_cap_is_an_option_and_an_environment_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report_data()))
    size = path.stat().st_size
    one_line_error(
        invoke("--max-input-bytes", str(size - 1), "render", str(path)), 2, "input limit"
    )
    assert invoke("--max-input-bytes", str(size), "render", str(path)).exit_code == 0
    monkeypatch.setenv("FACTSEEK_MAX_INPUT_BYTES", "100")
    one_line_error(invoke("render", str(path)), 2, "100 bytes")
    monkeypatch.setenv("FACTSEEK_MAX_INPUT_BYTES", "lots")
    one_line_error(invoke("render", str(path)), 2, "FACTSEEK_MAX_INPUT_BYTES")


def test_a_file_name_too_long_is_one_line(tmp_path: Path) -> None:
    long = str(tmp_path / ("x" * 300))
    one_line_error(invoke("index", "verify", "--store", long), 2, "too long")
    one_line_error(invoke("render", long + ".json"), 2, "too long")
    one_line_error(invoke("compare-runs", long, long), 2, "too long")


def test_threads_too_large_is_a_usage_error(tmp_path: Path) -> None:
    """`--threads 99999999999999999999` reached torch as an OverflowError; now click refuses it
    before any data is read (the original needed a training run to reproduce)."""
    for cmd in (("judge", "train"), ("stance", "train")):
        r = invoke(*cmd, "--threads", "99999999999999999999", "--data", "x", "--out", "y")
        assert r.exit_code == 2, r.output
        assert "--threads" in r.output and "Overflow" not in r.output


def test_judge_predict_on_a_folder_is_one_line(tmp_path: Path) -> None:
    r = invoke(
        "judge", "predict", "--model", str(tmp_path), "--data", "..", "--out", str(tmp_path / "o")
    )
    one_line_error(r, 2, "folder")


def test_compare_runs_on_non_utf8_jsonl(tmp_path: Path) -> None:
    a = tmp_path / "a.jsonl"
    a.write_bytes(json.dumps(report_data()).encode() + b"\n\xff\xfe{bad}\n")
    (tmp_path / "b.json").write_text(json.dumps(report_data()))
    one_line_error(
        invoke("compare-runs", str(a), str(tmp_path / "b.json")), 2, "a.jsonl:2", "UTF-8"
    )


def test_index_search_into_a_closed_pipe_exits_0_quietly(tmp_path: Path) -> None:
    """`factseek index search ... -k 5000 | head -1` ended in BrokenPipeError, exit 1."""
    import subprocess
    import sys

    rows = [
        {**DOC, "url": f"https://a.example/{i}", "text": f"Buses were approved {i}."}
        for i in range(1500)
    ]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    build_store([tmp_path / "d.jsonl"], tmp_path / "s")
    cmd = [sys.executable, "-m", "factseek", "index", "search", "buses approved",
           "--store", str(tmp_path / "s"), "-k", "5000", "--json", "--no-site-filter"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # like `head -1`
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0, err
    assert first.startswith(b"{") and err == b"", err
