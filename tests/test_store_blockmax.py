"""Block maxima (issue 48): written with every index, covered by the checksums, and a search
that skips blocks by them gives the plain kernel's top k exactly (ids, scores, tie order)."""

from __future__ import annotations

import datetime as dt
import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from factseek.constraints.hits import Constraints
from factseek.errors import StoreError
from factseek.store import StoreBackend, add_to_store, build_store, kernels, smallsearch
from factseek.store.blockmax import BLOCK, block_maxima, block_pointers, bm25_search_blocks
from factseek.store.integrity import sha256_of, write_sums
from factseek.store.layout import INDEX_FILES
from factseek.store.reader import Store


def random_lists(rng: np.random.Generator, n_docs: int, n_terms: int):
    """CSR postings with Zipf-like document frequencies and widely spread impacts."""
    df = np.minimum((n_docs * 0.8 / np.arange(1, n_terms + 1) ** 0.7).astype(np.int64), n_docs)
    indptr = np.zeros(n_terms + 1, np.int64)
    indptr[1:] = np.cumsum(df)
    pdoc = np.concatenate([np.sort(rng.choice(n_docs, d, replace=False)) for d in df])
    impact = (rng.gamma(2.0, 1.0, len(pdoc)) * rng.choice([0.2, 1.0, 3.0], len(pdoc))).astype(
        np.float32
    )
    term_max = np.array([impact[a:b].max() for a, b in itertools.pairwise(indptr)], np.float32)
    return indptr, pdoc.astype(np.int32), impact, term_max


def reference_blocks(indptr: np.ndarray, impact: np.ndarray, block: int) -> np.ndarray:
    out = []
    for a, b in zip(indptr[:-1].tolist(), indptr[1:].tolist(), strict=True):
        out += [impact[p : min(p + block, b)].max() for p in range(a, b, block)]
    return np.array(out, np.float32)


def test_block_maxima_are_the_largest_impact_of_each_block() -> None:
    rng = np.random.default_rng(1)
    indptr, _, impact, _ = random_lists(rng, 3000, 60)
    indptr = np.insert(indptr, 5, indptr[5])  # a term without postings has no block
    for block in (1, 7, 64):
        got = block_maxima(indptr, impact, block)
        assert np.array_equal(got, reference_blocks(indptr, impact, block))
        assert block_pointers(indptr, block)[-1] == len(got)


@pytest.mark.parametrize("block", [4, 16])
def test_skipping_blocks_gives_the_plain_kernels_top_k(block: int) -> None:
    rng = np.random.default_rng(block)
    n_docs = 4000
    indptr, pdoc, impact, term_max = random_lists(rng, n_docs, 80)
    bptr, bmax = block_pointers(indptr, block), block_maxima(indptr, impact, block)
    acc, touched = np.zeros(n_docs, np.float32), np.empty(n_docs, np.int32)
    stats = np.zeros(2, np.int64)
    gate = rng.integers(1, 100, n_docs).astype(np.int32)
    for trial in range(300):
        terms = rng.choice(80, rng.integers(1, 9), replace=False).astype(np.int32)
        weights = rng.choice([1.0, 1.0, 2.0, 3.0], len(terms)).astype(np.float32)
        lo, hi = (
            (0, 1 << 30) if trial % 2 else (int(rng.integers(1, 40)), int(rng.integers(40, 99)))
        )
        k = int(rng.choice([1, 10, 50]))
        args = (indptr, pdoc, impact, term_max, terms, weights, gate, lo, hi, k, acc, touched)
        want = kernels.bm25_search(*args, True)
        full = kernels.bm25_search(*args, False)
        got = bm25_search_blocks(
            indptr, pdoc, impact, term_max, bptr, bmax, block, *args[4:], stats
        )
        for a in (want, full):
            assert got[0].tolist() == a[0].tolist() and got[1].tolist() == a[1].tolist()
        assert not acc.any()
    assert stats[1] > 0 and stats[0] > 0  # blocks were skipped, and read, in these searches


def zipf_docs(path: Path, rng: np.random.Generator, n: int, first: int = 0) -> Path:
    words = [f"w{i}" for i in range(400)]
    p = 1 / np.arange(1, 401) ** 1.05
    p /= p.sum()
    rows = [
        {
            "url": f"https://s{i % 7}.example/{i}",
            "text": " ".join(rng.choice(words, int(rng.integers(3, 40)), p=p)),
            "published": f"{2000 + i % 20}-01-01",
        }
        for i in range(first, first + n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def index_dir(store: Path) -> Path:
    return store / json.loads((store / "config.json").read_text())["index"]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    build_store([zipf_docs(tmp_path / "a.jsonl", np.random.default_rng(0), 4000)], tmp_path / "s")
    return tmp_path / "s"


def test_the_index_holds_verified_block_maxima(store: Path) -> None:
    idx = index_dir(store)
    assert json.loads((store / "config.json").read_text())["block_size"] == BLOCK
    assert "blockmax.npy" in json.loads((idx / "checksums.json").read_text())["files"]
    s = Store.open(store)
    size, _, bmax = s.block_max
    assert size == BLOCK and np.array_equal(
        bmax, reference_blocks(s.indptr, s.postings_impact, BLOCK)
    )
    assert s.verify() == 18


CONSTRAINTS = [
    Constraints(),
    Constraints(before=dt.date(2012, 1, 1), extra_sites=("s3.example",)),
    Constraints(before=dt.date(2005, 6, 1), undated="keep"),
]


def compare(store: Path, rng: np.random.Generator, n: int = 120) -> int:
    """Searches with block skipping against the plain pruned and exhaustive kernels; returns
    how many blocks were skipped."""
    words = [f"w{i}" for i in range(400)]
    blocks, plain = StoreBackend.open(store), StoreBackend.open(store)
    blocks.blocks = True  # opt-in
    full = StoreBackend.open(store, prune=False)
    s = blocks.store
    for i in range(n):
        q = " ".join(rng.choice(words[:60], int(rng.integers(1, 7))))
        c, k = CONSTRAINTS[i % 3], int(rng.choice([1, 10, 30]))
        got = blocks.bm25(q, k, c)
        terms, weights = blocks.query_terms(q)
        g = s.gates.gate(c)  # the int32 gate, searched in numpy: the reference
        numpy = smallsearch.bm25_search_numpy(
            s.indptr, s.postings_doc, s.postings_impact, s.term_max, terms, weights,
            g.gate, g.lo, g.hi, k, len(s),
        )  # fmt: skip
        for other in (plain.bm25(q, k, c), full.bm25(q, k, c), numpy):
            assert got[0].tolist() == other[0].tolist() and got[1].tolist() == other[1].tolist()
    return int(blocks.block_stats[1])


def test_random_stores_search_identically_with_block_skipping(
    store: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(smallsearch, "NUMPY_MAX_POSTINGS", 0)  # the numba kernels
    rng = np.random.default_rng(5)
    assert compare(store, rng) > 0  # blocks were skipped
    add_to_store([zipf_docs(tmp_path / "b.jsonl", rng, 1500, first=4000)], store)
    assert Store.open(store).block_max is not None  # recomputed for the merged index
    compare(store, rng)


def test_a_damaged_block_max_file_is_refused(store: Path, monkeypatch) -> None:
    monkeypatch.setattr(smallsearch, "NUMPY_MAX_POSTINGS", 0)
    path = index_dir(store) / "blockmax.npy"
    data = bytearray(path.read_bytes())
    data[-8:] = b"\x00\x00\x80\x7f" * 2  # infinite maxima: would change nothing, still refused
    path.write_bytes(bytes(data))
    backend = StoreBackend.open(store)
    backend.blocks = True
    with pytest.raises(StoreError, match=r"blockmax\.npy does not match its checksum") as e:
        backend.search("w1 w2", 10, Constraints())
    assert "\n" not in str(e.value) and "rebuild it with" in str(e.value)
    with pytest.raises(StoreError, match=r"blockmax\.npy"):
        Store.open(store).verify()
    path.unlink()
    with pytest.raises(StoreError, match="is corrupt"):
        Store.open(store)


def make_older(store: Path) -> None:
    """What the previous version wrote: no blockmax.npy, no block_size, sealed without them."""
    idx = index_dir(store)
    (idx / "blockmax.npy").unlink()
    write_sums(idx / "checksums.json", [idx / name for name in INDEX_FILES])
    cfg = json.loads((store / "config.json").read_text())
    del cfg["block_size"]
    for c in cfg["checksums"]:
        if c["name"].startswith("index-"):
            c["sha256"] = sha256_of(store / c["name"])
    (store / "config.json").write_text(json.dumps(cfg))


def test_a_store_without_block_maxima_opens_and_searches_the_same(
    store: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(smallsearch, "NUMPY_MAX_POSTINGS", 0)
    queries = ["w1 w5 w30", "w2 w2 w17", "w0 w3 w8 w13 w21", "w44"]
    c = CONSTRAINTS[1]
    before = [StoreBackend.open(store).bm25(q, 10, c) for q in queries]
    make_older(store)
    s = Store.open(store)
    assert s.block_max is None and s.verify() == 17
    after = [StoreBackend.open(store).bm25(q, 10, c) for q in queries]
    for a, b in zip(before, after, strict=True):
        assert a[0].tolist() == b[0].tolist() and a[1].tolist() == b[1].tolist()
    add_to_store([zipf_docs(tmp_path / "b.jsonl", np.random.default_rng(2), 50, 4000)], store)
    assert Store.open(store).block_max is not None  # an add writes them


def test_the_allowed_bytes_are_the_gates_decision_cached_per_policy_and_dates(store: Path) -> None:
    gates = Store.open(store).gates
    for c in CONSTRAINTS:
        g, a = gates.gate(c), gates.allowed(c)
        assert a.gate.dtype == np.uint8 and (a.lo, a.hi) == (1, 2)
        assert np.array_equal(a.gate == 1, (g.gate >= g.lo) & (g.gate < g.hi))
        assert gates.allowed(c).gate is a.gate  # cached
    other = gates.allowed(Constraints(before=dt.date(2012, 1, 2), extra_sites=("s3.example",)))
    assert other.gate is not gates.allowed(CONSTRAINTS[1]).gate  # another date, another array
    for day in range(1, 12):  # at most max_items kept
        gates.allowed(Constraints(before=dt.date(2001, 1, day)))
    assert len(gates._masks) == gates.max_items
