"""The knowledge store: build, add, round trip, BM25 against a plain-Python reference, constraints."""

from __future__ import annotations

import datetime as dt
import json
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from factseek.constraints.hits import NO_CONSTRAINTS, Constraints, check, url_host_path
from factseek.errors import DataError, SearchError, StoreError
from factseek.search.base import constrained_search, make_backend
from factseek.store import (
    Store,
    StoreBackend,
    add_to_store,
    build_store,
    smallsearch,
    write_documents,
)
from factseek.store.analyze import host_path
from factseek.store.build import DEFAULT_B, DEFAULT_K1
from factseek.text import tokenize
from factseek.types import Document, Query

DOCS = [
    {
        "url": "https://city.example/bridge",
        "title": "Bridge costs",
        "text": "The new bridge cost three million dollars, the mayor said.",
        "published": "2020-03-01",
        "section": "local",
    },
    {
        "url": "https://www.politifact.com/factchecks/2020/bridge",
        "title": "Bridge claim",
        "text": "Did the bridge cost three million? We rate it true.",
        "published": "2020-04-01",
    },
    {
        "url": "https://news.example/fact-check/bridge",
        "title": "",
        "text": "Fact check: bridge cost claims about the bridge.",
        "published": "2019-01-01",
    },
    {
        "url": "https://docs.example/budget.pdf",
        "title": "Budget",
        "text": "Budget lines: bridge repairs, roads, schools.",
        "published": "2018-06-30",
    },
    {
        "url": "https://www.youtube.com/watch?v=x",
        "title": "Bridge video",
        "text": "Video of the bridge opening ceremony.",
        "published": "2020-01-01",
    },
    {
        "url": "https://www.washingtonpost.com/news/fact-checker/bridge",
        "title": "Pinocchios",
        "text": "The bridge cost claim earns two Pinocchios.",
        "published": "2020-02-01",
    },
    {
        "url": "https://www.washingtonpost.com/local/bridge",
        "title": "Local",
        "text": "Bridge traffic doubled after the bridge opened.",
        "published": "2021-01-01",
    },
    {
        "url": "https://undated.example/roads",
        "title": "Roads",
        "text": "Roads and the bridge need money; the cost is rising.",
        "published": "",
    },
    {
        "url": "https://blog.example.org/p/1",
        "id": "b1",
        "text": "Nothing about it at all, only gardening.",
        "published": "2015-05-05",
    },
]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def store(tmp_path: Path) -> Path:
    build_store([write_jsonl(tmp_path / "docs.jsonl", DOCS)], tmp_path / "store")
    return tmp_path / "store"


def reference_bm25(
    texts: list[str], query: str, k1: float = DEFAULT_K1, b: float = DEFAULT_B
) -> list[float]:
    """Plain-Python BM25 (Lucene idf), the same analyzer; a repeated query term counts twice."""
    docs = [Counter(tokenize(t)) for t in texts]
    lens = [sum(d.values()) for d in docs]
    avgdl = sum(lens) / len(docs)
    n = len(docs)
    scores = []
    for d, dl in zip(docs, lens, strict=True):
        s = 0.0
        for term in tokenize(query):
            df = sum(1 for x in docs if term in x)
            if term not in d:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            tf = d[term]
            s += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))
        scores.append(s)
    return scores


def ranking(backend: StoreBackend, query: str, c: Constraints, k: int = 20) -> list[str]:
    return [h.url for h in backend.search(query, k, c)]


# ----------------------------------------------------------------------------- build and read


def test_build_round_trips_documents(store: Path) -> None:
    s = Store.open(store)
    assert len(s) == len(DOCS)
    first = s.document(0)
    assert first.url == DOCS[0]["url"]
    assert first.text == DOCS[0]["text"]
    assert first.title == "Bridge costs"
    assert first.published == dt.date(2020, 3, 1)
    assert first.domain == "city.example"
    assert first.id == DOCS[0]["url"]  # default id: the URL
    assert dict(first.meta) == {"section": "local"}
    assert first.date_evidence[0].source == "store"
    assert s.document(7).published is None and s.document(7).date_evidence == ()
    assert s.document(8).id == "b1"
    config = json.loads((store / "config.json").read_text())
    assert config["format_version"] == 2 and config["n_docs"] == len(DOCS)


def test_info_reports_counts_dates_and_domains(store: Path) -> None:
    info = Store.open(store).info()
    assert (info.n_docs, info.dated, info.undated) == (9, 8, 1)
    assert (info.first_date, info.last_date) == (dt.date(2015, 5, 5), dt.date(2021, 1, 1))
    assert dict(info.domains)["washingtonpost.com"] == 2
    assert info.n_domains == 8


def test_postings_hold_exactly_the_shared_analyzer_terms(store: Path) -> None:
    s = Store.open(store)
    terms = s.vocab
    for i, rec in enumerate(DOCS):
        expected = Counter(tokenize(rec.get("title", "") + "\n" + rec["text"]))
        got: Counter[str] = Counter()
        tf = np.load(store / s.config.index / "postings_tf.npy")
        for term, t in terms.items():
            lo, hi = s.indptr[t], s.indptr[t + 1]
            hit = np.flatnonzero(s.postings_doc[lo:hi] == i)
            if len(hit):
                got[term] = int(tf[lo + hit[0]])
        assert got == expected
        assert s.doc_len[i] == sum(expected.values())


def test_host_path_matches_constraints_url_parsing() -> None:
    urls = [
        "https://WWW.Ex.com/A.PDF?x#y",
        "http://a.b:81",
        "https://u@x.com/p",
        "https://[::1]/p",
        "x.org/a",
        "https://x.com?q",
    ]
    for u in urls:
        assert host_path(u) == url_host_path(u)


# ----------------------------------------------------------------------------- ranking


@pytest.mark.parametrize(
    "query", ["bridge cost", "bridge bridge money", "roads schools budget", "Pinocchios claim"]
)
def test_scores_match_plain_python_bm25(store: Path, query: str) -> None:
    backend = StoreBackend.open(store)
    texts = [r.get("title", "") + "\n" + r["text"] for r in DOCS]
    ref = reference_bm25(texts, query)
    hits = backend.search(query, 20, NO_CONSTRAINTS)
    expected = sorted(((-s, i) for i, s in enumerate(ref) if s > 0))
    assert [h.url for h in hits] == [DOCS[i]["url"] for _, i in expected]
    for h, (neg, _) in zip(hits, expected, strict=True):
        assert h.score == pytest.approx(-neg, rel=1e-5)
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert all(h.backend == "local" and h.doc_id for h in hits)


def zipf_corpus(
    rng: np.random.Generator, n_docs: int, n_words: int, lengths: tuple[int, int], sites: int
) -> tuple[list[Document], Callable[[], str]]:
    """Documents of Zipf-distributed words on ``sites`` sites, dated over 20 years, and a function
    drawing queries of 1-8 words from the same distribution."""
    vocab = [f"w{i}" for i in range(n_words)]
    p = 1 / np.arange(1, n_words + 1) ** 1.1
    p /= p.sum()
    docs = [
        Document(
            url=f"https://s{i % sites}.example/{i}",
            text=" ".join(rng.choice(vocab, rng.integers(*lengths), p=p)),
            published=dt.date(2000 + i % 20, 1, 1),
        )
        for i in range(n_docs)
    ]
    return docs, lambda: " ".join(rng.choice(vocab, rng.integers(1, 9), p=p))


def test_pruned_search_equals_exhaustive_on_a_random_corpus(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(smallsearch, "NUMPY_MAX_POSTINGS", 0)  # the numba kernel, pruned or not
    docs, query = zipf_corpus(np.random.default_rng(0), 3000, 300, (3, 40), sites=7)
    write_documents(tmp_path / "s", docs)
    pruned = StoreBackend.open(tmp_path / "s")
    full = StoreBackend.open(tmp_path / "s", prune=False)
    c = Constraints(before=dt.date(2012, 1, 1), extra_sites=("s3.example",))
    for _ in range(60):
        q = query()
        a, b = pruned.bm25(q, 10, c), full.bm25(q, 10, c)
        assert a[0].tolist() == b[0].tolist() and a[1].tolist() == b[1].tolist()


@pytest.mark.parametrize("k", [1, 10, 500])
def test_small_stores_search_in_numpy_with_the_kernels_results(
    tmp_path: Path, monkeypatch, k: int
) -> None:
    rng = np.random.default_rng(k)
    docs, query = zipf_corpus(rng, 1500, 200, (1, 30), sites=5)
    docs = [replace(d, published=None) if i % 9 == 0 else d for i, d in enumerate(docs)]
    write_documents(tmp_path / "s", docs)
    small = StoreBackend.open(tmp_path / "s")
    limit = smallsearch.NUMPY_MAX_POSTINGS
    assert len(small.store.postings_doc) <= limit
    calls = []
    real = smallsearch.bm25_search_numpy
    monkeypatch.setattr(smallsearch, "bm25_search_numpy", lambda *a: calls.append(1) or real(*a))
    policies = [
        NO_CONSTRAINTS,
        Constraints(before=dt.date(2010, 1, 1), extra_sites=("s3.example",)),
        Constraints(before=dt.date(2005, 6, 1), undated="keep"),
    ]
    for _ in range(40):
        q = query()
        c = policies[int(rng.integers(len(policies)))]
        a = small.bm25(q, k, c)
        monkeypatch.setattr(smallsearch, "NUMPY_MAX_POSTINGS", 0)
        b = StoreBackend.open(tmp_path / "s").bm25(q, k, c)  # the numba kernel
        monkeypatch.setattr(smallsearch, "NUMPY_MAX_POSTINGS", limit)
        assert a[0].dtype == b[0].dtype and a[1].dtype == b[1].dtype
        assert a[0].tolist() == b[0].tolist() and a[1].tolist() == b[1].tolist()  # bit for bit
    assert len(calls) == 40


def test_ties_break_by_document_order(tmp_path: Path) -> None:
    docs = [Document(url=f"https://t.example/{i}", text="same words here") for i in range(5)]
    write_documents(tmp_path / "s", docs)
    hits = StoreBackend.open(tmp_path / "s").search("same words", 3, NO_CONSTRAINTS)
    assert [h.url for h in hits] == [f"https://t.example/{i}" for i in range(3)]


def test_unknown_or_empty_query_gives_no_hits(store: Path) -> None:
    backend = StoreBackend.open(store)
    assert backend.search("zzzunknown the of", 10, NO_CONSTRAINTS) == []
    assert backend.search("bridge", 0, NO_CONSTRAINTS) == []


# ----------------------------------------------------------------------------- constraints


def test_every_constraint_kind_is_applied_inside_the_index(store: Path) -> None:
    backend = StoreBackend.open(store)
    all_urls = set(ranking(backend, "bridge cost roads money budget video", NO_CONSTRAINTS))
    kept = set(ranking(backend, "bridge cost roads money budget video", Constraints()))
    removed = all_urls - kept
    assert removed == {
        "https://www.politifact.com/factchecks/2020/bridge",  # fact-check site
        "https://news.example/fact-check/bridge",  # URL marker
        "https://docs.example/budget.pdf",  # pdf
        "https://www.youtube.com/watch?v=x",  # video
        "https://www.washingtonpost.com/news/fact-checker/bridge",  # site with a path prefix
    }
    assert "https://www.washingtonpost.com/local/bridge" in kept  # same host, other path


def test_store_agrees_with_constraints_check_for_many_policies(store: Path) -> None:
    backend = StoreBackend.open(store)
    policies = [
        Constraints(),
        Constraints(before=dt.date(2020, 3, 1)),  # strictly before: 2020-03-01 itself is out
        Constraints(before=dt.date(2020, 3, 2), undated="keep"),
        Constraints().with_sites("city.example"),
        Constraints(excluded_markers=("bridge",)),
        Constraints(exclude_pdf=False, exclude_video=False, excluded_sites=()),
        Constraints(excluded_sites=("example",)),
        NO_CONSTRAINTS,
    ]
    everything = backend.search(
        "bridge cost roads money budget video gardening", 50, NO_CONSTRAINTS
    )
    for c in policies:
        got = {
            h.url for h in backend.search("bridge cost roads money budget video gardening", 50, c)
        }
        want = {h.url for h in everything if check(h, c).kept}
        assert got == want, c


def test_before_date_is_strict_and_undated_policy_is_explicit(store: Path) -> None:
    backend = StoreBackend.open(store)
    c = Constraints(before=dt.date(2020, 3, 1), excluded_sites=(), excluded_markers=())
    urls = ranking(backend, "bridge cost roads", c)
    assert DOCS[0]["url"] not in urls  # published on the claim date
    assert "https://undated.example/roads" not in urls
    keep = Constraints(
        before=dt.date(2020, 3, 1), undated="keep", excluded_sites=(), excluded_markers=()
    )
    assert "https://undated.example/roads" in ranking(backend, "bridge cost roads", keep)


def test_top_k_is_filled_from_allowed_documents_only(tmp_path: Path) -> None:
    docs = [
        Document(url=f"https://www.snopes.com/{i}", text="alpha alpha alpha") for i in range(50)
    ]
    docs += [
        Document(
            url=f"https://ok.example/{i}",
            text="alpha beta gamma delta",
            published=dt.date(2001, 1, 1),
        )
        for i in range(3)
    ]
    write_documents(tmp_path / "s", docs)
    hits = StoreBackend.open(tmp_path / "s").search(
        "alpha", 3, Constraints(before=dt.date(2002, 1, 1))
    )
    assert [h.url for h in hits] == [f"https://ok.example/{i}" for i in range(3)]


def test_registry_and_constrained_search_mark_filters_native(store: Path) -> None:
    backend = make_backend("local", store=store)
    assert backend.capabilities.date_filter and backend.capabilities.domain_exclusion
    result = constrained_search(
        backend, Query(text="bridge cost", question="q"), 3, Constraints(before=dt.date(2021, 6, 1))
    )
    assert result.native == ("date", "domain") and result.emulated == ()
    kept = [h for h, d in zip(result.hits, result.decisions, strict=True) if d.kept]
    assert [h.url for h in kept] == [DOCS[0]["url"], DOCS[6]["url"]]  # undated one dropped
    assert all(d.native for d in result.decisions)
    assert all(h.published < dt.date(2021, 6, 1) for h in kept)
    docs = backend.documents(kept)
    assert [d.url for d in docs] == [h.url for h in kept]
    assert docs[0].text and docs[0].date_evidence[0].source == "store"


def test_documents_rejects_hits_from_elsewhere(store: Path) -> None:
    from factseek.types import Hit

    with pytest.raises(SearchError):
        StoreBackend.open(store).documents([Hit(url="https://x.example", doc_id="nope")])


# ----------------------------------------------------------------------------- add and atomicity


def test_add_appends_and_rescoring_matches_a_fresh_build(tmp_path: Path) -> None:
    a = write_jsonl(tmp_path / "a.jsonl", DOCS[:5])
    b = write_jsonl(tmp_path / "b.jsonl", DOCS[5:])
    build_store([a], tmp_path / "inc")
    report = add_to_store([b], tmp_path / "inc")
    assert (report.added, report.n_docs) == (4, 9)
    build_store([a, b], tmp_path / "fresh")
    inc, fresh = StoreBackend.open(tmp_path / "inc"), StoreBackend.open(tmp_path / "fresh")
    for q in ["bridge cost", "roads gardening", "pinocchios traffic"]:
        x, y = inc.search(q, 10, NO_CONSTRAINTS), fresh.search(q, 10, NO_CONSTRAINTS)
        assert [(h.url, round(h.score, 5)) for h in x] == [(h.url, round(h.score, 5)) for h in y]
    assert Store.open(tmp_path / "inc").info().n_segments == 2
    assert sorted(p.name for p in (tmp_path / "inc").glob("index-*")) == [
        "index-000002"
    ]  # old one gone


def test_failed_add_leaves_the_store_unchanged(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = {p.name: p.read_bytes() for p in store.iterdir() if p.is_file()}
    hits_before = [h.url for h in StoreBackend.open(store).search("bridge", 10, NO_CONSTRAINTS)]

    def boom(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    import factseek.store.build as build_mod

    monkeypatch.setattr(build_mod, "commit", boom)
    new = [Document(url="https://new.example/1", text="bridge bridge bridge")]
    with pytest.raises(OSError):
        write_documents(store, new, mode="add")
    after = {p.name: p.read_bytes() for p in store.iterdir() if p.is_file() and p.name in before}
    assert after == before
    assert [
        h.url for h in StoreBackend.open(store).search("bridge", 10, NO_CONSTRAINTS)
    ] == hits_before
    monkeypatch.undo()
    write_documents(store, new, mode="add")  # the next write cleans up the leftovers
    assert len(Store.open(store)) == len(DOCS) + 1
    assert len(list(store.glob("index-*"))) == 1


def test_failure_while_reading_input_leaves_the_store_unchanged(
    store: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"url": "https://n.example/1", "text": "fine"}) + "\n{not json\n")
    names = sorted(p.name for p in store.iterdir())
    with pytest.raises(DataError, match=r"bad.jsonl:2: invalid JSON"):
        add_to_store([bad], store)
    assert len(Store.open(store)) == len(DOCS)
    assert sorted(p.name for p in store.iterdir()) == names  # the half-written segment is gone


def test_build_refuses_to_replace_a_store_unless_asked(store: Path, tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "one.jsonl", DOCS[:1])
    with pytest.raises(StoreError, match="already holds a store"):
        build_store([src], store)
    build_store([src], store, overwrite=True)
    assert len(Store.open(store)) == 1


def test_duplicate_ids_stop_or_are_skipped(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "d.jsonl", [DOCS[0], DOCS[0], DOCS[1]])
    with pytest.raises(DataError, match=r"d\.jsonl:2: duplicate document id"):
        build_store([src], tmp_path / "s")
    report = build_store([src], tmp_path / "s2", on_error="skip")
    assert (report.added, report.skipped) == (2, 1)


# ----------------------------------------------------------------------------- bad input, bad store


def test_malformed_line_names_file_and_line(tmp_path: Path) -> None:
    lines = [json.dumps(DOCS[0]), json.dumps({"url": "https://x.example/2"}), json.dumps(DOCS[1])]
    src = tmp_path / "m.jsonl"
    src.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"m.jsonl:2: text and title are both empty"):
        build_store([src], tmp_path / "s")
    assert not (tmp_path / "s" / "config.json").exists()
    report = build_store([src], tmp_path / "s", on_error="skip")
    assert (report.added, report.skipped) == (2, 1)
    assert "m.jsonl:2" in report.first_error
    assert Store.open(tmp_path / "s").config.skipped_lines == 1


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"url": "https://x.example", "text": "t", "published": "03/01/2020"}, "not YYYY-MM-DD"),
        ({"url": "", "text": "t"}, "url is missing"),
        ({"url": "https://x.example/a b", "text": "t"}, "whitespace"),
        ({"url": "https://x.example", "text": 5}, "must be strings"),
        ([1, 2], "expected a JSON object"),
    ],
)
def test_invalid_records_are_data_errors(tmp_path: Path, record: object, message: str) -> None:
    src = tmp_path / "r.jsonl"
    src.write_text(json.dumps(record) + "\n")
    with pytest.raises(DataError, match=message):
        build_store([src], tmp_path / "s")


def test_non_utf8_file_is_a_clear_error(tmp_path: Path) -> None:
    src = tmp_path / "latin.jsonl"
    src.write_bytes(
        json.dumps(DOCS[0]).encode()
        + b"\n"
        + '{"url": "https://x.example", "text": "caf\xe9"}'.encode("latin-1")
        + b"\n"
    )
    with pytest.raises(DataError, match=r"latin.jsonl:2: not valid UTF-8"):
        build_store([src], tmp_path / "s")


def test_missing_and_corrupt_stores_are_one_line_store_errors(store: Path, tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no knowledge store"):
        StoreBackend.open(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(StoreError, match=r"config\.json is missing"):
        StoreBackend.open(tmp_path / "empty")
    cfg = json.loads((store / "config.json").read_text())
    index = store / cfg["index"]
    (index / "postings_doc.npy").write_bytes(b"garbage")
    with pytest.raises(StoreError, match=r"postings_doc\.npy") as e:
        StoreBackend.open(store)
    assert "\n" not in str(e.value)
    (store / "config.json").write_text("{broken")
    with pytest.raises(StoreError, match="corrupt"):
        StoreBackend.open(store)
    (store / "config.json").write_text(json.dumps({**cfg, "format_version": 99}))
    with pytest.raises(StoreError, match="format_version 99"):
        StoreBackend.open(store)


def test_truncated_documents_file_is_detected(store: Path) -> None:
    seg = store / "docs-000001.jsonl"
    seg.write_bytes(seg.read_bytes()[:-10])
    with pytest.raises(StoreError, match=r"corrupt: docs-000001\.jsonl has \d+ bytes"):
        Store.open(store)


def test_build_refuses_a_foreign_folder(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(StoreError, match="not a knowledge store"):
        build_store([write_jsonl(tmp_path / "a.jsonl", DOCS)], tmp_path / "mine")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"


# ----------------------------------------------------------------------------- HTML


PAGE = """<!doctype html><html><head><title>Council votes on the bridge</title>
<link rel="canonical" href="https://gazette.example/2020/05/bridge-vote">
<meta property="article:published_time" content="2020-05-04T10:00:00Z"></head>
<body><article><h1>Council votes on the bridge</h1>
<p>The city council voted on Monday to fund the new bridge across the river, after months of debate
about its cost. The mayor said the bridge would cost three million dollars and open next year.</p>
<p>Opponents argued that the money should go to schools and roads instead, and asked for a public
hearing before any contract is signed. The vote passed seven to two.</p></article></body></html>"""


def test_build_from_an_html_folder(tmp_path: Path) -> None:
    folder = tmp_path / "pages"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "a.html").write_text(PAGE, encoding="utf-8")
    (folder / "b.htm").write_text(
        PAGE.replace("https://gazette.example/2020/05/bridge-vote", "https://other.example/x"),
        encoding="utf-8",
    )
    (folder / "skip.txt").write_text("not html")
    report = build_store([folder], tmp_path / "s")
    assert report.added == 2
    backend = StoreBackend.open(tmp_path / "s")
    hits = backend.search("council bridge vote", 5, Constraints(before=dt.date(2020, 6, 1)))
    assert {h.url for h in hits} == {
        "https://gazette.example/2020/05/bridge-vote",
        "https://other.example/x",
    }
    doc = backend.documents(hits[:1])[0]
    assert doc.published == dt.date(2020, 5, 4)
    assert "council voted" in doc.text and doc.title == "Council votes on the bridge"
    assert doc.meta["source_file"] in {"sub/a.html", "b.htm"}


def test_html_in_a_foreign_charset_without_declaration_is_an_error(tmp_path: Path) -> None:
    folder = tmp_path / "pages"
    folder.mkdir()
    (folder / "a.html").write_bytes(PAGE.replace("bridge", "caf\xe9").encode("latin-1"))
    with pytest.raises(DataError, match="not UTF-8"):
        build_store([folder], tmp_path / "s")
    declared = PAGE.replace("<head>", '<head><meta charset="iso-8859-1">').replace(
        "bridge", "caf\xe9"
    )
    (folder / "a.html").write_bytes(declared.encode("latin-1"))
    build_store([folder], tmp_path / "s2")
    assert "café" in Store.open(tmp_path / "s2").document(0).text


def test_a_reader_opened_before_an_add_says_to_reopen(store: Path) -> None:
    old = Store.open(store)  # tables are read lazily
    write_documents(store, [Document(url="https://new.example/2", text="ferry")], mode="add")
    with pytest.raises(StoreError, match="changed since it was opened"):
        _ = old.vocab
    assert (
        StoreBackend.open(store).search("ferry", 1, NO_CONSTRAINTS)[0].url
        == "https://new.example/2"
    )


def test_ids_with_line_breaks_are_refused(tmp_path: Path) -> None:
    docs = [Document(url="https://a.example/1", text="x", id="bad\rid")]
    with pytest.raises(DataError, match="line break"):
        write_documents(tmp_path / "s", docs)


def test_concurrent_searches_agree_with_serial_ones(store: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    backend = StoreBackend.open(store)
    queries = ["bridge cost", "roads money", "gardening", "bridge video", "pinocchios"] * 20
    serial = [[h.url for h in backend.search(q, 5, Constraints())] for q in queries]
    with ThreadPoolExecutor(4) as pool:
        threaded = list(
            pool.map(lambda q: [h.url for h in backend.search(q, 5, Constraints())], queries)
        )
    assert threaded == serial


def test_site_gate_is_computed_once_per_site_policy(store: Path) -> None:
    gates = Store.open(store).gates
    a = gates.gate(Constraints(before=dt.date(2020, 1, 1)))
    b = gates.gate(Constraints(before=dt.date(2010, 5, 5), undated="keep"))
    assert a.gate is b.gate  # dates differ, sites do not: one cached array
    assert (a.lo, a.hi) == (1, dt.date(2020, 1, 1).toordinal()) and b.lo == 0
    assert gates.gate(Constraints().with_sites("x.example")).gate is not a.gate
