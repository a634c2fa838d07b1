"""The incremental scorer against a plain-Python BM25: identical scores and rankings."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from factseek.rewrite.environment.bm25_index import BM25Index
from factseek.rewrite.environment.scorer import IncrementalBM25
from factseek.text import tokenize


class PlainBM25:
    """Lucene BM25, written out: (-score, position) order, positive scores only."""

    def __init__(self, docs: list[tuple[str, str]], k1: float = 1.5, b: float = 0.75) -> None:
        self.toks = [tokenize(text) for _, text in docs]
        n = len(docs)
        avgdl = sum(map(len, self.toks)) / n
        df: dict[str, int] = {}
        self.vocab: dict[str, int] = {}
        for t in self.toks:
            for w in t:
                self.vocab.setdefault(w, len(self.vocab))
            for w in set(t):
                df[w] = df.get(w, 0) + 1
        self.idf = {w: math.log(1.0 + (n - d + 0.5) / (d + 0.5)) for w, d in df.items()}
        self.norm = [k1 * (1.0 - b + b * len(t) / avgdl) for t in self.toks]
        self.tf = [{w: float(t.count(w)) for w in set(t)} for t in self.toks]

    def __call__(self, query: str, k: int) -> tuple[list[int], list[float]]:
        q = [w for w in tokenize(query) if w in self.vocab]
        terms = sorted(set(q), key=self.vocab.__getitem__)  # the canonical summation order
        scored = []
        for i, tfs in enumerate(self.tf):
            s = 0.0
            for w in terms:
                tf = tfs.get(w, 0.0)
                if tf:
                    s += float(q.count(w)) * self.idf[w] * tf / (tf + self.norm[i])
            if s > 0:
                scored.append((-s, i))
        scored.sort()
        return [i for _, i in scored[:k]], [-s for s, _ in scored[:k]]


def random_corpus(rng: random.Random, n_docs: int, n_words: int) -> list[tuple[str, str]]:
    words = [f"w{i}" for i in range(n_words)]
    weights = [1.0 / (i + 1) for i in range(n_words)]
    return [
        (f"d{i}", " ".join(rng.choices(words, weights, k=rng.randint(1, 25))))
        for i in range(n_docs)
    ]


def one_token_edits(rng: random.Random, query: list[str], words: list[str], n: int):
    out = []
    for _ in range(n):
        q = list(query)
        kind = rng.choice(["remove", "swap", "add"])
        i = rng.randrange(len(q))
        if kind == "remove" and len(q) > 1:
            del q[i]
        elif kind == "swap":
            q[i] = rng.choice(words)
        else:
            q.insert(i, rng.choice(words))
        out.append(" ".join(q))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("scan_cost", [0.0, 0.5, 1e12])
def test_edits_match_plain_bm25(seed: int, scan_cost: float):
    rng = random.Random(seed)
    docs = random_corpus(rng, 300, 120)
    words = [f"w{i}" for i in range(130)]  # a few unknown to the corpus
    index = BM25Index.build(docs)
    plain_bm25 = PlainBM25(docs)
    scorer = IncrementalBM25(index, scan_cost=scan_cost, parent_depth=2)
    k = 10
    for _ in range(6):
        parent = rng.choices(words, k=rng.randint(1, 8))
        top, scores = scorer.parent(index.term_ids(" ".join(parent)), k)
        ref_ids, ref_scores = plain_bm25(" ".join(parent), k)
        assert top.tolist() == ref_ids
        assert scores.tolist() == ref_scores
        cands = one_token_edits(rng, parent, words, 40)
        results = scorer.edits([index.term_ids(c) for c in cands], k)
        for cand, (ids, sc) in zip(cands, results, strict=True):
            ref_ids, ref_scores = plain_bm25(cand, k)
            assert ids.tolist() == ref_ids, cand
            assert sc.tolist() == ref_scores  # bit-identical: same float operations
    assert scorer.stats.candidates == 240
    if scan_cost == 0.5:
        assert scorer.stats.deepened > 0  # the shallow ranking had to grow


def test_ties_break_by_document_order():
    docs = [(f"d{i}", "apple pie") for i in range(6)] + [("x", "banana")]
    index = BM25Index.build(docs)
    scorer = IncrementalBM25(index)
    top, _ = scorer.parent(index.term_ids("banana"), 3)
    assert top.tolist() == [6]
    [(ids, scores)] = scorer.edits([index.term_ids("banana apple")], 3)
    assert ids.tolist() == [6, 0, 1]
    assert len(set(scores[1:].tolist())) == 1
    ids2, _ = scorer.score_dense(index.term_ids("apple"), 4)
    assert ids2.tolist() == [0, 1, 2, 3]


def test_unknown_and_empty_queries_return_nothing():
    index = BM25Index.build([("a", "one two"), ("b", "three")])
    scorer = IncrementalBM25(index)
    top, _ = scorer.parent(index.term_ids("zzz"), 5)
    assert top.tolist() == []
    [(ids, _)] = scorer.edits([index.term_ids("zzz three")], 5)
    assert ids.tolist() == [1]


def test_save_and_load_round_trip(tmp_path):
    rng = random.Random(3)
    docs = random_corpus(rng, 50, 30)
    index = BM25Index.build(docs)
    index.save(tmp_path / "ix")
    again = BM25Index.load(tmp_path / "ix")
    assert again.doc_ids == index.doc_ids and again.vocab == index.vocab
    assert again.fingerprint == index.fingerprint
    for name in BM25Index._ARRAYS:
        assert np.array_equal(getattr(again, name), getattr(index, name))


def test_blocked_accumulation_and_long_parents_match_plain_bm25(monkeypatch):
    """The cache-blocked parent scoring (forced on with tiny blocks) and parents with more
    terms than the removed-term masks have bits stay bit-identical to the plain BM25."""
    import factseek.rewrite.environment.scorer as scorer_module

    monkeypatch.setattr(scorer_module, "BLOCK_SHIFT", 3)
    monkeypatch.setattr(scorer_module, "BLOCKED_MIN_FILL", 0.0)
    rng = random.Random(7)
    docs = random_corpus(rng, 400, 150)
    words = [f"w{i}" for i in range(150)]
    index = BM25Index.build(docs)
    plain_bm25 = PlainBM25(docs)
    scorer = IncrementalBM25(index, parent_depth=2)
    k = 10
    for n_words in (3, 8, 90):  # 90 words: beyond the 63 bits of a term mask
        parent = rng.sample(words, n_words)
        top, scores = scorer.parent(index.term_ids(" ".join(parent)), k)
        assert (top.tolist(), scores.tolist()) == plain_bm25(" ".join(parent), k)
        ids, sc = scorer.score_dense(index.term_ids(" ".join(parent[:2])), k)
        assert (ids.tolist(), sc.tolist()) == plain_bm25(" ".join(parent[:2]), k)
        scorer.parent(index.term_ids(" ".join(parent)), k)
        cands = one_token_edits(rng, parent, words, 60)
        for cand, (ids, sc) in zip(cands, scorer.edits([index.term_ids(c) for c in cands], k),
                                   strict=True):  # fmt: skip
            assert (ids.tolist(), sc.tolist()) == plain_bm25(cand, k), cand
