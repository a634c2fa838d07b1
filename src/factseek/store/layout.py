"""The on-disk layout of a knowledge store, and how a new version of it is committed.

A store is one folder of plain files::

    config.json                  format version, BM25 parameters, segments, current index folder
    docs-000001.jsonl            documents, one JSON object per line (immutable once written)
    docs-000001.offsets.npy      int64 byte offsets of each line (n + 1)
    docs-000001.cards.jsonl      [id, url, title, published, snippet] per document: what a hit
    docs-000001.cards.offsets.npy  shows, read without parsing the (long) text
    docs-000001.dense.npy        float32 (n, dim) vectors, only when built with --dense
    index-000003/                the BM25 index over all segments (rebuilt by every add):
        terms.txt                one term per line; line i is term id i
        indptr.npy               int64 (n_terms + 1) CSR row pointers into the postings
        postings_doc.npy         int32 document number of each posting (sorted within a term)
        postings_tf.npy          int32 term frequency of each posting
        postings_impact.npy      float32 precomputed BM25 contribution of each posting
        term_max.npy             float32 largest impact of each term (for pruning)
        blockmax.npy             float32 largest impact of each block of ``block_size`` postings
                                 (``store/blockmax.py``; absent in stores written before it)
        doc_len.npy              int32 number of terms of each document
        days.npy                 int32 publication day (date.toordinal()), 0 when undated
        host_id.npy              int32 index into hosts.txt (URL host without "www.")
        hosts.txt                one host per line
        url_flags.npy            uint8 bit 0: the URL path ends with ".pdf"
        urls_lower.txt           lower-cased URLs, one per line (for marker checks)
        ids.txt                  document ids, one per line
        checksums.json           size and CRC-32 per 1 MiB block of every file above
    docs-000001.checksums.json   the same for the segment's files (see ``store/integrity.py``)

``config.json`` names every checksum file with its SHA-256 (``checksums``), so a deleted or edited
checksum file is corruption, never a store that silently goes unverified. Format 1 stores (built
before that record) are refused until ``factseek index seal`` records it (``build.seal_store``).

Every write goes to new files first; ``commit`` then replaces ``config.json`` atomically
(``os.replace``), so a reader sees the old store or the new one, never a mix, and a crash
leaves the old store intact. Files no longer named by ``config.json`` are removed afterwards.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from factseek.errors import InputError, StoreError
from factseek.files import SIDE_LIMIT, read_json

FORMAT_VERSION = 2
UNSEALED_VERSION = 1  # stores built before config.json recorded their checksum files
CONFIG = "config.json"
LOCK = ".lock"
ANALYZER = "factseek.text.tokenize"  # lower-cased [^\W_]+ runs, English stop words removed
SEGMENT_FILES = (
    "jsonl",
    "offsets.npy",
    "cards.jsonl",
    "cards.offsets.npy",
    "dense.npy",
    "checksums.json",
)
SIDECAR = "checksums.json"
INDEX_FILES = (
    "days.npy",
    "doc_len.npy",
    "host_id.npy",
    "hosts.txt",
    "ids.txt",
    "indptr.npy",
    "postings_doc.npy",
    "postings_impact.npy",
    "postings_tf.npy",
    "term_max.npy",
    "terms.txt",
    "url_flags.npy",
    "urls_lower.txt",
)
_OWNED = re.compile(
    r"^(docs-\d{6}\.(" + "|".join(re.escape(x) for x in SEGMENT_FILES) + r")|index-\d{6}|.*\.tmp)$"
)


@dataclass(frozen=True, kw_only=True)
class Segment:
    """One immutable batch of documents (one ``build`` or ``add``)."""

    name: str  # "docs-000001"
    n_docs: int


@dataclass(frozen=True, kw_only=True)
class ChecksumFile:
    """One checksum file of the store, named relative to its root, with its SHA-256."""

    name: str  # "index-000003/checksums.json", "docs-000001.checksums.json"
    sha256: str


@dataclass(frozen=True, kw_only=True)
class StoreConfig:
    """The contents of ``config.json``."""

    format_version: int = FORMAT_VERSION
    generation: int = 0
    index: str = ""  # "index-000003"
    segments: tuple[Segment, ...] = ()
    n_docs: int = 0
    n_terms: int = 0
    n_postings: int = 0
    k1: float = 1.5
    b: float = 0.75
    analyzer: str = ANALYZER
    dense_encoder: str = ""  # encoder name when documents have vectors, else ""
    dense_dim: int = 0
    skipped_lines: int = 0  # total input records skipped with --on-error skip
    checksums: tuple[ChecksumFile, ...] = ()  # every checksum file; empty only in format 1
    block_size: int = 0  # postings per block of blockmax.npy; 0: no such file (older stores)

    @property
    def sealed(self) -> bool:
        """True when ``config.json`` records the store's checksum files (format 2)."""
        return self.format_version == FORMAT_VERSION

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True)


def read_config(root: Path) -> StoreConfig:
    """Parse ``config.json``; any problem is a one-line ``StoreError``."""
    path = root / CONFIG
    if not root.is_dir():
        raise StoreError(f"no knowledge store at {root} (build one with: factseek index build)")
    if not path.is_file():
        raise StoreError(f"{root} is not a knowledge store: {CONFIG} is missing")
    try:
        data = read_json(path, "store config", limit=SIDE_LIMIT)
        version = data.get("format_version")
        if version not in (FORMAT_VERSION, UNSEALED_VERSION) or isinstance(version, bool):
            raise StoreError(
                f"{path}: format_version {version!r} is not supported (expected {FORMAT_VERSION})"
            )
        data["segments"] = tuple(Segment(**s) for s in data["segments"])
        data["checksums"] = tuple(ChecksumFile(**c) for c in data.get("checksums", ()))
        if version == FORMAT_VERSION and not data["checksums"]:
            raise ValueError("no checksum files are recorded")
        config = StoreConfig(**data)
    except StoreError:
        raise
    except InputError as e:  # a device, too large, not UTF-8 or not JSON
        raise StoreError(f"{e}; the store is corrupt") from None
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        raise StoreError(f"{path} is corrupt: {type(e).__name__}: {e}") from None
    if config.analyzer != ANALYZER:
        raise StoreError(
            f"{root} was indexed with analyzer {config.analyzer!r}; this version uses {ANALYZER!r}"
        )
    return config


def segment_files(config: StoreConfig, segment: str) -> tuple[str, ...]:
    """The data files of one segment (its checksum file excluded)."""
    suffixes = [x for x in SEGMENT_FILES if x != SIDECAR]
    if not config.dense_encoder:
        suffixes.remove("dense.npy")
    return tuple(f"{segment}.{x}" for x in suffixes)


def checksum_files(config: StoreConfig) -> list[tuple[str, tuple[str, ...]]]:
    """Every checksum file ``config`` needs (relative to the root) with the files it must cover."""
    index_files = INDEX_FILES + (("blockmax.npy",) if config.block_size else ())
    out = [(f"{config.index}/{SIDECAR}", index_files)]
    out += [(f"{s.name}.{SIDECAR}", segment_files(config, s.name)) for s in config.segments]
    return out


def segment_name(i: int) -> str:
    return f"docs-{i:06d}"


def index_name(generation: int) -> str:
    return f"index-{generation:06d}"


@contextlib.contextmanager
def write_lock(root: Path) -> Iterator[None]:
    """Exclusive writer lock (released by the OS if the process dies)."""
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root / LOCK, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreError(f"{root} is being written by another process") from None
        yield
    finally:
        os.close(fd)


def check_writable_root(root: Path) -> None:
    """A new store may go into a missing folder, an empty one, or an existing store."""
    if root.exists() and not root.is_dir():
        raise StoreError(f"{root} exists and is not a folder")
    if root.is_dir() and not (root / CONFIG).exists():
        foreign = [p.name for p in root.iterdir() if p.name != LOCK and not _OWNED.match(p.name)]
        if foreign:
            raise StoreError(
                f"{root} is not empty and not a knowledge store (found {foreign[0]!r}); "
                "choose another folder"
            )


def fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def commit(root: Path, config: StoreConfig) -> None:
    """Make ``config`` current (atomic replace), then remove files it no longer names."""
    tmp = root / (CONFIG + ".tmp")
    tmp.write_text(config.to_json() + "\n", encoding="utf-8")
    fsync_file(tmp)
    os.replace(tmp, root / CONFIG)
    with contextlib.suppress(OSError):
        dir_fd = os.open(root, os.O_RDONLY)
        os.fsync(dir_fd)
        os.close(dir_fd)
    collect_garbage(root, config)


def collect_garbage(root: Path, config: StoreConfig) -> None:
    """Delete store files that ``config`` does not reference (older generations, crash leftovers)."""
    live = {config.index, CONFIG, LOCK}
    for s in config.segments:
        live.update(f"{s.name}.{suffix}" for suffix in SEGMENT_FILES)
    for p in root.iterdir():
        if p.name in live or not _OWNED.match(p.name):
            continue
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                p.unlink()
