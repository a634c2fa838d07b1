"""The pair-set file (`stance train --pairs-out` / `--pairs`) and the training device option."""

from __future__ import annotations

import json

import pytest

from factseek.errors import ConfigError, DataError
from factseek.stance.pairs import StancePair, read_pair_set, write_pair_set


def _pairs(n: int, split: str) -> list[StancePair]:
    labels = ("supports", "refutes", "nei")
    return [
        StancePair(
            question=f"Is {split} claim {i} true?" if i % 2 else f"{split} claim {i} holds.",
            evidence=f'Evidence {i}: "quoted" and ünïcode.',
            label=labels[i % 3],
            source="toy",
            group=f"g{i}",
            form="question" if i % 2 else "statement",
        )
        for i in range(n)
    ]


def test_a_pair_set_reads_back_as_written(tmp_path):
    path = tmp_path / "pairs.jsonl"
    train, validation = _pairs(5, "train"), _pairs(3, "validation")
    info = {"sources": ["toy"], "shareable": True, "contrast": 0}
    assert write_pair_set(path, {"train": train, "validation": validation}, info) == 8
    splits, back = read_pair_set(path)
    assert splits == {"train": train, "validation": validation}  # order kept, pair for pair
    assert back == info


_ROW = {"split": "train", "label": "nei", "evidence": "e", "source": "s", "group": "g"}


@pytest.mark.parametrize(
    ("lines", "says"),
    [
        ([{"kind": "something-else", "format_version": 1}], "not a stance pair set"),
        ([{"kind": "factseek-stance-pairs", "format_version": 2}], "not a stance pair set"),
        ([], "empty stance pair set"),
        (["HEADER", {"split": "test", "label": "nei"}], "bad split 'test'"),
        (["HEADER", {"split": "train", "label": "maybe"}], "label 'maybe'"),
        (["HEADER", {"split": "train", "label": "nei", "question": "q"}], "needs 'evidence'"),
        (["HEADER", {**_ROW, "question": ""}], "non-empty text"),
    ],
)
def test_a_bad_pair_set_names_its_line(tmp_path, lines, says):
    header = {"kind": "factseek-stance-pairs", "format_version": 1, "info": {}}
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(header if x == "HEADER" else x) + "\n" for x in lines))
    with pytest.raises(DataError, match=says) as e:
        read_pair_set(path)
    assert str(path) in str(e.value)


def test_training_device_refuses_what_torch_cannot_use():
    pytest.importorskip("torch")
    import torch

    from factseek.ml.training import training_device

    assert training_device("cpu") == torch.device("cpu")
    assert training_device("auto") == torch.device("cuda" if torch.cuda.is_available() else "cpu")
    pytest.importorskip("transformers")
    from factseek.judge.classifier import pick_device  # the judge's --device is the same check

    assert pick_device("cpu") == "cpu"
    with pytest.raises(ConfigError, match="unknown torch device"):
        pick_device("gpu0")
    with pytest.raises(ConfigError, match="unknown torch device"):
        training_device("gpu0")
    if not torch.cuda.is_available():
        with pytest.raises(ConfigError, match="sees no CUDA GPU"):
            training_device("cuda")


def test_training_on_a_pair_set_names_its_unshareable_sources(tmp_path):
    from typer.testing import CliRunner

    from factseek.cli import app

    path = tmp_path / "pairs.jsonl"
    info = {"sources": ["fever", "averitec"], "shareable": False}
    write_pair_set(path, {"train": _pairs(3, "train"), "validation": _pairs(3, "validation")}, info)
    r = CliRunner().invoke(
        app,
        ["stance", "train", "--pairs", str(path), "--out", str(tmp_path / "m"), "--device", "tpu9"],
    )
    assert "note: averitec data do not allow sharing the trained weights" in r.output
    assert "train: 3 pairs" in r.output and r.exit_code == 2  # then the device is refused
