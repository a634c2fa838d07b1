"""The edit scorer's learned judge: its features, its fit, and its place in the scorer."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from factseek.errors import ModelError
from factseek.rewrite.edits.features import FEATURES, JUDGE_FEATURES, feature_names, step_features
from factseek.rewrite.edits.judge import FEATURES as JUDGE_INPUTS
from factseek.rewrite.edits.judge import JudgeModel, fit, pool_features
from factseek.rewrite.edits.model import (
    READER_DIR,
    EditPolicy,
    EditRewriter,
    EditScorer,
    load,
    save,
)
from factseek.rewrite.environment import actions
from test_rewrite_edits import DOCS, ENC, endpoint


def test_pool_features_by_hand():
    claim = frozenset({"mayor", "budget"})
    pool = ["a", "b", "c"]
    terms = [frozenset({"mayor", "budget", "city"}), frozenset({"mayor"}), frozenset({"cats"})]
    cos = np.array([0.5, 0.9, 0.1], np.float32)
    x = pool_features(claim, cos, pool, terms, ["c", "a"], {"a": 2, "b": 1, "c": 1}, 4)
    f = {n: x[:, i] for i, n in enumerate(JUDGE_INPUTS)}
    assert f["cos_gap"].tolist() == pytest.approx([-0.4, 0.0, -0.8])
    assert f["cos_rank"].tolist() == pytest.approx([1 / 12, 1 / 11, 1 / 13])
    assert f["bm25_rank"].tolist() == pytest.approx([1 / 12, 1 / 13, 1 / 11])  # b: not in (k+1)
    assert f["fused"].tolist() == pytest.approx((f["cos_rank"] + f["bm25_rank"]).tolist())
    assert f["lists"].tolist() == pytest.approx([0.5, 0.25, 0.25])
    # pool IDF: mayor in 2 of 3 pooled documents, budget in 1
    w_mayor, w_budget = math.log(4 / 2.5), math.log(4 / 1.5)
    assert f["idf_cover"].tolist() == pytest.approx([1.0, w_mayor / (w_mayor + w_budget), 0.0])
    assert f["doc_cover"].tolist() == pytest.approx([2 / 3, 1.0, 0.0])


def test_fit_learns_which_pooled_document_is_the_evidence():
    pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    xs, ys = [], []
    for _ in range(300):  # the evidence: high idf_cover, cosine is noise
        n = int(rng.integers(5, 30))
        x = rng.normal(size=(n, len(JUDGE_INPUTS))).astype(np.float32)
        y = np.zeros(n, bool)
        y[int(rng.integers(n))] = True
        x[y, JUDGE_INPUTS.index("idf_cover")] += 3.0
        xs.append(x)
        ys.append(y)
    judge = fit(xs[:200], ys[:200], epochs=30, seed=0)
    hits = [y[int(np.argmax(judge.score(x)))] for x, y in zip(xs[200:], ys[200:], strict=True)]
    assert np.mean(hits) > 0.8
    cos = [y[int(np.argmax(x[:, 0]))] for x, y in zip(xs[200:], ys[200:], strict=True)]
    assert np.mean(cos) < 0.3  # the cosine alone is at chance here
    p = judge.probabilities(xs[0])
    assert p.sum() == pytest.approx(1.0, abs=1e-5) and (p >= 0).all()
    again = fit(xs[:200], ys[:200], epochs=30, seed=0)
    assert np.array_equal(again.score(xs[0]), judge.score(xs[0]))  # seeded
    with pytest.raises(ModelError, match="no pool holds a relevant document"):
        fit(xs[:3], [np.zeros(len(x), bool) for x in xs[:3]])


def _judge() -> JudgeModel:
    rng = np.random.default_rng(1)
    f, h = len(JUDGE_INPUTS), 4
    return JudgeModel(
        arrays={
            "mean": np.zeros(f, np.float32), "std": np.ones(f, np.float32),
            "w1": rng.normal(size=(f, h)).astype(np.float32), "b1": np.zeros(h, np.float32),
            "w2": rng.normal(size=(h, 1)).astype(np.float32), "b2": np.zeros(1, np.float32),
        }
    )  # fmt: skip


def test_judge_features_follow_the_judges_probabilities():
    ep, judge = endpoint(k=3), _judge()
    claim = "the mayor approved cats budget"
    tq = actions.tag(claim)
    cands = actions.expand(tq)
    vec = ENC.encode([claim])[0]
    plain = step_features(ep, vec, tq, cands)
    step = step_features(ep, vec, tq, cands, judge=judge, claim="mayor")
    assert step.features.shape == (len(cands), len(FEATURES) + len(JUDGE_FEATURES))
    assert np.array_equal(step.features[:, : len(FEATURES)], plain.features)  # unchanged
    pool = list(dict.fromkeys([*step.current, *(d for r in step.rankings for d in r)]))
    lists = {d: sum(d in r for r in (step.current, *step.rankings)) for d in pool}
    x = pool_features(
        frozenset({"mayor"}), ep.vectors(pool) @ vec, pool, [ep.terms(d) for d in pool],
        step.current, lists, len(cands) + 1,
    )  # fmt: skip
    p = dict(zip(pool, judge.probabilities(x).tolist(), strict=True))
    f = {n: step.features[:, len(FEATURES) + i] for i, n in enumerate(JUDGE_FEATURES)}

    def expected_ap(r):
        return sum(p[d] / i for i, d in enumerate(r, 1))

    for j, r in enumerate(step.rankings):
        assert f["pje"][j] == pytest.approx(expected_ap(r), abs=1e-5)
        assert f["pje_d"][j] == pytest.approx(expected_ap(r) - expected_ap(step.current), abs=1e-5)
    assert f["pjmax"][0] == pytest.approx(max(p.values()), abs=1e-6)
    assert f["pjtop"][0] == pytest.approx(p[step.current[0]], abs=1e-6)


def test_a_scorer_with_a_judge_round_trips_and_rewrites(tmp_path: Path):
    ep, judge = endpoint(k=3), _judge()
    names = feature_names(True)
    rng = np.random.default_rng(0)
    h = 8
    arrays = {
        "mean": np.zeros(len(names), np.float32), "std": np.ones(len(names), np.float32),
        "w1": rng.normal(size=(len(names), h)).astype(np.float32), "b1": np.zeros(h, np.float32),
        "w2": rng.normal(size=(h, h)).astype(np.float32), "b2": np.zeros(h, np.float32),
        "w3": rng.normal(size=(h, 1)).astype(np.float32), "b3": np.zeros(1, np.float32),
    }  # fmt: skip
    scorer = EditScorer(arrays=arrays, features=names, judge=judge)
    with pytest.raises(ModelError, match="features do not match"):
        EditScorer(arrays=arrays, features=names)  # judge features but no judge
    save(tmp_path / "m", scorer, EditPolicy(threshold=-1.0, max_edits=2, k=3, encoder="letters"))
    again, policy = load(tmp_path / "m")
    assert again.judge is not None and again.features == names
    x = rng.normal(size=(4, len(JUDGE_INPUTS))).astype(np.float32)
    assert np.array_equal(again.judge.score(x), judge.score(x))
    claims = [t for _, t in DOCS[:2]]
    out = EditRewriter(again, policy, ep, ENC).rewrite(claims)
    assert out == EditRewriter(scorer, policy, ep, ENC).rewrite(claims)
    assert all(r.steps >= 1 for r in out)  # threshold -1: it takes its best edit


def test_the_reader_reads_the_fused_top_documents_once():
    from factseek.rewrite.edits.judge import READ_FEATURES, Reader, input_names, judge_inputs
    from factseek.stance import FunctionStance

    seen = []

    def read(q, e):
        seen.append(e)
        return {"supports": 0.7, "refutes": 0.1, "nei": 0.2} if "budget" in e else "nei"

    reader = Reader("fake", 2, model=FunctionStance(read))
    pool = ["a", "b", "c"]
    texts = {"a": "the city budget", "b": "cats", "c": "a budget vote"}
    terms = [frozenset(texts[d].split()) for d in pool]
    cos = np.array([0.9, 0.1, 0.5], np.float32)

    def inputs():
        return judge_inputs("budget", cos, pool, terms, ["c", "b", "a"], [["c", "b", "a"]], reader=reader, text_of=texts.__getitem__)  # fmt: skip

    x = inputs()
    assert x.shape == (3, len(input_names(True)))
    r = {n: x[:, len(JUDGE_INPUTS) + i] for i, n in enumerate(READ_FEATURES)}
    # fused (cosine rank, claim's rank): c = 1/12 + 1/11, a = 1/11 + 1/13, b = 1/13 + 1/12
    assert r["read"].tolist() == [1.0, 0.0, 1.0]
    assert r["read_rel"].tolist() == pytest.approx([0.8, 0.0, 0.8])
    assert sorted(seen) == ["a budget vote", "the city budget"]
    inputs()
    assert len(seen) == 2  # each (claim, document) read once
    with pytest.raises(ModelError, match="with/without a reader"):
        JudgeModel(arrays=_judge().arrays, features=input_names(True))


def test_a_judge_with_a_reader_round_trips(tmp_path: Path):
    from factseek.rewrite.edits.judge import Reader, input_names

    f, h = len(input_names(True)), 4
    arrays = {**_judge().arrays, "mean": np.zeros(f, np.float32), "std": np.ones(f, np.float32),
              "w1": np.ones((f, h), np.float32)}  # fmt: skip
    judge = JudgeModel(arrays=arrays, features=input_names(True), reader=Reader("small", 7))
    names = feature_names(True)
    s = {"mean": np.zeros(len(names), np.float32), "std": np.ones(len(names), np.float32),
         "w1": np.ones((len(names), 2), np.float32), "b1": np.zeros(2, np.float32),
         "w2": np.ones((2, 2), np.float32), "b2": np.zeros(2, np.float32),
         "w3": np.ones((2, 1), np.float32), "b3": np.zeros(1, np.float32)}  # fmt: skip
    save(tmp_path / "m", EditScorer(arrays=s, features=names, judge=judge), EditPolicy(k=3))
    again, _ = load(tmp_path / "m")
    assert again.judge is not None and again.judge.reader is not None
    assert (again.judge.reader.name, again.judge.reader.reads) == ("small", 7)
    assert again.judge.features == input_names(True)
    # a reader given as a stance model folder travels inside the model's folder
    folder = tmp_path / "my-reader"
    folder.mkdir()
    (folder / "config.json").write_text('{"name": "my-reader"}')
    (folder / "adapter.safetensors").write_bytes(b"weights")
    mine = JudgeModel(arrays=arrays, features=input_names(True), reader=Reader(str(folder), 5))
    save(tmp_path / "m2", EditScorer(arrays=s, features=names, judge=mine), EditPolicy(k=3))
    kept = tmp_path / "m2" / READER_DIR
    assert (kept / "adapter.safetensors").read_bytes() == b"weights"
    assert str(tmp_path) not in (tmp_path / "m2" / "config.json").read_text()  # no machine path
    moved = tmp_path / "moved"
    (tmp_path / "m2").rename(moved)
    again, _ = load(moved)
    assert again.judge is not None and again.judge.reader is not None
    assert Path(again.judge.reader.name) == moved / READER_DIR


def test_a_judge_margin_allows_only_edits_the_judge_backs(tmp_path: Path):
    from factseek.rewrite.edits.model import gated

    names = feature_names(True)
    f = len(names)
    arrays = {"mean": np.zeros(f, np.float32), "std": np.ones(f, np.float32),
              "w1": np.ones((f, 2), np.float32), "b1": np.zeros(2, np.float32),
              "w2": np.ones((2, 2), np.float32), "b2": np.zeros(2, np.float32),
              "w3": np.ones((2, 1), np.float32), "b3": np.zeros(1, np.float32)}  # fmt: skip
    scorer = EditScorer(arrays=arrays, features=names, judge=_judge())
    x = np.full((3, f), 0.5, np.float32)
    x[:, names.index("pje_d")] = [0.0, 0.02, 0.1]
    assert np.array_equal(gated(scorer, x, None), scorer.predict(x))
    got = gated(scorer, x, 0.01)
    assert np.isneginf(got[0]) and got[1:].tolist() == scorer.predict(x)[1:].tolist()
    save(tmp_path / "m", scorer, EditPolicy(k=3, judge_margin=0.01))
    assert load(tmp_path / "m")[1].judge_margin == 0.01
    save(tmp_path / "n", scorer, EditPolicy(k=3))
    assert load(tmp_path / "n")[1].judge_margin is None


def test_the_rewriter_says_when_the_judge_backs_no_edit():
    ep = endpoint(k=3)
    names = feature_names(True)
    f = len(names)
    w1 = np.zeros((f, 1), np.float32)
    w1[names.index("pje_d")] = -1.0  # prefers edits the judge likes least
    arrays = {"mean": np.zeros(f, np.float32), "std": np.ones(f, np.float32), "w1": w1,
              "b1": np.ones(1, np.float32), "w2": np.ones((1, 1), np.float32),
              "b2": np.zeros(1, np.float32), "w3": np.ones((1, 1), np.float32),
              "b3": np.zeros(1, np.float32)}  # fmt: skip
    scorer = EditScorer(arrays=arrays, features=names, judge=_judge())
    big = EditPolicy(threshold=-1.0, max_edits=3, k=3, judge_margin=10.0)  # nothing rises by 10
    out = EditRewriter(scorer, big, ep, ENC).rewrite(["the mayor approved cats budget"])
    assert out[0].steps == 0 and out[0].stopped == "judge" and "judge expects" in out[0].why
    free = EditPolicy(threshold=-1.0, max_edits=3, k=3)
    assert (
        EditRewriter(scorer, free, ep, ENC).rewrite(["the mayor approved cats budget"])[0].steps > 0
    )
