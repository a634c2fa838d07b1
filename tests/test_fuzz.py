"""Fuzzing every loader, the store reader, the batch input and the report writers (issue 14),
report loading, huge and special files and the CLI on odd paths (issue 29), rating scales, URLs
with credentials nested in them, crafted reports rendered as Markdown and reviewer names, through
``clean_user`` and the web app's name form and cookie (issue 47).

The property everywhere: untrusted input either works or raises a ``FactseekError`` whose message
is one line; any other exception is an unconverted error and fails the test. For the store, a
corrupted store either raises ``StoreError`` or answers exactly as the intact store does. For the
reports, no control character or escape sequence survives, and the Markdown renders inert. For
reviewer names, any name works (an ASCII cookie, the name shown escaped) or is refused with a 400
and one line, never a 500, and "anonymous" in any case or width can never approve.

Deterministic by default (``derandomize``); ``FACTSEEK_FUZZ_RANDOM=1`` explores new cases and
``FACTSEEK_FUZZ_SCALE=4`` runs four times as many. Hypothesis keeps no database (nothing is
written outside ``tmp_path``). The per-test counts add up to at least 3,900 cases per run.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import re
import shutil
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from factseek.constraints.hits import Constraints
from factseek.errors import FactseekError, StoreError

SCALE = float(os.environ.get("FACTSEEK_FUZZ_SCALE", "1"))
RANDOM = os.environ.get("FACTSEEK_FUZZ_RANDOM") == "1"
_counter = itertools.count()


def fuzz(strategy: st.SearchStrategy[Any], check: Callable[[Any], None], n: int) -> int:
    """Run ``check`` on ``n`` generated cases; returns how many ran."""
    ran = 0
    n = max(1, int(n * SCALE))

    @settings(
        max_examples=n,
        database=None,
        deadline=None,
        derandomize=not RANDOM,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def run(x: Any) -> None:
        nonlocal ran
        ran += 1
        check(x)

    run()
    assert ran >= n
    return ran


def converted(fn: Callable[[], Any]) -> Any:
    """``fn()``; a ``FactseekError`` must be one non-empty line, anything else propagates."""
    try:
        return fn()
    except FactseekError as e:
        message = str(e)
        assert message and "\n" not in message, repr(message)
        return None


# ----------------------------------------------------------------------------- hostile values

ANY_CHAR = st.characters(exclude_categories=())  # surrogates and controls included
hostile_text = st.one_of(
    st.text(ANY_CHAR, max_size=40),
    st.sampled_from(["", " ", "\ud800", "\x1b[2J", "inf", "-1e400", "nan", "2023-13-45", "../x"]),
    st.text(max_size=3, min_size=1).map(lambda s: s * 3000),  # long
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    hostile_text,
)
hostile_json = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(hostile_text, inner, max_size=4),
    max_leaves=8,
)


def dumps(value: Any) -> str:
    try:
        return json.dumps(value, allow_nan=True)
    except (ValueError, RecursionError):
        return "null"


def record(template: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A record whose fields are each valid, hostile or missing, with some extra keys."""
    fields = {
        k: st.one_of(st.just(v), st.just(v), hostile_json, st.just(_MISSING))
        for k, v in template.items()
    }
    return st.builds(
        lambda d, extra: {**{k: v for k, v in d.items() if v is not _MISSING}, **extra},
        st.fixed_dictionaries(fields),
        st.dictionaries(hostile_text, hostile_json, max_size=2),
    )


_MISSING = object()
DEEP = "[" * 50_000 + "]" * 50_000
raw_line = st.one_of(
    st.binary(max_size=60).map(lambda b: b.replace(b"\n", b" ")),
    st.sampled_from([b"{", b"[]", b"null", b"1e999", DEEP.encode(), b'{"a": "\\ud800"}']),
)


def jsonl_file(template: dict[str, Any]) -> st.SearchStrategy[bytes]:
    line = st.one_of(record(template).map(lambda r: dumps(r).encode()), raw_line)
    good = dumps(template).encode()
    return st.lists(st.one_of(line, st.just(good)), min_size=1, max_size=4).map(
        lambda lines: b"\n".join(lines) + b"\n"
    )


tsv_field = st.one_of(
    st.text(ANY_CHAR.filter(lambda c: c not in "\t\n\r"), max_size=12)
    .map(lambda s: s.encode("utf-8", "surrogatepass").decode("utf-8", "replace")),
    st.sampled_from(["", "inf", "1e400", "-3", "nan", "0", "7"]),
)  # fmt: skip
LONG_FIELD = "x" * 140_000  # over the csv module's default field limit


def tsv_file(columns: int) -> st.SearchStrategy[bytes]:
    fields = st.lists(tsv_field, min_size=columns - 2, max_size=columns + 2)
    row = st.tuples(fields, st.integers(0, 20)).map(
        lambda fs: "\t".join(LONG_FIELD if i == fs[1] else f for i, f in enumerate(fs[0]))
    )
    return st.lists(row, min_size=1, max_size=3).map(lambda rows: ("\n".join(rows) + "\n").encode())


def write(tmp: Path, name: str, data: bytes) -> Path:
    folder = tmp / f"case-{next(_counter)}"
    folder.mkdir()
    path = folder / name
    path.write_bytes(data)
    return path


@pytest.fixture(scope="module")
def tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


# ----------------------------------------------------------------------------- data set loaders

CLAIMDECOMP = {
    "example_id": "1", "label": "false", "claim": "Buses doubled.", "person": "Ann",
    "venue": "stated on April 7, 2020 in a press briefing:", "justification": ["p1"],
    "annotations": [{"questions": ["Did buses double?"]}], "url": "https://x.example/",
}  # fmt: skip
CHAT = {"messages": [{"role": "user", "content": "Ann stated on May 1, 2020 in x:\nBuses."},
                     {"role": "assistant", "content": "Q1?, Q2?"}]}  # fmt: skip
LIAR_PLUS = {"claim": "Buses.", "label": "true", "originator": "ann-lee", "topics": ["t"],
             "json_file_id": "1.json", "justification": "j", "context": "c"}  # fmt: skip
FEVER = {"id": 1, "claim": "'Buses.'", "label": "'SUPPORTS'", "evidence": "'Buses run.'"}
AVERITEC = {"claim": "Buses.", "claim_date": "01-02-2020", "label": "Supported",
            "speaker": "Ann", "questions": [{"question": "Q?"}], "justification": "j"}  # fmt: skip


@pytest.mark.parametrize(
    ("fmt", "name", "strategy", "n"),
    [
        ("claimdecomp", "c.jsonl", jsonl_file(CLAIMDECOMP), 200),
        ("claimdecomp", "c.jsonl", jsonl_file(CHAT), 100),
        ("liar-plus", "l.jsonl", jsonl_file(LIAR_PLUS), 150),
        ("fever", "f.jsonl", jsonl_file(FEVER), 150),
        ("liar", "l.tsv", tsv_file(14), 150),
        (
            "averitec",
            "a.json",
            st.one_of(
                st.lists(record(AVERITEC), max_size=3).map(lambda r: dumps(r).encode()),
                hostile_json.map(lambda v: dumps(v).encode()),
                raw_line,
            ),
            150,
        ),
        ("auto", "x.jsonl", jsonl_file({**CLAIMDECOMP, **FEVER}), 50),
    ],
)
def test_claim_loaders(tmp: Path, fmt: str, name: str, strategy: Any, n: int) -> None:
    from factseek.datasets.claims import load_claims

    fuzz(strategy, lambda data: converted(lambda: load_claims(write(tmp, name, data), fmt)), n)


RETRIEVAL_CLAIM = {"id": "q1", "query": "buses", "relevant": ["d1"]}
CORPUS = {"id": "d1", "text": "Buses run.", "title": "t"}
CLIMATE = {"claim_id": "1", "claim": "Buses.", "evidences": [
    {"evidence_id": "e1", "evidence": "Buses run.", "evidence_label": "SUPPORTS"}]}  # fmt: skip
FEVER_DEV_CLAIM = {"id": 1, "claim": "Buses.", "label": "SUPPORTS", "evidence": ["e1"]}
FEVER_DEV_EVIDENCE = {"id": "e1", "text": "Buses run."}


def test_retrieval_loaders(tmp: Path) -> None:
    from factseek.datasets.retrieval import load_retrieval

    def jsonl_pair(data: tuple[bytes, bytes]) -> None:
        claims, corpus = write(tmp, "c.jsonl", data[0]), write(tmp, "d.jsonl", data[1])
        converted(lambda: load_retrieval(claims, corpus, format="jsonl"))

    def one(fmt: str) -> Callable[[bytes], None]:
        return lambda data: converted(
            lambda: load_retrieval(write(tmp, "c.jsonl", data), None, fmt)
        )

    def fever_dev(data: tuple[bytes, bytes]) -> None:
        claims = write(tmp, "claims.jsonl", data[0])
        (claims.parent / "evidence.jsonl").write_bytes(data[1])
        converted(lambda: load_retrieval(claims.parent, None, format="fever-dev"))

    def checkthat(data: tuple[bytes, bytes, bytes]) -> None:
        folder = write(tmp, "tweets.queries.tsv", data[0]).parent / "sub"
        folder.mkdir()
        (folder / "tweets.queries.tsv").write_bytes(data[0])
        (folder / "tweet-vclaim-pairs.qrels").write_bytes(data[1])
        (folder.parent / "verified_claims.docs.tsv").write_bytes(data[2])
        converted(lambda: load_retrieval(folder, None, format="checkthat"))

    fuzz(st.tuples(jsonl_file(RETRIEVAL_CLAIM), jsonl_file(CORPUS)), jsonl_pair, 120)
    fuzz(jsonl_file(FEVER), one("fever"), 100)
    fuzz(jsonl_file(CLIMATE), one("climate-fever"), 120)
    fuzz(st.tuples(jsonl_file(FEVER_DEV_CLAIM), jsonl_file(FEVER_DEV_EVIDENCE)), fever_dev, 100)
    fuzz(st.tuples(tsv_file(2), tsv_file(4), tsv_file(3)), checkthat, 80)


# ----------------------------------------------------------------------------- store sources

STORE_DOC = {"url": "https://x.example/1", "title": "T", "text": "Buses run.",
             "published": "2020-01-02", "id": "a", "domain": "x.example", "meta": {"k": 1}}  # fmt: skip


def test_store_sources(tmp: Path) -> None:
    from factseek.store.sources import DocumentSource

    def jsonl(data: tuple[bytes, str]) -> None:
        path = write(tmp, "d.jsonl", data[0])
        converted(lambda: list(DocumentSource(path, on_error=data[1])))  # type: ignore[arg-type]

    html_page = st.one_of(
        st.binary(max_size=300),
        st.text(ANY_CHAR, max_size=200).map(
            lambda t: (
                f"<html><head><title>{t}</title><link rel=canonical href='{t}'>"
                f"<meta charset='{t[:8]}'></head><body><p>{t}</p></body></html>".encode(
                    "utf-8", "surrogatepass"
                )
            )
        ),
    )

    def html(data: bytes) -> None:
        path = write(tmp, "p.html", data)
        converted(lambda: list(DocumentSource(path.parent, on_error="skip")))

    fuzz(st.tuples(jsonl_file(STORE_DOC), st.sampled_from(["stop", "skip"])), jsonl, 250)
    fuzz(html_page, html, 100)


# ----------------------------------------------------------------------------- batch input

BATCH = {"id": "c1", "text": "Buses doubled.", "date": "2020-01-02", "speaker": "Ann", "venue": "v"}


def test_batch_input(tmp: Path) -> None:
    from factseek.runs import batch

    def check(data: bytes) -> None:
        path = write(tmp, "claims.jsonl", data)
        claims = converted(lambda: list(batch.read_claims(path)))
        if claims is None:
            return
        if converted(lambda: batch._unique_ids(claims, path)) is None and len(claims) > 1:
            pass
        for _, c in claims:
            name = batch.report_name(batch.claim_id(c))
            assert re.fullmatch(r"reports/[A-Za-z0-9._-]+\.json", name), name
            assert "/.." not in name and not name.startswith("reports/.")

    fuzz(jsonl_file(BATCH), check, 250)


# ----------------------------------------------------------------------------- store reader

QUERIES = ["bus council", "water plant budget", "route 7", "mayor"]


@pytest.fixture(scope="module")
def clean_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any]]:
    from factseek.store import build_store

    tmp = tmp_path_factory.mktemp("fuzz-store")
    words = ["bus", "council", "water", "plant", "budget", "route", "mayor", "fare", "road"]
    rows = [
        {"url": f"https://s{i % 5}.example/{i}", "title": f"T{i}", "published": f"201{i % 10}-01-01",
         "text": " ".join(words[(i * j) % len(words)] + (" 7" if j == i % 4 else "") for j in range(12))}
        for i in range(60)
    ]  # fmt: skip
    (tmp / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    build_store([tmp / "d.jsonl"], tmp / "s")
    return tmp / "s", answers(tmp / "s")


def answers(store: Path) -> list[Any]:
    import datetime as dt

    from factseek.store import StoreBackend

    backend = StoreBackend.open(store)
    out = []
    for q in QUERIES:
        hits = backend.search(q, 5, Constraints(before=dt.date(2016, 1, 1)))
        docs = backend.documents(hits)
        out.append([(h.url, h.score, h.title, d.text) for h, d in zip(hits, docs, strict=True)])
    return out


corruption = st.tuples(
    st.integers(min_value=0, max_value=10_000),  # which file (modulo the count)
    st.sampled_from(["flip", "truncate", "zero", "append", "empty", "delete", "swap"]),
    st.integers(min_value=0, max_value=2**31),  # where
    st.integers(min_value=1, max_value=64),  # how much
)


def test_store_reader_never_answers_wrong(tmp: Path, clean_store: tuple[Path, list[Any]]) -> None:
    store, expected = clean_store

    def check(c: tuple[int, str, int, int]) -> None:
        which, how, where, size = c
        copy = tmp / f"store-{next(_counter)}"
        shutil.copytree(store, copy)
        files = sorted(p for p in copy.rglob("*") if p.is_file() and p.name != ".lock")
        path = files[which % len(files)]
        data = bytearray(path.read_bytes())
        at = where % max(len(data), 1)
        if how == "flip" and data:
            for i in range(at, min(len(data), at + size)):
                data[i] ^= 1 + (where % 255)
        elif how == "truncate":
            data = data[:at]
        elif how == "zero":
            data[at : at + size] = bytes(len(data[at : at + size]))
        elif how == "append":
            data += bytes(range(size))
        elif how == "empty":
            data = bytearray()
        elif how == "swap" and len(data) > 2 * size:
            data[:size], data[-size:] = data[-size:], data[:size]
        if how == "delete":
            path.unlink()
        else:
            path.write_bytes(bytes(data))
        try:
            got = answers(copy)
        except StoreError as e:
            assert "\n" not in str(e)
            return
        assert got == expected, f"{path.name} {how}: silently different results"

    fuzz(corruption, check, 160)


# ----------------------------------------------------------------------------- report writers

BAD_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
urls = st.one_of(
    st.text(ANY_CHAR, max_size=30).map(lambda s: "https://x.example/" + s),
    st.text(ANY_CHAR, max_size=30),
    st.sampled_from(["javascript:alert(1)", "https://u:p@x.example/?token=1", "data:text/html,x"]),
)


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attrs: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attrs.extend(attrs)


def reports() -> st.SearchStrategy[Any]:
    import datetime as dt

    from factseek.types import (
        Claim,
        ConstraintDecision,
        FetchFailure,
        Hit,
        Passage,
        Query,
        QueryResult,
        Report,
        Summary,
        SummarySentence,
    )

    text = st.text(ANY_CHAR, max_size=60)
    hit = st.builds(Hit, url=urls, title=text, snippet=text, rank=st.integers(0, 9))
    result = st.builds(
        lambda q, hits, err: QueryResult(
            query=Query(text=q, question=q),
            hits=tuple(hits),
            decisions=tuple(ConstraintDecision(url=h.url, kept=True, reason="ok") for h in hits),
            error=err,
        ),
        text,
        st.lists(hit, max_size=3),
        text,
    )
    passage = st.builds(
        lambda u, t, title: Passage(url=u, text=t, doc_rank=0, score=1.0, start_word=0,
                                    end_word=1, start_char=0, end_char=1, title=title),
        urls, text, text,
    )  # fmt: skip
    summary = st.builds(
        lambda u, t, s: Summary(url=u, text=t, relevant=True, method="m", title=t,
                                sentences=(SummarySentence(text=s, supported=False),), note=s),
        urls, text, text,
    )  # fmt: skip
    return st.builds(
        lambda c, rs, ps, ss, fs, notes: Report(
            claim=Claim(text=c or "c", date=dt.date(2020, 1, 1), speaker=c),
            results=tuple(rs),
            passages=tuple(ps),
            summaries=tuple(ss),
            failures=tuple(FetchFailure(url=u, error=e) for u, e in fs),
            notes=tuple(notes),
        ),
        text,
        st.lists(result, max_size=2),
        st.lists(passage, max_size=2),
        st.lists(summary, max_size=2),
        st.lists(st.tuples(urls, text), max_size=2),
        st.lists(text, max_size=2),
    )


def test_report_writers(tmp: Path) -> None:
    from markdown_it import MarkdownIt

    from factseek.report import render, write_report

    md_renderer = MarkdownIt("commonmark", {"html": True})

    def check(report: Any) -> None:
        for fmt in ("json", "md", "html"):
            out = render(report, fmt)
            assert not BAD_CHARS.search(out), (fmt, BAD_CHARS.search(out))
            out.encode("utf-8")
        json.loads(render(report, "json"))
        tags = Tags()
        tags.feed(md_renderer.render(render(report, "md")))
        assert not tags.tags & {"script", "img", "iframe", "object", "style", "svg"}, tags.tags
        for name, value in tags.attrs:
            assert not name.startswith("on") and name != "src", name
            if name == "href":
                assert (value or "").startswith(("http://", "https://")), value
        write_report(report, tmp / f"r-{next(_counter)}.md", "md")

    fuzz(reports(), check, 200)


# ----------------------------------------------------------------------------- malformed reports


def report_template() -> dict[str, Any]:
    import datetime as dt

    from factseek.types import (
        Answer,
        Claim,
        ConstraintDecision,
        Document,
        Evidence,
        FetchFailure,
        FunnelRow,
        Hit,
        Passage,
        Query,
        QueryResult,
        Question,
        Report,
        StanceResult,
        Summary,
        SummarySentence,
        Verdict,
        to_dict,
    )

    url = "https://a.example/1"
    return to_dict(
        Report(
            claim=Claim(text="Buses doubled.", date=dt.date(2020, 1, 1), id="c1"),
            questions=(Question(text="Did buses double?"),),
            results=(
                QueryResult(
                    query=Query(text="buses", question="Did buses double?"),
                    hits=(Hit(url=url, title="t", rank=1, score=1.0),),
                    decisions=(ConstraintDecision(url=url, kept=True, reason="ok"),),
                ),
            ),
            documents=(Document(url=url, text="Buses doubled in 2019.", title="t"),),
            failures=(FetchFailure(url="https://b.example/", error="HTTP 404"),),
            passages=(
                Passage(
                    url=url,
                    text="Buses doubled",
                    doc_rank=0,
                    score=1.0,
                    start_word=0,
                    end_word=2,
                    start_char=0,
                    end_char=13,
                ),
            ),
            summaries=(
                Summary(
                    url=url,
                    text="Buses doubled.",
                    relevant=True,
                    method="extractive",
                    sentences=(SummarySentence(text="Buses doubled.", start_char=0, end_char=13),),
                ),
            ),
            evidence=(
                Evidence(
                    id="E1",
                    url=url,
                    text="Buses doubled",
                    start_char=0,
                    end_char=13,
                    question="Did buses double?",
                    stance=StanceResult(
                        label="supports", probs={"supports": 0.9, "refutes": 0.05, "nei": 0.05}
                    ),
                ),
            ),
            answers=(
                Answer(
                    question="Did buses double?", answer="yes", confidence=0.9, evidence_ids=("E1",)
                ),
            ),
            verdict=Verdict(
                judged=True,
                label="supported",
                judge="stance",
                scale="averitec",
                confidence=0.8,
                scores={"supported": 0.8},
                evidence_ids=("E1",),
            ),
            funnel=(FunnelRow(stage="search", hits=1, documents=1, words=4),),
            removed={"undated": 1},
            timings={"search": 0.1},
            notes=("a note",),
        )
    )


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, (*prefix, i))
    return out


def mutated_reports() -> st.SearchStrategy[bytes]:
    """The template with one to three values (anywhere in it) replaced by hostile JSON, a key
    dropped, or the whole document replaced."""
    base = report_template()
    paths = [p for p in _paths(base) if p]

    def mutate(edits: list[tuple[int, Any, bool]]) -> bytes:
        doc = json.loads(json.dumps(base))
        for which, value, drop in edits:
            path = paths[which % len(paths)]
            parent = doc
            try:
                for k in path[:-1]:
                    parent = parent[k]
                if drop and isinstance(parent, dict):
                    parent.pop(path[-1], None)
                else:
                    parent[path[-1]] = value
            except (KeyError, IndexError, TypeError):
                continue
        return dumps(doc).encode()

    edit = st.tuples(st.integers(0, 10_000), hostile_json, st.booleans())
    return st.one_of(
        st.lists(edit, min_size=1, max_size=3).map(mutate),
        hostile_json.map(lambda v: dumps(v).encode()),
        raw_line,
    )


def test_malformed_reports(tmp: Path) -> None:
    """render, compare-runs, batch summaries and the history read reports through one checked
    loader: a malformed one is one line naming the field, and one that loads renders."""
    from factseek.report import read_report, render
    from factseek.runs.compare import url_sets

    def check(data: bytes) -> None:
        path = write(tmp, "r.json", data)
        report = converted(lambda: read_report(path))
        if report is not None:
            for fmt in ("json", "md", "html"):
                render(report, fmt)
        converted(lambda: url_sets(path))
        jsonl = write(tmp, "r.jsonl", data.replace(b"\n", b" ") + b"\n")
        converted(lambda: url_sets(jsonl))

    fuzz(mutated_reports(), check, 400)


def test_malformed_history_rows(tmp: Path) -> None:
    import sqlite3

    from factseek.review.history import History
    from factseek.types import Claim

    history = History(tmp / "h.sqlite")
    rid = history.create(Claim(text="Buses doubled."))

    def check(data: bytes) -> None:
        with sqlite3.connect(tmp / "h.sqlite") as conn:
            text = data.decode("utf-8", "replace")
            conn.execute(
                "UPDATE runs SET report_json = ?, status = 'done' WHERE id = ?", (text, rid)
            )
        converted(lambda: history.get(rid))

    fuzz(mutated_reports(), check, 150)


# ----------------------------------------------------------------------------- issue 47: ratings, nested URLs, crafted reports

RATINGS = {
    "format_version": 1,
    "name": "desk",
    "title": "Desk ratings",
    "labels": [
        {"label": "true", "name": "True", "rating": 5, "machine": ["averitec:supported"]},
        {"label": "false", "name": "False", "rating": 1, "machine": ["averitec:refuted"]},
    ],
}
BOM = b"\xef\xbb\xbf"


def ratings_files() -> st.SearchStrategy[bytes]:
    """A valid scale with its fields, a label's fields or the whole document hostile, with or
    without a byte-order mark."""
    label = record(RATINGS["labels"][0])
    doc = st.builds(
        lambda top, labels: {**top, "labels": labels},
        record({k: v for k, v in RATINGS.items() if k != "labels"}),
        st.one_of(st.just(RATINGS["labels"]), st.lists(label, max_size=3), hostile_json),
    )
    body = st.one_of(
        doc.map(lambda d: dumps(d).encode()),
        hostile_json.map(lambda v: dumps(v).encode()),
        raw_line,
    )
    return st.tuples(st.booleans(), body).map(lambda t: (BOM if t[0] else b"") + t[1])


def test_ratings_files(tmp: Path) -> None:
    """``--ratings`` (serve, feedback export): a scale loads, or one line naming the file."""
    from factseek.review.ratings import load_ratings

    loaded = 0

    def check(data: bytes) -> None:
        nonlocal loaded
        scale = converted(lambda: load_ratings(write(tmp, "ratings.json", data)))
        if scale is not None:
            loaded += 1
            assert scale.labels and all(r.name for r in scale.labels)

    fuzz(ratings_files(), check, 250)
    assert loaded > 0  # the valid template (with and without a BOM) loads


SECRET = "Zq7SECRETz"
KEY_NAMES = ["api_key", "api%5Fkey", "API%5fKEY", "api_key+", "api_key%20", "PHPSESSID", "hmac",
             "AWSAccessKeyId", "X-Amz-Signature", "access_token", "sig", "token", "Password",
             "client.secret", "sessionid"]  # fmt: skip


def nested_urls() -> st.SearchStrategy[str]:
    """A URL carrying ``SECRET`` (as userinfo, a key-like parameter or a path parameter), nested
    zero to four times in another URL's parameter or path, encoded 0-2 times each; or odd text."""
    from urllib.parse import quote

    junk = st.text(ANY_CHAR, max_size=8)
    inner = st.one_of(
        st.builds(
            lambda n, j: f"https://in.example/p?{n}={SECRET}&x={quote(j)}",
            st.sampled_from(KEY_NAMES),
            junk,
        ),
        st.just(f"https://bob:{SECRET}@in.example/p"),
        st.just(f"https://in.example/p;jsessionid={SECRET}?a=1"),
        st.just(f"https://in.example/#access_token={SECRET}&t=bearer"),
    )

    def nest(url: str, how: list[tuple[int, int]]) -> str:
        for where, times in how:
            for _ in range(times):
                url = quote(url, safe="")
            if where == 0:
                url = f"https://out.example/r?u={url}&page=2"
            elif where == 1 and times:
                url = f"https://out.example/go/{url}"
            else:
                url = f"https://out.example/r?next={url}"
        return url

    steps = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)), max_size=4)
    return st.one_of(st.builds(nest, inner, steps), urls, st.text(ANY_CHAR, max_size=60))


def test_nested_urls_keep_no_credentials() -> None:
    """``redact_url`` and ``redact_text`` on nested, encoded, odd URLs: never an exception, no
    ``SECRET`` left, and redacting twice changes nothing."""
    from factseek.redact import redact_text, redact_url, redacted_parts

    def check(url: str) -> None:
        shown = redact_url(url)
        assert redact_url(shown) == shown, (url, shown)
        redacted_parts(url)
        text = redact_text(f"HTTP 500 for {url} (retrying)")
        if SECRET in url and url.startswith("https://"):
            assert SECRET not in shown, (url, shown)
            assert SECRET not in text, (url, text)

    fuzz(nested_urls(), check, 400)


def crafted_reports() -> st.SearchStrategy[bytes]:
    """A full report (``crafted_reports.full_report``) with hostile text or markup planted in one
    to four of its strings (values or keys)."""
    from crafted_reports import full_report, planted, string_slots

    base = full_report()
    slots = string_slots(base)
    payload = st.one_of(
        st.text(st.characters(exclude_categories=("Cs",)), max_size=40),  # a report may hold it
        hostile_text,
        st.sampled_from(
            [
                "<script>alert(1)</script>",
                "<img src=x onerror=alert(1)>",
                "](javascript:alert(1))",
                "`<svg/onload=alert(1)>`",
                "<!--",
                "&lt;b&gt;",
                "<a href='javascript:x'>y</a>",
                "\\<script>",
            ]
        ),
    )

    def plant(edits: list[tuple[int, str]]) -> bytes:
        doc = base
        for which, text in edits:
            try:
                doc = planted(doc, slots[which % len(slots)], text)
            except (KeyError, IndexError, TypeError, AttributeError):
                continue  # an earlier edit renamed a key on this slot's path
        return dumps(doc).encode()

    return st.lists(st.tuples(st.integers(0, 10_000), payload), min_size=1, max_size=4).map(plant)


def test_crafted_reports_render_inert(tmp: Path) -> None:
    """``render --format md`` (and html) of a crafted report: no raw tag survives, and a
    CommonMark renderer with raw HTML on makes no script, image or handler."""
    from markdown_it import MarkdownIt

    from factseek.report import read_report, render

    md_renderer = MarkdownIt("commonmark", {"html": True})
    rendered = 0

    def check(data: bytes) -> None:
        nonlocal rendered
        report = converted(lambda: read_report(write(tmp, "r.json", data)))
        if report is None:
            return
        rendered += 1
        md = render(report, "md")
        assert not re.search(r"<\s*/?\s*(script|img|svg|a)\b", md, re.I), md
        for page, own in ((md_renderer.render(md), set()), (render(report, "html"), {"style"})):
            tags = Tags()
            tags.feed(page)
            bad = {"script", "img", "iframe", "object", "style", "svg"} - own  # html: its CSS
            assert not tags.tags & bad, tags.tags
            for name, value in tags.attrs:
                assert not name.startswith("on") and name != "src", name
                if name == "href":
                    assert (value or "").startswith(("http://", "https://", "#")), value

    fuzz(crafted_reports(), check, 250)
    assert rendered > 100


# ----------------------------------------------------------------------------- reviewer names


@functools.cache
def letter_forms() -> dict[str, list[str]]:
    """Every character that reads as a letter of "anonymous" once NFKC-normalised and
    case-folded (``A``, ``ａ``, ``𝐀``, ``ⓐ``, ``ᵃ``, ...): the case and width forms of each."""
    import sys
    import unicodedata

    forms: dict[str, list[str]] = {ch: [] for ch in "anonymous"}
    for cp in range(sys.maxunicode + 1):
        key = unicodedata.normalize("NFKC", chr(cp)).casefold()
        if key in forms:
            forms[key].append(chr(cp))
    return forms


INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u200e", "\u200f",
             "\u202a", "\u202e", "\u2066", "\u2069", "\U000e0061", "\x00", "\x1b", "\x7f", "\x85",
             "\u180e", " ", "\t", "\n", "\u3000", "\u00a0"]  # fmt: skip


def anonymous_forms() -> st.SearchStrategy[str]:
    """ "anonymous" with each letter in any case or width, invisible characters, spaces or
    controls between letters, and blank space around it."""
    letter = [st.sampled_from(letter_forms()[ch]) for ch in "anonymous"]
    gap = st.one_of(st.just(""), st.just(""), st.lists(st.sampled_from(INVISIBLE), max_size=2).map("".join))  # fmt: skip
    pad = st.text(st.sampled_from([" ", "\t", "\n", "\u200b", "\u3000", "\r"]), max_size=3)
    parts = st.tuples(pad, *[st.tuples(g, c) for g, c in zip([gap] * 9, letter, strict=True)], pad)
    return parts.map(lambda p: p[0] + "".join(g + c for g, c in p[1:-1]) + p[-1])


def _script(lo: int, hi: int) -> st.SearchStrategy[str]:
    return st.characters(min_codepoint=lo, max_codepoint=hi)


ODD_NAMES = ["Мария", "李 明", "José Núñez", "o'neil", 'say "hi"', "«Ана»", "“x” ‘y’", "`rm`",
             "<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "</title><b>x",
             "a\r\nSet-Cookie: admin=1", "x; Path=/; HttpOnly", "a,b=c", "%41%zz%", "+", "&amp;",
             "\\", "\ud800", "\udfff", "a\ud83db", "🦉", "\U0010ffff", "\ufffd", "null", "admin"]  # fmt: skip
name_piece = st.one_of(
    st.text(ANY_CHAR, max_size=20),  # anything, surrogates and controls included
    st.text(_script(0x0400, 0x04FF), min_size=1, max_size=12),  # Cyrillic
    st.text(_script(0x4E00, 0x9FFF), min_size=1, max_size=6),  # CJK
    st.text(_script(0xFF01, 0xFF5E), min_size=1, max_size=10),  # full-width
    st.text(_script(0x00A0, 0x00FF), min_size=1, max_size=10),  # Latin-1
    st.text(st.sampled_from(INVISIBLE), min_size=1, max_size=4),  # zero-width, direction, controls
    st.text(_script(0x0000, 0x001F), min_size=1, max_size=4),  # C0 controls
    st.sampled_from(ODD_NAMES),
    anonymous_forms(),
)
reviewer_names = st.one_of(
    st.lists(name_piece, max_size=4).map("".join),
    anonymous_forms(),
    st.tuples(name_piece, st.integers(2, 3000)).map(lambda t: t[0] * t[1]),  # very long
)


def test_reviewer_names_clean_to_one_safe_line() -> None:
    """``clean_user`` (where every reviewer name goes): never an exception; one line of shown
    characters within ``MAX_USER_CHARS``; cleaning again changes nothing, so the cookie reads
    back as the name; "anonymous" in any case or width is no one."""
    import unicodedata

    from factseek.review.feedback import ANONYMOUS, MAX_USER_CHARS, clean_user, is_anonymous
    from factseek.web.app import cookie_name, user_name

    def check(typed: str) -> None:
        name = converted(lambda: clean_user(typed))
        assert isinstance(name, str) and name, repr(typed)
        assert len(name) <= MAX_USER_CHARS and name == name.strip(), repr(name)
        assert not any(unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn") for c in name)
        assert not any(c.isspace() and c != " " for c in name) and "  " not in name, repr(name)
        assert clean_user(name) == name, (typed, name)
        cookie = cookie_name(typed)
        assert cookie.isascii() and re.fullmatch(r"[A-Za-z0-9%._~-]+", cookie), cookie
        assert user_name(cookie) == name
        assert is_anonymous(name) == (name == ANONYMOUS), (typed, name)
        if is_anonymous(typed):
            assert name == ANONYMOUS, (typed, name)

    fuzz(reviewer_names, check, 500)
    fuzz(anonymous_forms(), assert_anonymous, 300)


def assert_anonymous(typed: str) -> None:
    from factseek.review.feedback import ANONYMOUS, clean_user, is_anonymous

    assert is_anonymous(typed) and clean_user(typed) == ANONYMOUS, ascii(typed)


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from fastapi.testclient import TestClient

    from factseek.review.history import History
    from factseek.web.app import WebSettings, create_app
    from factseek.web.jobs import Runner
    from web_fixtures import fake_parts

    root = tmp_path_factory.mktemp("names")
    settings = WebSettings(db=root / "h.sqlite", store=root, user="anonymous")
    runner = Runner(History(settings.db), workers=1, build=fake_parts)
    with TestClient(create_app(settings, runner=runner), base_url="http://127.0.0.1:8321") as c:
        c.get("/")
        yield c
    runner.close()


def _posted(typed: str, how: int, csrf: str, url: str) -> tuple[dict[str, Any], str]:
    """The /user request for ``typed`` sent as a client might: URL-encoded UTF-8 (surrogates
    passed through as bytes), URL-encoded Latin-1, or a multipart field; and the text the
    server decodes from it."""
    from urllib.parse import quote_plus

    raw = typed.encode("utf-8", "surrogatepass")
    if how == 1:
        try:
            raw = typed.encode("latin-1")
        except UnicodeEncodeError:
            how = 0
    if how == 2:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("latin-1")
        fields = {"csrf_token": (None, csrf), "next": (None, url), "user": (None, raw)}
        return {"files": fields}, text
    body = f"csrf_token={csrf}&next={quote_plus(url)}&user={quote_plus(raw)}"
    headers = {"content-type": "application/x-www-form-urlencoded"}
    return {"content": body.encode(), "headers": headers}, raw.decode("utf-8", "replace")


def refused_in_one_line(r: Any) -> None:
    """A refusal the reviewer can read: 400, the error page, its message one line."""
    message = re.search(r'<p class="errmsg">(.*?)</p>', r.text, re.S)
    assert r.status_code == 400 and message, (r.status_code, r.text[:300])
    assert message.group(1).strip() and "\n" not in message.group(1), message.group(1)


def test_reviewer_names_in_the_web_app(web: Any) -> None:
    """Setting any name in the web app: a 303 with an ASCII cookie holding the cleaned name (or a
    400 with one line; a form over ``MAX_BODY`` bytes is a 413 before the app), never a 500; the page shows the name escaped; a name that is no one
    cannot approve (400) and no ClaimReview is published for it (409)."""
    from markupsafe import escape

    from factseek.review.feedback import clean_user, is_anonymous
    from factseek.web.app import MAX_BODY, user_name
    from web_fixtures import carded_report

    history = web.app.state.history
    counts = {"named": 0, "anonymous": 0}

    def check(case: tuple[str, int]) -> None:
        typed, how = case
        rid = history.create(carded_report().claim, user="ana")
        history.finish(rid, carded_report())
        url = f"/runs/{rid}"
        page = web.get(url)
        assert page.status_code == 200
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
        request, decoded = _posted(typed, how, csrf, url)
        r = web.post("/user", follow_redirects=False, **request)
        if int(r.request.headers["content-length"]) > MAX_BODY:  # refused before the app
            assert r.status_code == 413 and r.text == "request too large", r.text[:300]
            return
        assert r.status_code in (303, 400), (ascii(typed), r.status_code, r.text[:300])
        if r.status_code == 400:
            refused_in_one_line(r)
            return
        cookie = r.headers["set-cookie"]
        assert cookie.isascii() and "\n" not in cookie and r.headers["location"] == url, cookie
        shown = user_name(web.cookies.get("factseek_user"))
        assert shown == clean_user(decoded), (ascii(typed), ascii(decoded), shown)
        html = web.get(url)
        assert html.status_code == 200 and f'value="{escape(shown)}"' in html.text, ascii(shown)
        approve = web.post(f"{url}/approve", data={"csrf_token": csrf})
        published = web.get(f"{url}/claimreview.jsonld")
        assert approve.status_code != 500 and published.status_code != 500
        if is_anonymous(shown):
            counts["anonymous"] += 1
            refused_in_one_line(approve)
            assert "set your reviewer name" in approve.text
            assert published.status_code == 409, published.text[:300]
        else:
            counts["named"] += 1
            assert approve.status_code == 200, (ascii(shown), approve.text[:300])
            assert f"approved by {escape(shown)}" in approve.text, ascii(shown)
            assert published.json()["author"]["name"] == shown
            assert "<" not in published.text and ">" not in published.text

    fuzz(st.tuples(reviewer_names, st.integers(0, 2)), check, 60)
    fuzz(st.tuples(anonymous_forms(), st.integers(0, 2)), check, 20)
    assert counts["named"] > 20 and counts["anonymous"] >= 20, counts


def test_reviewer_cookies_in_the_web_app(web: Any) -> None:
    """A name cookie the client made up (any bytes a header may hold): the page answers 200 and
    shows the cleaned name escaped; never a 500."""
    from urllib.parse import quote

    from markupsafe import escape
    from starlette.requests import cookie_parser

    from factseek.web.app import user_name

    def check(case: tuple[str, bool]) -> None:
        typed, encode = case
        value = quote(typed.encode("utf-8", "surrogatepass"), safe="") if encode else typed
        raw = value.encode("utf-8", "replace")  # the test client passes only UTF-8 headers intact
        raw = bytes(b for b in raw if b not in b"\r\n\x00;")  # a header line cannot hold these
        r = web.get("/history", headers={"cookie": b"factseek_user=" + raw})
        assert r.status_code == 200, (ascii(typed), r.status_code, r.text[:300])
        header = (b"factseek_user=" + raw).decode("latin-1")  # how the server reads a header
        shown = user_name(cookie_parser(header).get("factseek_user")) or "anonymous"
        field = re.search(r'<input name="user" value="([^"]*)"', r.text)
        assert field and field.group(1) == escape(shown), (ascii(typed), ascii(shown), field)

    fuzz(st.tuples(reviewer_names, st.booleans()), check, 120)


# ----------------------------------------------------------------------------- huge and special files


def readers() -> dict[str, Callable[[Path], Any]]:
    from factseek.datasets.claims import load_claims
    from factseek.datasets.claimsfile import read_claims_file
    from factseek.datasets.retrieval import load_retrieval
    from factseek.judge.evaluate import read_predictions
    from factseek.judge.rules import load_rules
    from factseek.labels import POLITIFACT
    from factseek.report import read_report
    from factseek.review.ratings import load_ratings
    from factseek.runs.bundle import Replayer
    from factseek.runs.compare import url_sets
    from factseek.runs.resume import journal_entries
    from factseek.store.sources import DocumentSource

    return {
        "report": read_report,
        "claims file": read_claims_file,
        "data set (auto)": lambda p: load_claims(p, "auto"),
        "averitec": lambda p: load_claims(p, "averitec"),
        "liar": lambda p: load_claims(p, "liar"),
        "retrieval": lambda p: load_retrieval(p, p, format="jsonl"),
        "compare-runs": url_sets,
        "bundle": lambda p: Replayer(p).search_backend(),
        "store source": lambda p: list(DocumentSource(p)),
        "predictions": lambda p: read_predictions(p, POLITIFACT),
        "batch journal": lambda p: journal_entries(p),
        "ratings": load_ratings,
        "verdict rules": load_rules,
    }


def special_paths(tmp: Path) -> dict[str, Path]:
    root = tmp / "special"
    root.mkdir(exist_ok=True)
    (root / "big.json").write_bytes(b'{"claim": {"text": "' + b"x" * 300_000 + b'"}}\n')
    (root / "long-line.jsonl").write_bytes(b'{"text": "' + b"y" * 300_000)  # no newline
    (root / "empty.json").write_bytes(b"")
    (root / "nul.jsonl").write_bytes(b"\x00" * 5000 + b"\n")
    (root / "bom.jsonl").write_bytes(
        b"\xef\xbb\xbf" + json.dumps({"claim": "Buses."}).encode() + b"\n"
    )
    loop = root / "loop"
    if not loop.is_symlink():
        loop.symlink_to(loop)
    (root / "a-folder").mkdir(exist_ok=True)
    return {
        "/dev/zero": Path("/dev/zero"),
        "/dev/null": Path("/dev/null"),
        "/dev/urandom": Path("/dev/urandom"),
        "missing": root / "missing.json",
        "a folder": root / "a-folder",
        "/proc/self/mem": Path("/proc/self/mem"),
        "a 300-character name": root / ("n" * 300),
        "a symlink loop": loop,
        "a file under a file": root / "big.json" / "x.json",
        "big": root / "big.json",
        "a line without end": root / "long-line.jsonl",
        "empty": root / "empty.json",
        "NULs": root / "nul.jsonl",
        "a byte-order mark": root / "bom.jsonl",
    }


def test_huge_and_special_files(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every reader, every odd file: it works or one line; memory stays under the cap."""
    import resource

    monkeypatch.setenv("FACTSEEK_MAX_INPUT_BYTES", str(200_000))
    cases = 0
    for kind, path in special_paths(tmp).items():
        for name, read in readers().items():
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            try:
                converted(lambda read=read, path=path: read(path))
            except AssertionError:
                raise
            except Exception as e:
                raise AssertionError(
                    f"{name} on {kind}: unconverted {type(e).__name__}: {e}"
                ) from e
            grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
            assert grown < 300_000, f"{name} on {kind}: memory grew by {grown} KiB"
            cases += 1
    assert cases >= 150


# ----------------------------------------------------------------------------- OS errors at the CLI


def test_cli_on_odd_paths_never_says_unexpected(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from factseek.cli import app

    monkeypatch.setenv("FACTSEEK_MAX_INPUT_BYTES", str(200_000))
    runner = CliRunner()
    out = tmp / "cli-out"
    commands = [
        lambda p: ["render", p],
        lambda p: ["compare-runs", p, p],
        lambda p: ["index", "verify", "--store", p],
        lambda p: ["index", "build", p, "--store", str(out / f"s{next(_counter)}"), "-q"],
        lambda p: ["check", "--claims", p, "--store", p, "-q"],
        lambda p: ["batch", p, "--out", str(out / f"b{next(_counter)}"), "--store", p, "-q"],
        lambda p: ["judge", "predict", "--model", p, "--data", p, "--out", str(out / "p.jsonl")],
    ]
    odd = ("/dev/zero", "a folder", "a 300-character name", "a symlink loop", "a file under a file",
           "big", "a line without end", "/proc/self/mem")  # fmt: skip
    cases = 0
    for kind, path in special_paths(tmp).items():
        if kind not in odd:
            continue
        for make in commands:
            args = make(str(path))
            r = runner.invoke(app, args)
            assert r.exit_code in (0, 1, 2), (args, r.exit_code, r.output[-300:])
            text = r.stderr if r.exit_code else ""
            assert "unexpected" not in text and "Traceback" not in r.output, (kind, args, text)
            if r.exit_code and not text.startswith("Usage:"):
                assert text.startswith("error:") and len(text.strip().splitlines()) == 1, (
                    args,
                    text,
                )
            cases += 1
    assert cases == len(odd) * len(commands)
