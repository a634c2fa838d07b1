"""Checksums of a store's files: written at build, checked when read, never trusted blindly.

Every file a build writes gets a CRC-32 per 1 MiB block and its size, in a sidecar written with
it (``index-NNNNNN/checksums.json`` for the index folder, ``docs-NNNNNN.checksums.json`` for a
segment; both immutable, like the files they describe). Reading a store:

1. at open, every listed file must exist with its recorded size (one ``stat`` each), and the
   small per-document and per-term arrays (O(documents + terms): row pointers, lengths, dates,
   hosts, offsets) are verified in full (about 15 ms per million documents);
2. the large files are verified lazily, block by block, the first time a read touches a block:
   posting lists before a query's terms are scored, JSONL lines before a document or hit card is
   parsed, whole text tables before they are parsed. A block is checked once per open store, so
   a warm store pays nothing and a cold one pays at most one pass over what it reads.

``config.json`` names every checksum file with its SHA-256 and each checksum file must cover
every file of its folder (``layout.checksum_files``): a missing, edited or partial checksum file
is corruption like a damaged data file, so no file can go unchecked.

A mismatch raises ``StoreError`` ("store ... is corrupt: ...; rebuild it with ..."): a damaged
store never crashes a numba kernel and never answers with different documents. Stores whose
``config.json`` predates that record (format 1) are refused with a hint to ``factseek index
seal`` them (``unsealed``); only sealing opens them unsealed, with a structural validation pass
(every posting's document number in range, row pointers ordered).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from factseek.errors import InputError, StoreError
from factseek.files import read_input

BLOCK = 1 << 20
FORMAT = 1


def corrupt(root: Path, what: str) -> StoreError:
    """The one error every integrity failure raises, with how to fix it."""
    return StoreError(
        f"store {root} is corrupt: {what}; rebuild it with: "
        f"factseek index build SOURCES --store {root} --force"
    )


def unsealed(root: Path) -> StoreError:
    """The error for a store whose config.json does not record its checksum files."""
    return StoreError(
        f"knowledge store {root} was built by an older factseek without a record of its checksum files, "
        f"so tampering cannot be ruled out; verify and seal it with: factseek index seal "
        f"--store {root} (or rebuild it with: factseek index build SOURCES --store {root} --force)"
    )


def sha256_of(path: Path) -> str:
    """The SHA-256 of a file the build just wrote (streamed; a store being read is checked by
    ``load_sealed``, through the bounded reader)."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(BLOCK):
            h.update(chunk)
    return h.hexdigest()


def _block_crcs(path: Path) -> tuple[int, list[int]]:
    size = path.stat().st_size
    crcs = []
    with path.open("rb") as f:
        while chunk := f.read(BLOCK):
            crcs.append(zlib.crc32(chunk))
    return size, crcs


def write_sums(sidecar: Path, files: Iterable[Path]) -> None:
    """Record size and per-block CRC-32 of ``files`` (names relative to the sidecar's folder)."""
    entries: dict[str, Any] = {}
    for path in files:
        size, crcs = _block_crcs(path)
        entries[path.name] = {"size": size, "crc32": crcs}
    doc = {"format": FORMAT, "block": BLOCK, "files": entries}
    sidecar.write_text(json.dumps(doc, sort_keys=True) + "\n", encoding="utf-8")


class Sums:
    """The recorded checksums of one folder's files, and which blocks were verified."""

    def __init__(self, root: Path, folder: Path, sidecar: Path, raw: bytes | None = None) -> None:
        """``raw``: the sidecar's bytes, when the caller has read them already."""
        self.root = root
        self.folder = folder
        self.sidecar = sidecar
        try:
            if raw is None:
                raw = read_input(sidecar, "checksum file")
            doc = json.loads(raw.decode("utf-8-sig"))
            if doc.get("format") != FORMAT or doc.get("block") != BLOCK:
                raise ValueError("unknown checksum format")
            self.files: dict[str, dict[str, Any]] = {
                str(name): {"size": int(e["size"]), "crc32": [int(c) for c in e["crc32"]]}
                for name, e in doc["files"].items()
            }
        except InputError as e:  # a device, larger than the input limit, unreadable
            raise corrupt(root, f"{sidecar.name} is unreadable ({e})") from None
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as e:
            raise corrupt(root, f"{sidecar.name} is unreadable ({type(e).__name__})") from None
        self._done = {name: np.zeros(len(e["crc32"]), bool) for name, e in self.files.items()}
        self._left = {name: len(e["crc32"]) for name, e in self.files.items()}
        self._maps: dict[str, Any] = {}
        self._lock = threading.Lock()

    def check_sizes(self) -> None:
        for name, entry in self.files.items():
            path = self.folder / name
            try:
                size = path.stat().st_size
            except OSError:
                raise corrupt(self.root, f"{path.name} is missing") from None
            expected_blocks = -(-entry["size"] // BLOCK)
            if size != entry["size"] or len(entry["crc32"]) != expected_blocks:
                raise corrupt(self.root, f"{path.name} has {size} bytes, expected {entry['size']}")

    def _raw(self, name: str) -> Any:
        raw = self._maps.get(name)
        if raw is None:
            size = self.files[name]["size"]
            if size == 0:
                raw = b""
            else:
                try:
                    raw = np.memmap(self.folder / name, dtype=np.uint8, mode="r")
                except (OSError, ValueError) as e:
                    raise corrupt(self.root, f"{name} cannot be read ({e})") from None
            self._maps[name] = raw
        return raw

    def verify(self, name: str, start: int = 0, end: int | None = None) -> None:
        """Verify the blocks of file ``name`` that hold bytes ``[start, end)`` (all by default)."""
        entry = self.files.get(name)
        if entry is None:
            raise corrupt(self.root, f"{name} has no recorded checksum")
        if self._left[name] == 0:
            return
        size = entry["size"]
        end = size if end is None else min(end, size)
        if end <= start:
            return
        first, last = start // BLOCK, (end - 1) // BLOCK
        done = self._done[name]
        if done[first : last + 1].all():
            return
        raw = self._raw(name)
        crcs = entry["crc32"]
        for b in range(first, last + 1):
            if done[b]:
                continue
            if zlib.crc32(raw[b * BLOCK : min(size, (b + 1) * BLOCK)]) != crcs[b]:
                raise corrupt(self.root, f"{name} does not match its checksum (block {b})")
            with self._lock:
                if not done[b]:
                    done[b] = True
                    self._left[name] -= 1

    def verify_all(self) -> None:
        for name in self.files:
            self.verify(name)

    def fully_verified(self, name: str) -> bool:
        return self._left.get(name, 1) == 0


def load_sealed(
    root: Path, folder: Path, sidecar: Path, covers: Iterable[str], sha256: str | None
) -> Sums:
    """A recorded checksum file: present, unchanged since config.json named it (``sha256``),
    covering every file in ``covers``, with every covered file at its recorded size."""
    rel = sidecar.relative_to(root).as_posix()
    if sha256 is None:
        raise corrupt(root, f"config.json records no checksum file {rel}")
    if not sidecar.exists() and not sidecar.is_symlink():
        raise corrupt(root, f"checksum file {rel} is missing")
    try:  # read once, bounded: a sidecar linked to /dev/zero is refused, not read forever
        raw = read_input(sidecar, "checksum file")
    except InputError as e:
        raise corrupt(root, f"checksum file {rel} is unreadable ({e})") from None
    if hashlib.sha256(raw).hexdigest() != sha256:
        raise corrupt(root, f"checksum file {rel} differs from the one config.json records")
    sums = Sums(root, folder, sidecar, raw)
    missing = sorted(set(covers) - set(sums.files))
    if missing:
        raise corrupt(root, f"checksum file {rel} has no checksum for {missing[0]}")
    sums.check_sizes()
    return sums


def validate_structure(
    root: Path,
    indptr: np.ndarray,
    postings_doc: np.ndarray | None,
    n_docs: int,
    n_hosts: int,
    host_id: np.ndarray,
    days: np.ndarray,
) -> None:
    """Structural checks that keep the kernels' reads in bounds (always on the small arrays;
    ``postings_doc`` only for stores without checksums, where it is the one guard)."""
    if len(indptr) and (indptr[0] != 0 or bool(np.any(np.diff(indptr) < 0))):
        raise corrupt(root, "indptr.npy is not an ordered row-pointer array")
    if n_docs and (host_id.min() < 0 or host_id.max() >= max(n_hosts, 1)):
        raise corrupt(root, "host_id.npy points outside hosts.txt")
    if n_docs and days.min() < 0:
        raise corrupt(root, "days.npy holds negative days")
    if (
        postings_doc is not None
        and len(postings_doc)
        and (postings_doc.min() < 0 or postings_doc.max() >= n_docs)
    ):
        raise corrupt(root, "postings_doc.npy points outside the documents")


def files_in(folder: Path, names: Iterable[str]) -> list[Path]:
    return [folder / n for n in names if (folder / n).exists()]


def fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
