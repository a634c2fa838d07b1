"""The store build's fast paths give exactly what the plain ones give.

* ``Vocabulary.term_ids`` (ASCII documents through the numba hash table, others through the
  regex) against ``factseek.text.tokenize`` with ids in order of first appearance;
* a whole build, in small analysis batches, against a build whose every document goes through
  the regex analyzer: the same bytes in every file;
* the record lines spelled with the C string encoder against ``json.dumps``;
* the JSONL line parser against ``sanitize.json_loads``, errors included.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pytest

from factseek.sanitize import json_loads
from factseek.store import analyze, kernels
from factseek.store import build as build_mod
from factseek.store.analyze import STOP, Vocabulary, record_lines, record_lines_json
from factseek.store.build import build_store
from factseek.store.sources import _json_line
from factseek.text import STOPWORDS, tokenize
from factseek.types import Document

TRICKY = [
    "The Bridge cost 3 million dollars",
    "foo_bar BAZ9 x2y_z __init__ a-b c.d",
    "averyveryverylongwordthatexceedssixteen averyveryverylongwordthatexceedsseventeen",
    "abcdefghijklmnop abcdefghijklmnoq abcdefghijklmnop abcdefgh abcdefghi",
    "",
    "   ...   ",
    "Café crème brûlée, naïve résumé",  # not ASCII: the regex path
    "\u212a is the Kelvin sign",  # not ASCII, lowers to ASCII 'k'
    "İstanbul and ΣΊΣΥΦΟΣ",
    "the of and a an",  # stop words only
    "mixed café and bridge and averyveryverylongwordthatexceedssixteen",
    "1234567890123456789 1234567890123456789 00 0",
    "tab\tseparated\nlines\r\nand\x00nul",
    "The mayor\u2019s \u201cnew\u201d bridge \u2014 it cost \u20ac3\u00a0million\u2026 ok\u2122",
    "\u2018quoted\u2019 and caf\u00e9 \u2013 both",  # a letter keeps it on the regex path
]


def reference_ids(texts: list[str]) -> tuple[list[str], list[int], list[int]]:
    """(terms in order of first appearance, term id per kept word, terms per document)."""
    terms: dict[str, int] = {}
    ids: list[int] = []
    lens: list[int] = []
    for text in texts:
        words = tokenize(text)
        for w in words:
            ids.append(terms.setdefault(w, len(terms)))
        lens.append(len(words))
    return list(terms), ids, lens


def random_texts(rng: np.random.Generator, n: int) -> list[str]:
    """Documents of random words (many distinct, some long, some non-ASCII) to grow the table."""
    pool = [
        "".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz0123456789"), rng.integers(1, 24)))
        for _ in range(3000)
    ] + sorted(STOPWORDS)[:20]
    out = []
    for i in range(n):
        words = list(rng.choice(pool, rng.integers(0, 30)))
        if i % 7 == 3:
            words.append("naïve")
        out.append(" ".join(words).upper() if i % 5 == 0 else " ".join(words))
    return out


@pytest.fixture
def numba_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """ASCII batches through the numba kernel however small the store."""
    monkeypatch.setattr(analyze, "ASCII_MIN_CHARS", 0)


@pytest.mark.parametrize("batch", [1, 3, 1000])
def test_term_ids_equal_the_shared_analyzer_in_order_of_first_appearance(
    batch: int, numba_path: None
) -> None:
    texts = TRICKY + random_texts(np.random.default_rng(1), 400)
    vocab = Vocabulary()
    ids, lens = [], []
    for k in range(0, len(texts), batch):
        i, n = vocab.term_ids([t.lower() for t in texts[k : k + batch]])
        ids.append(i)
        lens.append(n)
    terms, ref_ids, ref_lens = reference_ids(texts)
    assert vocab.terms == terms
    assert np.concatenate(ids).tolist() == ref_ids
    assert np.concatenate(lens).tolist() == ref_lens
    assert vocab._table is not None and len(vocab._table.slots) > 4096  # the table grew
    assert all(vocab[w] == STOP for w in STOPWORDS)


def test_small_batches_stay_on_the_regex_path() -> None:
    vocab = Vocabulary()
    vocab.term_ids(["a small store"] * 10)
    assert vocab._table is None and vocab.terms == ["small", "store"]


def test_term_ids_continue_an_existing_vocabulary(numba_path: None) -> None:
    """An add starts from the store's terms: known ones keep their ids, new ones follow."""
    old = ["bridge", "café", "averyveryverylongwordthatexceedssixteen"]
    vocab = Vocabulary(old)
    vocab.term_ids(["naïve bridge"])  # regex path first: "naïve" joins before the table exists
    vocab.term_ids(["roads bridge"])
    vocab.term_ids(["café résumé"])  # regex path: "résumé" after the table was built
    vocab.term_ids(["zeta"])
    ids, lens = vocab.term_ids(
        ["averyveryverylongwordthatexceedssixteen naïve résumé roads zeta bridge new"]
    )
    assert vocab.terms[:3] == old
    assert [vocab.terms[i] for i in ids] == [
        "averyveryverylongwordthatexceedssixteen",
        "naïve",
        "résumé",
        "roads",
        "zeta",
        "bridge",
        "new",
    ]
    assert lens.tolist() == [7]
    assert len(set(vocab.terms)) == len(vocab.terms)


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


def test_batched_build_writes_the_bytes_of_the_regex_analyzer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, numba_path: None
) -> None:
    rng = np.random.default_rng(2)
    texts = TRICKY + random_texts(rng, 300)
    records = [
        {
            "url": f"https://s{i % 5}.example/{i}" + (".pdf" if i % 11 == 0 else ""),
            "title": t[:12],
            "text": t or "x",
            "published": f"20{i % 20:02d}-01-02" if i % 4 else "",
            **({"section": "a\u00e9"} if i % 9 == 0 else {}),
        }
        for i, t in enumerate(texts)
    ]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    monkeypatch.setattr(build_mod, "ANALYZE_BATCH", 7)
    calls: list[int] = []
    kernel = kernels.ascii_term_ids
    monkeypatch.setattr(kernels, "ascii_term_ids", lambda *a: calls.append(1) or kernel(*a))
    build_store([src], tmp_path / "fast")
    assert calls  # the numba path was taken
    monkeypatch.setattr(Vocabulary, "_ascii_ids", Vocabulary._regex_ids)  # the regex for all
    build_store([src], tmp_path / "plain")
    fast, plain = _files(tmp_path / "fast"), _files(tmp_path / "plain")
    assert fast.keys() == plain.keys()
    assert [n for n in fast if fast[n] != plain[n]] == []


DOCUMENTS = [
    Document(url="https://a.example/x", text="plain text", title="T", id="a"),
    Document(
        url='https://b.example/é?q="1"',
        text='quotes " and \\ backslash, \u2028 separators, \x00\x1f controls, 😀 emoji',
        title="Ünïcödé\ttitle",
        published=dt.date(2020, 2, 29),
        modified=dt.date(2021, 1, 1),
        domain="b.example",
        id="b\u00e9",
        meta={"section": "x", "n": "1", "url_source": "https://z.example/"},
    ),
    Document(url="https://c.example/", text=" ".join(["long"] * 400), domain=""),
]


@pytest.mark.parametrize("doc", DOCUMENTS)
def test_record_lines_equal_json_dumps(doc: Document) -> None:
    doc_id = doc.id or doc.url
    assert record_lines(doc, doc_id) == record_lines_json(doc, doc_id)


@pytest.mark.parametrize(
    "line",
    [
        '{"url": "https://a.example/", "text": "x"}\n',
        '  {"url": "u"}\n',
        '{"url": "u"}  \n',
        '{"url": "u"}\r\n',
        '{"url": "u"}',
        "[1, 2]\n",
        '"text"\n',
        '{"a": "\\u00e9\\n"}\n',
    ],
)
def test_json_line_equals_json_loads(line: str) -> None:
    assert _json_line(line) == json_loads(line)


@pytest.mark.parametrize(
    "line",
    ['{"url": "u"} {"x": 1}\n', '{"url": \n', "1, 2\n", '{"a": "\\ud800"}\n', "\n", "[" * 100000],
)
def test_json_line_raises_what_json_loads_raises(line: str) -> None:
    with pytest.raises(json.JSONDecodeError) as ours:
        _json_line(line)
    with pytest.raises(json.JSONDecodeError) as theirs:
        json_loads(line)
    assert str(ours.value) == str(theirs.value)


def test_common_punctuation_takes_the_ascii_path() -> None:
    from factseek.store.analyze import _NON_WORD, _plain
    from factseek.text import WORD_RE

    assert len(_NON_WORD) > 100 and all(WORD_RE.search(ch) is None for ch in _NON_WORD)
    text = TRICKY[-2].lower()
    assert not text.isascii() and _plain(text).isascii()
    assert tokenize(_plain(text)) == tokenize(text)
    assert _plain(TRICKY[-1].lower()) == TRICKY[-1].lower()  # "café" stays on the regex path
