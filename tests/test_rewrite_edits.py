"""Endpoint-feedback features, the edit scorer and its greedy rewriter, RM3 expansion."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

from factseek.errors import ModelError
from factseek.ml.encode import FunctionEncoder
from factseek.rewrite.baselines import RM3Rewriter
from factseek.rewrite.edits.features import FEATURES, Endpoint, step_features
from factseek.rewrite.edits.model import (
    EditPolicy,
    EditRewriter,
    guard_scorer,
    is_edit_scorer,
    load,
    save,
)
from factseek.rewrite.edits.train import Rollout, StepData, choose, finals
from factseek.rewrite.environment import actions
from factseek.rewrite.environment.env import BM25Retriever

DOCS = [
    ("d0", "the mayor approved the city budget for schools"),
    ("d1", "the mayor loves cats and dogs"),
    ("d2", "cats and dogs fight in the city"),
    ("d3", "budget cuts hit city schools hard"),
    ("d4", "schools close early in winter"),
    ("d5", "a mayor of another city resigned"),
]


def letters(texts):
    out = np.zeros((len(texts), 26), np.float32)
    for i, t in enumerate(texts):
        for ch in t.lower():
            if "a" <= ch <= "z":
                out[i, ord(ch) - 97] += 1
    return out + 1e-3


ENC = FunctionEncoder(letters, dim=26, name="letters")


def endpoint(k: int = 3) -> Endpoint:
    return Endpoint.from_corpus(
        BM25Retriever.from_docs(DOCS), DOCS, ENC.encode([t for _, t in DOCS]), ENC, k=k
    )


def test_step_features_match_a_direct_computation():
    ep = endpoint(k=3)
    claim = "the mayor approved cats budget"
    tq = actions.tag(claim)
    cands = actions.expand(tq)
    vec = ENC.encode([claim])[0]
    step = step_features(ep, vec, tq, cands)
    assert step.features.shape == (len(cands), len(FEATURES))
    assert step.texts == tuple(t for _, t in cands)
    assert step.current == tuple(ep.retriever.rank([tq.text], 3)[0])
    f = {name: step.features[:, i] for i, name in enumerate(FEATURES)}
    w = 1.0 / np.log2(np.arange(2, 5))
    doc_vec = dict(zip([d for d, _ in DOCS], ENC.encode([t for _, t in DOCS]), strict=True))

    def dcg(ranking):
        s = np.array([doc_vec[d] @ vec for d in ranking])
        return (w[: len(s)] * s).sum() / w[: len(s)].sum()

    for j, ranking in enumerate(step.rankings):
        assert f["dcg"][j] == pytest.approx(dcg(ranking), abs=1e-5)
        assert f["dcg_d"][j] == pytest.approx(dcg(ranking) - dcg(step.current), abs=1e-5)
        assert f["top1"][j] == pytest.approx(doc_vec[ranking[0]] @ vec, abs=1e-5)
    kinds = np.stack([f[f"kind_{k}"] for k in ("remove", "swap", "add", "present")], axis=1)
    assert (kinds.sum(axis=1) == 1).all()
    removals = [j for j, a in enumerate(step.actions) if a.startswith("remove")]
    assert removals and all(f["kind_remove"][j] == 1 for j in removals)
    assert all(f["add_pidf"][j] == 0 for j in removals)  # a removal adds no term
    stop = [j for j in removals if tq.tokens[int(step.actions[j].split("@")[1])].is_stop]
    assert all(f["rm_pidf"][j] == 0 and f["stop"][j] == 1 for j in stop)  # "the" is no term


def test_scorer_round_trip_and_guard_rewriter(tmp_path: Path):
    ep = endpoint(k=3)
    scorer = guard_scorer()
    x = np.random.default_rng(0).normal(size=(5, len(FEATURES))).astype(np.float32)
    assert np.allclose(scorer.predict(x), x[:, FEATURES.index("dcg_d")], atol=1e-6)
    save(tmp_path / "m", scorer, EditPolicy(threshold=0.0, max_edits=3, k=3, encoder="letters"))
    assert is_edit_scorer(tmp_path / "m") and not is_edit_scorer(tmp_path)
    again, policy = load(tmp_path / "m")
    assert np.array_equal(again.predict(x), scorer.predict(x)) and policy.max_edits == 3
    rw = EditRewriter(again, policy, ep, ENC)
    claims = ["the mayor approved cats budget", "schools close early in winter"]
    out = rw.rewrite(claims)
    assert out == rw.rewrite(claims)  # deterministic
    vec = ENC.encode(claims)
    for r, v in zip(out, vec, strict=True):
        assert r.steps == len(r.trace) == len(r.path) - 1 and r.stopped in ("threshold", "budget")
        scores = []
        for text in r.path:  # every accepted edit raised the guard's estimate
            ranking = ep.retriever.rank([text], 3)[0]
            s = ep.vectors(ranking) @ v
            w = 1.0 / np.log2(np.arange(2, 2 + len(s)))
            scores.append(float((w * s).sum() / w.sum()))
        assert all(b > a for a, b in itertools.pairwise(scores))
    none = EditRewriter(again, EditPolicy(threshold=math.inf, max_edits=3, k=3), ep, ENC)
    assert none.abstain and [(r.text, r.steps, r.stopped) for r in none.rewrite(claims)] == [
        (c, 0, "abstain") for c in claims
    ]
    save(tmp_path / "n", scorer, EditPolicy(threshold=math.inf, k=3))
    doc = json.loads((tmp_path / "n" / "config.json").read_text())
    assert doc["threshold"] is None and math.isinf(load(tmp_path / "n")[1].threshold)


def test_choose_reads_thresholds_and_budgets_off_one_rollout():
    nan = math.nan
    r = Rollout(
        reward0=np.array([0.5, 0.2, 0.0, 1.0]),
        pred=np.array([[0.3, 0.01, nan], [0.2, 0.2, 0.1], [0.001, nan, nan], [0.5, 0.4, 0.3]]),
        reward=np.array([[0.6, 0.4, 0.4], [0.3, 0.5, 0.6], [0.2, 0.2, 0.2], [0.9, 0.8, 0.8]]),
    )
    got, edits = finals(r, 0.05, 3)
    assert got.tolist() == [0.6, 0.6, 0.0, 0.8] and edits.tolist() == [1, 3, 0, 3]
    got, edits = finals(r, 0.0, 1)
    assert got.tolist() == [0.6, 0.3, 0.2, 0.9] and edits.tolist() == [1, 1, 1, 1]
    assert finals(r, math.inf, 3)[0].tolist() == r.reward0.tolist()
    c = choose(r, thresholds=(0.0, 0.05, math.inf), budgets=(1, 2, 3))
    assert c.score == max(g[2] for g in c.grid)
    assert c.abstain == (not c.gain_ci[0] > 0)
    assert len(c.grid) == 9


def test_fit_scorer_learns_a_simple_target(request):
    torch = pytest.importorskip("torch")
    from factseek.rewrite.edits.train import fit_scorer

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a tiny MLP: a second thread only spin-waits
    request.addfinalizer(lambda: torch.set_num_threads(threads))

    rng = np.random.default_rng(0)
    x = rng.normal(size=(1000, len(FEATURES))).astype(np.float32)
    y = (0.05 * x[:, 0] - 0.03 * np.maximum(x[:, 5], 0)).astype(np.float32)
    data = StepData(x=x, y=y, claim=np.arange(1000) // 10, reward0=np.zeros(100))
    scorer = fit_scorer(data, hidden=16, epochs=40, batch_size=128, seed=0)
    err = np.abs(scorer.predict(x) - y).mean()
    assert err < 0.25 * np.abs(y - y.mean()).mean()
    again = fit_scorer(data, hidden=16, epochs=40, batch_size=128, seed=0)
    assert np.array_equal(again.predict(x), scorer.predict(x))  # seeded

    # several seeds averaged into one scorer (`train-edits --ensemble`): the mean of their
    # predictions, saved and loaded as any scorer
    from factseek.rewrite.edits import model as edit_model

    fits = [scorer] + [
        fit_scorer(data, hidden=16, epochs=5, batch_size=128, seed=s) for s in (1, 2)
    ]
    mean = edit_model.average(fits)
    assert mean.arrays["w1"].shape == (len(FEATURES), 48)
    want = np.mean([f.predict(x) for f in fits], axis=0)
    assert np.allclose(mean.predict(x), want, atol=1e-5)
    assert not np.allclose(fits[1].predict(x), fits[2].predict(x))  # the seeds differ
    other = StepData(x=x * 2, y=y, claim=data.claim, reward0=data.reward0)
    with pytest.raises(ModelError, match="same rows"):
        edit_model.average([scorer, fit_scorer(other, hidden=16, epochs=1, seed=0)])


def test_rm3_expansion_by_hand():
    docs = [("a", "cats purr cats"), ("b", "cats nap"), ("c", "dogs bark")]
    rm3 = RM3Rewriter(BM25Retriever.from_docs(docs), dict(docs).__getitem__, fb_docs=2, fb_terms=2)
    # "cats": top-2 = a (tf 2/3), b (1/2); p(a) = 1 / 1.5, p(b) = 0.5 / 1.5
    # purr: (2/3) * (1/3) = 0.222; nap: (1/3) * (1/2) = 0.167; cats is in the query
    assert rm3.expansion("cats") == ["purr", "nap"]
    [r] = rm3.rewrite(["cats"])
    assert r.text == "cats purr nap" and r.trace == ("rm3+purr", "rm3+nap") and r.steps == 1
