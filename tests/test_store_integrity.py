"""Issue 14 case 4: a corrupted store fails with one clear "store is corrupt" line: never a
segfault, never an unconverted error, never different documents. Searches run in a child
process so that a crash shows up as a signal instead of taking pytest down."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from factseek.constraints import Constraints
from factseek.errors import StoreError
from factseek.store import StoreBackend, build_store
from factseek.store.reader import Store

WORDS = [
    "bus",
    "council",
    "route",
    "fare",
    "plant",
    "water",
    "mayor",
    "budget",
    "vote",
    "school",
    "road",
    "bridge",
    "park",
]


def write_docs(path: Path, n: int = 400, seed: int = 0) -> Path:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        text = " ".join(rng.choice(WORDS) + str(rng.randrange(60)) for _ in range(40))
        day = f"20{10 + i % 12:02d}-0{1 + i % 9}-1{i % 9}"
        rows.append({"url": f"https://s{i % 7}.example/{i}", "title": f"T {i}", "text": text, "published": day})  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def store(tmp_path: Path) -> Path:
    build_store([write_docs(tmp_path / "d.jsonl")], tmp_path / "s")
    return tmp_path / "s"


QUERIES = ["bus1 council2 route3", "water4 plant5", "mayor6 budget7 vote8", "school9 road10"]
PROBE = """
import json, sys
from factseek.constraints import Constraints
from factseek.errors import StoreError
from factseek.store import StoreBackend
import datetime as dt
try:
    b = StoreBackend.open(sys.argv[1])
    out = []
    for q in json.loads(sys.argv[2]):
        hits = b.search(q, 10, Constraints(before=dt.date(2018, 1, 1)))
        out.append([[h.url, round(h.score, 4)] for h in hits] + [b.documents(hits[:2])[0].text[:40] if hits else ""])
    print(json.dumps(out))
except StoreError as e:
    print("STORE_ERROR " + str(e))
"""


def probe(store: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROBE, str(store), json.dumps(QUERIES)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NUMBA_NUM_THREADS": "1"},
    )


def index_file(store: Path, name: str) -> Path:
    return store / json.loads((store / "config.json").read_text())["index"] / name


def garble_second_half(path: Path, seed: int) -> None:
    data = bytearray(path.read_bytes())
    rng = np.random.default_rng(seed)
    half = len(data) // 2
    data[half:] = rng.integers(0, 256, len(data) - half, dtype=np.uint8).tobytes()
    path.write_bytes(bytes(data))


def assert_clean_failure(r: subprocess.CompletedProcess[str]) -> None:
    assert r.returncode == 0, f"crashed with {r.returncode}: {r.stderr[-500:]}"
    assert r.stdout.startswith("STORE_ERROR "), r.stdout[:300]
    line = r.stdout.strip()
    assert "\n" not in line and "is corrupt" in line and "rebuild it with" in line


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_garbled_postings_doc_is_an_error_not_a_segfault(store: Path, seed: int) -> None:
    garble_second_half(index_file(store, "postings_doc.npy"), seed)
    assert_clean_failure(probe(store))


@pytest.mark.parametrize("name", ["days.npy", "postings_impact.npy"])
def test_garbled_arrays_never_change_results_silently(store: Path, name: str) -> None:
    clean = probe(store)
    assert clean.returncode == 0 and clean.stdout.startswith("[[")
    garble_second_half(index_file(store, name), 7)
    assert_clean_failure(probe(store))


@pytest.mark.parametrize("name", ["days.npy", "postings_doc.npy", "indptr.npy", "doc_len.npy"])
def test_zero_length_npy_is_a_store_error(store: Path, name: str) -> None:
    index_file(store, name).write_bytes(b"")
    with pytest.raises(StoreError, match="is corrupt"):
        StoreBackend.open(store).search("bus1", 5, Constraints())


def test_garbled_document_text_is_detected_when_read(store: Path) -> None:
    seg = store / "docs-000001.jsonl"
    data = bytearray(seg.read_bytes())
    data[len(data) // 3] ^= 0x01  # one bit inside some document's text
    seg.write_bytes(bytes(data))
    backend = StoreBackend.open(store)  # cheap open: the text is checked when it is read
    with pytest.raises(StoreError, match=r"docs-000001\.jsonl does not match its checksum"):
        for i in range(len(backend.store)):
            backend.store.document(i)


def test_store_without_checksums_still_never_segfaults(store: Path) -> None:
    """A store built before checksums: the structural pass guards the kernels."""
    for sidecar in [*store.glob("*.checksums.json"), index_file(store, "checksums.json")]:
        sidecar.unlink()
    assert not Store.open(store).checksummed
    garble_second_half(index_file(store, "postings_doc.npy"), 3)
    assert_clean_failure(probe(store))


def test_verify_command(store: Path) -> None:
    from typer.testing import CliRunner

    from factseek.cli import app

    runner = CliRunner()
    r = runner.invoke(app, ["index", "verify", "--store", str(store)])
    assert r.exit_code == 0 and "ok" in r.output, r.output
    garble_second_half(store / "docs-000001.cards.jsonl", 1)
    r = runner.invoke(app, ["index", "verify", "--store", str(store)])
    assert r.exit_code == 1 and "cards.jsonl does not match its checksum" in r.stderr


def test_add_refuses_to_bless_a_damaged_store(store: Path, tmp_path: Path) -> None:
    from factseek.store import add_to_store

    garble_second_half(index_file(store, "postings_tf.npy"), 5)
    with pytest.raises(StoreError, match=r"postings_tf\.npy does not match"):
        add_to_store([write_docs(tmp_path / "more.jsonl", n=5, seed=9)], store)
