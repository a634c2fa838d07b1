"""Batch robustness (issue 14 cases 3 and 5): ids never escape the output folder, duplicate ids
are an input error, a failing claim is recorded and the batch moves on, and resume repairs a
torn journal line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from factseek.cli import app
from factseek.errors import DataError, InputError
from factseek.runs import batch
from factseek.store import build_store

runner = CliRunner()

DOCS = [
    {
        "url": f"https://news.example/{i}",
        "title": f"Story {i}",
        "published": "2023-01-0" + str(i + 1),
        "text": f"The council approved {i + 2} new buses for the north route in story {i}.",
    }
    for i in range(4)
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("batch-store")
    src = tmp / "docs.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in DOCS), encoding="utf-8")
    build_store([src], tmp / "s")
    return tmp / "s"


def claims_file(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def claim(cid: str | None, n: int = 0) -> dict[str, Any]:
    row: dict[str, Any] = {"text": f"The council approved {n + 2} new buses.", "date": "2023-06-01"}
    if cid is not None:
        row["id"] = cid
    return row


def run(claims: Path, out: Path, store: Path) -> tuple[int, int, int]:
    return batch.run_batch(claims, out, options={"store": store}, progress=False)


def journal_ids(out: Path) -> list[str]:
    return [json.loads(line)["id"] for line in (out / "journal.jsonl").read_text().splitlines()]


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


def test_ids_cannot_write_outside_the_output_folder(store: Path, tmp_path: Path) -> None:
    """Case 3: id '../../x' wrote OUT/reports/../../x.json; an absolute id wrote anywhere."""
    absolute = str(tmp_path / "abs-escape")
    nasty = ["../../x", absolute, "..", ".", "a/b", "a\\b", "con", "\x00nul", "é/../é"]
    out = tmp_path / "deep" / "run"
    claims = claims_file(tmp_path / "claims.jsonl", [claim(c, i) for i, c in enumerate(nasty)])
    before = files_under(tmp_path)
    checked, skipped, failed = run(claims, out, store)
    assert (checked, skipped, failed) == (len(nasty), 0, 0)
    new = files_under(tmp_path) - before
    reports = out.resolve() / "reports"
    assert all(p.resolve().is_relative_to(out.resolve()) for p in new), sorted(new)
    assert len(list(reports.glob("*.json"))) == len(nasty)  # distinct files, none overwritten
    for line in (out / "journal.jsonl").read_text().splitlines():
        rec = json.loads(line)
        path = (out / rec["report"]).resolve()
        assert path.parent == reports and path.exists()
    assert sorted(journal_ids(out)) == sorted(nasty)
    assert not Path(absolute + ".json").exists()


def test_duplicate_ids_are_an_input_error_before_any_work(store: Path, tmp_path: Path) -> None:
    """Case 3: two claims with one id silently overwrote each other."""
    claims = claims_file(tmp_path / "c.jsonl", [claim("a", 0), claim("b", 1), claim("a", 2)])
    with pytest.raises(DataError, match=r"c\.jsonl:3: .*'a'.* line 1"):
        run(claims, tmp_path / "run", store)
    assert not (tmp_path / "run").exists()
    # ids that differ only in case would share a file on macOS and Windows
    claims = claims_file(tmp_path / "d.jsonl", [claim("Bus", 0), claim("bus", 1)])
    with pytest.raises(DataError, match=r"d\.jsonl:2: claim id 'bus' would share a report file"):
        run(claims, tmp_path / "run", store)


def test_a_failing_claim_is_recorded_and_the_batch_moves_on(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Case 5: an unexpected error in one claim aborted the batch on every resume."""
    real = batch.run

    def poisoned(c: Any, parts: Any, config: Any) -> Any:
        if c.id == "poison":
            raise AttributeError("'list' object has no attribute 'strip'")
        return real(c, parts, config)

    monkeypatch.setattr(batch, "run", poisoned)
    claims = claims_file(
        tmp_path / "c.jsonl", [claim("first", 0), claim("poison", 1), claim("last", 2)]
    )
    out = tmp_path / "run"
    assert run(claims, out, store) == (2, 0, 1)
    assert journal_ids(out) == ["first", "last"]
    (err,) = [json.loads(x) for x in (out / "errors.jsonl").read_text().splitlines()]
    assert err["id"] == "poison" and err["line"] == 2 and "AttributeError" in err["error"]
    assert run(claims, out, store) == (0, 2, 1)  # a resume retries it, and still moves on


def test_speaker_list_is_an_input_error_naming_line_and_field(store: Path, tmp_path: Path) -> None:
    """Case 5: ``"speaker": ["x"]`` crashed inside the pipeline on every resume."""
    claims = claims_file(tmp_path / "c.jsonl", [claim("a"), {**claim("b"), "speaker": ["x"]}])
    with pytest.raises(InputError, match=r"c\.jsonl:2: .*speaker"):
        run(claims, tmp_path / "run", store)


def test_resume_repairs_a_torn_last_journal_line(store: Path, tmp_path: Path) -> None:
    """Case 5: a torn last line made the next record invalid and a claim went missing while the
    run reported '0 failed'."""
    claims = claims_file(tmp_path / "c.jsonl", [claim(f"c{i}", i) for i in range(4)])
    out = tmp_path / "run"
    run(claims, out, store)
    lines = (out / "journal.jsonl").read_text().splitlines(keepends=True)
    torn = "".join(lines[:2]) + lines[2][: len(lines[2]) // 2]  # c2 half written, c3 never
    (out / "journal.jsonl").write_text(torn)
    checked, skipped, failed = run(claims, out, store)
    assert (checked, skipped, failed) == (2, 2, 0)
    records = [json.loads(x) for x in (out / "journal.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in records) == ["c0", "c1", "c2", "c3"]  # each once, all valid
    assert run(claims, out, store) == (0, 4, 0)


def test_unwritable_output_folder_is_an_input_error_before_any_work(
    store: Path, tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    claims = claims_file(tmp_path / "c.jsonl", [claim("a")])
    r = runner.invoke(
        app, ["batch", str(claims), "--out", str(blocker / "run"), "--store", str(store), "-q"]
    )
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("error:") and "run" in r.stderr and len(r.stderr.splitlines()) == 1
