"""A learned judge of which pooled result is the claim's evidence, for the edit scorer.

The edit scorer (``features.step_features``) cannot see relevance judgements; it guesses which
of the documents its candidate edits retrieve (the *pool*) is the evidence, and scores each edit
by how it ranks that guess. The first judges were the sentence encoder's cosine with the claim,
alone or fused with the claim's own BM25 rank. This judge learns the guess: a small MLP over
per-document features, trained listwise on pools of training claims (softmax over the pool, the
target spread over its relevant documents), so its score is the probability that a document is
the evidence given the pool.

Per pooled document ``d`` of claim ``x`` (``FEATURES``, in order):

- ``cos``: ``cos(e_x, e_d)``; ``cos_gap``: ``cos`` minus the pool's best;
- ``cos_rank``: ``1/(RRF_K + r)``, ``r`` its rank by ``cos`` in the pool (from 1);
- ``bm25_rank``: ``1/(RRF_K + r)``, ``r`` its rank in the claim's own top-k (``k + 1`` when out);
- ``fused``: ``cos_rank + bm25_rank`` (the shipped features' fused judge);
- ``lists``: share of the searched queries (the claim and its edits) whose top-k holds it;
- ``idf_cover``: share of the claim's terms that the document contains, each weighted by its
  IDF in the pool (``log((|P| + 1) / (pdf + 0.5))``: the pool is what any endpoint shows, so
  the judge needs no corpus statistics and works on a web search's hits too);
- ``doc_cover``: share of the document's distinct terms that are the claim's;
- ``doc_len``: ``log(1 + terms)``;
- with a reader (``Reader``: a stance model read on the pool's top ``reads`` documents by
  ``fused``), ``READ_FEATURES``: ``read`` (1 for a document it read) and ``read_rel`` (its
  probability that the document takes a side on the claim, ``1 - p(nei)``; 0 when not read).
  A cross-encoder reads the claim and the sentence together, which the cosine of two separate
  embeddings cannot; reading only the few documents the cheap judges rank first bounds its
  cost (``reads`` pairs per step, each (claim, document) read once).

``JudgeModel.score`` maps features to logits, ``probabilities`` to a softmax over the pool.
Arrays are float32; inference is numpy only, training (``fit``) needs torch.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from factseek.errors import ModelError
from factseek.text import tokenize

FEATURES: tuple[str, ...] = (
    "cos", "cos_gap", "cos_rank", "bm25_rank", "fused", "lists", "idf_cover", "doc_cover",
    "doc_len",
)  # fmt: skip
READ_FEATURES: tuple[str, ...] = ("read", "read_rel")
ARRAYS = ("mean", "std", "w1", "b1", "w2", "b2")
RRF_K = 10  # reciprocal-rank fusion constant of the fused rank (``features`` uses it too)


def input_names(read: bool) -> tuple[str, ...]:
    """The judge's input columns, without or with a reader."""
    return FEATURES + READ_FEATURES if read else FEATURES


class Reader:
    """A stance model as the judge's reader: ``relevance(claim, texts)`` gives each document's
    ``1 - p(nei)``, reading each (claim, document) pair once (kept for the process, and on
    disk in the stance readings cache)."""

    def __init__(self, name: str, reads: int, model: object | None = None) -> None:
        self.name, self.reads = name, reads
        self._model = model
        self._memo: dict[tuple[str, str], float] = {}

    def relevance(self, claim: str, texts: Mapping[str, str]) -> dict[str, float]:
        todo = [d for d in texts if (claim, d) not in self._memo]
        if todo:
            if self._model is None:  # readings kept on disk, as the pipeline's (stance.readings)
                from factseek.files import cache_root
                from factseek.stance import load_stance

                self._model = load_stance(self.name, readings=cache_root())
            got = self._model.classify([(claim, texts[d]) for d in todo])  # type: ignore[attr-defined]
            for d, r in zip(todo, got, strict=True):
                self._memo[(claim, d)] = 1.0 - float(r.probs.get("nei", 0.0))
        return {d: self._memo[(claim, d)] for d in texts}


def list_counts(searched: Sequence[Sequence[str]]) -> dict[str, int]:
    """Per document, how many of the searched lists hold it (first-seen order: the pool)."""
    count: dict[str, int] = {}
    for ranking in searched:
        for d in ranking:
            count[d] = count.get(d, 0) + 1
    return count


def judge_inputs(
    claim: str,
    cos: np.ndarray,
    pool: Sequence[str],
    doc_terms: Sequence[frozenset[str]],
    claim_ranking: Sequence[str],
    searched: Sequence[Sequence[str]],
    *,
    reader: Reader | None = None,
    text_of: Callable[[str], str] | None = None,
) -> np.ndarray:
    """The judge's input rows for a pool: ``pool_features`` (``searched``: the top-k of every
    query searched, the pool's lists), and with a ``reader`` its reading of the pool's top
    ``reader.reads`` documents by ``fused`` (``text_of`` gives their text)."""
    lists = list_counts(searched)
    x = pool_features(frozenset(tokenize(claim)), cos, pool, doc_terms, claim_ranking, lists, len(searched))  # fmt: skip
    if reader is None:
        return x
    out = np.zeros((len(pool), len(FEATURES) + len(READ_FEATURES)), np.float32)
    out[:, : len(FEATURES)] = x
    if len(pool) and text_of is not None:
        order = np.argsort(-x[:, FEATURES.index("fused")], kind="stable")[: reader.reads]
        rel = reader.relevance(claim, {pool[i]: text_of(pool[i]) for i in order})
        for i in order:
            out[i, len(FEATURES) :] = (1.0, rel[pool[i]])
    return out


def pool_features(
    claim_terms: frozenset[str],
    cos: np.ndarray,
    pool: Sequence[str],
    doc_terms: Sequence[frozenset[str]],
    claim_ranking: Sequence[str],
    lists: Mapping[str, int],
    n_lists: int,
) -> np.ndarray:
    """(len(pool), len(FEATURES)) float32 rows; see the module docstring."""
    n = len(pool)
    out = np.zeros((n, len(FEATURES)), np.float32)
    if not n:
        return out
    cos = np.asarray(cos, np.float32)
    order = np.argsort(-cos, kind="stable")
    r_cos = np.empty(n, np.int64)
    r_cos[order] = np.arange(1, n + 1)
    miss = len(claim_ranking) + 1
    r_end = {d: i for i, d in enumerate(claim_ranking, 1)}
    pdf = dict.fromkeys(claim_terms, 0)
    for ts in doc_terms:
        for t in claim_terms & ts:
            pdf[t] += 1
    weights = {t: math.log((n + 1) / (f + 0.5)) for t, f in pdf.items()}
    total = sum(weights.values()) or 1.0
    best = float(cos.max())
    for i, d in enumerate(pool):
        ts = doc_terms[i]
        shared = claim_terms & ts
        cr = 1 / (RRF_K + r_cos[i])
        br = 1 / (RRF_K + r_end.get(d, miss))
        out[i] = (
            cos[i], cos[i] - best, cr, br, cr + br, lists.get(d, 0) / max(n_lists, 1),
            sum(weights[t] for t in shared) / total, len(shared) / max(len(ts), 1),
            math.log1p(len(ts)),
        )  # fmt: skip
    return out


@dataclass(frozen=True, kw_only=True)
class JudgeModel:
    """An MLP ``F -> H -> 1`` (ReLU) on standardised ``FEATURES``: a logit per document."""

    arrays: Mapping[str, np.ndarray]
    features: tuple[str, ...] = FEATURES
    reader: Reader | None = None  # its reader, when ``features`` include ``READ_FEATURES``

    def __post_init__(self) -> None:
        missing = [a for a in ARRAYS if a not in self.arrays]
        if missing:
            raise ModelError(f"judge arrays missing: {', '.join(missing)}")
        if self.features != input_names(self.reader is not None):
            raise ModelError("judge features do not match this version's (with/without a reader)")
        if self.arrays["w1"].shape[0] != len(self.features):
            raise ModelError(
                f"judge reads {self.arrays['w1'].shape[0]} features, config names"
                f" {len(self.features)}"
            )

    def score(self, x: np.ndarray) -> np.ndarray:
        a = self.arrays
        h = (np.asarray(x, np.float32) - a["mean"]) / a["std"]
        h = np.maximum(h @ a["w1"] + a["b1"], 0.0)
        return (h @ a["w2"] + a["b2"]).reshape(-1)

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """Softmax of the logits over the pool (the rows of ``x``)."""
        s = self.score(x)
        if not len(s):
            return s
        e = np.exp(s - s.max())
        return (e / e.sum()).astype(np.float32)


def fit(
    xs: Sequence[np.ndarray],
    ys: Sequence[np.ndarray],
    *,
    hidden: int = 32,
    epochs: int = 8,
    lr: float = 3e-3,
    batch: int = 128,
    seed: int = 0,
    reader: Reader | None = None,
) -> JudgeModel:
    """Fit listwise on pools (``xs[i]``: features of pool i; ``ys[i]``: its relevance, bool);
    pools with no relevant document carry no signal and are skipped."""
    import torch

    keep = [i for i, y in enumerate(ys) if np.asarray(y).any()]
    if not keep:
        raise ModelError("no pool holds a relevant document: nothing to fit the judge on")
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    allx = np.concatenate([xs[i] for i in keep])
    mean = allx.mean(axis=0).astype(np.float32)
    std = allx.std(axis=0)
    std = np.where(std > 1e-6, std, 1.0).astype(np.float32)
    width = max(len(xs[i]) for i in keep)
    x = np.zeros((len(keep), width, len(mean)), np.float32)
    y = np.zeros((len(keep), width), np.float32)
    valid = np.zeros((len(keep), width), bool)
    for row, i in enumerate(keep):
        n = len(xs[i])
        x[row, :n] = (xs[i] - mean) / std
        y[row, :n] = np.asarray(ys[i], np.float32)
        valid[row, :n] = True
    y /= y.sum(axis=1, keepdims=True)  # the target: spread over the relevant documents
    xt, yt, vt = torch.from_numpy(x), torch.from_numpy(y), torch.from_numpy(valid)
    net = torch.nn.Sequential(
        torch.nn.Linear(len(mean), hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 1)
    )
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    for _ in range(epochs):
        order = torch.from_numpy(rng.permutation(len(keep)))
        for s in range(0, len(order), batch):
            idx = order[s : s + batch]
            logits = net(xt[idx]).squeeze(-1).masked_fill(~vt[idx], -1e9)
            loss = -(torch.log_softmax(logits, dim=1) * yt[idx]).sum(dim=1).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    w = [p.detach().numpy().astype(np.float32) for p in net.parameters()]
    arrays = {"mean": mean, "std": std, "w1": w[0].T.copy(), "b1": w[1],
              "w2": w[2].T.copy(), "b2": w[3]}  # fmt: skip
    return JudgeModel(arrays=arrays, features=input_names(reader is not None), reader=reader)
