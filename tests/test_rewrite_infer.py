"""Inference: masking end to end, batching, stopping rules, the real spaCy/WordNet editor."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from factseek.ml.encode import FunctionEncoder  # noqa: E402
from factseek.rewrite.transformer.infer import ActionsEditor, Editor, Rewriter  # noqa: E402
from factseek.rewrite.transformer.model import (  # noqa: E402
    DecisionTransformer,
    DTConfig,
    load_checkpoint,
    save_checkpoint,
)

KINDS = ("remove", "swap", "add", "present")


class RandomMaskEditor:
    """Allows a seeded random subset of (kind, position) per text; applying anything else fails."""

    name = "random-mask"
    kinds = KINDS

    def __init__(self, density: float) -> None:
        self.density = density
        self.applied: list[tuple[str, int, int]] = []

    def _mask(self, text: str, max_positions: int) -> np.ndarray:
        m = np.random.default_rng(_seed("mask" + text)).random((len(KINDS), 64)) < self.density
        m[:, len(text.split()) :] = False
        return m[:, :max_positions]

    def masks(self, texts: Sequence[str], max_positions: int) -> np.ndarray:
        return np.stack([self._mask(t, max_positions) for t in texts]).reshape(
            len(texts), len(KINDS), max_positions
        )

    def apply(self, text: str, kind: int, position: int) -> str:
        if not self._mask(text, 64)[kind, position]:
            raise AssertionError(f"invalid action {kind}@{position} applied to {text!r}")
        self.applied.append((text, kind, position))
        w = text.split()
        w.insert(position + 1, f"{KINDS[kind]}{position}")
        return " ".join(w)


def _seed(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=4).digest())


def encoder(dim: int = 16) -> FunctionEncoder:
    def fn(texts: Sequence[str]) -> np.ndarray:
        return np.stack([np.random.default_rng(_seed(t)).standard_normal(dim) for t in texts])

    return FunctionEncoder(fn, dim=dim, name="hash")


def rewriter(
    seed: int, editor: Editor, *, target: float = 0.2, step: float = 0.05, k: int = 4
) -> Rewriter:
    cfg = DTConfig(
        n_layer=1, n_head=2, n_embd=16, dropout=0.0, max_edits=k, max_positions=8, state_dim=16
    )
    torch.manual_seed(seed)
    model = DecisionTransformer(cfg).eval()
    with torch.no_grad():  # make STOP unlikely so the edits get exercised
        model.head.weight[cfg.stop_index].zero_()
        model.head.weight.mul_(50.0)
    meta = {"kinds": list(KINDS), "returns": {"target_return": target, "rtg_step": step}}
    return Rewriter(model, meta, encoder=encoder(), editor=editor)


TEXTS = [f"w{i} " + " ".join(f"t{j}" for j in range(i % 6 + 1)) for i in range(12)]


@pytest.mark.parametrize("seed", range(8))
def test_rewriter_never_applies_an_invalid_action(seed: int) -> None:
    editor = RandomMaskEditor(density=[0.02, 0.1, 0.5][seed % 3])
    results = rewriter(seed, editor).rewrite(TEXTS, batch_size=5)
    assert [r.original for r in results] == TEXTS
    for r in results:
        assert len(r.path) == r.steps + 1 == len(r.trace) + 1
        assert r.path[0] == r.original and r.path[-1] == r.text
        assert r.steps <= 4 and r.stopped in {"stop", "budget"}
    assert sum(r.steps for r in results) == len(editor.applied)


def test_batching_does_not_change_results() -> None:
    a = rewriter(1, RandomMaskEditor(0.3)).rewrite(TEXTS, batch_size=1)
    b = rewriter(1, RandomMaskEditor(0.3)).rewrite(TEXTS, batch_size=64)
    assert a == b


def test_env_stops_at_max_reward_and_drives_the_return() -> None:
    calls: list[tuple[int, str]] = []

    def env(i: int, text: str) -> float:
        calls.append((i, text))
        return 1.0 if i == 0 else 0.1 * len(text.split())  # query 0 is already perfect

    rw = rewriter(2, RandomMaskEditor(0.5))
    results = rw.rewrite(TEXTS[:3], env=env)
    assert results[0].steps == 0 and results[0].stopped == "max-reward"
    assert results[0].rewards == (1.0,)
    for i, r in enumerate(results[1:], 1):
        assert r.rewards == tuple(0.1 * len(q.split()) for q in r.path)
        assert {t for j, t in calls if j == i} == set(r.path)


def test_empty_input_and_load_checks(tmp_path: Path) -> None:
    rw = rewriter(0, RandomMaskEditor(0.3))
    assert rw.rewrite([]) == []
    save_checkpoint(tmp_path, rw.model, encoder_name="hash", step=1, meta=rw.meta)
    model, _ = load_checkpoint(tmp_path)
    assert model.cfg == rw.cfg
    loaded = Rewriter.load(tmp_path, encoder=encoder(), editor=RandomMaskEditor(0.3))
    assert loaded.rewrite(TEXTS) == rw.rewrite(TEXTS)
    from factseek.errors import ModelError

    with pytest.raises(ModelError, match=r"384-d|wants"):
        Rewriter.load(tmp_path, encoder=encoder(384), editor=RandomMaskEditor(0.3))


@pytest.mark.slow  # loads spaCy and WordNet
def test_actions_editor_masks_and_applies_real_edits() -> None:
    editor = ActionsEditor()
    texts = ["Vaccines cause autism in children", "The ice sheets melted"]
    masks = editor.masks(texts, 8)
    assert masks.shape == (2, len(editor.kinds), 8)
    assert not masks[:, :, 5:].any() and not masks[1, :, 4:].any()
    rw = rewriter(3, editor, k=3)
    for r in rw.rewrite(texts):
        assert r.steps == len(r.trace)
        for before, after, act in zip(r.path, r.path[1:], r.trace, strict=False):
            kind, pos = act.split("@")
            assert editor.masks([before], 8)[0, editor.kinds.index(kind), int(pos)]
            assert after != before
