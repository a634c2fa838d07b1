"""`factseek check --rewrite MODEL`: subquestions are rewritten before search, traces in the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

pytest.importorskip("torch")

from factseek.cli import app

runner = CliRunner()


def test_check_rewrites_queries_and_reports_traces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import test_cli_check as cli_fixtures
    import test_rewrite_train as synth
    from factseek.rewrite.transformer import infer, train

    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path / "cache"))
    for module in (
        infer,
        train,
    ):  # a bag-of-words encoder and word-level edits: no MiniLM, no spaCy
        monkeypatch.setattr(module, "encoder_from_name", lambda name, device=None: synth.ENCODER)
        monkeypatch.setattr(module, "ActionsEditor", synth.WordEditor)
    folder = synth.write_folder(tmp_path / "bfs", synth.synthetic(8))
    model = tmp_path / "rewriter"
    r = runner.invoke(app, ["rewrite", "train", "--trajectories", str(folder), "--out", str(model),
                            "--epochs", "30", "--seed", "1", "--batch-size", "4", "--no-negatives"])  # fmt: skip
    assert r.exit_code == 0, r.output

    docs = cli_fixtures.write_docs(tmp_path / "docs.jsonl")
    store = tmp_path / "store"
    assert (
        runner.invoke(app, ["index", "build", str(docs), "--store", str(store), "-q"]).exit_code
        == 0
    )
    out = tmp_path / "report.json"
    r = runner.invoke(app, ["check", "The council approved 4 new buses in March.", "--date", "2023-06-01",
                            "--store", str(store), "--rewrite", str(model), "-f", "json", "-o", str(out), "-q"])  # fmt: skip
    assert r.exit_code == 0, r.output
    report = json.loads(out.read_text())
    questions = [q["text"] for q in report["questions"]]
    queries = [res["query"] for res in report["results"]]
    assert [q["question"] for q in queries] == questions  # one query per question, in order
    for q in queries:
        assert (q["text"] != q["question"]) == bool(q["trace"])  # a trace exactly when rewritten
    assert any(q["trace"] for q in queries), "the trained rewriter edited nothing"
    assert report["config"]["rewrite"] == str(model)

    # a calibrated model that abstains: questions go out as they are, and the report says why
    from factseek.rewrite.transformer.model import update_config

    update_config(model, {"calibration": {"target_return": 0.0, "abstain": True}})
    r = runner.invoke(app, ["check", "The council approved 4 new buses in March.", "--date", "2023-06-01",
                            "--store", str(store), "--rewrite", str(model), "-f", "json", "-o", str(out), "-q"])  # fmt: skip
    assert r.exit_code == 0, r.output
    report = json.loads(out.read_text())
    assert all(res["query"]["text"] == res["query"]["question"] for res in report["results"])
    assert any("rewriter abstained" in n for n in report["notes"])
