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

from factseek.constraints.hits import Constraints
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


def write_docs(path: Path, n: int = 400, seed: int = 0, first: int = 0) -> Path:
    rng = random.Random(seed)
    rows = []
    for i in range(first, first + n):
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
from factseek.constraints.hits import Constraints
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


def two_segments(store: Path, tmp_path: Path) -> Path:
    from factseek.store import add_to_store

    add_to_store([write_docs(tmp_path / "more.jsonl", n=50, seed=4, first=400)], store)
    return store


def verify(store: Path) -> object:
    from typer.testing import CliRunner

    from factseek.cli import app

    return CliRunner().invoke(app, ["index", "verify", "--store", str(store)])


def test_a_deleted_segment_checksum_file_is_corruption(store: Path, tmp_path: Path) -> None:
    """Issue 29: rm docs-000002.checksums.json, then a same-length edit of that segment's text:
    verify said "every file matches", and check quoted the tampered text."""
    two_segments(store, tmp_path)
    (store / "docs-000002.checksums.json").unlink()
    seg = store / "docs-000002.jsonl"
    data = seg.read_bytes()
    seg.write_bytes(data.replace(b"bus", b"BUS", 1))
    assert len(seg.read_bytes()) == len(data)
    r = verify(store)
    assert r.exit_code == 1, r.output
    assert "checksum file docs-000002.checksums.json is missing" in r.stderr
    assert "matches" not in r.output
    with pytest.raises(StoreError, match=r"docs-000002\.checksums\.json is missing") as e:
        StoreBackend.open(store)
    assert "\n" not in str(e.value)


def test_a_deleted_index_checksum_file_is_corruption(store: Path) -> None:
    """Issue 29: rm index-NNNNNN/checksums.json, then reorder postings_impact.npy: verify exited
    0 ("built without checksums... structure ok") and search returned different top hits."""
    index_file(store, "checksums.json").unlink()
    path = index_file(store, "postings_impact.npy")
    arr = np.load(path)
    np.save(path, arr[::-1].copy())
    r = verify(store)
    assert r.exit_code == 1 and "checksums.json is missing" in r.stderr, r.output
    assert_clean_failure(probe(store))


def test_a_checksum_file_edited_or_partial_is_corruption(store: Path) -> None:
    sidecar = index_file(store, "checksums.json")
    doc = json.loads(sidecar.read_text())
    del doc["files"]["postings_impact.npy"]
    sidecar.write_text(json.dumps(doc, sort_keys=True) + "\n")
    with pytest.raises(StoreError, match=r"differs from the one config\.json records"):
        Store.open(store)
    config = json.loads((store / "config.json").read_text())  # config.json edited to match
    import hashlib

    for c in config["checksums"]:
        if c["name"].endswith("/checksums.json"):
            c["sha256"] = hashlib.sha256(sidecar.read_bytes()).hexdigest()
    (store / "config.json").write_text(json.dumps(config))
    with pytest.raises(StoreError, match=r"has no checksum for postings_impact\.npy"):
        Store.open(store)


def make_format_1(store: Path) -> None:
    """A store as factseek wrote it before config.json recorded its checksum files."""
    config = json.loads((store / "config.json").read_text())
    config["format_version"] = 1
    del config["checksums"]
    (store / "config.json").write_text(json.dumps(config))


def test_a_format_1_store_is_refused_until_sealed(store: Path) -> None:
    from typer.testing import CliRunner

    from factseek.cli import app

    make_format_1(store)
    with pytest.raises(StoreError, match="factseek index seal --store") as e:
        StoreBackend.open(store)
    assert "\n" not in str(e.value)
    r = verify(store)
    assert r.exit_code == 1 and "index seal" in r.stderr
    r = CliRunner().invoke(app, ["index", "seal", "--store", str(store)])
    assert r.exit_code == 0 and "sealed; 2 checksum file(s) verified" in r.output, r.output
    assert json.loads((store / "config.json").read_text())["format_version"] == 2
    assert verify(store).exit_code == 0
    assert probe(store).stdout.startswith("[[")


def test_sealing_never_blesses_a_tampered_or_unverifiable_store(store: Path) -> None:
    from typer.testing import CliRunner

    from factseek.cli import app

    runner = CliRunner()
    make_format_1(store)
    garble_second_half(store / "docs-000001.cards.jsonl", 2)
    r = runner.invoke(app, ["index", "seal", "--store", str(store)])
    assert r.exit_code == 1 and "cards.jsonl does not match its checksum" in r.stderr
    assert json.loads((store / "config.json").read_text())["format_version"] == 1
    (store / "docs-000001.checksums.json").unlink()  # now nothing can check the segment
    r = runner.invoke(app, ["index", "seal", "--store", str(store)])
    assert r.exit_code == 1 and "--trust-contents" in r.stderr, r.output
    r = runner.invoke(app, ["index", "seal", "--store", str(store), "--trust-contents"])
    assert r.exit_code == 0 and "1 written from the files as they are now" in r.output, r.output
    assert verify(store).exit_code == 0


def test_a_format_1_store_without_checksums_still_never_segfaults(store: Path) -> None:
    """Sealing with --trust-contents runs the structural pass first (every posting in range)."""
    from factseek.store.build import seal_store

    make_format_1(store)
    for sidecar in [*store.glob("*.checksums.json"), index_file(store, "checksums.json")]:
        sidecar.unlink()
    garble_second_half(index_file(store, "postings_doc.npy"), 3)
    with pytest.raises(StoreError, match="is corrupt"):
        seal_store(store, trust_contents=True)


def test_verify_command(store: Path) -> None:
    from typer.testing import CliRunner

    from factseek.cli import app

    runner = CliRunner()
    r = runner.invoke(app, ["index", "verify", "--store", str(store)])
    assert r.exit_code == 0 and "ok, all 18 files match" in r.output, r.output
    garble_second_half(store / "docs-000001.cards.jsonl", 1)
    r = runner.invoke(app, ["index", "verify", "--store", str(store)])
    assert r.exit_code == 1 and "cards.jsonl does not match its checksum" in r.stderr


def test_add_refuses_to_bless_a_damaged_store(store: Path, tmp_path: Path) -> None:
    from factseek.store import add_to_store

    garble_second_half(index_file(store, "postings_tf.npy"), 5)
    with pytest.raises(StoreError, match=r"postings_tf\.npy does not match"):
        add_to_store([write_docs(tmp_path / "more.jsonl", n=5, seed=9)], store)


def test_a_garbled_npy_header_is_a_store_error(store: Path) -> None:
    path = index_file(store, "postings_doc.npy")  # read lazily: its header is parsed at open
    data = bytearray(path.read_bytes())
    for i in range(25, 34):  # numpy's header parser raised tokenize.TokenError here
        data[i] ^= 26
    path.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="is corrupt"):
        StoreBackend.open(store)
