"""Train a tiny random BERT (written here, no downloads) on synthetic claims: the whole judge path."""

import json

import pytest

pytest.importorskip("transformers")
pytest.importorskip("torch")

from factseek.datasets.claims import LabeledClaim
from factseek.errors import ModelError
from factseek.judge import Judge, load_judge
from factseek.judge.classifier import ClassifierJudge
from factseek.judge.inputs import build_examples, claim_segment
from factseek.judge.train import TrainConfig, train_classifier
from factseek.labels import POLITIFACT
from factseek.types import Claim, Summary

WORDS = [
    "the",
    "a",
    "mayor",
    "said",
    "city",
    "taxes",
    "doubled",
    "crime",
    "fell",
    "jobs",
    "grew",
    "bridge",
    "cost",
    "million",
    "fake",
    "moon",
    "cheese",
    "true",
    "false",
]


@pytest.fixture(scope="session")
def tiny_backbone(tmp_path_factory):
    """A 2-layer, 32-wide random BERT with a 30-word WordPiece vocabulary."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    root = tmp_path_factory.mktemp("tiny-bert")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, ".", ",", "!"]
    (root / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tok = BertTokenizerFast(str(root / "vocab.txt"))  # positional: vocab_file (4.x), vocab (5.x)
    assert tok("city jobs")["input_ids"][1:3] == [vocab.index("city"), vocab.index("jobs")]
    tok.save_pretrained(str(root))
    cfg = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        initializer_range=0.5,  # distinct [CLS] states even before training (head-only test)
    )
    torch.manual_seed(0)
    BertModel(cfg).save_pretrained(str(root))
    return root


def synthetic(n=24):
    """'moon cheese' claims are pants-fire, 'jobs grew' claims are true: learnable in a few steps."""
    rows = []
    for i in range(n):
        if i % 2:
            rows.append(
                LabeledClaim(
                    claim=Claim(text="the moon cheese fake", speaker="a mayor", id=f"p{i}"),
                    label="pants-fire",
                    justification="fake",
                )
            )
        else:
            rows.append(
                LabeledClaim(
                    claim=Claim(text="city jobs grew", speaker="a mayor", id=f"t{i}"),
                    label="true",
                    justification="true",
                )
            )
    return rows


@pytest.fixture(scope="session")
def trained(tiny_backbone, tmp_path_factory):
    out = tmp_path_factory.mktemp("judge") / "tiny"
    cfg = TrainConfig(
        backbone=str(tiny_backbone),
        max_length=16,
        batch_size=8,
        lr=1e-2,
        warmup=0.0,
        epochs=6,
        seeds=2,
        device="cpu",
    )
    result = train_classifier(
        synthetic(), synthetic(8), out, POLITIFACT, cfg, preset_name="test", progress=False
    )
    return out, result


def test_training_writes_a_judge_folder(trained):
    out, result = trained
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["format_version"] == 1 and cfg["kind"] == "factseek-judge-classifier"
    assert cfg["labels"] == list(POLITIFACT.labels) and cfg["mode"] == "claim"
    assert cfg["metrics"]["best_seed"] == result.best.seed
    assert [s["seed"] for s in cfg["metrics"]["seeds"]] == [0, 1]
    assert (out / "model" / "model.safetensors").is_file()
    assert (out / "model" / "tokenizer.json").is_file() or (out / "model" / "vocab.txt").is_file()
    assert not (out / ".work").exists()
    assert not list(out.rglob("*.bin")) and not list(out.rglob("*.pkl"))
    assert result.best.dev.accuracy == 1.0  # the two patterns are separable


def test_load_predict_round_trip(trained):
    out, _ = trained
    judge = load_judge(out)
    assert isinstance(judge, Judge) and isinstance(judge, ClassifierJudge)
    assert judge.name == "classifier:tiny"
    v = judge.predict(Claim(text="the moon cheese fake", speaker="a mayor"), [])
    assert v.judged and v.label == "pants-fire"
    assert set(v.scores) == set(POLITIFACT.labels)
    assert sum(v.scores.values()) == pytest.approx(1.0, abs=1e-4)
    assert v.scores["pants-fire"] == max(v.scores.values())
    assert judge.predict(Claim(text="city jobs grew", speaker="a mayor"), []).label == "true"
    # claim-mode judges ignore summaries
    s = Summary(url="http://x", text="moon cheese", relevant=True, method="extractive")
    again = judge.predict(Claim(text="city jobs grew", speaker="a mayor"), [s])
    assert again.label == "true"
    # a second load gives the same probabilities
    examples, _ = build_examples(synthetic(4), "claim")
    a = [x.scores for x in judge.predict_examples(examples)]
    b = [x.scores for x in ClassifierJudge.load(out, device="cpu").predict_examples(examples)]
    assert a == b


def test_resume_skips_finished_seeds(tiny_backbone, tmp_path):
    out = tmp_path / "r"
    cfg = TrainConfig(
        backbone=str(tiny_backbone), max_length=16, batch_size=8, epochs=1, seeds=1, device="cpu"
    )
    train_classifier(synthetic(8), synthetic(4), out, POLITIFACT, cfg, progress=False)
    work = out / ".work"
    work.mkdir()
    # pretend seed 0 of a 2-seed run finished earlier with the same data: it must be reused
    from factseek.judge.train import _fingerprint

    cfg2 = TrainConfig(
        backbone=str(tiny_backbone), max_length=16, batch_size=8, epochs=1, seeds=2, device="cpu"
    )
    fp = _fingerprint(
        cfg2,
        POLITIFACT,
        build_examples(synthetic(8), "claim")[0],
        build_examples(synthetic(4), "claim")[0],
    )
    dev = {"n": 4, "accuracy": 0.0, "macro_f1": 0.0, "soft_accuracy": 0.0, "mae": 5.0}
    (work / "seed-0.json").write_text(
        json.dumps(
            {"fingerprint": fp, "seed": 0, "epoch": 1, "dev": dev, "seconds": 1.0, "history": [dev]}
        )
    )
    logs = []
    result = train_classifier(
        synthetic(8), synthetic(4), out, POLITIFACT, cfg2, progress=False, log=logs.append
    )
    assert "seed 0: already trained (resumed)" in logs
    assert result.best.seed == 1  # the resumed seed's MAE of 5 loses


def test_justification_mode_uses_pairs(tiny_backbone, tmp_path):
    cfg = TrainConfig(
        backbone=str(tiny_backbone),
        mode="justification",
        max_length=16,
        batch_size=8,
        epochs=1,
        device="cpu",
    )
    train_classifier(synthetic(8), synthetic(4), tmp_path / "j", POLITIFACT, cfg, progress=False)
    judge = ClassifierJudge.load(tmp_path / "j", device="cpu")
    assert judge.mode == "justification"
    assert judge.predict(Claim(text="city jobs grew"), []).judged


def test_load_rejects_other_folders(tmp_path, trained):
    with pytest.raises(ModelError, match="not a judge folder"):
        ClassifierJudge.load(tmp_path)
    out, _ = trained
    bad = tmp_path / "bad"
    bad.mkdir()
    cfg = json.loads((out / "config.json").read_text())
    (bad / "config.json").write_text(json.dumps({**cfg, "format_version": 99}))
    with pytest.raises(ModelError, match="format_version 99"):
        ClassifierJudge.load(bad)


def test_claim_segment_is_speaker_venue_claim():
    assert (
        claim_segment(Claim(text="Taxes doubled.", speaker="Jane Doe", venue="a tweet"))
        == "Jane Doe a tweet Taxes doubled."
    )
    assert claim_segment(Claim(text="Taxes doubled.")) == "Taxes doubled."


@pytest.mark.slow
def test_default_minilm_backbone_trains_and_loads(tmp_path):
    """The pip-shipped MiniLM (a BertModel checkpoint) gets a fresh 6-way head, offline."""
    cfg = TrainConfig(max_length=32, batch_size=8, epochs=1, seeds=1, freeze_layers=4, device="cpu")
    result = train_classifier(
        synthetic(16), synthetic(4), tmp_path / "m", POLITIFACT, cfg, progress=False
    )
    judge = load_judge(tmp_path / "m")
    assert judge.config["backbone"]["name"] == "minilm"
    assert result.best.dev.n == 4
    v = judge.predict(Claim(text="city jobs grew"), [])
    assert v.label in POLITIFACT.labels and len(v.scores) == 6


def test_head_only_training_matches_the_full_model(tiny_backbone, tmp_path):
    """freeze_layers=-1 trains pooler + classifier on cached [CLS] states; the saved model, run
    end to end, must reproduce the dev metrics measured on the cache, and the encoder is unchanged."""
    from safetensors.torch import load_file

    cfg = TrainConfig(
        backbone=str(tiny_backbone),
        max_length=16,
        batch_size=8,
        lr=1e-2,
        epochs=40,
        freeze_layers=-1,
        device="cpu",
    )
    result = train_classifier(
        synthetic(), synthetic(8), tmp_path / "h", POLITIFACT, cfg, progress=False
    )
    judge = ClassifierJudge.load(tmp_path / "h", device="cpu")
    examples, _ = build_examples(synthetic(8), "claim")
    preds = [v.label for v in judge.predict_examples(examples)]
    assert (
        sum(p == e.label for p, e in zip(preds, examples, strict=True)) / 8
        == result.best.dev.accuracy
    )
    assert result.best.dev.accuracy == 1.0
    before = load_file(str(tiny_backbone / "model.safetensors"))
    after = load_file(str(tmp_path / "h" / "model" / "model.safetensors"))
    key = next(k for k in after if k.endswith("encoder.layer.1.output.dense.weight"))
    assert (after[key] == before[key.removeprefix("bert.")]).all()
