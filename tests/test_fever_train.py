"""FEVER train as rewrite data: one corpus for train and dev, shared texts, and the claims set
a model was trained on (a model of FEVER train may be evaluated on any side of FEVER dev)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fever_train_fixture as fixture
from factseek.cli import app
from factseek.datasets.fever import clean_text, load_fever_dev
from factseek.datasets.retrieval import load_retrieval
from factseek.errors import ConfigError, DataError
from factseek.rewrite.environment.env import corpus_info
from factseek.rewrite.splits import check_disjoint, claims_fingerprint, select_split
from factseek.rewrite.transformer import trajectories as tj


@pytest.fixture
def data(tmp_path: Path) -> dict[str, Path]:
    return fixture.write(tmp_path)


def test_ptb_brackets_become_characters() -> None:
    assert clean_text("A -LRB- b -RRB- c -LSB- d -RSB- -COLON- e") == "A ( b ) c [ d ] : e"
    assert clean_text("well-LRB-known") == "well(known"  # an escape inside a word
    assert clean_text("a - b -- c") == "a - b -- c"  # plain dashes stay


def test_train_and_dev_search_one_corpus(data: dict[str, Path]) -> None:
    train = load_retrieval(
        data["fever_train"], [data["fever_dev"], data["fool_me_twice"]], "fever-dev"
    )
    dev = load_retrieval(
        data["fever_dev"], [data["fever_train"], data["fool_me_twice"]], "fever-dev"
    )
    assert corpus_info(train.pairs()) == corpus_info(dev.pairs())
    n_fmt = 2 * len(fixture.THINGS)
    assert len(train.corpus) == 48 + 24 + 1 + n_fmt  # the shared sentence is one document
    assert train.dropped == {"not enough info": 1, "evidence not found": 1}
    texts = {d.id: d.text for d in train.corpus}
    shared = [d for d, t in texts.items() if t.startswith("The Garrow chapel")]
    assert shared == ["eshared"]  # the smallest of its ids
    assert texts["eshared"] == "The Garrow chapel ( a stone building ) was rebuilt in 1911 ."
    by_id = {c.id: c for c in train.claims}
    assert by_id["fever-train-6"].relevant == ("ft0006", "eshared")  # remapped to that id
    assert not any("-LRB-" in t for t in texts.values())
    # the FEVER dev split is the same whatever is added to its corpus
    alone = load_retrieval(data["fever_dev"], data["fool_me_twice"], "fever-dev")
    for side in ("train", "validation", "test"):
        assert select_split(dev.claims, side) == select_split(alone.claims, side)


def test_a_fever_folder_as_the_only_distractor(data: dict[str, Path]) -> None:
    fever = load_fever_dev(data["fever_dev"], data["fever_train"])
    assert len(fever.others) == 48 and not fever.distractors  # the shared text is dev's own
    with pytest.raises(DataError, match="distractors not found"):
        load_fever_dev(data["fever_dev"], data["fever_dev"].parent / "missing")


def test_an_id_with_two_texts_is_refused(data: dict[str, Path], tmp_path: Path) -> None:
    clash = tmp_path / "clash"
    clash.mkdir()
    (clash / "evidence.jsonl").write_text(json.dumps({"id": "e0001", "text": "Other text."}) + "\n")
    with pytest.raises(DataError, match="'e0001' has another text"):
        load_fever_dev(data["fever_dev"], clash)


def test_only_fever_takes_several_corpora(data: dict[str, Path]) -> None:
    with pytest.raises(ConfigError, match="the jsonl format takes one --corpus, got 2"):
        load_retrieval(data["fever_dev"], [data["fever_dev"], data["fever_dev"]], "jsonl")


def test_check_disjoint_knows_the_claims_set() -> None:
    meta = {"bfs": {"split": "all", "claims": "train-set"}}
    check_disjoint(meta, "test", "be evaluated", "dev-set")  # another set: any side
    check_disjoint(meta, "train", "be evaluated", "dev-set")
    with pytest.raises(ConfigError, match="trained on BFS data"):
        check_disjoint(meta, "test", "be evaluated", "train-set")
    with pytest.raises(ConfigError, match="trained on BFS data"):  # older models: as before
        check_disjoint({"bfs": {"split": "train"}}, "train", "be evaluated", "dev-set")


def test_claims_fingerprint_is_order_free(data: dict[str, Path]) -> None:
    claims = load_retrieval(data["fever_dev"], None, "fever-dev").claims
    assert claims_fingerprint(claims) == claims_fingerprint(claims[::-1])
    assert claims_fingerprint(claims) != claims_fingerprint(claims[1:])


def test_cli_bfs_on_fever_train_records_its_claims_set(data: dict[str, Path], tmp_path: Path) -> None:  # fmt: skip
    out = tmp_path / "bfs"
    args = ["rewrite", "bfs", "--claims", str(data["fever_train"]), "--corpus",
            str(data["fever_dev"]), "--corpus", str(data["fool_me_twice"]), "--format",
            "fever-dev", "--out", str(out), "--depth", "1", "--limit", "4", "--no-progress"]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    config = tj.read_config(out)
    train = load_retrieval(
        data["fever_train"], [data["fever_dev"], data["fool_me_twice"]], "fever-dev"
    )
    assert config["claims"] == claims_fingerprint(train.claims)
    assert config["corpus"] == corpus_info(train.pairs())
    assert len(tj.read_journal(out)) == 4


def test_train_edits_on_fever_train_chooses_on_fever_dev(
    data: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("torch")
    import factseek.ml.encode
    from factseek.rewrite.edits import model as edit_model
    from test_rewrite_edits import ENC

    monkeypatch.setattr(factseek.ml.encode, "encoder_from_name", lambda name="minilm": ENC)
    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path / "cache"))
    train = ["--claims", str(data["fever_train"]), "--corpus", str(data["fever_dev"]),
             "--corpus", str(data["fool_me_twice"]), "--format", "fever-dev", "--split", "all",
             "--limit", "12", "--epochs", "1", "--hidden", "8", "--rounds", "1"]  # fmt: skip
    model = tmp_path / "edits"
    res = CliRunner().invoke(app, ["rewrite", "train-edits", *train, "--out", str(model),
                                   "--val-claims", str(data["fever_dev"]), "--val-corpus",
                                   str(data["fever_train"]), "--val-corpus",
                                   str(data["fool_me_twice"])])  # fmt: skip
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output.strip().splitlines()[-1])
    dev = load_retrieval(data["fever_dev"], [data["fever_train"], data["fool_me_twice"]], "fever-dev")  # fmt: skip
    assert summary["fit_claims"] == 12
    assert summary["validation_claims"] == len(select_split(dev.claims, "validation"))
    scorer, policy = edit_model.load(model)
    assert policy.meta["train"]["validation_source"] == "fever_dev"
    assert scorer.judge is not None and policy.judge_margin is None  # the judge is on by default
    # the judge fit on claims the scorer does not fit on, edits gated by it
    gate = tmp_path / "gate"
    res = CliRunner().invoke(app, ["rewrite", "train-edits", *train, "--out", str(gate),
                                   "--judge-claims", "6", "--judge-margin", "0",
                                   "--val-claims", str(data["fever_dev"]), "--val-corpus",
                                   str(data["fever_train"]), "--val-corpus",
                                   str(data["fool_me_twice"])])  # fmt: skip
    assert res.exit_code == 0, res.output
    gated, gate_policy = edit_model.load(gate)
    assert gate_policy.judge_margin == 0.0 and gate_policy.meta["train"]["judge_claims"] == 6
    assert gated.judge is not None
    res = CliRunner().invoke(app, ["rewrite", "train-edits", *train, "--out", str(tmp_path / "y"),
                                   "--no-judge", "--judge-margin", "0"])  # fmt: skip
    assert res.exit_code == 2 and "--judge-margin needs the judge" in res.output
    # FEVER dev without FEVER train's sentences is another corpus: refused, nothing written
    res = CliRunner().invoke(app, ["rewrite", "train-edits", *train, "--out", str(tmp_path / "x"),
                                   "--val-claims", str(data["fever_dev"])])  # fmt: skip
    assert res.exit_code == 2 and "--val-corpus" in res.output
    assert not (tmp_path / "x").exists()
    # the model of FEVER train is evaluated on FEVER dev's test side
    res = CliRunner().invoke(app, ["rewrite", "eval", "--model", str(model), "--claims",
                                   str(data["fever_dev"]), "--corpus", str(data["fever_train"]),
                                   "--corpus", str(data["fool_me_twice"]), "--format",
                                   "fever-dev", "--split", "test", "--out", str(tmp_path / "e")])  # fmt: skip
    assert res.exit_code == 0, res.output


def test_knn_bfs_encodes_on_the_device_asked(
    data: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import numpy as np

    import factseek.ml.encode
    from factseek.ml.encode import FunctionEncoder

    asked: list[str | None] = []

    def encoder_from_name(name: str = "minilm", device: str | None = None):
        asked.append(device)
        return FunctionEncoder(lambda ts: np.array([[len(t), 1.0] for t in ts], np.float32), dim=2, name="len")  # fmt: skip

    monkeypatch.setattr(factseek.ml.encode, "encoder_from_name", encoder_from_name)
    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path / "cache"))
    res = CliRunner().invoke(app, ["rewrite", "bfs", "--claims", str(data["fever_dev"]),
                                   "--format", "fever-dev", "--retriever", "knn", "--reward",
                                   "recall@50", "--depth", "1", "--limit", "2", "--device", "cpu",
                                   "--out", str(tmp_path / "knn"), "--no-progress"])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert asked == ["cpu"]


def test_texts_repeated_inside_one_folder_stay_apart(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "evidence.jsonl").write_text(
        "".join(json.dumps({"id": i, "text": "Same text ."}) + "\n" for i in ("e1", "e2"))
    )
    rows = [{"id": f"c{i}", "claim": "A claim.", "label": "SUPPORTS", "evidence": [f"e{i}"]} for i in (1, 2)]  # fmt: skip
    (folder / "claims.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = load_fever_dev(folder)
    assert [c.evidence for c in data.claims] == [("e1",), ("e2",)]  # two groups, as before
    assert sorted(data.evidence) == ["e1", "e2"]
