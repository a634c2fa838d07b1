"""Opening a knowledge store read-only: memory-mapped arrays, documents by number, info.

``Store.open(path)`` validates ``config.json`` (which names every checksum file with its
SHA-256; a format 1 store without that record is refused), every file's size and checksum record, every
array's shape against it and the small arrays' checksums (``factseek.store.integrity``), so a
missing or damaged store fails at once with one ``StoreError`` line rather than deep inside a
search; the large files are verified block by block as reads first touch them (posting lists
before a query is scored, JSONL lines before they are parsed). Documents are read lazily: a
document number maps to a segment and a byte range of its JSONL.
"""

from __future__ import annotations

import datetime as _dt
import json
import mmap
import os
from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from tokenize import TokenError
from typing import Any

import numpy as np

from factseek.errors import StoreError
from factseek.store.filters import GateCache, UrlTable
from factseek.store.integrity import (
    Sums,
    corrupt,
    load_sealed,
    unsealed,
    validate_structure,
)
from factseek.store.layout import StoreConfig, checksum_files, read_config
from factseek.types import DateEvidence, Document


@dataclass(frozen=True, kw_only=True)
class StoreInfo:
    """What ``factseek index info`` prints."""

    path: str
    format_version: int
    n_docs: int
    n_terms: int
    n_postings: int
    n_segments: int
    dated: int
    undated: int
    first_date: _dt.date | None
    last_date: _dt.date | None
    domains: tuple[tuple[str, int], ...]  # most frequent URL hosts with their counts
    n_domains: int
    k1: float
    b: float
    analyzer: str
    dense_encoder: str
    dense_dim: int
    skipped_lines: int


def _verified(sums: Sums | None, path: Path) -> None:
    if sums is not None:
        sums.verify(path.name)


def _load(path: Path, dtype: str, length: int, sums: Sums | None = None) -> np.ndarray:
    """A memory-mapped 1-D array; with ``sums``, checked against its checksum first."""
    root = path.parent if sums is None else sums.root
    _verified(sums, path)
    try:
        arr = np.load(path, mmap_mode="r")
    except (OSError, ValueError, EOFError, SyntaxError, TokenError) as e:  # a garbled header
        raise corrupt(root, f"{path.name} is missing or unreadable ({e})") from None
    if arr.dtype != np.dtype(dtype) or arr.ndim != 1 or len(arr) != length:
        raise corrupt(root, f"{path.name} has dtype {arr.dtype} and shape {arr.shape}")
    return np.asarray(arr)


def _lines(path: Path, count: int, sums: Sums | None = None) -> list[str]:
    root = path.parent if sums is None else sums.root
    _verified(sums, path)
    try:
        text = path.read_bytes().decode("utf-8")  # no newline translation
    except (OSError, UnicodeDecodeError) as e:
        raise corrupt(root, f"{path.name} is missing or unreadable ({e})") from None
    lines = text.split("\n")[:-1] if text else []
    if len(lines) != count:
        raise corrupt(root, f"{path.name} has {len(lines)} lines, expected {count}")
    return lines


class _Lines:
    """One segment's JSONL file (memory-mapped) with its line offsets."""

    def __init__(self, root: Path, stem: str, n: int, sums: Sums | None) -> None:
        self.root = root
        self.path = root / f"{stem}.jsonl"
        self.name = self.path.name
        self.sums = sums
        self.offsets = _load(root / f"{stem}.offsets.npy", "int64", n + 1, sums)
        if n and (self.offsets[0] != 0 or bool(np.any(np.diff(self.offsets) < 0))):
            raise corrupt(root, f"{stem}.offsets.npy is not ordered")
        try:
            with self.path.open("rb") as f:
                size = os.fstat(f.fileno()).st_size
                self.data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        except (OSError, ValueError) as e:
            raise corrupt(root, f"{self.path.name} is missing or unreadable ({e})") from None
        if size != int(self.offsets[-1]):
            raise corrupt(root, f"{self.path.name}'s size differs from its offsets")

    def raw(self, j: int) -> bytes:
        a, b = self.offsets[j : j + 2].tolist()
        if self.sums is not None:
            self.sums.verify(self.name, a, b)
        return self.data[a:b]

    def raws(self, js: list[int]) -> list[bytes]:
        """``[self.raw(j) for j in js]`` with the offsets gathered at once."""
        at = np.asarray(js, np.int64)
        starts, ends = self.offsets[at].tolist(), self.offsets[at + 1].tolist()
        sums, data, name = self.sums, self.data, self.name
        if sums is not None and not sums.fully_verified(name):
            for a, b in zip(starts, ends, strict=True):
                sums.verify(name, a, b)
        return [data[a:b] for a, b in zip(starts, ends, strict=True)]

    def json(self, j: int) -> Any:
        try:
            return json.loads(self.raw(j))
        except ValueError:
            raise corrupt(self.root, f"line {j + 1} of {self.path.name} is unreadable") from None


class Store:
    """A knowledge store opened read-only."""

    def __init__(self, root: Path, config: StoreConfig, *, unsealed_ok: bool = False) -> None:
        """Open ``config``'s store; ``unsealed_ok`` (only for ``seal_store``) admits format 1."""
        self.root = root
        self.config = config
        if not config.sealed and not unsealed_ok:
            raise unsealed(root)
        n, idx = config.n_docs, root / config.index
        if not idx.is_dir() or sum(s.n_docs for s in config.segments) != n:
            raise corrupt(root, "the index folder or the segment counts do not match config.json")
        recorded = {c.name: c.sha256 for c in config.checksums}
        loaded: list[Sums | None] = []
        for rel, covers in checksum_files(config):
            sidecar = root / rel
            if config.sealed:
                loaded.append(load_sealed(root, sidecar.parent, sidecar, covers, recorded.get(rel)))
            else:  # sealing: checksum files are checked by seal_store, structure below
                loaded.append(None)
        sums = self._sums = loaded[0]
        self._seg_sums = loaded[1:]
        self.indptr = _load(idx / "indptr.npy", "int64", config.n_terms + 1, sums)
        if int(self.indptr[-1]) != config.n_postings:
            raise corrupt(root, "the postings count differs from config.json")
        # the posting arrays are large: verified per posting list as queries touch them
        self.postings_doc = _load(idx / "postings_doc.npy", "int32", config.n_postings)
        self.postings_impact = _load(idx / "postings_impact.npy", "float32", config.n_postings)
        self.term_max = _load(idx / "term_max.npy", "float32", config.n_terms, sums)
        self.doc_len = _load(idx / "doc_len.npy", "int32", n, sums)
        self.days = _load(idx / "days.npy", "int32", n, sums)
        self.host_id = _load(idx / "host_id.npy", "int32", n, sums)
        self.url_flags = _load(idx / "url_flags.npy", "uint8", n, sums)
        self.hosts = _lines(idx / "hosts.txt", int(self.host_id.max()) + 1 if n else 0, sums)
        validate_structure(
            root,
            self.indptr,
            self.postings_doc if sums is None else None,  # no checksums: check every posting
            n,
            len(self.hosts),
            self.host_id,
            self.days,
        )
        self._headers = {
            name: (idx / name).stat().st_size - 4 * config.n_postings
            for name in ("postings_doc.npy", "postings_impact.npy")
        }
        self._docs: list[_Lines] = []
        self._cards: list[_Lines] = []
        self._starts: list[int] = []  # first document number of each segment
        start = 0
        for seg, seg_sums in zip(config.segments, self._seg_sums, strict=True):
            self._docs.append(_Lines(root, seg.name, seg.n_docs, seg_sums))
            self._cards.append(_Lines(root, f"{seg.name}.cards", seg.n_docs, seg_sums))
            self._starts.append(start)
            start += seg.n_docs

    @classmethod
    def open(cls, path: str | Path) -> Store:
        root = Path(path).expanduser()
        return cls(root, read_config(root))

    def __len__(self) -> int:
        return self.config.n_docs

    # ------------------------------------------------------------------ integrity

    def check_postings(self, terms: np.ndarray) -> None:
        """Verify the posting lists of ``terms`` (once each) before a kernel reads them."""
        sums = self._sums
        if sums is None:
            return
        names = ("postings_doc.npy", "postings_impact.npy")
        if all(sums.fully_verified(name) for name in names):
            return
        indptr = self.indptr
        for t in terms.tolist():
            a, b = int(indptr[t]), int(indptr[t + 1])
            for name in names:
                head = self._headers[name]
                sums.verify(name, head + 4 * a, head + 4 * b)

    def verify(self) -> int:
        """Verify every file of the store in full (``factseek index verify``; before an add);
        returns how many files were checked (every data file, once the store is sealed)."""
        checked = 0
        for sums in (self._sums, *self._seg_sums):
            if sums is not None:
                sums.verify_all()
                checked += len(sums.files)
        return checked

    def fingerprint(self) -> str:
        """A digest of what this store holds: its config and the recorded size and checksums of
        every file. Two copies (nodes of a cluster) with one fingerprint hold the same bytes once
        each has passed ``verify``; a store without checksums is fingerprinted by its config."""
        import hashlib

        h = hashlib.sha256(self.config.to_json().encode("utf-8"))
        for sums in (self._sums, *self._seg_sums):
            if sums is not None:
                h.update(json.dumps(sums.files, sort_keys=True).encode("utf-8"))
        return h.hexdigest()

    # ------------------------------------------------------------------ lazily loaded tables

    def _index_file(self, name: str) -> Path:
        """A file of the opened generation; a clear error if a later write removed it."""
        path = self.root / self.config.index / name
        if not path.exists():
            try:
                now = read_config(self.root).generation
            except StoreError:
                now = self.config.generation
            if now != self.config.generation:
                raise StoreError(
                    f"store {self.root} changed since it was opened (generation "
                    f"{self.config.generation} -> {now}); open it again"
                )
        return path

    @cached_property
    def vocab(self) -> dict[str, int]:
        terms = _lines(self._index_file("terms.txt"), self.config.n_terms, self._sums)
        return {t: i for i, t in enumerate(terms)}

    @cached_property
    def block_max(self) -> tuple[int, np.ndarray, np.ndarray] | None:
        """(block size, block pointers per term, ``blockmax.npy``), verified in full; ``None``
        for a store written before block maxima (its searches use the plain kernel)."""
        size = self.config.block_size
        if not size:
            return None
        if not isinstance(size, int) or not 0 < size <= 1 << 20:
            raise corrupt(self.root, f"config.json has block_size {size!r}")
        from factseek.store.blockmax import block_pointers

        bptr = block_pointers(self.indptr, size)
        path = self._index_file("blockmax.npy")
        return size, bptr, _load(path, "float32", int(bptr[-1]), self._sums)

    @cached_property
    def ids(self) -> dict[str, int]:
        ids = _lines(self._index_file("ids.txt"), self.config.n_docs, self._sums)
        return {d: i for i, d in enumerate(ids)}

    @cached_property
    def gates(self) -> GateCache:
        path = self._index_file("urls_lower.txt")
        _verified(self._sums, path)
        try:
            urls = UrlTable(path.read_bytes())
        except OSError as e:
            raise StoreError(f"store file {path} is missing: {e}") from None
        if len(urls) != len(self):
            raise StoreError(f"store file {path} is corrupt: wrong number of URLs")
        return GateCache(self.days, self.hosts, self.host_id, self.url_flags, urls)

    def dense(self) -> list[tuple[int, np.ndarray]]:
        """(first document number, float32 (n, dim) memory map) per segment."""
        out = []
        for i, seg in enumerate(self.config.segments):
            path = self.root / f"{seg.name}.dense.npy"
            _verified(self._seg_sums[i], path)
            try:
                arr = np.load(path, mmap_mode="r")
            except (OSError, ValueError, SyntaxError, TokenError) as e:
                raise StoreError(f"store file {path} is missing or corrupt: {e}") from None
            if arr.shape != (seg.n_docs, self.config.dense_dim) or arr.dtype != np.float32:
                raise StoreError(f"store file {path} is corrupt (shape {arr.shape})")
            out.append((self._starts[i], np.asarray(arr)))
        return out

    # ------------------------------------------------------------------ documents

    def _locate(self, i: int) -> tuple[int, int]:
        if not 0 <= i < len(self):
            raise StoreError(f"document number {i} out of range (store has {len(self)})")
        s = bisect_right(self._starts, i) - 1
        return s, i - self._starts[s]

    def record(self, i: int) -> dict[str, Any]:
        """The stored JSON object of document number ``i``."""
        s, j = self._locate(i)
        return self._docs[s].json(j)

    def cards(self, nums: Sequence[int]) -> list[list[str]]:
        """``[id, url, title, published, snippet]`` of each document number (no text parsed)."""
        if len(self._cards) == 1:  # one segment: document numbers are line numbers
            n = len(self)
            for i in nums:
                if not 0 <= i < n:
                    raise StoreError(f"document number {i} out of range (store has {n})")
            lines = self._cards[0].raws(list(nums))
        else:
            lines = []
            for i in nums:
                s, j = self._locate(i)
                lines.append(self._cards[s].raw(j))
        try:
            return json.loads(b"[" + b",".join(lines) + b"]")
        except ValueError:
            raise StoreError(f"{self.root}: a hit card is corrupt") from None

    def document(self, i: int) -> Document:
        rec = self.record(i)
        published = _dt.date.fromisoformat(rec["published"]) if rec.get("published") else None
        modified = _dt.date.fromisoformat(rec["modified"]) if rec.get("modified") else None
        return Document(
            url=rec["url"],
            text=rec["text"],
            title=rec.get("title", ""),
            published=published,
            domain=rec.get("domain", ""),
            id=rec["id"],
            date_evidence=(DateEvidence(source="store", date=published),) if published else (),
            meta=rec.get("meta", {}),
            modified=modified,
        )

    def documents(self) -> list[Document]:
        return [self.document(i) for i in range(len(self))]

    # ------------------------------------------------------------------ info

    def info(self, top_domains: int = 10) -> StoreInfo:
        c = self.config
        dated = self.days[self.days > 0]
        counts = Counter(dict(enumerate(np.bincount(self.host_id, minlength=len(self.hosts)))))
        top = tuple((self.hosts[h], int(n)) for h, n in counts.most_common(top_domains) if n)
        return StoreInfo(
            path=str(self.root),
            format_version=c.format_version,
            n_docs=c.n_docs,
            n_terms=c.n_terms,
            n_postings=c.n_postings,
            n_segments=len(c.segments),
            dated=len(dated),
            undated=c.n_docs - len(dated),
            first_date=_dt.date.fromordinal(int(dated.min())) if len(dated) else None,
            last_date=_dt.date.fromordinal(int(dated.max())) if len(dated) else None,
            domains=top,
            n_domains=int(np.count_nonzero(np.bincount(self.host_id))) if c.n_docs else 0,
            k1=c.k1,
            b=c.b,
            analyzer=c.analyzer,
            dense_encoder=c.dense_encoder,
            dense_dim=c.dense_dim,
            skipped_lines=c.skipped_lines,
        )
