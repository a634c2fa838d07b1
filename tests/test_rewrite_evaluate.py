"""Evaluation on a toy corpus with hand-computed numbers, the ablation table, and the CLI."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

pytest.importorskip("torch")

from typer.testing import CliRunner

from factseek.rewrite.evaluate import (
    CALIBRATION_GRID,
    EvalClaim,
    ablation_table,
    calibrate,
    evaluate,
    random_paths,
    write_results,
)
from factseek.rewrite.transformer.infer import RewriteResult
from factseek.rewrite.transformer.model import DTConfig, update_config

RANKINGS = {
    "a b c": ["d9", "d1", "d8", "d2"],  # AP (1/2 + 2/4) / 2 = 0.5, recall 1, RR 1/2
    "a c": ["d1", "d2"],  # AP 1
    "b c": ["d2"],  # AP (1/1) / 2 = 0.5, recall 1/2, RR 1
    "x y": ["d3"],  # AP 1
    "y": ["d7"],  # AP 0
}
CLAIMS = [
    EvalClaim(id="c1", text="a b c", relevant=frozenset({"d1", "d2"})),
    EvalClaim(id="c2", text="x y", relevant=frozenset({"d3"})),
]


class TableRetriever:
    name = "table"

    def rank(self, queries: Sequence[str], k: int) -> list[list[str]]:
        return [RANKINGS[q][:k] for q in queries]

    def rank_edits(self, parent: str, queries: Sequence[str], k: int) -> list[list[str]]:
        return self.rank(queries, k)


class FirstWordEditor:
    """Only one edit exists: remove the first word (when two or more are left)."""

    name = "first"
    kinds = ("remove", "swap")

    def masks(self, texts: Sequence[str], max_positions: int) -> np.ndarray:
        out = np.zeros((len(texts), 2, max_positions), dtype=bool)
        out[:, 0, 0] = [len(t.split()) > 1 for t in texts]
        return out

    def apply(self, text: str, kind: int, position: int) -> str:
        assert (kind, position) == (0, 0)
        return " ".join(text.split()[1:])


class FixedRewriter:
    """c1: remove@1 ("a b c" -> "a c", AP 0.5 -> 1); c2: remove@0 ("x y" -> "y", AP 1 -> 0)."""

    cfg = DTConfig(max_edits=2, max_positions=4, n_kinds=2, state_dim=4, n_embd=8, n_head=2)
    editor = FirstWordEditor()
    meta: ClassVar[dict] = {
        "train": {"returns": "dense", "negatives": False},
        "bfs": {"reward": "ap@50"},
    }

    def rewrite(self, texts: Sequence[str], *, target_return: float | None = None) -> list:
        fixed = {"a b c": ("a c", "remove@1"), "x y": ("y", "remove@0")}
        return [
            RewriteResult(
                text=fixed[t][0],
                original=t,
                trace=(fixed[t][1],),
                path=(t, fixed[t][0]),
                steps=1,
                stopped="stop",
            )
            for t in texts
        ]


def test_hand_checked_numbers() -> None:
    r = evaluate(FixedRewriter(), CLAIMS, TableRetriever(), k=50, seed=0, name="fixed")
    claim, model, rand = (r.systems[s] for s in ("claim", "model", "random"))
    assert (claim.map, claim.recall, claim.mrr) == pytest.approx((0.75, 1.0, 0.75))
    assert (model.map, model.recall, model.mrr) == pytest.approx((0.5, 0.5, 0.5))
    # random: one edit each (the model's lengths), the only one allowed: remove the first word
    assert (rand.map, rand.recall, rand.mrr) == pytest.approx((0.25, 0.25, 0.5))
    assert model.steps_map == pytest.approx((0.75, 0.5, 0.5))  # step 0 is the claim
    assert claim.steps_map == pytest.approx((0.75, 0.75, 0.75))
    assert model.mean_steps == 1.0 and claim.mean_steps == 0.0
    # AP changes +0.5 and -1: bootstrap means of two claims lie in {-1, -0.25, +0.5}
    assert r.gain_ci == pytest.approx((-1.0, 0.5))
    # recall changes 0 and -1: bootstrap means in {-1, -0.5, 0}
    assert r.recall_ci == pytest.approx((-1.0, 0.0))
    assert r.outcomes["remove"] == {"better": 1, "same": 0, "worse": 1}
    assert r.mean_change["remove"] == pytest.approx((0.5 - 1.0) / 2)
    assert math.isnan(r.mean_change["swap"])


class TargetRewriter(FixedRewriter):
    """No edit at target 0 (STOP), FixedRewriter's edit at any positive target."""

    meta: ClassVar[dict] = {"returns": {"target_return": 0.4}}

    def rewrite(self, texts: Sequence[str], *, target_return: float | None = None) -> list:
        if target_return:
            return super().rewrite(texts)
        return [RewriteResult(text=t, original=t, path=(t,), stopped="stop") for t in texts]


def test_calibrate_picks_the_best_target_and_prefers_fewer_edits() -> None:
    both = calibrate(TargetRewriter(), CLAIMS, TableRetriever(), k=50)
    # c1 gains 0.5, c2 loses 1: editing scores 0.5 against the claims' 0.75, so stop (target 0)
    assert (both.target_return, both.claims, both.claim_score) == (0.0, 2, pytest.approx(0.75))
    assert both.abstain
    grid = dict((t, (m, steps)) for t, m, steps in both.grid)
    assert set(grid) == {0.0, 0.4, *CALIBRATION_GRID}  # the checkpoint's own target is tried
    assert grid[0.0] == pytest.approx((0.75, 0.0)) and grid[0.4] == pytest.approx((0.5, 1.0))
    # on c1 alone every positive target ties at AP 1: the smallest wins
    one = calibrate(TargetRewriter(), CLAIMS[:1], TableRetriever(), k=50)
    smallest = min(t for t in CALIBRATION_GRID if t > 0)
    assert one.target_return == one.best == smallest and one.gain_ci == pytest.approx((0.5, 0.5))
    assert not one.abstain
    # three claims gain 0.5, one loses 1: editing is better on average (+0.125), but not
    # clearly (the bootstrap CI reaches below 0), so the rewriter is told to leave queries alone
    mixed = calibrate(TargetRewriter(), [*CLAIMS[:1] * 3, CLAIMS[1]], TableRetriever(), k=50)
    assert mixed.best == smallest and mixed.gain_ci[0] < 0 < mixed.gain_ci[1]
    assert mixed.target_return == 0.0 and mixed.abstain
    # by recall@50 the edit of c1 changes nothing (both relevant documents stay in): abstain
    by_recall = calibrate(TargetRewriter(), CLAIMS[:1], TableRetriever(), k=50, metric="recall")
    assert by_recall.abstain and by_recall.gain_ci == (0.0, 0.0) and by_recall.metric == "recall"


def test_cut_off_k_applies() -> None:
    r = evaluate(FixedRewriter(), CLAIMS, TableRetriever(), k=2, seed=0)
    # "a b c" top-2 = d9, d1: AP@2 = (1/2) / 2, recall 1/2
    assert r.systems["claim"].map == pytest.approx((0.25 + 1.0) / 2)
    assert r.systems["claim"].recall == pytest.approx((0.5 + 1.0) / 2)


def test_random_paths_follow_the_length_distribution() -> None:
    paths = random_paths(["a b c d"] * 50, [0, 3], FirstWordEditor(), seed=1, max_positions=4)
    lengths = {len(p) - 1 for p in paths}
    assert lengths == {0, 3}
    assert all(p[-1] == "d" for p in paths if len(p) == 4)
    assert random_paths(["a b"], [], FirstWordEditor(), seed=0, max_positions=4) == [["a b"]]
    # the same seed gives the same paths
    again = random_paths(["a b c d"] * 50, [0, 3], FirstWordEditor(), seed=1, max_positions=4)
    assert again == paths


def test_table_and_figures(tmp_path: Path) -> None:
    r = evaluate(FixedRewriter(), CLAIMS, TableRetriever(), k=50, seed=0, name="fixed")
    table = write_results([r], tmp_path)
    assert "| fixed | table |" in table and "-33.3%" in table and "| 0.750 | 0.500 |" in table
    assert (tmp_path / "table.md").read_text() == table == ablation_table([r])
    assert json.loads((tmp_path / "results.jsonl").read_text())["systems"]["model"]["map"] == 0.5
    for suffix in ("steps", "outcomes", "change"):
        assert (tmp_path / f"fixed-table-{suffix}.png").stat().st_size > 1000


def test_cli_train_run_eval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import test_rewrite_train as synth
    from factseek.cli import app
    from factseek.rewrite.transformer import infer, train

    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path / "cache"))
    for module in (infer, train):
        monkeypatch.setattr(module, "encoder_from_name", lambda name, device=None: synth.ENCODER)
        monkeypatch.setattr(module, "ActionsEditor", synth.WordEditor)
    records = synth.synthetic(6)
    folder = synth.write_folder(tmp_path / "bfs", records)
    runner = CliRunner()
    model = tmp_path / "model"
    res = runner.invoke(
        app,
        ["rewrite", "train", "--trajectories", str(folder), "--out", str(model), "--epochs", "2",
         "--returns", "sparse", "--no-negatives", "--seed", "1", "--batch-size", "4"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "trained on 6 sequences from 6 claims" in res.output
    doc = json.loads((model / "config.json").read_text())
    assert doc["train"]["returns"] == "sparse" and doc["model"]["max_edits"] == 3  # BFS depth

    res = runner.invoke(app, ["rewrite", "run", "--model", str(model), records[0].claim, "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output.splitlines()[0])
    assert out["original"] == records[0].claim and len(out["trace"]) == out["steps"]

    claims = tmp_path / "claims.jsonl"
    corpus = tmp_path / "corpus.jsonl"
    claims.write_text(
        "".join(
            json.dumps({"id": r.claim_id, "query": r.claim, "relevant": [f"d{i}"]}) + "\n"
            for i, r in enumerate(records)
        )
    )
    corpus.write_text(
        "".join(
            json.dumps({"id": f"d{i}", "text": r.sequences[0].queries[-1]}) + "\n"
            for i, r in enumerate(records)
        )
    )
    res = runner.invoke(
        app,
        ["rewrite", "eval", "--model", str(model), "--claims", str(claims), "--corpus",
         str(corpus), "--out", str(tmp_path / "eval"), "--retriever", "bm25", "--guard", "0"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "| model |" in res.output and (tmp_path / "eval" / "table.md").exists()
    assert "| model +guard top-all |" in res.output
    # an edit scorer (the feedback guard as a scorer) deciding among the model's top 3 edits
    from factseek.rewrite.edits.model import EditPolicy, guard_scorer, save

    save(tmp_path / "scorer", guard_scorer(), EditPolicy(threshold=0.0, max_edits=3, k=50))
    res = runner.invoke(
        app,
        ["rewrite", "eval", "--model", str(model), "--claims", str(claims), "--corpus",
         str(corpus), "--out", str(tmp_path / "eval2"), "--guard", "3", "--guard-scorer",
         str(tmp_path / "scorer")],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "| model +scorer top-3 |" in res.output
    cal = ["rewrite", "calibrate", "--model", str(model), "--claims", str(claims), "--corpus",
           str(corpus)]  # fmt: skip
    res = runner.invoke(app, cal)  # 6 training claims: too few for a validation split
    assert res.exit_code == 2 and "no validation claims" in res.output
    res = runner.invoke(app, [*cal, "--all"])
    assert res.exit_code == 0 and "best target" in res.output, res.output
    chosen = json.loads((model / "config.json").read_text())["calibration"]["target_return"]
    assert infer.Rewriter.load(model).default_target == chosen
    update_config(model, {"calibration": {"target_return": 0.0, "abstain": True}})
    res = runner.invoke(app, ["rewrite", "run", "--model", str(model), records[0].claim, "--json"])
    assert res.exit_code == 0 and "leaves queries alone" in res.output
    out = json.loads(res.output.splitlines()[-1])
    assert (out["text"], out["steps"], out["stopped"]) == (records[0].claim, 0, "abstain")
    res = runner.invoke(app, ["rewrite", "run", "--model", str(model), records[0].claim,
                              "--target-return", "0.3"])  # fmt: skip
    assert res.exit_code == 0 and "leaves queries alone" not in res.output
    res = runner.invoke(app, ["rewrite", "run", "--model", str(tmp_path / "nope"), "x"])
    assert res.exit_code == 1 and "not a rewrite model folder" in res.output
