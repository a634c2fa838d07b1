"""FEVER (`--format fever-dev`) in the rewrite commands: the group split, recorded and enforced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factseek.cli import app
from factseek.datasets.fever import load_fever_dev, split_claims
from factseek.datasets.retrieval import load_retrieval
from factseek.errors import ConfigError
from factseek.rewrite.splits import check_disjoint, select_split
from factseek.rewrite.transformer import trajectories as tj

TOPICS = ["river", "castle", "violin", "comet", "harbor", "glacier", "tiger", "orchard"]


def write_fever(tmp_path: Path, n: int = 40) -> tuple[Path, Path]:
    """``n`` claims over 30 evidence sentences (some shared) + a Fool Me Twice distractor file."""
    folder = tmp_path / "fever_dev"
    folder.mkdir()
    evidence = [
        {"id": f"e{i}", "text": f"The {TOPICS[i % 8]} of town {i} was built in year {1900 + i} ."}
        for i in range(30)
    ]
    claims = [
        {
            "id": f"c{i:02d}",
            "claim": f"The {TOPICS[i % 8]} of town {i % 30} was built long ago in a big city",
            "label": "SUPPORTS" if i % 2 else "REFUTES",
            "evidence": [f"e{i % 30}"] + ([f"e{(i * 7) % 30}"] if i % 5 == 0 else []),
        }
        for i in range(n)
    ]
    (folder / "claims.jsonl").write_text("".join(json.dumps(c) + "\n" for c in claims))
    (folder / "evidence.jsonl").write_text("".join(json.dumps(e) + "\n" for e in evidence))
    fmt = tmp_path / "fool_me_twice"
    fmt.mkdir()
    rows = [
        {
            "gold_evidence": [{"text": f"A {w} stood in a big city long ago ."}],
            "retrieved_evidence": [],
        }
        for w in TOPICS
    ]
    (fmt / "dev.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder, fmt


def test_select_split_is_fevers_group_split(tmp_path: Path) -> None:
    folder, fmt = write_fever(tmp_path)
    data = load_retrieval(folder, fmt, format="fever-dev")
    fever = load_fever_dev(folder, fmt)
    sides = {}
    for side in ("train", "validation", "test"):
        got = [c.id for c in select_split(data.claims, side)]
        assert got == [c.id for c in split_claims(fever.claims, side)]
        sides.update(dict.fromkeys(got, side))
    assert len(sides) == len(data.claims)  # every claim on exactly one side
    assert select_split(data.claims, "all") == data.claims
    with pytest.raises(ConfigError, match="choose one of: all, train, validation, test"):
        select_split(data.claims, "dev")


def test_check_disjoint_refuses_the_training_side() -> None:
    check_disjoint({"bfs": {"split": "train"}}, "test", "be evaluated")
    check_disjoint({"bfs": {}}, "test", "be evaluated")  # older models record no split
    check_disjoint({"bfs": {"split": "all"}}, "all", "be evaluated")
    for trained in ("train", "all"):
        with pytest.raises(ConfigError, match="trained on BFS data"):
            check_disjoint({"bfs": {"split": trained}}, "train", "be evaluated")


def test_cli_bfs_on_the_fever_train_split(tmp_path: Path) -> None:
    folder, fmt = write_fever(tmp_path)
    data = load_retrieval(folder, fmt, format="fever-dev")
    train_ids = [c.id for c in select_split(data.claims, "train")]
    out = tmp_path / "bfs"
    args = ["rewrite", "bfs", "--claims", str(folder), "--corpus", str(fmt), "--format",
            "fever-dev", "--split", "train", "--out", str(out), "--depth", "2", "--no-progress"]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert sorted(tj.read_journal(out)) == sorted(train_ids)
    config = tj.read_config(out)
    assert config["split"] == "train"
    assert config["corpus"]["documents"] == len(data.corpus) == 30 + 8  # the corpus stays whole
    # resuming with another split is refused (it would mix sides in one folder)
    res = CliRunner().invoke(app, [*args[:9], "test", *args[10:]])
    assert res.exit_code == 2 and "other settings (split)" in res.output


def test_cli_eval_and_calibrate_respect_the_split(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import test_rewrite_train as synth
    from factseek.rewrite.transformer import infer, train

    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path / "cache"))
    for module in (infer, train):
        monkeypatch.setattr(module, "encoder_from_name", lambda name, device=None: synth.ENCODER)
        monkeypatch.setattr(module, "ActionsEditor", synth.WordEditor)
    bfs = synth.write_folder(tmp_path / "bfs", synth.synthetic(6))
    tj.write_config(bfs, {**tj.read_config(bfs), "split": "train"})
    model = tmp_path / "model"
    runner = CliRunner()
    res = runner.invoke(app, ["rewrite", "train", "--trajectories", str(bfs), "--out", str(model),
                              "--epochs", "1", "--batch-size", "4"])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads((model / "config.json").read_text())["bfs"]["split"] == "train"

    folder, fmt = write_fever(tmp_path)
    data = ["--claims", str(folder), "--corpus", str(fmt), "--format", "fever-dev"]
    res = runner.invoke(app, ["rewrite", "eval", "--model", str(model), *data, "--split", "train",
                              "--out", str(tmp_path / "e1")])  # fmt: skip
    assert res.exit_code == 2 and "cannot be evaluated on the 'train' split" in res.output
    res = runner.invoke(app, ["rewrite", "eval", "--model", str(model), *data, "--split", "test",
                              "--out", str(tmp_path / "e2")])  # fmt: skip
    assert res.exit_code == 0, res.output
    n_test = len(select_split(load_retrieval(folder, fmt, format="fever-dev").claims, "test"))
    assert f"| {n_test} |" in res.output
    res = runner.invoke(app, ["rewrite", "calibrate", "--model", str(model), *data, "--split",
                              "validation", "--all", "--dry-run"])  # fmt: skip
    assert res.exit_code == 0 and "best target" in res.output, res.output
    res = runner.invoke(app, ["rewrite", "calibrate", "--model", str(model), *data, "--split",
                              "train", "--all"])  # fmt: skip
    assert res.exit_code == 2 and "cannot calibrate" in res.output


def test_cli_train_edits_then_eval_on_the_test_side(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("torch")
    import factseek.ml.encode
    from factseek.rewrite.edits import model as edit_model
    from test_rewrite_edits import ENC

    monkeypatch.setattr(factseek.ml.encode, "encoder_from_name", lambda name="minilm": ENC)
    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path / "cache"))
    folder, fmt = write_fever(tmp_path)
    data = ["--claims", str(folder), "--corpus", str(fmt), "--format", "fever-dev"]
    model = tmp_path / "edits"
    res = CliRunner().invoke(app, ["rewrite", "train-edits", *data, "--out", str(model),
                                   "--epochs", "2", "--hidden", "8"])  # fmt: skip
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output.strip().splitlines()[-1])
    n_val = len(select_split(load_retrieval(folder, fmt, format="fever-dev").claims, "validation"))
    assert summary["validation_claims"] == n_val and summary["edits"] > 0
    assert summary["abstain"] == (summary["threshold"] is None)
    _, policy = edit_model.load(model)
    assert policy.meta["train"]["split"] == "train" and policy.meta["bfs"]["split"] == "train"
    res = CliRunner().invoke(app, ["rewrite", "eval", "--model", str(model), *data, "--split",
                                   "test", "--out", str(tmp_path / "e")])  # fmt: skip
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, ["rewrite", "eval", "--model", str(model), *data, "--split",
                                   "train", "--out", str(tmp_path / "e2")])  # fmt: skip
    assert res.exit_code == 2 and "cannot be evaluated on the 'train' split" in res.output
    res = CliRunner().invoke(app, ["rewrite", "train-edits", *data, "--out", str(model),
                                   "--split", "validation"])  # fmt: skip
    assert res.exit_code == 2 and "two different sides" in res.output


def test_train_edits_on_the_knn_endpoint_for_recall(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--retriever knn``: the scorer is fit and calibrated on the dense endpoint's feedback,
    its rows are kept apart from the BM25 ones, and the model says which endpoint it knows."""
    pytest.importorskip("torch")
    import factseek.ml.encode
    from factseek.rewrite.edits import model as edit_model
    from test_rewrite_edits import ENC

    monkeypatch.setattr(factseek.ml.encode, "encoder_from_name", lambda name="minilm": ENC)
    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path / "cache"))
    folder, fmt = write_fever(tmp_path)
    data = ["--claims", str(folder), "--corpus", str(fmt), "--format", "fever-dev"]
    args = ["--epochs", "1", "--hidden", "8", "--rounds", "1", "--reward", "recall@5"]
    for name in ("bm25", "knn"):
        res = CliRunner().invoke(app, ["rewrite", "train-edits", *data, *args, "--retriever",
                                       name, "--out", str(tmp_path / name)])  # fmt: skip
        assert res.exit_code == 0, res.output
        _, policy = edit_model.load(tmp_path / name)
        assert policy.meta["train"]["retriever"] == name
        assert policy.meta["train"]["reward"] == "recall@5"
    kept = sorted(p.name for p in (tmp_path / "cache" / "rewrite-edits").iterdir())
    assert len(kept) == 2  # one set of rows per endpoint, not one overwriting the other
