"""int8 maps with one activation scale per token, pairs read packed (stance/rowint8.py,
``quantize: "int8-rows"``): a pair's reading is its own in any batch, bit for bit; the int8 map
agrees with its float self within quantisation error; the packed reading is the padded one's;
readings kept for one mode are never given for another."""

import dataclasses

import numpy as np
import pytest

from stance_fixtures import tiny_checkpoint

torch = pytest.importorskip("torch")

PAIRS = [
    ("the sky is blue", "the sky is blue"),
    ("the sky is red", "the sky is not red"),
    ("the moon is made of cheese", "the grass is green . " * 4),
    ("is the grass green ?", "grass"),
    ("the grass is red", "the grass is not red , the sky is blue , the moon is not cheese"),
    ("", ""),
    ("the sky", "blue " * 30),
]


@pytest.fixture(scope="module", params=["bert", "mpnet"])
def folder(request, tmp_path_factory):
    """A stance folder over a tiny random base (an untrained adapter, a random head), int8-rows."""
    from factseek.stance.crossencoder import save_model
    from factseek.stance.model import NetConfig, StanceNet

    root = tmp_path_factory.mktemp(f"rows-{request.param}")
    base = tiny_checkpoint(root, request.param)
    config = NetConfig(base=str(base), layers=2, train_layers=2, lora_rank=2, lora_alpha=4.0)
    torch.manual_seed(0)
    net = StanceNet.from_base(config)
    with torch.no_grad():  # a non-zero adapter, so folding it in matters
        for name, p in net.adapter_state().items():
            if "lora" in name:
                p.copy_(torch.randn_like(p) * 0.1)
    settings = {"net": dataclasses.asdict(config), "max_length": 24, "quantize": "int8-rows"}
    return save_model(net, root / "model", settings | {"thresholds": None})


def _load(folder, quantize=None, engine="numpy"):
    from factseek.stance.crossencoder import CrossEncoderStance

    return CrossEncoderStance.load(folder, quantize=quantize, engine=engine)


def test_a_rows_model_is_read_by_torch_in_packed_batches(folder):
    from factseek.stance.crossencoder import BATCH_SIZE
    from factseek.stance.rowint8 import RowInt8Linear

    model = _load(folder)
    assert model.config["engine"] == "torch"  # the numpy engine has no such maps
    assert model.config["quantize"] == "int8-rows" and model.batch_size == BATCH_SIZE
    layer = model.net.layers[0]
    for name in ("query", "key", "value", "attn_out", "ffn_in", "ffn_out"):
        assert isinstance(getattr(layer, name), RowInt8Linear), name
    assert all(type(m) is not RowInt8Linear for m in model.net.head)  # the head stays fp32


def test_a_rows_reading_is_the_pairs_own_bit_for_bit(folder):
    model = _load(folder)
    together = model.raw_probabilities(PAIRS)
    alone = np.vstack([model.raw_probabilities([p]) for p in PAIRS])
    assert np.array_equal(together, alone)  # packed: no padding, attention within each pair
    assert np.array_equal(model.raw_probabilities(PAIRS[::-1]), together[::-1])
    model.batch_size = 3  # other companions
    assert np.array_equal(model.raw_probabilities(PAIRS[2:] + PAIRS[:2]), np.vstack([together[2:], together[:2]]))  # fmt: skip
    assert not np.allclose(together, together[0])  # the pairs do read differently


@pytest.mark.parametrize("threads", [2, 3])
def test_a_rows_reading_is_the_same_on_several_threads(folder, threads):
    model = _load(folder)
    before = torch.get_num_threads()
    one = model.raw_probabilities(PAIRS * 2)
    try:
        torch.set_num_threads(threads)
        several = model.raw_probabilities(PAIRS * 2)  # packed batches side by side
        few = model.raw_probabilities(PAIRS[:2])  # too few to share out: threads in the pass
    finally:
        torch.set_num_threads(before)
    assert np.array_equal(one, several)
    assert np.array_equal(few, one[:2])


def test_the_packed_reading_is_the_padded_one(folder):
    """With fp32 maps, the packed forward (positions, MPNet's relative bias, pooling, head per
    pair) gives what the padded batch gives."""
    from factseek.stance.crossencoder import pad, tokenize
    from factseek.stance.rowint8 import packed_logits

    model = _load(folder, "none", "torch")
    ids, types = tokenize(model.tokenizer, PAIRS)
    with torch.inference_mode():
        padded, _ = model.net(*pad(ids, types))
        packed = packed_logits(model.net, ids, types)
    assert torch.allclose(packed, padded, atol=1e-5)


def test_the_row_int8_map_agrees_with_its_float_self_within_quantisation_error():
    from factseek.stance.rowint8 import LEVELS, RowInt8Linear, quantize_rows

    g = torch.Generator().manual_seed(1)
    linear = torch.nn.Linear(64, 48)
    with torch.no_grad():
        linear.weight.copy_(torch.randn(48, 64, generator=g) * 0.2)
    x = torch.randn(5, 64, generator=g)
    x[1] *= 1e-3  # a quiet token beside
    x[2, 7] = 300.0  # an outlier token
    x[3] = 0.0
    ours, exact = RowInt8Linear(linear)(x), linear(x).detach()
    # |error| of a row <= sum_k |x_k| dw/2 + |w_k| dx/2 + dx dw/4 (dx: the row's step, dw: the
    # output channel's)
    dx = x.abs().amax(1, keepdim=True) / LEVELS  # (5, 1)
    dw = linear.weight.abs().amax(1).detach() / LEVELS  # (48,)
    bound = x.abs().sum(1, keepdim=True) * dw / 2 + dx * linear.weight.abs().sum(1).detach() / 2
    bound = bound + dx * dw * 64 / 4
    assert torch.all((ours - exact).abs() <= bound + 1e-6)
    assert torch.equal(ours[3], linear.bias.detach())  # a zero token reads as the bias
    # the quiet token keeps its own precision beside the outlier (one scale per pass would not)
    quiet = (ours[1] - exact[1]).abs().max() / (exact[1] - linear.bias.detach()).abs().max()
    assert quiet < 0.05
    for i in range(5):  # a row's output is its own, bit for bit
        assert torch.equal(RowInt8Linear(linear)(x[i : i + 1])[0], ours[i])
    q, scales = quantize_rows(x)
    assert q.dtype == torch.int8 and int(q.abs().max()) == LEVELS and scales.shape == (5, 1)


def test_each_mode_keeps_its_own_readings(folder, tmp_path):
    from factseek.stance.readings import model_key

    models = {q: _load(folder, q).with_readings(tmp_path) for q in ("int8-mixed", "int8-rows", "none")}  # fmt: skip
    assert len({m.readings.model for m in models.values()}) == 3
    models["int8-mixed"].raw_probabilities(PAIRS)
    rows = models["int8-rows"]
    fresh = rows.raw_probabilities(PAIRS)  # none of int8-mixed's readings given to int8-rows
    assert rows._net.built and len(rows.readings) == 2 * len(PAIRS)  # one file, both models
    assert np.array_equal(fresh, _load(folder).raw_probabilities(PAIRS))
    cfg = dict(models["int8-rows"].config)
    key = model_key(folder, cfg, folder, "torch")
    assert key != model_key(folder, {**cfg, "quantize": "int8-mixed"}, folder, "torch")
