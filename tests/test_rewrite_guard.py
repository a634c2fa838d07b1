"""Endpoint feedback: the estimate by hand, and a guarded rewrite that keeps only the edit that
moves the results toward the claim."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pytest

pytest.importorskip("torch")

from factseek.errors import ConfigError
from factseek.rewrite.environment.guard import FeedbackGuard
from factseek.rewrite.transformer.infer import Rewriter
from factseek.rewrite.transformer.model import DecisionTransformer
from test_rewrite_train import ENCODER, TINY, WordEditor


class WordRetriever:
    """Queries with a word starting with "b" (any case) find d2 first, all others d1 first."""

    name = "words"

    def rank(self, queries: Sequence[str], k: int) -> list[list[str]]:
        out = []
        for q in queries:
            has_b = any(w.lower().startswith("b") for w in q.split())
            out.append((["d2", "d1"] if has_b else ["d1", "d2"])[:k])
        return out


def test_estimate_is_dcg_weighted_similarity() -> None:
    class Fixed:
        def rank(self, queries: Sequence[str], k: int) -> list[list[str]]:
            return [
                {"q1": ["d1", "d2"], "q2": ["d2", "d1"], "q3": ["zz", "d1"]}[q] for q in queries
            ]

    vectors = np.array([[1.0, 0.0], [0.0, 1.0]])
    guard = FeedbackGuard(Fixed(), ["d1", "d2"], vectors, k=2)
    w2 = 1 / np.log2(3)
    est = guard.estimate(np.array([1.0, 0.0]), ["q1", "q2", "q3"])
    # q3: an unknown document counts as 0 similarity
    np.testing.assert_allclose(est, [1 / (1 + w2), w2 / (1 + w2), w2 / (1 + w2)])
    with pytest.raises(ConfigError):
        FeedbackGuard(Fixed(), ["d1"], vectors)


@pytest.mark.parametrize("candidates", [0, 64])
def test_guarded_rewrite_keeps_only_the_edit_that_helps(candidates: int) -> None:
    import torch

    torch.manual_seed(0)
    model = DecisionTransformer(TINY).eval()  # random weights: the guard decides
    rw = Rewriter(model, {"kinds": list(WordEditor.kinds)}, encoder=ENCODER, editor=WordEditor())
    vectors = np.stack([ENCODER.encode(["a c"])[0], -ENCODER.encode(["a c"])[0]])
    guard = FeedbackGuard(WordRetriever(), ["d1", "d2"], vectors, k=2, candidates=candidates)
    claim_vec = ENCODER.encode(["a b c"])[0]
    assert guard.estimate(claim_vec, ["a c"])[0] > guard.estimate(claim_vec, ["a b c"])[0]
    (res,) = rw.rewrite(["a b c"], target_return=0.5, guard=guard)
    # only removing "b" changes the results; after it nothing raises the estimate again
    assert (res.trace, res.text, res.stopped) == (("remove@1",), "a c", "guard")
    (plain,) = rw.rewrite(["a c"], target_return=0.5, guard=guard)
    assert (plain.steps, plain.stopped) == (0, "guard")


def test_an_edit_scorer_decides_among_the_transformers_proposals() -> None:
    """``ScorerGuard``: the transformer proposes, the edit scorer (here the feedback guard as a
    scorer: its prediction is the rise of the DCG-weighted claim/result similarity) decides."""
    import torch

    from factseek.rewrite.edits.guard import ScorerGuard
    from factseek.rewrite.edits.model import EditPolicy, EditRewriter, guard_scorer
    from factseek.rewrite.transformer.editor import ActionsEditor
    from factseek.rewrite.transformer.model import DTConfig
    from test_rewrite_edits import ENC, endpoint

    torch.manual_seed(0)
    cfg = DTConfig(n_layer=2, n_head=2, n_embd=64, dropout=0.0, max_edits=3, max_positions=16, state_dim=26)  # fmt: skip
    editor = ActionsEditor()
    dt = Rewriter(DecisionTransformer(cfg).eval(), {"kinds": list(editor.kinds)}, encoder=ENC, editor=editor)  # fmt: skip
    ep = endpoint(k=3)
    scorer = EditRewriter(guard_scorer(), EditPolicy(threshold=0.0, max_edits=3, k=3), ep, ENC)
    claims = ["the mayor approved cats budget", "schools close early in winter"]

    def dcg(text: str, claim: str) -> float:
        s = ep.vectors(ep.retriever.rank([text], 3)[0]) @ ENC.encode([claim])[0]
        w = 1.0 / np.log2(np.arange(2, 2 + len(s)))
        return float((w * s).sum() / w.sum())

    alone = scorer.rewrite(claims)
    for top in (0, 1, 3):
        out = dt.rewrite(claims, target_return=0.5, guard=ScorerGuard(scorer, top))
        for r, claim in zip(out, claims, strict=True):
            assert r.stopped in ("guard", "budget") and r.steps == len(r.path) - 1
            scores = [dcg(t, claim) for t in r.path]  # every edit taken, the scorer backed
            assert all(b > a for a, b in itertools.pairwise(scores))
        if top == 0:  # every edit proposed: the scorer's own choices
            assert [r.path for r in out] == [r.path for r in alone]
    assert any(r.steps for r in alone)
    strict = EditRewriter(guard_scorer(), EditPolicy(threshold=9.0, max_edits=3, k=3), ep, ENC)
    out = dt.rewrite(claims, target_return=0.5, guard=ScorerGuard(strict, 0))
    assert [(r.steps, r.stopped) for r in out] == [(0, "guard")] * 2
