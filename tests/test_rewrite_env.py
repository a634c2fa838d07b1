"""The search environment: retrievers, rewards, tie-breaking."""

from __future__ import annotations

import numpy as np
import pytest

from factseek.errors import ConfigError
from factseek.ml.encode import FunctionEncoder
from factseek.rewrite.environment.env import (
    BackendRetriever,
    BM25Retriever,
    Environment,
    KNNRetriever,
    corpus_info,
    make_retriever,
    rank_edit_groups,
    top_k_matrix,
    top_k_rows,
)
from factseek.search.base import FunctionSearch
from factseek.types import Hit

DOCS = [
    ("d0", "the mayor approved the city budget"),
    ("d1", "the mayor loves cats"),
    ("d2", "cats and dogs and cats"),
    ("d3", "budget cuts hit schools"),
]


def test_bm25_rank_and_rewards():
    env = Environment(retriever=BM25Retriever.from_docs(DOCS), reward="ap@2")
    assert env.retriever.rank(["mayor budget"], 3) == [["d0", "d1", "d3"]]  # d1 is shorter
    assert env.reward_of("mayor budget", ["d0"]) == 1.0
    assert env.reward_of("cats", ["d0"]) == 0.0
    assert env.max_reward(["d0", "d3"]) == 1.0
    # rank_edits agrees with rank
    edits = ["mayor cats", "budget", "approved budget schools", "zzz"]
    assert env.retriever.rank_edits("mayor budget", edits, 3) == env.retriever.rank(edits, 3)
    assert env.edit_rewards("mayor budget", edits, ["d3"]) == env.rewards(edits, ["d3"])


def test_reward_kinds():
    ret = BM25Retriever.from_docs(DOCS)
    assert Environment(retriever=ret, reward="recall@1").reward_of("budget", ["d0", "d3"]) == 0.5
    assert Environment(retriever=ret, reward="recall@1").max_reward(["d0", "d3"]) == 0.5
    rr = Environment(retriever=ret, reward="rr")
    assert rr.k == 50 and rr.metric == "rr"
    assert rr.reward_of("cats", ["d1"]) == 0.5  # d2 (cats twice) first
    with pytest.raises(ConfigError):
        Environment(retriever=ret, reward="ndcg@10")


def test_top_k_rows_breaks_ties_by_position():
    scores = np.array([[0.5, 0.9, 0.5, 0.5, 0.1]])
    assert top_k_rows(scores, 3)[0].tolist() == [1, 0, 2]
    assert top_k_rows(scores, 10)[0].tolist() == [1, 0, 2, 3, 4]


def test_top_k_matrix_matches_the_row_reference():
    rng = np.random.default_rng(0)
    for n, m, k in ((1, 5, 3), (7, 40, 10), (30, 200, 50), (3, 8, 8), (4, 6, 20), (0, 5, 2)):
        scores = rng.integers(0, 4, size=(n, m)).astype(np.float32)  # many ties
        want = [r.tolist() for r in top_k_rows(scores, k)]
        assert top_k_matrix(scores, k).tolist() == want


def bag_of_letters(texts):
    out = np.zeros((len(texts), 26), np.float32)
    for i, t in enumerate(texts):
        for ch in t.lower():
            if "a" <= ch <= "z":
                out[i, ord(ch) - 97] += 1
    return out + 1e-3


def test_knn_with_embedding_cache(tmp_path):
    calls = []

    def fn(texts):
        calls.append(len(texts))
        return bag_of_letters(texts)

    enc = FunctionEncoder(fn, dim=26, name="letters")
    ret = KNNRetriever.build(DOCS, enc, cache_dir=tmp_path)
    assert calls == [4]  # one batch for the corpus
    again = KNNRetriever.build(DOCS, enc, cache_dir=tmp_path)
    assert calls == [4] and np.array_equal(again.embeddings, ret.embeddings)  # from the cache
    top = ret.rank(["the mayor approved the city budget"], 2)[0]
    assert top[0] == "d0"
    assert ret.rank_edits("x", ["budget cuts hit schools"], 1) == [["d3"]]


def test_knn_rank_groups_is_rank_edits_per_parent_in_one_encoder_call():
    calls = []

    def fn(texts):
        calls.append(len(texts))
        return bag_of_letters(texts)

    ret = KNNRetriever(
        [d for d, _ in DOCS], bag_of_letters([t for _, t in DOCS]), FunctionEncoder(fn, 26)
    )
    groups = [("mayor cats", ["mayor", "cats", "mayor dogs"]), ("budget", []),
              ("city budget", ["budget", "city", "cats"])]  # fmt: skip
    calls.clear()
    got = rank_edit_groups(ret, groups, 3)
    assert calls == [5]  # every distinct text once ("cats" twice), in one call
    assert got == [ret.rank_edits(p, qs, 3) if qs else [] for p, qs in groups]
    bm25 = BM25Retriever.from_docs(DOCS)  # no rank_groups: one rank_edits call per parent
    assert rank_edit_groups(bm25, groups, 3) == [
        bm25.rank_edits(p, qs, 3) if qs else [] for p, qs in groups
    ]
    env = Environment(retriever=ret, reward="rr@3")
    rewards = env.group_rewards(groups, ["d1"])
    assert rewards == [env.edit_rewards(p, qs, ["d1"]) for p, qs in groups]


def test_backend_as_opaque_endpoint():
    def search(query, k):
        words = query.split()
        return [Hit(url=f"https://x.example/{w}", doc_id=None) for w in words][:k]

    ret = BackendRetriever(FunctionSearch(search, name="fn"))
    env = Environment(retriever=ret, reward="rr")
    assert ret.rank(["a b c"], 2) == [["https://x.example/a", "https://x.example/b"]]
    assert env.reward_of("a b c", ["https://x.example/b"]) == 0.5


def test_make_retriever_and_corpus_info():
    assert make_retriever("bm25", DOCS).name == "bm25"
    with pytest.raises(ConfigError, match="choose one of"):
        make_retriever("nope", DOCS)
    with pytest.raises(ConfigError):
        make_retriever("backend", DOCS)
    info = corpus_info(DOCS)
    assert info["documents"] == 4 and info["fingerprint"] != corpus_info(DOCS[:3])["fingerprint"]


def test_bm25_retriever_pickles_without_buffers():
    import pickle

    ret = BM25Retriever.from_docs(DOCS)
    ret.rank(["mayor"], 2)
    copy = pickle.loads(pickle.dumps(ret))
    assert copy._scorer is None
    assert copy.rank(["mayor"], 2) == ret.rank(["mayor"], 2)
