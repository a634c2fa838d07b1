"""Stance readings kept on disk (stance/readings.py): a pair read before is given again, the
network is not even built when every pair was read before, and a broken file costs nothing."""

import logging
import shutil

import numpy as np
import pytest

from factseek.stance.readings import FILE, ReadingCache, pair_key
from stance_fixtures import tiny_checkpoint

torch = pytest.importorskip("torch")

PAIRS = [
    ("the sky is blue", "the sky is blue"),
    ("the sky is red", "the sky is not red"),
    ("the moon is made of cheese", "the grass is green"),
]


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    """A tiny stance model trained here (int8 as shipped, so read one pair per pass)."""
    from factseek.stance.data import StancePair
    from factseek.stance.train import StanceTrainConfig, train_stance

    base = tiny_checkpoint(tmp_path_factory.mktemp("tiny-bert"), "bert")
    pairs = [
        StancePair(question=q, evidence=e, label=lab, source="toy", group=str(i))
        for i, ((q, e), lab) in enumerate(
            zip(PAIRS * 4, ["supports", "refutes", "nei"] * 4, strict=True)
        )
    ]
    out = tmp_path_factory.mktemp("stance") / "model"
    config = StanceTrainConfig(
        base=str(base), layers=2, train_layers=2, lora_rank=4, max_length=24, epochs=1
    )
    train_stance(pairs, pairs[:3], out, config, progress=False)
    return out


def _load(folder, cache=None):
    from factseek.stance.crossencoder import CrossEncoderStance

    model = CrossEncoderStance.load(folder, engine="torch")
    return model.with_readings(cache) if cache is not None else model


def test_a_pair_read_before_is_given_again_without_building_the_network(tiny_folder, tmp_path):
    plain = _load(tiny_folder).raw_probabilities(PAIRS)
    first = _load(tiny_folder, tmp_path)
    assert np.array_equal(first.raw_probabilities(PAIRS), plain)
    assert len(first.readings) == len(PAIRS)
    again = _load(tiny_folder, tmp_path)  # a new process, as it were: nothing built yet
    results = again.classify([*PAIRS, PAIRS[0]])  # a pair twice in one call
    assert not again._net.built  # every pair came from the file
    assert np.array_equal(again.raw_probabilities(PAIRS), plain)
    assert [r.label for r in results] == [r.label for r in _load(tiny_folder).classify([*PAIRS, PAIRS[0]])]  # fmt: skip
    # one new pair: only it is read, with the network built for it
    more = again.raw_probabilities([*PAIRS, ("the grass is red", "the grass is green")])
    assert again._net.built and len(again.readings) == len(PAIRS) + 1
    assert np.array_equal(more[:3], plain)


def test_another_adapter_is_another_model(tiny_folder, tmp_path):
    from safetensors.torch import load_file, save_file

    other = tmp_path / "other"
    shutil.copytree(tiny_folder, other)
    state = load_file(str(other / "adapter.safetensors"))
    state = {k: v + 0.5 if k.startswith("head") else v for k, v in state.items()}
    save_file(state, str(other / "adapter.safetensors"))
    a = _load(tiny_folder, tmp_path / "cache")
    b = _load(other, tmp_path / "cache")
    assert a.readings.model != b.readings.model
    a.raw_probabilities(PAIRS)
    fresh = b.raw_probabilities(PAIRS)  # misses: read by its own network
    assert b._net.built and len(b.readings) == 2 * len(PAIRS)
    assert np.allclose(fresh, _load(other).raw_probabilities(PAIRS))


def test_a_broken_file_is_left_alone_and_every_pair_read(tiny_folder, tmp_path, caplog):
    (tmp_path / FILE).write_bytes(b"not a database " * 100)
    ReadingCache._warned = False
    model = _load(tiny_folder, tmp_path)
    with caplog.at_level(logging.WARNING, logger="factseek.stance.readings"):
        probs = model.raw_probabilities(PAIRS)
    assert np.array_equal(probs, _load(tiny_folder).raw_probabilities(PAIRS))
    assert "not used" in caplog.text
    assert (tmp_path / FILE).read_bytes().startswith(b"not a database")


def test_pair_keys_are_the_tokens_the_network_sees():
    assert pair_key("m", [1, 2, 3], [0, 0, 1]) == pair_key("m", [1, 2, 3], [0, 0, 1])
    assert pair_key("m", [1, 2, 3], [0, 0, 1]) != pair_key("m", [1, 2, 3], [0, 1, 1])
    assert pair_key("m", [1, 2, 3], [0, 0, 1]) != pair_key("n", [1, 2, 3], [0, 0, 1])


def test_check_keeps_readings_unless_told_not_to(tiny_folder, tmp_path):
    from factseek.api import check
    from factseek.demo import demo_claim, demo_store

    store = demo_store(tmp_path / "demo-store", progress=False)
    claim = demo_claim()
    cache = tmp_path / "cache"
    check(claim, store=store, stance=str(tiny_folder), cache_dir=cache, use_cache=False)
    assert not (cache / FILE).exists()
    first = check(claim, store=store, stance=str(tiny_folder), cache_dir=cache)
    kept = len(ReadingCache(cache, "any"))
    assert kept > 0
    second = check(claim, store=store, stance=str(tiny_folder), cache_dir=cache)
    assert len(ReadingCache(cache, "any")) == kept  # nothing new read
    assert [c.stance for c in first.evidence] == [c.stance for c in second.evidence]


def test_threads_share_one_model_and_its_readings(tiny_folder, tmp_path):
    """The web app reads on several threads: one network is built, and each thread gets the
    readings it would get alone."""
    from concurrent.futures import ThreadPoolExecutor

    plain = _load(tiny_folder).raw_probabilities(PAIRS)
    model = _load(tiny_folder, tmp_path)
    copies = [model.with_readings(tmp_path) for _ in range(4)]  # one network behind them all
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda m: m.raw_probabilities(PAIRS), copies))
    assert all(np.array_equal(g, plain) for g in got)
    assert all(c._net is model._net for c in copies) and model._net.built
    assert len(model.readings) == len(PAIRS)
