"""select_passages against a plain-Python reference, plus hand-written edge cases."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pytest

from factseek import passages
from factseek.errors import ConfigError
from factseek.passages import DEFAULT_SPANS, SpanConfig, _is_space, _is_token, select_passages
from factseek.text import tokenize
from factseek.types import Document, Passage

# ----------------------------------------------------------------------------- the reference


def ref_word_offsets(text: str) -> list[tuple[int, int]]:
    """(start, end) character offsets of text.split() words, by walking the characters."""
    out, start = [], None
    for i, ch in enumerate(text):
        if ch.isspace():
            if start is not None:
                out.append((start, i))
                start = None
        elif start is None:
            start = i
    if start is not None:
        out.append((start, len(text)))
    return out


def ref_starts(n: int, window: int, stride: int) -> list[int]:
    starts, s = [], 0
    while n > 0:
        starts.append(s)
        if s + window >= n:
            break
        s += stride
        if s + window > n:  # the strided windows stop short: one more covers the tail
            starts.append(n - window)
            break
    return starts


def reference(
    documents: Sequence[Document], queries: Sequence[str], cfg: SpanConfig
) -> list[Passage]:
    """The second stage written as plainly as possible: dicts, loops, one step at a time."""
    k1, b = cfg.bm25_k1, cfg.bm25_b
    windows = []
    for d, doc in enumerate(documents):
        words = doc.text.split()
        for s in ref_starts(len(words), cfg.window, cfg.stride):
            e = min(s + cfg.window, len(words))
            terms = tokenize(" ".join(words[s:e]))
            windows.append(
                {
                    "doc": d,
                    "start": s,
                    "end": e,
                    "tf": Counter(terms),
                    "len": len(terms),
                    "words": tuple(words[s:e]),
                }
            )
    if not windows:
        return []
    n = len(windows)
    avg = sum(w["len"] for w in windows) / n
    df = Counter(t for w in windows for t in w["tf"])

    def bm25(w: dict, query_terms: list[str]) -> float:
        score = 0.0
        for t in query_terms:
            tf = w["tf"][t]
            if tf:
                idf = math.log(1.0 + (n - df[t] + 0.5) / (df[t] + 0.5))
                score += idf * (tf * (k1 + 1)) / (tf + k1 * (1 - b + b * w["len"] / avg))
        return score

    # A window repeating an earlier window's words is that earlier window.
    first_of: dict[tuple[str, ...], int] = {}
    for i, w in enumerate(windows):
        first_of.setdefault(w["words"], i)
    units = sorted(set(first_of.values()))

    pooled: dict[int, float] = {}
    for q in queries:
        qt = sorted(set(tokenize(q)))
        scored = [(bm25(windows[i], qt), i) for i in units]
        nominated = sorted((x for x in scored if x[0] > 0), key=lambda x: (-x[0], x[1]))[
            : cfg.per_query
        ]
        for score, i in nominated:
            pooled[i] = max(pooled.get(i, 0.0), score)
    kept = sorted(pooled.items(), key=lambda x: (-x[1], x[0]))[: cfg.top_windows]

    best_of_doc: dict[int, float] = {}
    kept_of_doc: dict[int, list[int]] = {}
    for i, score in kept:
        d = windows[i]["doc"]
        best_of_doc[d] = max(best_of_doc.get(d, 0.0), score)
        kept_of_doc.setdefault(d, []).append(i)
    ranked = sorted(best_of_doc, key=lambda d: (-best_of_doc[d], d))[: cfg.top_docs]

    out = []
    for rank, d in enumerate(ranked):
        doc = documents[d]
        offsets = ref_word_offsets(doc.text)
        spans: list[list] = []
        for i in sorted(kept_of_doc[d], key=lambda i: windows[i]["start"]):
            s = max(0, windows[i]["start"] - cfg.context)
            e = min(len(offsets), windows[i]["end"] + cfg.context)
            if spans and s <= spans[-1][1]:
                spans[-1][1] = max(spans[-1][1], e)
                spans[-1][2] = max(spans[-1][2], pooled[i])
            else:
                spans.append([s, e, pooled[i]])
        for s, e, score in spans:
            cs, ce = offsets[s][0], offsets[e - 1][1]
            out.append(Passage(url=doc.url, title=doc.title, text=doc.text[cs:ce], doc_rank=rank, score=score,
                               start_word=s, end_word=e, start_char=cs, end_char=ce))  # fmt: skip
    return out


def assert_same(got: list[Passage], want: list[Passage]) -> None:
    assert len(got) == len(want), (got, want)
    for g, w in zip(got, want, strict=True):
        assert (g.url, g.doc_rank, g.start_word, g.end_word, g.start_char, g.end_char, g.text) == (
            w.url, w.doc_rank, w.start_word, w.end_word, w.start_char, w.end_char, w.text)  # fmt: skip
        assert g.score == pytest.approx(w.score, abs=1e-9, rel=1e-9)


# ----------------------------------------------------------------------------- randomized comparison

VOCAB = [
    "the", "of", "and", "is", "Tax", "tax", "taxes", "cut", "Cut,", "jobs", "jobs.", "2019", "$3.5",
    "U.S.", "well-known", "snake_case", "Straße", "İstanbul", "ΟΔΟΣ", "naïve", "—", "“quoted”",
    "supercalifragilisticexpialidocious", "antidisestablishmentarianism.", "über-długie", "x",
]  # fmt: skip
SPACES = [" ", " ", " ", "  ", "\n", "\t", "\u00a0", "\u2003", "\r\n"]


def random_text(rng: random.Random, n_words: int, vocab: list[str]) -> str:
    parts = [rng.choice(["", " ", "\n"])]
    for i in range(n_words):
        if i:
            parts.append(rng.choice(SPACES))
        parts.append(rng.choice(vocab))
    parts.append(rng.choice(["", " ", "\n "]))
    return "".join(parts)


@pytest.mark.parametrize("seed", range(8))
def test_matches_reference_on_random_inputs(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(60):
        vocab = rng.sample(VOCAB, rng.randint(3, len(VOCAB)))
        docs = [
            Document(url=f"https://e.example/{d}", title=f"t{d}", text=random_text(rng, rng.choice([0, 1, 5, 20, 60, 140]), vocab))
            for d in range(rng.randint(1, 6))
        ]  # fmt: skip
        queries = [
            " ".join(rng.choices(VOCAB, k=rng.randint(1, 5))) for _ in range(rng.randint(0, 4))
        ]
        window = rng.randint(1, 12)
        cfg = SpanConfig(
            window=window,
            stride=rng.randint(1, window),
            per_query=rng.randint(1, 6),
            top_windows=rng.randint(1, 6),
            context=rng.randint(0, 10),
            top_docs=rng.randint(1, 4),
            bm25_k1=rng.choice([0.0, 0.9, 1.5]),
            bm25_b=rng.choice([0.0, 0.4, 0.75, 1.0]),
        )
        assert_same(select_passages(docs, queries, cfg), reference(docs, queries, cfg))


def test_matches_reference_without_the_hash_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one-by-one lookup used when no collision-free table is found gives the same result."""
    monkeypatch.setattr(passages, "_perfect_slots", lambda keys: None)
    rng = random.Random(99)
    for _ in range(40):
        docs = [
            Document(url=f"u{d}", text=random_text(rng, rng.choice([0, 7, 40]), VOCAB))
            for d in range(3)
        ]
        queries = [" ".join(rng.choices(VOCAB, k=3)) for _ in range(2)]
        cfg = SpanConfig(window=5, stride=2, top_windows=3, context=2)
        assert_same(select_passages(docs, queries, cfg), reference(docs, queries, cfg))


def test_matches_reference_on_paper_sized_defaults() -> None:
    rng = random.Random(7)
    words = [f"w{i}" for i in range(400)] + ["the", "a", "of", "Senate", "vote", "bill"] * 40
    docs = [
        Document(url=f"u{d}", text=" ".join(rng.choices(words, k=rng.randint(50, 900))))
        for d in range(12)
    ]
    queries = ["Did the Senate vote on the bill?", "w3 w17 w250", "vote w99"]
    got = select_passages(docs, queries)
    assert got
    assert_same(got, reference(docs, queries, DEFAULT_SPANS))


# ----------------------------------------------------------------------------- hand-written cases


def doc(text: str, url: str = "https://a.example/1") -> Document:
    return Document(url=url, text=text, title="T")


def test_empty_inputs() -> None:
    assert select_passages([], ["tax cut"]) == []
    assert select_passages([doc("tax cut now")], []) == []
    assert select_passages([doc(""), doc("   \n ")], ["tax cut"]) == []


def test_one_string_is_not_a_list_of_queries() -> None:
    with pytest.raises(TypeError):
        select_passages([doc("tax cut now")], "tax cut")


def test_queries_without_matching_or_content_terms() -> None:
    docs = [doc("the senate passed the budget on monday")]
    assert select_passages(docs, ["zebra migration"]) == []
    assert select_passages(docs, ["the of and is it"]) == []  # stop words only: no terms


def test_document_shorter_than_a_window_is_one_window() -> None:
    text = "  Senators  voted\ton the budget.\n"
    (p,) = select_passages([doc(text)], ["budget"])
    assert (p.start_word, p.end_word) == (0, 5)
    assert p.text == "Senators  voted\ton the budget."
    assert text[p.start_char : p.end_char] == p.text
    assert p.doc_rank == 0 and p.score > 0


def test_tail_window_covers_the_last_words() -> None:
    words = [f"filler{i}" for i in range(45)] + ["alpha", "beta", "gamma", "delta", "needle"]
    cfg = SpanConfig(window=30, stride=15, context=0)
    (p,) = select_passages([doc(" ".join(words))], ["needle"], cfg)
    assert (p.start_word, p.end_word) == (20, 50)  # windows start at 0, 15 and 20 (the tail)
    assert p.text.split() == words[20:50]


def test_context_widens_and_merges_touching_spans() -> None:
    words = [f"f{i}" for i in range(100)]
    words[5], words[35], words[95] = "apple", "apple", "apple"
    text = " ".join(words)
    cfg = SpanConfig(window=10, stride=10, context=0, top_windows=10)
    got = select_passages([doc(text)], ["apple"], cfg)
    assert [(p.start_word, p.end_word) for p in got] == [(0, 10), (30, 40), (90, 100)]
    cfg = SpanConfig(window=10, stride=10, context=10, top_windows=10)
    got = select_passages([doc(text)], ["apple"], cfg)
    # [0,20) and [20,50) touch and merge; [80,100) stays apart.
    assert [(p.start_word, p.end_word) for p in got] == [(0, 50), (80, 100)]
    for p in got:
        assert (
            text[p.start_char : p.end_char] == p.text == " ".join(words[p.start_word : p.end_word])
        )


def test_documents_ranked_by_best_window_ties_by_document_order() -> None:
    a = doc("budget vote today in the senate chamber", "https://a.example/a")
    b = doc("budget vote today in the senate chamber", "https://b.example/b")  # a duplicate of a
    c = doc("nothing relevant here at all", "https://c.example/c")
    d = doc("vote senate budget again later", "https://d.example/d")
    got = select_passages([c, a, b, d], ["senate budget vote"], SpanConfig(top_docs=4))
    urls = [p.url for p in got]
    assert a.url in urls and b.url not in urls and c.url not in urls  # b repeats a's words
    assert_same(got, reference([c, a, b, d], ["senate budget vote"], SpanConfig(top_docs=4)))
    same = [doc("senate vote", "https://x.example/1"), doc("vote senate", "https://x.example/2")]
    assert [p.url for p in select_passages(same, ["senate vote"])] == [
        "https://x.example/1",
        "https://x.example/2",
    ]
    assert [p.doc_rank for p in select_passages(same, ["senate vote"])] == [0, 1]


def test_top_docs_and_top_windows_limit_the_output() -> None:
    docs = [doc(f"budget {'x ' * i} vote", f"https://e.example/{i}") for i in range(8)]
    got = select_passages(docs, ["budget vote"], SpanConfig(top_docs=3))
    assert [p.doc_rank for p in got] == [0, 1, 2]
    got = select_passages(docs, ["budget vote"], SpanConfig(top_windows=2, top_docs=4))
    assert len(got) == 2


def test_each_query_nominates_windows() -> None:
    # One query matches strongly in doc 0; the other weakly in doc 1: both documents are kept.
    d0 = doc("apple apple apple banana", "https://e.example/0")
    d1 = doc("cherry and some other words here", "https://e.example/1")
    got = select_passages([d0, d1], ["apple banana", "cherry"], SpanConfig(window=4, stride=2))
    assert {p.url for p in got} == {d0.url, d1.url}


def test_each_query_nominates_at_most_per_query_windows() -> None:
    strong = " ".join(f"apple pie{i}" for i in range(8))  # 8 distinct windows with "apple"
    docs = [doc(strong, "https://e.example/s"), doc("cherry tart", "https://e.example/w")]
    queries = ["apple", "cherry"]
    for per_query, kept in ((1, 2), (3, 4), (10, 9)):
        cfg = SpanConfig(window=2, stride=2, per_query=per_query, top_windows=10, context=0)
        got = select_passages(docs, queries, cfg)
        assert sum(p.end_word - p.start_word for p in got) == 2 * kept
        assert {p.url for p in got} == {d.url for d in docs}
        assert_same(got, reference(docs, queries, cfg))


def test_repeated_windows_do_not_use_up_nominations() -> None:
    docs = [
        doc("apple " * 100, "https://e.example/r"),
        doc("an apple pie with more words", "https://e.example/p"),
    ]
    cfg = SpanConfig(window=4, stride=2, per_query=2, context=0)
    got = select_passages(docs, ["apple"], cfg)
    assert [(p.url, p.start_word, p.end_word) for p in got] == [
        ("https://e.example/r", 0, 4),  # the first of 49 identical windows
        ("https://e.example/p", 0, 4),
    ]
    assert_same(got, reference(docs, ["apple"], cfg))


def test_config_is_validated() -> None:
    for bad in ({"window": 0}, {"stride": 0}, {"stride": 31}, {"top_windows": 0}, {"context": -1},
                {"top_docs": 0}, {"per_query": 0}, {"bm25_k1": -1.0}, {"bm25_b": 1.5}):  # fmt: skip
        with pytest.raises(ConfigError):
            SpanConfig(**bad)
    assert (DEFAULT_SPANS.window, DEFAULT_SPANS.stride, DEFAULT_SPANS.top_windows) == (30, 15, 10)
    assert DEFAULT_SPANS.per_query == 5
    assert (DEFAULT_SPANS.context, DEFAULT_SPANS.top_docs) == (150, 4)


def test_character_classes_match_python_for_every_code_point() -> None:
    codes = np.arange(0x110000, dtype=np.uint32)
    chars = [chr(c) for c in range(0x110000)]
    assert _is_space(codes).tolist() == [c.isspace() for c in chars]
    assert _is_token(codes).tolist() == [c.isalnum() for c in chars]
    ascii_codes = np.arange(128, dtype=np.uint8)
    assert _is_space(ascii_codes).tolist() == [c.isspace() for c in chars[:128]]
    assert _is_token(ascii_codes).tolist() == [c.isalnum() for c in chars[:128]]
    # Lower-casing never changes whether a character is whitespace (word boundaries survive).
    assert all(c.isspace() == any(x.isspace() for x in c.lower()) for c in chars)
