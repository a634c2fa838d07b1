"""`factseek judge train|eval|predict` end to end on a tiny random BERT and synthetic files."""

import json

import pytest

pytest.importorskip("transformers")

from typer.testing import CliRunner

from factseek.cli import app
from factseek.types import Claim, Report, Summary, to_json

runner = CliRunner()

WORDS = [
    "the",
    "mayor",
    "said",
    "city",
    "jobs",
    "grew",
    "moon",
    "cheese",
    "fake",
    "bridge",
    "taxes",
]


@pytest.fixture(scope="module")
def backbone(tmp_path_factory):
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    root = tmp_path_factory.mktemp("bert")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, "."]
    (root / "vocab.txt").write_text("\n".join(vocab) + "\n")
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
    )
    torch.manual_seed(0)
    BertModel(cfg).save_pretrained(str(root))
    return root


def _claimdecomp(path, n, start=0):
    rows = []
    for i in range(start, start + n):
        fake = i % 2 == 1
        rows.append(
            {
                "example_id": i,
                "label": "pants-fire" if fake else "true",
                "claim": f"the moon cheese fake {i}" if fake else f"city jobs grew {i}",
                "person": "the mayor",
                "venue": "stated on May 1, 2020 in a speech:",
                "justification": ["fake ." if fake else "jobs grew ."],
            }
        )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("data")
    return _claimdecomp(d / "train.jsonl", 24), _claimdecomp(d / "dev.jsonl", 6, start=100), d


@pytest.fixture(scope="module")
def model(backbone, files):
    train, dev, d = files
    out = d / "judge"
    held_out = _claimdecomp(d / "held_out.jsonl", 2, start=4)  # claims 4 and 5 of the training file
    args = [
        "judge",
        "train",
        "--data",
        str(train),
        "--dev",
        str(dev),
        "--out",
        str(out),
        "--backbone",
        str(backbone),
        "--exclude",
        str(held_out),
    ]
    args += [
        "--epochs",
        "2",
        "--lr",
        "1e-2",
        "--batch-size",
        "8",
        "--max-length",
        "16",
        "--device",
        "cpu",
        "--freeze-layers",
        "0",
        "--quiet",
    ]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    assert "saved" in r.output and "dev: n=6" in r.output
    assert "kept 22 training claims; removed 2 that appear in the evaluation data" in r.output
    return out


def test_train_dedups_against_dev_and_excluded_files(model):
    cfg = json.loads((model / "config.json").read_text())
    assert cfg["train"]["dedup"] == {"kept": 22, "overlap": 2, "repeated": 0}
    assert cfg["train"]["n_train"] == 22 and cfg["train"]["excluded"] == ["held_out.jsonl"]


def test_eval_predict_compare(model, files, tmp_path):
    _, dev, _ = files
    r = runner.invoke(
        app,
        [
            "judge",
            "eval",
            "--model",
            str(model),
            "--data",
            str(dev),
            "--out",
            str(tmp_path / "a.jsonl"),
            "--confusion",
            str(tmp_path / "cm.png"),
            "--device",
            "cpu",
        ],
    )
    assert r.exit_code == 0, r.output
    assert "accuracy" in r.output and "soft accuracy" in r.output and "MAE" in r.output
    assert (tmp_path / "cm.png").read_bytes()[:4] == b"\x89PNG"
    r = runner.invoke(
        app,
        [
            "judge",
            "predict",
            "--model",
            str(model),
            "--data",
            str(dev),
            "--out",
            str(tmp_path / "p.jsonl"),
            "--device",
            "cpu",
        ],
    )
    assert r.exit_code == 0, r.output
    preds = [json.loads(x) for x in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert [p["id"] for p in preds] == [str(i) for i in range(100, 106)]
    assert all(
        set(p["scores"])
        == {"pants-fire", "false", "barely-true", "half-true", "mostly-true", "true"}
        for p in preds
    )
    # a second system that always says "half-true"
    other = tmp_path / "b.jsonl"
    other.write_text(
        "".join(json.dumps({"id": p["id"], "label": "half-true"}) + "\n" for p in preds)
    )
    r = runner.invoke(
        app,
        [
            "judge",
            "eval",
            "--model",
            str(model),
            "--data",
            str(dev),
            "--compare",
            str(other),
            "--resamples",
            "200",
            "--device",
            "cpu",
        ],
    )
    assert r.exit_code == 0, r.output
    assert "paired permutation test" in r.output and "p = " in r.output


def test_bad_input_is_one_line_and_exit_2(model, files, tmp_path):
    _, dev, _ = files
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"claim": "x", "label": "true", "person": "a"}\n{oops\n')
    r = runner.invoke(
        app, ["judge", "eval", "--model", str(model), "--data", str(bad), "--format", "claimdecomp"]
    )
    assert r.exit_code == 2
    assert "bad.jsonl:2: not valid JSON" in r.output
    r = runner.invoke(app, ["judge", "eval", "--model", str(tmp_path), "--data", str(dev)])
    assert r.exit_code == 1 and "not a judge folder" in r.output
    r = runner.invoke(
        app,
        [
            "judge",
            "train",
            "--data",
            str(dev),
            "--dev",
            str(dev),
            "--out",
            str(tmp_path / "x"),
            "--preset",
            "tpu",
        ],
    )
    assert r.exit_code == 2


def test_summaries_mode_reads_reports(backbone, files, tmp_path):
    train, dev, _ = files
    reports = tmp_path / "reports"
    reports.mkdir()
    for i in [*range(24), *range(100, 106)]:
        fake = i % 2 == 1
        rep = Report(
            claim=Claim(text="text differs: matched by id", id=str(i)),
            summaries=(
                Summary(
                    url="http://x",
                    text="fake ." if fake else "jobs grew .",
                    relevant=True,
                    method="extractive",
                ),
            ),
        )
        (reports / f"{i}.json").write_text(to_json(rep))
    out = tmp_path / "s"
    args = [
        "judge",
        "train",
        "--data",
        str(train),
        "--dev",
        str(dev),
        "--out",
        str(out),
        "--backbone",
        str(backbone),
        "--mode",
        "summaries",
    ]
    args += [
        "--summaries",
        str(reports),
        "--epochs",
        "1",
        "--max-length",
        "16",
        "--device",
        "cpu",
        "--freeze-layers",
        "0",
        "--quiet",
    ]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    assert "no report for 0 training and 0 dev claims" in r.output
    r = runner.invoke(
        app, ["judge", "eval", "--model", str(out), "--data", str(dev), "--device", "cpu"]
    )
    assert r.exit_code == 2 and "needs factseek reports" in r.output


def test_thresholds_for_the_llm_judge(tmp_path):
    from factseek.judge.llm_scorer import ScoreThresholds

    data = _claimdecomp(tmp_path / "train.jsonl", 8)  # half pants-fire, half true
    out = tmp_path / "thresholds.json"
    r = runner.invoke(app, ["judge", "thresholds", "--data", str(data), "--out", str(out)])
    assert r.exit_code == 0, r.output
    t = ScoreThresholds.load(out)
    # pants-fire holds the first half of the scale; false..mostly-true are empty and share the cut
    assert t.cuts == (50.0, 50.0, 50.0, 50.0, 50.0)
    assert t.label(10) == "pants-fire" and t.label(90) == "true"
