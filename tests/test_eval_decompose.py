"""Decomposition recall: hand-computed metric checks and the `factseek eval decompose` command."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import factseek.llm
import factseek.ml.encode
from factseek.cli import app
from factseek.decompose.evaluate import ClaimMatch, evaluate, score
from factseek.llm import FunctionLLM
from factseek.ml.encode import FunctionEncoder

VOCAB = ["fleet", "bus", "grant", "mayor", "river", "tax", "school", "budget"]


def bag_encoder() -> FunctionEncoder:
    def fn(texts):
        return np.array([[t.lower().count(w) + 1e-6 for w in VOCAB] for t in texts], dtype=float)

    return FunctionEncoder(fn, dim=len(VOCAB), name="bag")


def test_score_hand_computed() -> None:
    ms = [
        ClaimMatch(gold_best=(0.9, 0.5), generated_best=(0.9, 0.2, 0.1)),  # 1 of 2 recalled
        ClaimMatch(gold_best=(0.8,), generated_best=(0.8,)),  # 1 of 1
        ClaimMatch(gold_best=(), generated_best=(0.3,)),  # no gold: skipped
    ]
    s = score(ms, threshold=0.79, sweep=(0.5, 0.85))
    assert s.claims == 2 and s.gold == 3 and s.generated == 4
    assert s.recall == pytest.approx((0.5 + 1.0) / 2)
    assert s.recall_micro == pytest.approx(2 / 3)
    assert s.precision == pytest.approx(2 / 4)
    assert s.sweep == ((0.5, 1.0), (0.85, pytest.approx(0.25)))


def test_evaluate_with_an_encoder() -> None:
    pairs = [
        (
            ["Did the bus fleet grow?"],
            ["Is the fleet of buses bigger?", "Did the mayor cut taxes?"],
        ),
        ([], ["Is the river clean?"]),
    ]
    s = evaluate(pairs, bag_encoder(), threshold=0.9)
    assert s.recall == pytest.approx((0.5 + 0.0) / 2) and s.precision == 1.0


def _write_data(path) -> None:
    rows = [
        {
            "example_id": 1,
            "label": "half-true",
            "claim": "Mayor Roe doubled the bus fleet with a state grant.",
            "person": "Ann Roe",
            "venue": "stated on March 1, 2024 in a newsletter:",
            "annotations": [
                {
                    "questions": [
                        "Did the bus fleet double?",
                        "Did a state grant pay for the buses?",
                    ]
                },
                {"questions": ["Was the fleet of buses doubled?"]},
            ],
        },
        {
            "example_id": 2,
            "label": "false",
            "claim": "The school budget was cut in half.",
            "person": "Bo Lee",
            "venue": "stated on May 2, 2023 in a debate:",
            "annotations": [{"questions": ["Was the school budget cut?"]}],
        },
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")


def test_cli_annotators_and_llm(tmp_path, monkeypatch) -> None:
    data = tmp_path / "dev.jsonl"
    _write_data(data)
    monkeypatch.setattr(factseek.ml.encode, "encoder_from_name", lambda name: bag_encoder())
    runner = CliRunner()
    r = runner.invoke(
        app,
        [
            "eval",
            "decompose",
            "--data",
            str(data),
            "--decomposer",
            "annotators",
            "--threshold",
            "0.9",
        ],
    )
    assert r.exit_code == 0, r.output
    # one claim with two annotators: each direction is one pair (recall 1.0 and 0.5)
    assert "annotators: claims=2 gold=3 generated=3" in r.output and "recall@0.90=0.750" in r.output

    def fake(messages, params):
        return "Did the bus fleet double?\nWas the school budget cut?\nWhy?"

    monkeypatch.setattr(factseek.llm, "llm_from_options", lambda *a, **k: FunctionLLM(fake))
    out = tmp_path / "res" / "llm.json"
    r = runner.invoke(
        app,
        [
            "eval",
            "decompose",
            "--data",
            str(data),
            "--decomposer",
            "llm",
            "--rounds",
            "1",
            "--threshold",
            "0.9",
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    assert "llm:llamacpp: claims=2" in r.output and "recall@0.90=0.833" in r.output  # (2/3 + 1) / 2
    saved = json.loads(out.read_text())
    assert saved["claims"][0]["generated"] == [
        "Did the bus fleet double?",
        "Was the school budget cut?",
    ]
    assert saved["usage"]["requests"] == 2


def test_cli_errors(tmp_path) -> None:
    runner = CliRunner()
    r = runner.invoke(app, ["eval", "decompose", "--data", str(tmp_path / "missing.jsonl")])
    assert r.exit_code == 2 and "not found" in r.output
    r = runner.invoke(app, ["eval", "decompose", "--data", "x", "--decomposer", "magic"])
    assert r.exit_code == 2
