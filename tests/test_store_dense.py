"""Dense and hybrid search over store vectors, with a tiny hashing encoder (no model)."""

from __future__ import annotations

import datetime as dt
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from factseek.constraints.hits import NO_CONSTRAINTS, Constraints
from factseek.errors import ConfigError, StoreError
from factseek.ml.encode import FunctionEncoder
from factseek.store import Store, StoreBackend, write_documents
from factseek.text import tokenize
from factseek.types import Document

DIM = 64


def hashing(texts: Sequence[str]) -> np.ndarray:
    out = np.zeros((len(texts), DIM), np.float32)
    for i, t in enumerate(texts):
        for w in tokenize(t):
            out[i, zlib.crc32(w.encode()) % DIM] += 1.0
        out[i, DIM - 1] += 0.01  # never all zero
    return out


ENCODER = FunctionEncoder(hashing, dim=DIM, name="hashing")
TEXTS = [
    "bridge cost three million dollars",
    "school budget and teachers",
    "river bridge opening ceremony",
    "garden flowers in spring",
    "bridge toll prices rise",
    "teachers strike over school pay",
]


def docs(start: int = 0, texts: Sequence[str] = TEXTS) -> list[Document]:
    return [
        Document(
            url=f"https://{'www.snopes.com' if i % 5 == 4 else 'n.example'}/{i + start}",
            text=t,
            published=dt.date(2010 + i, 1, 1),
        )
        for i, t in enumerate(texts)
    ]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    write_documents(tmp_path / "s", docs(), encoder=ENCODER)
    return tmp_path / "s"


def brute_force(query: str, texts: Sequence[str]) -> list[int]:
    v = ENCODER.encode(list(texts))
    q = ENCODER.encode([query])[0]
    sims = v @ q
    return sorted(range(len(texts)), key=lambda i: (-sims[i], i))


def test_vectors_are_stored_per_segment(store: Path) -> None:
    s = Store.open(store)
    assert (s.config.dense_encoder, s.config.dense_dim) == ("hashing", DIM)
    ((first, vecs),) = s.dense()
    assert first == 0 and vecs.shape == (len(TEXTS), DIM)
    np.testing.assert_allclose(
        vecs, ENCODER.encode([d.title + "\n" + d.text for d in docs()]), rtol=1e-6
    )


def test_dense_ranking_matches_brute_force_cosine(store: Path) -> None:
    backend = StoreBackend.open(store, mode="dense", encoder=ENCODER)
    for q in ["bridge prices", "school teachers pay", "spring garden"]:
        hits = backend.search(q, 6, NO_CONSTRAINTS)
        assert [h.url for h in hits] == [
            f"https://{'www.snopes.com' if i % 5 == 4 else 'n.example'}/{i}"
            for i in brute_force(q, TEXTS)
        ]
        assert all(h.backend == "local" for h in hits)


def test_dense_and_hybrid_apply_constraints_as_a_mask(store: Path) -> None:
    c = Constraints(before=dt.date(2014, 6, 1))  # drops 2014+ and the snopes.com page
    for mode in ("dense", "hybrid"):
        backend = StoreBackend.open(store, mode=mode, encoder=ENCODER)
        hits = backend.search("bridge toll prices", 10, c)
        assert hits and all(h.published < dt.date(2014, 6, 1) for h in hits)
        assert not any("snopes" in h.url for h in hits)


def test_hybrid_fuses_both_lists(store: Path) -> None:
    hybrid = StoreBackend.open(store, mode="hybrid", encoder=ENCODER)
    bm25 = StoreBackend.open(store)
    dense = StoreBackend.open(store, mode="dense", encoder=ENCODER)
    q = "bridge cost"
    h = hybrid.search(q, 3, NO_CONSTRAINTS)
    top_both = {bm25.search(q, 1, NO_CONSTRAINTS)[0].url, dense.search(q, 1, NO_CONSTRAINTS)[0].url}
    assert h[0].url in top_both
    assert [x.score for x in h] == sorted((x.score for x in h), reverse=True)


def test_add_encodes_new_documents_and_needs_the_encoder(store: Path) -> None:
    more = docs(100, ["ferry prices drop", "bridge bridge bridge"])
    with pytest.raises(StoreError, match="encoder is needed"):
        write_documents(store, more, mode="add")
    write_documents(store, more, mode="add", encoder=ENCODER)
    backend = StoreBackend.open(store, mode="dense", encoder=ENCODER)
    assert [len(v) for _, v in backend.store.dense()] == [6, 2]
    assert backend.search("ferry prices", 1, NO_CONSTRAINTS)[0].url == "https://n.example/100"


def test_dense_mode_on_a_bm25_only_store_is_a_config_error(tmp_path: Path) -> None:
    write_documents(tmp_path / "s", docs())
    with pytest.raises(ConfigError, match="--dense"):
        StoreBackend.open(tmp_path / "s", mode="dense")
    with pytest.raises(ConfigError, match="unknown store search mode"):
        StoreBackend.open(tmp_path / "s", mode="sparse")  # type: ignore[arg-type]


def test_dense_ties_break_by_document_order(tmp_path: Path) -> None:
    same = [Document(url=f"https://t.example/{i}", text="identical text") for i in range(7)]
    write_documents(tmp_path / "s", same, encoder=ENCODER)
    hits = StoreBackend.open(tmp_path / "s", mode="dense", encoder=ENCODER).search(
        "identical", 3, NO_CONSTRAINTS
    )
    assert [h.url for h in hits] == [f"https://t.example/{i}" for i in range(3)]


@pytest.mark.slow
def test_minilm_dense_store_end_to_end(tmp_path: Path) -> None:
    from factseek.ml.encode import default_encoder

    texts = [
        "The council approved money for a new bridge.",
        "Teachers went on strike over pay.",
        "Tulips bloom in April gardens.",
    ]
    write_documents(tmp_path / "s", docs(texts=texts), encoder=default_encoder())
    assert Store.open(tmp_path / "s").config.dense_dim == 384
    backend = StoreBackend.open(tmp_path / "s", mode="dense")  # encoder named in config.json
    assert (
        backend.search("funding for a river crossing", 1, NO_CONSTRAINTS)[0].url
        == "https://n.example/0"
    )
    hybrid = StoreBackend.open(tmp_path / "s", mode="hybrid")
    assert hybrid.search("school staff walkout", 1, NO_CONSTRAINTS)[0].url == "https://n.example/1"
