"""`rewrite run` where users meet it: `--explain` (every candidate edit with its prediction and
feedback, and why it stopped) and a missing extra named in one line before anything loads."""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from factseek.cli import app
from factseek.ml.encode import FunctionEncoder
from factseek.rewrite.edits.features import Endpoint, step_features
from factseek.rewrite.edits.model import EditPolicy, EditRewriter, guard_scorer
from factseek.rewrite.environment import actions, wordnet
from factseek.rewrite.environment.env import BM25Retriever

DOCS = [
    ("d1", "The council approved new electric buses for the city in March"),
    ("d2", "Bus fares rose after the council vote on the transit budget"),
    ("d3", "The mayor opened a water plant that cost the city millions"),
    ("d4", "Electric buses arrived late and the council blamed the supplier"),
    ("d5", "A new library opened downtown with a council grant"),
    ("d6", "Transit riders protested the fare increase outside city hall"),
]
CLAIM = "The council approved new buses"


def _bag(texts) -> np.ndarray:  # hashed bag of words: a deterministic stand-in for MiniLM
    out = np.zeros((len(texts), 64), np.float32)
    for i, t in enumerate(texts):
        for w in t.lower().split():
            out[i, zlib.crc32(w.encode()) % 64] += 1.0
    return out + 1e-3


@pytest.fixture
def rewriter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """An edit scorer whose prediction is the feedback guard's estimate (``guard_scorer``), on a
    BM25 endpoint over six documents; WordNet is a one-synset database written here."""
    import test_rewrite_wordnet as wn_fixture

    db = wn_fixture.write_db(
        tmp_path / "wn", {"noun": [(["bus", "autobus", "coach"], ["bus", "autobus", "coach"])]}
    )
    monkeypatch.setenv("FACTSEEK_WORDNET", str(db))
    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path / "cache"))
    wordnet.load.cache_clear()
    wordnet.synonyms.cache_clear()
    actions._CACHE.clear()
    encoder = FunctionEncoder(_bag, 64, name="bag")
    endpoint = Endpoint.from_corpus(
        BM25Retriever.from_docs(DOCS), DOCS, encoder.encode([t for _, t in DOCS]), encoder, k=5
    )
    yield lambda threshold, budget=2: EditRewriter(
        guard_scorer(), EditPolicy(threshold=threshold, max_edits=budget, k=5), endpoint, encoder
    )
    wordnet.load.cache_clear()
    wordnet.synonyms.cache_clear()
    actions._CACHE.clear()


def test_explain_lists_every_candidate_with_its_prediction(rewriter) -> None:
    rw = rewriter(0.0)
    (res,) = rw.rewrite([CLAIM], explain=True)
    assert res.weighed and len(res.weighed) <= 2
    first = res.weighed[0]
    tq = actions.tag(CLAIM)
    cands = actions.expand(tq)
    step = step_features(rw.endpoint, rw.encoder.encode([CLAIM])[0], tq, cands)
    pred = rw.scorer.predict(step.features)
    assert first.query == CLAIM and first.threshold == 0.0
    assert sorted(c.action for c in first.candidates) == sorted(str(a) for a, _ in cands)
    by_action = {c.action: c for c in first.candidates}
    for j, action in enumerate(step.actions):
        assert by_action[action].predicted == pytest.approx(float(pred[j]))
        assert by_action[action].text == step.texts[j]
        assert dict(by_action[action].feedback)["dcg_d"] == pytest.approx(float(pred[j]))
    predictions = [c.predicted for c in first.candidates]
    assert predictions == sorted(predictions, reverse=True)  # best first
    # what was taken is what the trace says, and the stop is explained
    assert [s.chosen for s in res.weighed if s.chosen] == list(res.trace)
    assert res.stopped in ("threshold", "budget", "no-edit") and res.why
    if res.stopped == "threshold":
        assert not res.weighed[-1].chosen and "not above the threshold" in res.why
    # explain changes nothing but the record
    (plain,) = rw.rewrite([CLAIM])
    assert (plain.text, plain.trace, plain.stopped) == (res.text, res.trace, res.stopped)
    assert plain.weighed == ()


def test_explain_says_why_nothing_passed(rewriter) -> None:
    (res,) = rewriter(10.0).rewrite([CLAIM], explain=True)
    assert res.text == CLAIM and res.trace == () and res.stopped == "threshold"
    assert res.weighed[0].chosen == "" and "+10.000" in res.why
    best = res.weighed[0].candidates[0]
    assert f"({best.action})" in res.why and f"{best.predicted:+.3f}" in res.why


def test_cli_explain_prints_the_candidates_and_the_stop(
    rewriter, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import factseek.rewrite.edits.shipped as shipped
    import factseek.search.base as search_base

    rw = rewriter(0.0, budget=1)
    monkeypatch.setattr(shipped, "load_rewriter", lambda name, search=None: rw)
    monkeypatch.setattr(search_base, "make_backend", lambda *a, **k: object())
    r = CliRunner().invoke(app, ["rewrite", "run", CLAIM, "--store", str(tmp_path), "--explain"])
    assert r.exit_code == 0, r.output
    (res,) = rw.rewrite([CLAIM], explain=True)
    assert f"{len(res.weighed[0].candidates)} edits weighed" in r.output
    for c in res.weighed[0].candidates:
        assert f"{c.predicted:+9.3f}" in r.output and c.text in r.output
    assert f"stopped: {res.why}" in r.output
    taken = [line for line in r.output.splitlines() if line.startswith("   * ")]
    assert len(taken) == len(res.trace)


def test_cli_threshold_overrides_the_models(
    rewriter, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import factseek.rewrite.edits.shipped as shipped
    import factseek.search.base as search_base

    rw = rewriter(10.0, budget=1)
    monkeypatch.setattr(shipped, "load_rewriter", lambda name, search=None: rw)
    monkeypatch.setattr(search_base, "make_backend", lambda *a, **k: object())
    args = ["rewrite", "run", CLAIM, "--store", str(tmp_path), "--explain"]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0 and "threshold +10.000" in r.output
    r = CliRunner().invoke(app, [*args, "--threshold", "-1"])
    assert r.exit_code == 0 and "threshold -1.000" in r.output
    assert "[budget]" in r.output  # every edit passes -1: one edit, the budget


def test_abstaining_model_says_so(rewriter) -> None:
    import math

    (res,) = rewriter(math.inf).rewrite([CLAIM], explain=True)
    assert res.stopped == "abstain" and "no clear gain" in res.why


def test_a_missing_extra_is_one_line_before_anything_loads(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`rewrite run` and `check --rewrite default` without the rewriter's packages: one line
    naming the extra, exit 1, before the store, spaCy or an encoder is loaded."""
    import sys
    from importlib import util

    import factseek.search.base as search_base

    real = util.find_spec
    monkeypatch.setattr(util, "find_spec", lambda n, *a: None if n == "lemminflect" else real(n, *a))  # fmt: skip
    monkeypatch.setattr(search_base, "make_backend", lambda *a, **k: object())
    loaded = set(sys.modules)
    r = CliRunner().invoke(app, ["rewrite", "run", CLAIM, "--store", str(tmp_path)])
    assert r.exit_code == 1
    assert r.output.strip().splitlines() == [
        "error: lemminflect is needed for the rewriter (inflecting synonyms); install it with:"
        " pip install 'factseek[dense]'"
    ]
    assert not {"spacy", "torch", "factseek.rewrite.edits.npencoder"} & (set(sys.modules) - loaded)
    args = ["check", CLAIM, "--date", "2023-06-01", "--store", str(tmp_path), "--rewrite", "default"]  # fmt: skip
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 1 and len(r.output.strip().splitlines()) == 1
    assert r.output.startswith("error: lemminflect is needed") and "factseek[dense]" in r.output
