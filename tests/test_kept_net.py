"""Built int8 stance networks kept on disk (``stance.kept_net``): the network a later process
loads reads every pair as the one built from the base, bit for bit; a torn file is built again;
at most ``KEEP`` networks are kept; fp32 and packed-row networks are not kept."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("safetensors")

from stance_fixtures import tiny_checkpoint
from test_stance import _pairs

PAIRS = [(p.question, p.evidence) for p in _pairs()[:6]] + [("the sky", "blue " * 30)]


@pytest.fixture(scope="module", params=["bert", "mpnet"])
def model(request, tmp_path_factory) -> Path:
    from factseek.stance.train import StanceTrainConfig, train_stance

    base = tiny_checkpoint(tmp_path_factory.mktemp(f"tiny-{request.param}"), request.param)
    out = tmp_path_factory.mktemp("kept") / "model"
    config = StanceTrainConfig(base=str(base), layers=2, train_layers=2, lora_rank=4,
                               max_length=24, batch_size=8, epochs=1, quantize="none")  # fmt: skip
    train_stance(_pairs(), _pairs()[:6], out, config, progress=False)
    return out


def read(folder: Path, mode: str) -> np.ndarray:
    from factseek.stance.crossencoder import CrossEncoderStance

    return CrossEncoderStance.load(folder, quantize=mode, engine="torch").raw_probabilities(PAIRS)


@pytest.mark.parametrize("mode", ["int8", "int8-mixed"])
def test_a_kept_network_reads_as_the_built_one(model: Path, mode: str, tmp_path, monkeypatch):
    import factseek.stance.crossencoder as ce
    from factseek.stance import kept_net

    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path))
    builds: list[str] = []
    real = ce._torch_net
    monkeypatch.setattr(ce, "_torch_net", lambda *a: builds.append(a[2]) or real(*a))
    first = read(model, mode)
    kept = list((tmp_path / kept_net.DIR).glob("*.pt"))
    assert builds == [mode] and len(kept) == 1
    again = read(model, mode)  # a new load: from the file, not built
    assert builds == [mode]
    assert np.array_equal(first, again)
    # another mode is another network
    other = "int8" if mode == "int8-mixed" else "int8-mixed"
    read(model, other)
    assert builds == [mode, other] and len(list((tmp_path / kept_net.DIR).glob("*.pt"))) == 2


def test_a_torn_file_is_built_again_and_replaced(model: Path, tmp_path, monkeypatch, caplog):
    from factseek.stance import kept_net

    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path))
    first = read(model, "int8")
    (kept,) = (tmp_path / kept_net.DIR).glob("*.pt")
    kept.write_bytes(kept.read_bytes()[:100])
    with caplog.at_level(logging.WARNING, logger="factseek.stance.kept_net"):
        again = read(model, "int8")
    assert "unreadable" in caplog.text and "building it again" in caplog.text
    assert np.array_equal(first, again)
    assert kept.stat().st_size > 100  # replaced by the rebuilt network
    assert np.array_equal(read(model, "int8"), first)


def test_only_the_most_recently_used_are_kept_and_fp32_is_never(model, tmp_path, monkeypatch):
    from factseek.stance import kept_net

    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path))
    monkeypatch.setattr(kept_net, "KEEP", 1)
    read(model, "none")
    assert not (tmp_path / kept_net.DIR).exists()
    read(model, "int8")
    writing = tmp_path / kept_net.DIR / "another-process-writing.part"  # not pruned meanwhile
    writing.write_bytes(b"")
    read(model, "int8-mixed")
    assert writing.exists()
    (only,) = (tmp_path / kept_net.DIR).glob("*.pt")
    assert only.name.startswith(kept_net.net_key(*_key_args(model, "int8-mixed")))


def _key_args(folder: Path, mode: str):
    from factseek.stance.crossencoder import WEIGHTS_FILE, read_config
    from factseek.stance.netconfig import NetConfig

    return NetConfig(**read_config(folder)["net"]), folder / WEIGHTS_FILE, mode


def test_loading_a_kept_network_says_nothing(model: Path, tmp_path, monkeypatch):
    import warnings

    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path))
    read(model, "int8-mixed")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        read(model, "int8-mixed")  # from the file: torch's notes on quantised tensors kept quiet
    assert not [w for w in seen if "quantiz" in str(w.message).lower()]


def test_a_cache_that_cannot_be_written_leaves_the_network_in_memory(model, tmp_path, monkeypatch, caplog):  # fmt: skip
    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path))
    first = read(model, "int8")
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder should be")
    monkeypatch.setenv("FACTSEEK_CACHE", str(blocked))
    with caplog.at_level(logging.WARNING, logger="factseek.stance.kept_net"):
        again = read(model, "int8")
    assert "not kept" in caplog.text
    assert np.array_equal(first, again)
