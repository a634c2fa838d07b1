"""Endpoint feedback as features of candidate edits: what each edited query retrieves.

The decision transformer sees only the query; whether an edit helps depends on what the search
endpoint returns for it. Here every candidate edit of the current query is run on the endpoint
and described by its results, with no relevance judgements:

1. ``q`` is the current query, ``c_1..c_n`` its edits (``actions.expand``: text order), ``x`` the
   original claim. The endpoint returns the top-k document ids of ``q`` and of each ``c_i``
   (``Endpoint.rank_edits``).
2. The *pool* is every document in any of those lists. Each pooled document ``d`` gets a
   pseudo-relevance ``w(d) = cos(e_x, e_d)`` (sentence embeddings of the claim and the document
   text; ``Endpoint.vectors``). The pseudo-relevant documents are the pool's top ``m`` by ``w``
   (ties: pool order, which is first-seen order over ``q`` then ``c_1..c_n``).
3. Term statistics come from the pool, the part of the corpus the endpoint showed: a term's
   pool document frequency ``pdf(t)`` and ``pidf(t) = log((|P| + 1) / (pdf(t) + 0.5))``.

Per candidate, ``FEATURES`` in order (``_d`` = the candidate's value minus the current query's):

- ``dcg``, ``dcg_d``: DCG-weighted mean of ``w`` over the top-k (``w_i = 1/log2(i + 1)``; the
  feedback guard's estimate);
- ``top1``, ``top1_d``: ``w`` of the first result;
- ``prr1``, ``prr1_d``, ``prr3``, ``prr3_d``: AP@k with the pool's top-1 / top-3 documents taken
  as the relevant ones;
- ``prf1``, ``prf1_d``: AP@k with the *fused* pseudo-relevant document taken as the relevant one:
  the pool document with the best reciprocal-rank fusion (``1/(10 + r)`` summed) of its rank in
  the original claim's endpoint top-k and its rank by ``w`` (fusing the endpoint's own judgement
  with the encoder's is right more often than either alone);
- ``ov10``: share of the current query's top-10 that stays in the candidate's top-10;
- the step's state, the same for every candidate: ``wmax`` (the pool's best ``w``), ``conf1`` and
  ``conff`` (``w`` of the pool's best / of the fused document minus ``w`` of the current first
  result: how sure the judges are that something better than the current first result exists),
  ``spread`` (distinct pooled documents over ``k * (candidates + 1)``);
- ``kind_*`` (one-hot over ``actions.KINDS``), ``pos_*`` (one-hot: NOUN, PROPN, VERB, ADJ, ADV,
  NUM, other), ``stop``, ``position`` (token index / tokens), ``length`` (tokens);
- ``rm_pidf``, ``add_pidf``: largest ``pidf`` of a term the edit removes / adds (0 when none);
- ``rm_top``, ``rm_pseudo``: share of the current query's top-10 / of the pseudo-relevant top-3
  documents that contain a removed term (0 when none removed);
- ``add_top``, ``add_pseudo``: the same for added terms.

``Endpoint`` wraps any ``Retriever`` plus a way to get document vectors and texts: the corpus's
own (``Endpoint.from_corpus``: precomputed embeddings, e.g. the kNN index's) or the hits' texts
embedded on demand and cached. Everything is deterministic.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from factseek.rewrite.edits.judge import RRF_K, JudgeModel, judge_inputs
from factseek.text import tokenize

if TYPE_CHECKING:  # env.py loads the BM25 scorers (numba): not needed to compute features
    from factseek.rewrite.environment.env import Retriever

KINDS = ("remove", "swap", "add", "present")
POS_GROUPS = ("NOUN", "PROPN", "VERB", "ADJ", "ADV", "NUM")
FEATURES: tuple[str, ...] = (
    "dcg", "dcg_d", "top1", "top1_d", "prr1", "prr1_d", "prr3", "prr3_d", "prf1", "prf1_d",
    "ov10", "wmax", "conf1", "conff", "spread",
    *(f"kind_{k}" for k in KINDS), *(f"pos_{p}" for p in (*POS_GROUPS, "other")),
    "stop", "position", "length",
    "rm_pidf", "add_pidf", "rm_top", "rm_pseudo", "add_top", "add_pseudo",
)  # fmt: skip
#: With a learned judge (``judge.JudgeModel``, its probability ``p(d)`` that pooled document d
#: is the evidence): AP@k of the judge's top document and its change; the expected AP@k under
#: ``p`` (one relevant document, drawn from ``p``) and its change; the judge's top probability
#: (how sure it is); ``p`` of the current first result.
JUDGE_FEATURES: tuple[str, ...] = ("prj1", "prj1_d", "pje", "pje_d", "pjmax", "pjtop")
PSEUDO = 3  # pseudo-relevant documents for the term features and prr3


@dataclass(frozen=True, kw_only=True)
class Step:
    """One query's candidate edits with their features (rows in ``expand`` order)."""

    query: str
    texts: tuple[str, ...]  # the candidates' texts
    actions: tuple[str, ...]  # "kind@position"
    features: np.ndarray  # float32 (n, len(FEATURES))
    rankings: tuple[tuple[str, ...], ...]  # each candidate's top-k ids
    current: tuple[str, ...]  # the current query's top-k ids


class Endpoint:
    """A retriever plus document vectors and texts for the feedback features.

    ``vectors(ids)`` returns L2-normalised (len(ids), dim) float32 rows; ``terms(id)`` the
    document's analysed terms (``factseek.text.tokenize``). ``from_corpus`` takes both from a
    known corpus; ``from_texts`` embeds documents when first seen (``text_of`` gives a text).
    """

    def __init__(
        self,
        retriever: Retriever,
        *,
        k: int,
        encoder: object,
        text_of: Callable[[str], str],
        vectors: Mapping[str, np.ndarray] | None = None,
    ) -> None:
        self.retriever, self.k, self.encoder, self.text_of = retriever, k, encoder, text_of
        self._vec: dict[str, np.ndarray] = dict(vectors or {})
        self._terms: dict[str, frozenset[str]] = {}

    @classmethod
    def from_corpus(
        cls,
        retriever: Retriever,
        docs: Sequence[tuple[str, str]],
        embeddings: np.ndarray,
        encoder: object,
        *,
        k: int = 50,
    ) -> Endpoint:
        text = dict(docs)
        vec = {d: embeddings[i] for i, (d, _) in enumerate(docs)}
        return cls(retriever, k=k, encoder=encoder, text_of=text.__getitem__, vectors=vec)

    def vectors(self, ids: Sequence[str]) -> np.ndarray:
        todo = [d for d in dict.fromkeys(ids) if d not in self._vec]
        if todo:
            emb = np.asarray(self.encoder.encode([self.text_of(d) for d in todo]), np.float32)  # type: ignore[attr-defined]
            self._vec.update(zip(todo, emb, strict=True))
        dim = next(iter(self._vec.values())).shape[0] if self._vec else 0
        out = np.zeros((len(ids), dim), np.float32)
        for i, d in enumerate(ids):
            out[i] = self._vec[d]
        return out

    def terms(self, doc_id: str) -> frozenset[str]:
        got = self._terms.get(doc_id)
        if got is None:
            got = self._terms[doc_id] = frozenset(tokenize(self.text_of(doc_id)))
        return got

    def rank_edits(self, parent: str, queries: Sequence[str]) -> tuple[list[str], list[list[str]]]:
        """The parent's top-k and each query's (as edits of the parent)."""
        current = self.retriever.rank([parent], self.k)[0]
        return current, (self.retriever.rank_edits(parent, queries, self.k) if queries else [])


def _dcg_weights(k: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, k + 2))


def _ap(ranking: Sequence[str], relevant: frozenset[str], k: int) -> float:
    hits, total = 0, 0.0
    for i, d in enumerate(ranking[:k], 1):
        if d in relevant:
            hits += 1
            total += hits / i
    return total / min(len(relevant), k) if relevant else 0.0


def _fused_top(
    pool: Sequence[str], order: Sequence[int], claim_ranking: Sequence[str]
) -> frozenset[str]:
    """The pool document with the best reciprocal-rank fusion of the claim's endpoint rank and
    its claim-similarity rank: ``1/(RRF_K + r_endpoint) + 1/(RRF_K + r_cos)`` (ranks from 1;
    ``len(claim_ranking) + 1`` when absent; ties: pool order)."""
    if not pool:
        return frozenset()
    miss = len(claim_ranking) + 1
    r_end = {d: i for i, d in enumerate(claim_ranking, 1)}
    r_cos = {pool[i]: j for j, i in enumerate(order, 1)}
    best = max(range(len(pool)), key=lambda i: (1 / (RRF_K + r_end.get(pool[i], miss)) + 1 / (RRF_K + r_cos[pool[i]]), -i))  # fmt: skip
    return frozenset([pool[best]])


def _pos_group(pos: str) -> int:
    return POS_GROUPS.index(pos) if pos in POS_GROUPS else len(POS_GROUPS)


def feature_names(judged: bool) -> tuple[str, ...]:
    """The columns ``step_features`` computes, without or with a judge."""
    return FEATURES + JUDGE_FEATURES if judged else FEATURES


def step_features(
    endpoint: Endpoint,
    claim_vector: np.ndarray,
    tq: object,
    cands: Sequence[tuple[object, str]],
    claim_ranking: Sequence[str] | None = None,
    *,
    judge: JudgeModel | None = None,
    claim: str | None = None,
) -> Step:
    """Features of every candidate ``(action, text)`` of the tagged query ``tq``; see the module
    docstring. ``claim_vector``: the original claim's L2-normalised embedding;
    ``claim_ranking``: the endpoint's top-k for the original claim (default: ``tq`` is the claim,
    its own top-k). With a ``judge``, the ``JUDGE_FEATURES`` columns follow (``claim``: the original
    claim's text; default: the current query)."""
    k = endpoint.k
    query: str = tq.text  # type: ignore[attr-defined]
    tokens = tq.tokens  # type: ignore[attr-defined]
    texts = [t for _, t in cands]
    current, rankings = endpoint.rank_edits(query, texts)
    pool = list(dict.fromkeys([*current, *(d for r in rankings for d in r)]))
    row = {d: i for i, d in enumerate(pool)}
    w = endpoint.vectors(pool) @ claim_vector if pool else np.zeros(0, np.float32)
    order = sorted(range(len(pool)), key=lambda i: (-float(w[i]), i))
    pseudo1 = frozenset(pool[i] for i in order[:1])
    pseudo3 = frozenset(pool[i] for i in order[:PSEUDO])
    fused = _fused_top(pool, order, current if claim_ranking is None else claim_ranking)
    pdf: dict[str, int] = {}
    for d in pool:
        for t in endpoint.terms(d):
            pdf[t] = pdf.get(t, 0) + 1
    n_pool = len(pool)
    weights = _dcg_weights(k)

    def pidf(t: str) -> float:
        return math.log((n_pool + 1) / (pdf.get(t, 0) + 0.5))

    def endpoint_row(ranking: Sequence[str]) -> tuple[float, float, float, float, float]:
        if not ranking:
            return 0.0, 0.0, 0.0, 0.0, 0.0
        s = w[[row[d] for d in ranking]]
        ww = weights[: len(s)]
        dcg = float((ww * s).sum() / ww.sum())
        return (dcg, float(s[0]), _ap(ranking, pseudo1, k), _ap(ranking, pseudo3, k),
                _ap(ranking, fused, k))  # fmt: skip

    def share(docs: Sequence[str], terms: set[str]) -> float:
        if not terms or not docs:
            return 0.0
        return sum(1 for d in docs if terms & endpoint.terms(d)) / len(docs)

    base = endpoint_row(current)
    top10 = set(current[:10])
    w_top = float(w[row[current[0]]]) if current else 0.0
    w_fused = max((float(w[row[d]]) for d in fused), default=0.0)
    state = (
        float(w[order[0]]) if pool else 0.0,  # wmax
        (float(w[order[0]]) if pool else 0.0) - w_top,  # conf1
        w_fused - w_top,  # conff
        n_pool / (k * (len(cands) + 1)),  # spread
    )
    pseudo_docs = [pool[i] for i in order[:PSEUDO]]
    old_terms = set(tokenize(query))
    judged = None
    if judge is not None:
        judged = _judged(judge, endpoint, pool, w, current, rankings, claim_ranking, claim or query)  # fmt: skip
    out = np.zeros((len(cands), len(feature_names(judge is not None))), np.float32)
    actions = []
    n_tok = len(tokens)
    for j, ((action, text), ranking) in enumerate(zip(cands, rankings, strict=True)):
        kind, position = str(action.kind.value), int(action.position)  # type: ignore[attr-defined]
        actions.append(f"{kind}@{position}")
        tok = tokens[position]
        e = endpoint_row(ranking)
        new_terms = set(tokenize(text))
        removed, added = old_terms - new_terms, new_terms - old_terms
        onehot_kind = [float(kind == x) for x in KINDS]
        onehot_pos = [0.0] * (len(POS_GROUPS) + 1)
        onehot_pos[_pos_group(tok.pos)] = 1.0
        out[j, : len(FEATURES)] = [
            e[0], e[0] - base[0], e[1], e[1] - base[1], e[2], e[2] - base[2], e[3], e[3] - base[3],
            e[4], e[4] - base[4], len(top10 & set(ranking[:10])) / max(len(top10), 1),
            *state,
            *onehot_kind, *onehot_pos,
            float(tok.is_stop), position / n_tok, float(n_tok),
            max((pidf(t) for t in removed), default=0.0),
            max((pidf(t) for t in added), default=0.0),
            share(current[:10], removed), share(pseudo_docs, removed),
            share(current[:10], added), share(pseudo_docs, added),
        ]  # fmt: skip
        if judged is not None:
            out[j, len(FEATURES) :] = judged(ranking)
    return Step(
        query=query,
        texts=tuple(texts),
        actions=tuple(actions),
        features=out,
        rankings=tuple(tuple(r) for r in rankings),
        current=tuple(current),
    )


def _judged(
    judge: JudgeModel,
    endpoint: Endpoint,
    pool: Sequence[str],
    w: np.ndarray,
    current: Sequence[str],
    rankings: Sequence[Sequence[str]],
    claim_ranking: Sequence[str] | None,
    claim: str,
) -> Callable[[Sequence[str]], tuple[float, ...]]:
    """The judge's probabilities over the pool, and a function giving a ranking's
    ``JUDGE_FEATURES`` (see there)."""

    k = endpoint.k
    x = judge_inputs(
        claim, w, pool, [endpoint.terms(d) for d in pool],
        current if claim_ranking is None else claim_ranking, [current, *rankings],
        reader=judge.reader, text_of=endpoint.text_of,
    )  # fmt: skip
    p = judge.probabilities(x)
    prob = dict(zip(pool, p.tolist(), strict=True))
    top = frozenset([pool[int(np.argmax(p))]]) if len(pool) else frozenset()
    pmax = float(p.max()) if len(pool) else 0.0

    def expected_ap(ranking: Sequence[str]) -> float:  # one relevant document, drawn from p
        return sum(prob[d] / i for i, d in enumerate(ranking[:k], 1))

    b1, be = _ap(current, top, k), expected_ap(current)
    ptop = prob[current[0]] if current else 0.0

    def row(ranking: Sequence[str]) -> tuple[float, ...]:
        a1, ae = _ap(ranking, top, k), expected_ap(ranking)
        return (a1, a1 - b1, ae, ae - be, pmax, ptop)

    return row
