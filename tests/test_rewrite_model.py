"""The decision transformer alone: shapes, causality, masking, action ids."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from factseek.rewrite.transformer.model import (  # noqa: E402
    IGNORE,
    PAPER,
    PRESETS,
    SMALL,
    DecisionTransformer,
    DTConfig,
    decode_action,
    encode_action,
)

TINY = DTConfig(
    n_layer=2, n_head=2, n_embd=32, dropout=0.0, max_edits=4, max_positions=6, state_dim=16
)


def _inputs(cfg: DTConfig, b: int, t: int, seed: int = 0) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return dict(
        rtg=torch.rand(b, t, generator=g),
        states=torch.randn(b, t, cfg.state_dim, generator=g),
        actions=torch.randint(0, cfg.n_actions + 1, (b, t), generator=g),
        timesteps=torch.arange(t).expand(b, t),
    )


def test_presets_match_the_paper_and_fit_a_cpu() -> None:
    assert (PAPER.n_layer, PAPER.n_head, PAPER.n_embd) == (6, 8, 768)
    assert PAPER.block_size == 3 * PAPER.max_edits
    assert PRESETS["small"] is SMALL
    assert DecisionTransformer(SMALL).n_params() < 2_000_000


def test_config_rejects_bad_shapes_and_round_trips() -> None:
    with pytest.raises(ValueError):
        DTConfig(n_embd=30, n_head=4)
    assert DTConfig.from_dict({**TINY.to_dict(), "unknown": 1}) == TINY


def test_action_ids_cover_kinds_positions_and_stop() -> None:
    cfg = TINY
    seen = {encode_action(k, p, cfg) for k in range(cfg.n_kinds) for p in range(cfg.max_positions)}
    assert seen == set(range(cfg.stop_index))
    assert cfg.n_actions == cfg.stop_index + 1 and cfg.pad_index == cfg.n_actions
    assert decode_action(encode_action(2, 5, cfg), cfg) == (2, 5)
    assert decode_action(cfg.stop_index, cfg) is None
    with pytest.raises(ValueError):
        encode_action(0, cfg.max_positions, cfg)


def test_forward_shapes_and_loss() -> None:
    model = DecisionTransformer(TINY).eval()
    x = _inputs(TINY, b=3, t=4)
    logits, loss = model(**x)
    assert logits.shape == (3, 4, TINY.n_actions) and loss is None
    targets = torch.full((3, 4), IGNORE)
    targets[:, 0] = 1
    _, loss = model(**x, targets=targets)
    assert loss is not None and torch.isfinite(loss)
    with pytest.raises(ValueError):
        model(**_inputs(TINY, b=1, t=TINY.max_edits + 1))


def test_logits_at_step_t_never_see_action_t_or_later() -> None:
    model = DecisionTransformer(TINY).eval()
    x = _inputs(TINY, b=2, t=4)
    base, _ = model(**x)
    for t in range(4):
        y = {k: v.clone() for k, v in x.items()}
        y["actions"][:, t:] = (y["actions"][:, t:] + 1) % TINY.n_actions
        y["states"][:, t + 1 :] += 1.0
        y["rtg"][:, t + 1 :] += 1.0
        out, _ = model(**y)
        torch.testing.assert_close(out[:, : t + 1], base[:, : t + 1])
    # ...but it does see the state at step t
    y = {k: v.clone() for k, v in x.items()}
    y["states"][:, 1] += 1.0
    out, _ = model(**y)
    assert not torch.allclose(out[:, 1], base[:, 1])


def test_pointer_head_shapes_and_causality() -> None:
    import dataclasses

    cfg = dataclasses.replace(TINY, pointer_head=True)
    model = DecisionTransformer(cfg).eval()
    x = _inputs(cfg, b=2, t=3)
    masks = torch.rand(2, 3, cfg.n_actions) < 0.5
    logits, _ = model(**x, masks=masks)
    assert logits.shape == (2, 3, cfg.n_actions)
    y = {k: v.clone() for k, v in x.items()}
    y["actions"][:, 1:] = 0
    out, _ = model(**y, masks=masks)
    torch.testing.assert_close(out[:, :2], logits[:, :2])


@pytest.mark.parametrize("seed", range(25))
def test_masking_never_lets_an_invalid_action_through(seed: int) -> None:
    """Property: under any mask, argmax and sampling pick allowed actions (or STOP)."""
    rng = np.random.default_rng(seed)
    cfg = DTConfig(
        n_layer=1,
        n_head=2,
        n_embd=16,
        dropout=0.0,
        pointer_head=bool(seed % 2),
        max_edits=int(rng.integers(1, 5)),
        max_positions=int(rng.integers(1, 9)),
        n_kinds=int(rng.integers(1, 5)),
        state_dim=8,
    )
    torch.manual_seed(seed)
    model = DecisionTransformer(cfg).eval()
    b, t = 5, cfg.max_edits
    density = rng.uniform(0.0, 0.5)
    mask = torch.from_numpy(rng.random((b, t, cfg.n_actions)) < density)
    mask[..., cfg.stop_index] = bool(rng.integers(0, 2))  # the model must allow STOP anyway
    # huge raw logits on the forbidden actions must not matter
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(10.0)
    logits, _ = model(**_inputs(cfg, b, t, seed), masks=mask)
    allowed = mask.clone()
    allowed[..., cfg.stop_index] = True
    assert torch.isinf(logits[~allowed]).all()
    assert torch.isfinite(logits[allowed]).all()
    pick = logits.argmax(-1)
    assert allowed.gather(-1, pick.unsqueeze(-1)).all()
    probs = torch.softmax(logits, -1)
    samples = torch.multinomial(probs.reshape(b * t, -1), 20, replacement=True)
    assert allowed.reshape(b * t, -1).gather(-1, samples).all()
    # a valid target gives a finite loss and finite gradients
    targets = pick.clone()
    _, loss = model(**_inputs(cfg, b, t, seed), masks=mask, targets=targets)
    loss.backward()
    assert torch.isfinite(loss)
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)
