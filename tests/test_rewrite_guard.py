"""Endpoint feedback: the estimate by hand, and a guarded rewrite that keeps only the edit that
moves the results toward the claim."""

from __future__ import annotations

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
