"""An edit scorer as a decision transformer's guard: the DT proposes, the scorer decides.

``ScorerGuard(rewriter, candidates)`` wraps an ``EditRewriter`` (``edits.model``). At each step
of a decision transformer's rewrite (``Rewriter.rewrite(..., guard=...)``), the transformer
ranks its allowed edits and hands its top ``candidates`` (0: all) to ``choose``, which scores
*every* allowed edit of the current query as the edit scorer does (``EditRewriter.weigh``: one
search each, the judge's pool and reading as at training time), keeps the scorer's predictions of the proposed ones, and
takes the best of those that pass the scorer's threshold and judge margin (ties: the
transformer's order); none passing stops the query (``stopped == "guard"``). With
``candidates=0`` it chooses as the edit scorer alone would, up to ties, so the difference
between the two measures what the transformer's proposals add.

Each query's claim embedding and first ranking are kept while it is rewritten (per original
text, at most ``KEEP`` queries).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from factseek.rewrite.edits.model import EditRewriter

KEEP = 4096  # claims whose embedding and first ranking are kept


class ScorerGuard:
    """The edit scorer choosing among a decision transformer's proposals; see the module doc."""

    def __init__(self, rewriter: EditRewriter, candidates: int = 5) -> None:
        self.rewriter, self.candidates = rewriter, candidates
        self._claims: OrderedDict[str, tuple[np.ndarray, Sequence[str] | None]] = OrderedDict()

    def choose(self, original: str, current: str, proposed: Sequence[str]) -> int | None:
        """The index in ``proposed`` (edited texts of ``current``, best first) of the edit to
        take, or None to stop. ``original`` is the claim the judge reads against."""
        from factseek.rewrite.environment import actions

        if not proposed:
            return None
        r = self.rewriter
        if original not in self._claims:
            vector = np.asarray(r.encoder.encode([original]), np.float32)[0]
            self._claims[original] = (vector, None)
            while len(self._claims) > KEEP:
                self._claims.popitem(last=False)
        vector, ranking = self._claims[original]
        weighed = r.weigh(original, vector, actions.tag(current), ranking)
        if weighed is None:
            return None
        step, _, pred = weighed
        self._claims[original] = (vector, ranking or step.current)
        row = {text: i for i, text in enumerate(step.texts)}
        best, pick = r.policy.threshold, None
        for j, text in enumerate(proposed):
            i = row.get(text)
            if i is not None and pred[i] > best:  # strict: ties keep the transformer's order
                best, pick = float(pred[i]), j
        return pick
