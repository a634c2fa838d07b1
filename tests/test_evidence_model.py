"""The trained evidence judge: features, fitting, the folder round trip, and load_judge dispatch."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from factseek.errors import InputError, ModelError
from factseek.judge import EvidenceJudge, load_judge
from factseek.judge.evidence_model import (
    STANCE_FEATURES,
    EvidenceModelJudge,
    Example,
    Featurizer,
    FitConfig,
    train_evidence_judge,
)
from factseek.labels import AVERITEC
from factseek.ml.encode import FunctionEncoder
from factseek.stance import FunctionStance
from factseek.types import Claim, Evidence


def bag(texts):
    """A tiny deterministic encoder: hashed bag of words, 16 dimensions."""
    out = np.zeros((len(texts), 16))
    for i, t in enumerate(texts):
        for w in t.lower().split():
            out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % 16] += 1
    return out + 1e-3


ENCODER = FunctionEncoder(bag, dim=16, name="bag")
STANCE = FunctionStance(
    lambda q, e: "refutes" if "hoax" in e else ("supports" if "confirmed" in e else "nei"),
    name="words",
)


def examples(n: int = 60) -> list[Example]:
    out = []
    for i in range(n):
        claim = Claim(text=f"Town {i} opened a new school in spring", id=str(i))
        label, text = (
            ("refuted", f"the school story in town {i} is a hoax")
            if i % 2
            else ("supported", f"officials confirmed the school in town {i}")
        )
        out.append(Example(claim=claim, texts=(), kind="claim-only", label=label, group=str(i)))
        out.append(Example(claim=claim, texts=(text,), kind="gold", label=label, group=str(i)))
    return out


def test_features_layout() -> None:
    f = Featurizer(ENCODER, STANCE, max_texts=2)
    rows = f([(Claim(text="a b"), []), (Claim(text="a b"), ["x hoax", "y", "z confirmed"])])
    assert rows.shape == (2, 3 * 16 + len(STANCE_FEATURES) + 4)
    assert not rows[0, 16:].any()  # no evidence: only the claim embedding
    stance = rows[1, 48 : 48 + len(STANCE_FEATURES)]
    assert dict(zip(STANCE_FEATURES, stance.tolist(), strict=True))["share_refutes"] == 0.5
    assert rows[1, -2] == 1.0 and rows[1, -1] == pytest.approx(np.log(3))  # two texts read


def test_fit_learns_from_evidence_and_round_trips(tmp_path) -> None:
    cfg = FitConfig(l2=(1e-2,), balance=(0.0,), steps=300)
    out = tmp_path / "judge"
    judge = train_evidence_judge(
        examples(), AVERITEC, out, encoder=ENCODER, stance=STANCE, stance_name="words", cfg=cfg
    )
    assert isinstance(judge, EvidenceJudge) and judge.scale == "averitec"
    claim = Claim(text="Town 99 opened a new school in spring")
    card = Evidence(id="E1", url="u", text="this is a hoax", start_char=0, end_char=14)
    v = judge.judge(claim, [], [card])
    assert v.label == "refuted" and v.evidence_ids == ("E1",) and "E1" in v.rationale
    alone = judge.judge(claim, [], [])
    assert "claim alone" in alone.rationale and alone.evidence_ids == ()
    loaded = EvidenceModelJudge.load(out, encoder=ENCODER, stance=STANCE)
    items = [(claim, ["this is a hoax"]), (claim, [])]
    assert np.allclose(loaded.probabilities(items), judge.probabilities(items))
    assert judge.config["selection"]["kinds"] == {"claim-only": 60, "gold": 60}


def test_load_judge_tells_folders_apart(tmp_path) -> None:
    (tmp_path / "config.json").write_text(
        '{"kind": "factseek-evidence-judge", "format_version": 9}'
    )
    with pytest.raises(ModelError, match="format_version"):
        load_judge(tmp_path)
    with pytest.raises(ModelError):
        load_judge(tmp_path / "missing")


def test_bad_labels_are_an_input_error(tmp_path) -> None:
    bad = [Example(claim=Claim(text="x"), texts=(), kind="gold", label="true", group="1")]
    with pytest.raises(InputError, match="not averitec"):
        train_evidence_judge(bad, AVERITEC, tmp_path / "j", encoder=ENCODER, stance=None)


def test_selection_cross_validates_over_whole_claims(tmp_path) -> None:
    cfg = FitConfig(l2=(1e-2, 1e-1), balance=(0.0,), steps=200, folds=3)
    logs: list[str] = []
    judge = train_evidence_judge(
        examples(), AVERITEC, tmp_path / "j", encoder=ENCODER, stance=None, cfg=cfg, log=logs.append
    )
    sel = judge.config["selection"]
    assert sel["folds"] == 3 and [g["l2"] for g in sel["grid"]] == [1e-2, 1e-1]
    assert sel["cv_score"] == max(g["value"] for g in sel["grid"])
    assert sum(line.startswith("l2 ") for line in logs) == 2
    assert any("at the edge of the grid" in line for line in logs)  # two values: both edges
    one = [e for e in examples() if e.group == examples()[0].group]
    with pytest.raises(InputError, match="at least 2 claims"):
        train_evidence_judge(one, AVERITEC, tmp_path / "k", encoder=ENCODER, stance=None, cfg=cfg)


def test_cross_predict_never_sees_the_fold_it_predicts() -> None:
    from factseek.judge.evidence_model import cross_predict

    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 3))
    y = (x[:, 0] > 0).astype(int)
    fold = np.arange(60) % 3
    pred = cross_predict(x, y, fold, 2, l2=1e-3, balance=0.0, cfg=FitConfig(steps=200))
    assert (pred == y).mean() > 0.9  # the other folds teach the rule
    flipped = np.where(fold == 0, 1 - y, y)  # fold 0's own labels are never used for fold 0
    again = cross_predict(x, flipped, fold, 2, l2=1e-3, balance=0.0, cfg=FitConfig(steps=200))
    assert (again[fold == 0] == pred[fold == 0]).all()
    assert (again[fold != 0] != pred[fold != 0]).any()


def test_judge_texts_reads_passages_cards_or_both() -> None:
    from factseek.judge.evidence_model import judge_texts
    from factseek.types import Passage

    cards = [Evidence(id="E1", url="u", text="card text", start_char=0, end_char=9)]
    passages = [
        Passage(
            url="u",
            text=t,
            doc_rank=i,
            score=1.0,
            start_word=0,
            end_word=2,
            start_char=0,
            end_char=9,
        )
        for i, t in enumerate(["passage text", "card text"])
    ]
    assert judge_texts("passages", cards, passages) == [
        ("passage 1", "passage text"),
        ("passage 2", "card text"),
    ]
    assert judge_texts("cards", cards, passages) == [("E1", "card text")]
    assert judge_texts("both", cards, passages) == [
        ("passage 1", "passage text"),
        ("passage 2", "card text"),
    ]
    assert judge_texts("passages", cards, []) == [("E1", "card text")]  # gold evidence: cards only
    # a figure card (read nei) is for the reviewer: the judge reads the cards that take a side,
    # as it was trained; gold cards are read whatever their reading
    from factseek.types import StanceResult

    nei = StanceResult(label="nei", probs={"supports": 0.2, "refutes": 0.2, "nei": 0.6})
    figure = Evidence(id="E2", url="v", text="it is $61.8 million", start_char=0, end_char=9, stance=nei)  # fmt: skip
    assert judge_texts("cards", [*cards, figure], passages) == [("E1", "card text")]
    assert judge_texts("cards", [*cards, figure], []) == [("E1", "card text"), ("E2", figure.text)]


def test_bags_of_all_words_keep_no_and_not_and_round_trip(tmp_path) -> None:
    texts = ["No. The mayor did not sign it.", "The mayor did sign it."]
    claim = Claim(text="The mayor signed it")
    index = Featurizer(ENCODER, None, max_texts=2, bow=256)
    every = Featurizer(ENCODER, None, max_texts=2, bow=256, words="all")
    a, b = (index([(claim, [t])])[0, -256:] for t in texts)
    assert np.allclose(a, b)  # "no" and "not" are stop words of the index
    a, b = (every([(claim, [t])])[0, -256:] for t in texts)
    assert not np.allclose(a, b)
    with pytest.raises(InputError, match="unknown bag words"):
        Featurizer(ENCODER, None, max_texts=2, bow=8, words="some")
    cfg = FitConfig(l2=(1e-2,), balance=(0.0,), steps=200, bow=64, words="all")
    out = tmp_path / "judge"
    judge = train_evidence_judge(examples(20), AVERITEC, out, encoder=ENCODER, stance=None, cfg=cfg)
    loaded = EvidenceModelJudge.load(out, encoder=ENCODER)
    assert loaded.featurize.words == "all" and loaded.config["words"] == "all"
    items = [(claim, [texts[0]]), (claim, [])]
    assert np.allclose(loaded.probabilities(items), judge.probabilities(items))
    cfg_file = out / "config.json"
    cfg_file.write_text(cfg_file.read_text().replace('"words": "all"', '"words": "some"'))
    with pytest.raises(ModelError, match="unknown bag words 'some'"):
        EvidenceModelJudge.load(out, encoder=ENCODER)
