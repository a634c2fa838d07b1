"""Training-free query rewriting baselines: RM3-style pseudo-relevance-feedback expansion.

``RM3Rewriter(retriever, text_of, fb_docs=10, fb_terms=5)`` expands each query with the terms
its own top results are most about (Lavrenko and Croft's relevance model, as RM3 uses it, for an
opaque endpoint that returns only a ranking):

1. run the query; take its top ``fb_docs`` documents ``d_1..d_n``;
2. weight document ``d_i`` by ``p(d_i) = (1 / i) / sum_j (1 / j)`` (rank-based: an opaque
   endpoint gives no scores), and each term ``t`` by ``p(t) = sum_i p(d_i) tf(t, d_i) / |d_i|``
   over the analysed terms (``factseek.text.tokenize``: stop words and punctuation dropped);
3. append the ``fb_terms`` best terms not already in the query (ties: the term, alphabetically)
   to the query text. The original query's own weight (RM3's interpolation) is kept by keeping
   every original word; an endpoint that takes text cannot be given weights.

``fb_docs`` and ``fb_terms`` are chosen on validation claims (``rewrite eval-baselines``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from factseek.rewrite.environment.env import Retriever
from factseek.rewrite.transformer.infer import RewriteResult
from factseek.text import tokenize


class RM3Rewriter:
    """RM3-style expansion from the endpoint's own top results; see the module docstring."""

    def __init__(
        self,
        retriever: Retriever,
        text_of: Callable[[str], str],
        *,
        fb_docs: int = 10,
        fb_terms: int = 5,
    ) -> None:
        self.retriever, self.text_of = retriever, text_of
        self.fb_docs, self.fb_terms = fb_docs, fb_terms

    def expansion(self, query: str) -> list[str]:
        """The terms RM3 appends to ``query`` (best first)."""
        top = self.retriever.rank([query], self.fb_docs)[0]
        norm = sum(1.0 / i for i in range(1, len(top) + 1))
        weight: Counter[str] = Counter()
        for i, doc in enumerate(top, 1):
            terms = tokenize(self.text_of(doc))
            if not terms:
                continue
            p_doc = (1.0 / i) / norm
            for t, n in Counter(terms).items():
                weight[t] += p_doc * n / len(terms)
        own = set(tokenize(query))
        ranked = sorted((t for t in weight if t not in own), key=lambda t: (-weight[t], t))
        return ranked[: self.fb_terms]

    def rewrite(self, queries: Sequence[str]) -> list[RewriteResult]:
        out = []
        for q in queries:
            q = " ".join(q.split())
            terms = self.expansion(q)
            text = " ".join([q, *terms])
            out.append(
                RewriteResult(
                    text=text,
                    original=q,
                    trace=tuple(f"rm3+{t}" for t in terms),
                    path=(q, text) if terms else (q,),
                    steps=1 if terms else 0,
                    stopped="expanded" if terms else "no-terms",
                )
            )
        return out
