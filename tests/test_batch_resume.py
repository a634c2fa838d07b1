"""Issue 29 group 4: resume checks what it skips. A journaled claim whose report is missing,
truncated, not JSON, or of another claim (id or text) runs again and is noted in resume.jsonl;
the summary never drops or mislabels a claim; odd run folders are clean one-line errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factseek.cli import app
from factseek.runs.resume import resume
from factseek.runs.summary import finish_batch
from test_batch_hardening import claim, claims_file, journal_ids, run, store  # noqa: F401

runner = CliRunner()


@pytest.fixture
def done_run(store: Path, tmp_path: Path) -> tuple[Path, Path]:  # noqa: F811
    claims = claims_file(tmp_path / "c.jsonl", [claim(f"c{i}", i) for i in range(3)])
    out = tmp_path / "run"
    assert run(claims, out, store) == (3, 0, 0)
    return claims, out


def reruns(out: Path) -> dict[str, str]:
    path = out / "resume.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return {json.loads(x)["id"]: json.loads(x)["rerun"] for x in lines}


@pytest.mark.parametrize(
    "damage",
    ["missing", "truncated", "not-json", "empty"],
)
def test_a_journaled_claim_without_a_usable_report_runs_again(
    store: Path,  # noqa: F811
    done_run: tuple[Path, Path],
    damage: str,
) -> None:
    """It was counted "already done" forever while the summary said failed."""
    claims, out = done_run
    report = out / "reports" / "c1.json"
    data = report.read_bytes()
    if damage == "missing":
        report.unlink()
    elif damage == "truncated":
        report.write_bytes(data[: len(data) // 2])
    elif damage == "not-json":
        report.write_bytes(b"\x00\xff not json")
    else:
        report.write_bytes(b"")
    assert run(claims, out, store) == (1, 2, 0)
    assert "c1" in reruns(out) and "c1.json" in reruns(out)["c1"]
    assert json.loads(report.read_text())["claim"]["id"] == "c1"
    rows = {r.id: r for r in finish_batch(out)}
    assert rows["c1"].verdict != "failed"
    assert run(claims, out, store) == (0, 3, 0)  # and then it is trusted


def test_a_report_that_is_a_folder_is_a_one_line_error(
    store: Path,  # noqa: F811
    done_run: tuple[Path, Path],
) -> None:
    claims, out = done_run
    (out / "reports" / "c1.json").unlink()
    (out / "reports" / "c1.json").mkdir()
    r = runner.invoke(app, ["batch", str(claims), "--out", str(out), "--store", str(store), "-q"])
    assert r.exit_code == 1 and r.stderr.startswith("error: cannot write"), r.stderr
    assert len(r.stderr.splitlines()) == 1


def test_a_report_of_another_claim_is_not_trusted(
    store: Path,  # noqa: F811
    done_run: tuple[Path, Path],
) -> None:
    """A report copied over another id was summarised under the wrong claim, silently."""
    claims, out = done_run
    shutil.copyfile(out / "reports" / "c0.json", out / "reports" / "c2.json")
    rows = {r.id: r for r in finish_batch(out)}
    assert rows["c2"].verdict == "failed" and "is for claim 'c0'" in rows["c2"].error
    assert rows["c2"].claim == ""  # never c0's text under c2's id
    assert run(claims, out, store) == (1, 2, 0)
    assert "is for claim 'c0'" in reruns(out)["c2"]
    rows = {r.id: r for r in finish_batch(out)}
    assert rows["c2"].verdict != "failed" and "3 new buses" not in rows["c2"].claim


def test_an_edited_claim_text_runs_again(store: Path, done_run: tuple[Path, Path]) -> None:  # noqa: F811
    claims, out = done_run
    rows = [claim(f"c{i}", i) for i in range(3)]
    rows[0]["text"] = "The council approved 40 new trams."
    claims_file(claims, rows)
    assert run(claims, out, store) == (1, 2, 0)
    assert "another claim text" in reruns(out)["c0"]


def test_a_refused_report_path_runs_again_and_is_shown(
    store: Path,  # noqa: F811
    done_run: tuple[Path, Path],
) -> None:
    """A journal line whose report path is refused made the claim vanish from the summary."""
    claims, out = done_run
    lines = (out / "journal.jsonl").read_text().splitlines()
    entry = json.loads(lines[1])
    entry["report"] = "../../etc/passwd"
    lines[1] = json.dumps(entry)
    (out / "journal.jsonl").write_text("\n".join(lines) + "\n")
    rows = finish_batch(out)
    assert [r.id for r in rows] == ["c0", "c1", "c2"]
    assert rows[1].verdict == "failed" and "../../etc/passwd" in rows[1].error
    assert run(claims, out, store) == (1, 2, 0)
    assert [r.id for r in finish_batch(out)] == ["c0", "c1", "c2"]
    assert journal_ids(out).count("c1") == 2  # the new line wins


def test_resume_is_one_function_a_distributed_runner_can_call(
    done_run: tuple[Path, Path],
) -> None:
    from factseek.runs.batch import read_claims

    claims, out = done_run
    (out / "reports" / "c2.json").unlink()
    plan = resume(out, list(read_claims(claims)))
    assert plan.done == {"c0", "c1"} and [c for c, _ in plan.rerun] == ["c2"]


@pytest.mark.parametrize(
    ("name", "make"),
    [
        ("journal.jsonl", "dir"),
        ("errors.jsonl", "dir"),
        ("summary.csv", "dir"),
        ("reports", "file"),
    ],
)
def test_odd_run_folders_are_one_line_errors(
    store: Path,  # noqa: F811
    tmp_path: Path,
    name: str,
    make: str,
) -> None:
    """journal.jsonl a folder, reports/ a file: 'unexpected IsADirectoryError/FileExistsError'."""
    claims = claims_file(tmp_path / "c.jsonl", [claim("a")])
    out = tmp_path / "run"
    out.mkdir()
    if make == "dir":
        (out / name).mkdir()
    else:
        (out / name).write_text("x")
    r = runner.invoke(app, ["batch", str(claims), "--out", str(out), "--store", str(store), "-q"])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("error:") and name in r.stderr, r.stderr
    assert len(r.stderr.splitlines()) == 1 and "unexpected" not in r.stderr
