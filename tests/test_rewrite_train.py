"""Training on synthetic trajectories: episodes, checkpoints, overfitting and reproducing."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from factseek.errors import ModelError
from factseek.ml.encode import FunctionEncoder
from factseek.rewrite.environment.actions import Action, ActionKind
from factseek.rewrite.transformer import trajectories
from factseek.rewrite.transformer.infer import Rewriter
from factseek.rewrite.transformer.model import CONFIG_FILE, WEIGHTS_FILE, DTConfig, load_checkpoint
from factseek.rewrite.transformer.train import (
    LOSS_FILE,
    LOSS_PLOT,
    TrainConfig,
    build_episodes,
    returns_to_go,
    train,
)

KINDS = ("remove", "swap", "add", "present")


class WordEditor:
    """Word-level stand-in for the spaCy/WordNet actions: remove, upper-case, double, +s."""

    name = "words"
    kinds = KINDS

    def masks(self, texts: Sequence[str], max_positions: int) -> np.ndarray:
        out = np.zeros((len(texts), len(KINDS), max_positions), dtype=bool)
        for i, t in enumerate(texts):
            n = min(len(t.split()), max_positions)
            out[i, 1:, :n] = True
            out[i, 0, :n] = len(t.split()) > 1
        return out

    def apply(self, text: str, kind: int, position: int) -> str:
        w = text.split()
        assert self.masks([text], 64)[0, kind, position], "invalid action applied"
        if kind == 0:
            del w[position]
        elif kind == 1:
            w[position] = w[position].upper()
        elif kind == 2:
            w.insert(position + 1, w[position])
        else:
            w[position] = w[position] + "s"
        return " ".join(w)

    def words(self, texts: Sequence[str], max_positions: int) -> list[list[tuple[str, str]]]:
        return [[(w, w.upper()) for w in t.split()[:max_positions]] for t in texts]


def bag_of_words(texts: Sequence[str], dim: int = 32) -> np.ndarray:
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for i, t in enumerate(texts):
        for j, w in enumerate(t.split()):
            seed = int.from_bytes(hashlib.blake2b(f"{j}:{w}".encode(), digest_size=4).digest())
            out[i] += np.random.default_rng(seed).standard_normal(dim)
    return out


ENCODER = FunctionEncoder(bag_of_words, dim=32, name="bow")
TINY = DTConfig(
    n_layer=2, n_head=2, n_embd=64, dropout=0.0, max_edits=3, max_positions=8, state_dim=32
)
WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
]


def synthetic(n_claims: int = 8, seed: int = 0) -> list[trajectories.ClaimTrajectories]:
    """Claims of 4-6 words, one sequence of 1-3 random valid edits each, gain 0.3 in total."""
    rng = np.random.default_rng(seed)
    editor = WordEditor()
    records = []
    for c in range(n_claims):
        q = " ".join(rng.choice(WORDS, size=int(rng.integers(4, 7)), replace=False))
        queries, acts = [q], []
        for _ in range(int(rng.integers(1, 4))):
            m = editor.masks([queries[-1]], TINY.max_positions)[0]
            choices = np.argwhere(m)
            k, p = choices[rng.integers(len(choices))]
            acts.append(Action(kind=ActionKind(KINDS[k]), position=int(p)))
            queries.append(editor.apply(queries[-1], int(k), int(p)))
        rewards = tuple(np.linspace(0.2, 0.5, len(queries)).round(6))
        seq = trajectories.Trajectory(queries=tuple(queries), actions=tuple(acts), rewards=rewards)
        records.append(
            trajectories.ClaimTrajectories(
                claim_id=f"c{c}", claim=q, relevant=("d1",), reward0=0.2, sequences=(seq,)
            )
        )
    return records


def write_folder(path: Path, records: list[trajectories.ClaimTrajectories]) -> Path:
    trajectories.write(path, records, {"retriever": "bm25", "reward": "ap@50", "k": 50, "depth": 3})
    return path


STOP_CLAIM = "zulu yankee xray whiskey"
FAST = TrainConfig(
    epochs=60,
    batch_size=8,
    lr=5e-3,
    warmup_steps=5,
    val_fraction=0.0,
    log_every=5,
    seed=0,
    checkpoint_every=1000,
)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    root = tmp_path_factory.mktemp("dt")
    records = synthetic()
    # a claim the BFS could not improve: no sequences, taught to STOP via stop_claims
    done = trajectories.ClaimTrajectories(
        claim_id="s0", claim=STOP_CLAIM, relevant=("d1",), reward0=1.0
    )
    folder = write_folder(root / "bfs", [*records, done])
    out = root / "model"
    import os

    os.environ["FACTSEEK_CACHE"] = str(root / "cache")
    result = train(
        folder,
        out,
        model_config=TINY,
        config=FAST,
        encoder=ENCODER,
        editor=WordEditor(),
        progress=False,
        stop_claims={"s0": STOP_CLAIM, "other": "not in the journal"},
    )
    assert result.counts.episodes == len(records) + 1 and result.counts.stop_only == 1
    return out, records


def test_returns_to_go_add_the_stop_step() -> None:
    assert returns_to_go([0.1, 0.3, 0.4], "dense") == pytest.approx([0.3, 0.1, 0.0])
    assert returns_to_go([0.1, 0.3, 0.4], "sparse") == pytest.approx([0.3, 0.3, 0.3])


def test_episodes_stop_early_drop_negatives_and_out_of_space() -> None:
    seq = lambda acts, neg=False: {  # noqa: E731
        "queries": [f"q{i}" for i in range(len(acts) + 1)],
        "actions": acts,
        "rewards": [0.1 * i for i in range(len(acts) + 1)],
        "negative": neg,
    }
    rec = {
        "claim_id": "c",
        "sequences": [
            seq([["swap", 1]]),  # 2 steps: swap@1, STOP
            seq([["remove", 0], ["add", 2], ["present", 1]]),  # K=3 edits: no STOP step
            seq([["remove", 0]] * 4),  # longer than K
            seq([["remove", 9]]),  # position past max_positions
            seq([["remove", 0]], neg=True),
        ],
    }
    kw = dict(kinds=KINDS, max_edits=3, max_positions=8)
    eps, counts = build_episodes([rec], negatives=False, **kw)
    stop = 4 * 8
    assert [e.targets for e in eps] == [(8 + 1, stop), (0, 16 + 2, 24 + 1)]
    assert eps[0].rtg == pytest.approx((0.1, 0.0))
    assert (counts.too_long, counts.out_of_space, counts.negatives_dropped) == (1, 1, 1)
    eps, counts = build_episodes([rec], negatives=True, **kw)
    assert len(eps) == 3 and counts.negatives_dropped == 0


def test_checkpoint_folder_contents(trained: tuple[Path, list]) -> None:
    out, _ = trained
    assert {CONFIG_FILE, WEIGHTS_FILE, LOSS_FILE, LOSS_PLOT} <= {p.name for p in out.iterdir()}
    doc = json.loads((out / CONFIG_FILE).read_text())
    assert doc["format_version"] == 1 and doc["encoder"] == "bow" and doc["step"] > 0
    assert doc["model"]["max_edits"] == 3 and doc["kinds"] == list(KINDS)
    losses = [json.loads(x)["loss"] for x in (out / LOSS_FILE).read_text().splitlines()]
    assert losses[-1] < losses[0] / 10


def test_save_load_round_trip(trained: tuple[Path, list], tmp_path: Path) -> None:
    import torch

    out, _ = trained
    model, doc = load_checkpoint(out)
    again, _ = load_checkpoint(out)
    x = dict(
        rtg=torch.rand(2, 3),
        states=torch.randn(2, 3, 32),
        actions=torch.zeros(2, 3, dtype=torch.long),
        timesteps=torch.arange(3).expand(2, 3),
    )
    torch.testing.assert_close(model(**x)[0], again(**x)[0])
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / CONFIG_FILE).write_text(json.dumps({**doc, "format_version": 99}))
    (bad / WEIGHTS_FILE).write_bytes((out / WEIGHTS_FILE).read_bytes())
    with pytest.raises(ModelError, match="format_version"):
        load_checkpoint(bad)
    with pytest.raises(ModelError):
        load_checkpoint(tmp_path)


def test_tiny_model_overfits_and_reproduces_its_trajectories(trained: tuple[Path, list]) -> None:
    out, records = trained
    rewriter = Rewriter.load(out, encoder=ENCODER, editor=WordEditor())
    claims = [r.claim for r in records]
    results = rewriter.rewrite([*claims, STOP_CLAIM], target_return=0.3, batch_size=3)
    stopped = results.pop()
    assert (stopped.steps, stopped.stopped, stopped.text) == (0, "stop", STOP_CLAIM)
    for rec, res in zip(records, results, strict=True):
        seq = rec.sequences[0]
        assert res.original == rec.claim
        assert res.trace == tuple(str(a) for a in seq.actions)
        assert res.text == seq.queries[-1]
        assert res.stopped == ("budget" if len(seq.actions) == 3 else "stop")


def test_training_is_seeded(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "bfs", synthetic(4, seed=1))
    cfg = TrainConfig(epochs=2, batch_size=2, val_fraction=0.0, seed=3)
    a = train(
        folder,
        tmp_path / "a",
        model_config=TINY,
        config=cfg,
        encoder=ENCODER,
        editor=WordEditor(),
        progress=False,
    )
    b = train(
        folder,
        tmp_path / "b",
        model_config=TINY,
        config=cfg,
        encoder=ENCODER,
        editor=WordEditor(),
        progress=False,
    )
    assert a.final_loss == b.final_loss
    assert (tmp_path / "a" / WEIGHTS_FILE).read_bytes() == (
        tmp_path / "b" / WEIGHTS_FILE
    ).read_bytes()


@pytest.mark.slow  # loads MiniLM
def test_joint_fine_tuning_saves_and_reloads_the_encoder(tmp_path: Path) -> None:
    from factseek.ml.encode import default_encoder

    folder = write_folder(tmp_path / "bfs", synthetic(4, seed=2))
    cfg = TrainConfig(epochs=1, batch_size=4, val_fraction=0.0, finetune_encoder=True)
    model_cfg = DTConfig(n_layer=1, n_head=2, n_embd=32, max_edits=3, max_positions=8)
    train(folder, tmp_path / "m", model_config=model_cfg, config=cfg, encoder=default_encoder(),
          editor=WordEditor(), progress=False)  # fmt: skip
    doc = json.loads((tmp_path / "m" / CONFIG_FILE).read_text())
    assert doc["encoder_in_checkpoint"] and (tmp_path / "m" / doc["encoder"]).is_dir()
    rw = Rewriter.load(tmp_path / "m", editor=WordEditor())
    assert rw.encoder.dim == 384 and len(rw.rewrite(["alpha bravo charlie"])) == 1


def test_state_cache_encodes_each_text_once_across_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from factseek.rewrite.transformer.tables import mask_table, state_table

    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path))
    seen: list[str] = []

    def fn(texts: Sequence[str]) -> np.ndarray:
        seen.extend(texts)
        return bag_of_words(texts)

    enc = FunctionEncoder(fn, dim=32, name="counting")
    a = state_table(["x y", "y z"], enc, progress=False)
    b = state_table(["y z", "z w", "x y"], enc, progress=False)
    assert seen == ["x y", "y z", "z w"]
    np.testing.assert_array_equal(b[[0, 2]], a[[1, 0]])
    np.testing.assert_array_equal(b[1], enc.encode(["z w"])[0])
    m1 = mask_table(["a b c"], WordEditor(), 4, progress=False)
    m2 = mask_table(["a b c", "a"], WordEditor(), 4, progress=False)
    assert m2.shape == (2, 17) and (m2[0] == m1[0]).all() and m2[:, -1].all()
    assert m2[1, :-1].sum() == 3  # one word: swap, add, present at position 0; no remove


def test_word_vectors_features_pad_with_zeros_and_encode_each_word_once() -> None:
    from factseek.rewrite.transformer.editor import WordVectors

    seen: list[str] = []

    def fn(texts: Sequence[str]) -> np.ndarray:
        seen.extend(texts)
        return bag_of_words(texts)

    enc = FunctionEncoder(fn, dim=32, name="counting")
    a, upper_a = ENCODER.encode(["a", "A"])
    wv = WordVectors(enc)
    f = wv.features([[("a", "A"), ("b", "")], [("a", "")]], max_positions=3)
    assert f.shape == (2, 3, 64)
    np.testing.assert_allclose(f[0, 0, :32], a)
    np.testing.assert_allclose(f[0, 0, 32:], upper_a)
    assert not f[0, 1, 32:].any() and not f[0, 2].any() and not f[1, 1:].any()
    np.testing.assert_array_equal(f[1, 0, :32], f[0, 0, :32])
    wv.features([[("b", "a")]], max_positions=1)
    assert sorted(seen) == ["A", "a", "b"]  # each word once, across calls
    small = WordVectors(enc, max_words=3)  # a full cache starts afresh, keeping this call whole
    small.vectors(["a", "b", "c"])
    np.testing.assert_allclose(small.vectors(["a", "d"])[0], a)


def _remove_kilo(n: int, seed: int) -> list[trajectories.ClaimTrajectories]:
    """Claims of 4-6 words with "kilo" somewhere; the one good edit removes it."""
    rng = np.random.default_rng(seed)
    others = [w for w in WORDS if w != "kilo"]
    records = []
    for c in range(n):
        w = list(rng.choice(others, size=int(rng.integers(3, 6)), replace=False))
        p = int(rng.integers(0, len(w) + 1))
        q = " ".join([*w[:p], "kilo", *w[p:]])
        act = Action(kind=ActionKind.REMOVE, position=p)
        seq = trajectories.Trajectory(queries=(q, " ".join(w)), actions=(act,), rewards=(0.2, 0.6))
        records.append(
            trajectories.ClaimTrajectories(
                claim_id=f"k{seed}-{c}", claim=q, relevant=("d1",), reward0=0.2, sequences=(seq,)
            )
        )
    return records


def test_word_head_finds_the_word_to_remove_in_unseen_claims(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Which position to edit depends on the word there: the word head reads it, learns the
    rule on 40 claims and applies it to 30 new ones (new word mixes, new positions)."""
    import dataclasses

    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path / "cache"))
    folder = write_folder(tmp_path / "bfs", _remove_kilo(40, seed=0))
    cfg = dataclasses.replace(TINY, pointer_head=True, word_dim=1, max_edits=2)
    train(folder, tmp_path / "m", model_config=cfg, config=dataclasses.replace(FAST, epochs=40),
          encoder=ENCODER, editor=WordEditor(), progress=False)  # fmt: skip
    doc = json.loads((tmp_path / "m" / CONFIG_FILE).read_text())
    assert doc["model"]["word_dim"] == 32 and doc["model"]["pointer_head"]
    rewriter = Rewriter.load(tmp_path / "m", encoder=ENCODER, editor=WordEditor())
    new = _remove_kilo(30, seed=1)
    results = rewriter.rewrite([r.claim for r in new], target_return=0.4)
    right = sum(res.trace[:1] == ("remove@" + str(r.claim.split().index("kilo")),)
                for r, res in zip(new, results, strict=True))  # fmt: skip
    assert right >= 27, f"{right}/30 unseen claims had kilo removed first"


def test_sequence_cap_applies_to_positive_and_negative_sequences_apart():
    def seq(neg: bool, word: str) -> dict:
        return {"queries": ["a b", word], "actions": [["remove", 0]], "rewards": [0.2, 0.1 if neg else 0.4], "negative": neg}  # fmt: skip

    rec = {"claim_id": "c", "sequences": [seq(False, "p1"), seq(False, "p2"), seq(True, "n1"), seq(True, "n2")]}  # fmt: skip
    eps, counts = build_episodes([rec], kinds=KINDS, max_edits=3, max_positions=8, max_sequences_per_claim=1)  # fmt: skip
    assert [e.texts[-1] for e in eps] == ["p1", "n1"] and counts.sequences == 2
