"""Building a knowledge store and adding documents to it.

``build_store(sources, store)`` and ``add_to_store(sources, store)`` read JSONL/HTML inputs
(``factseek.store.sources``); ``write_documents(store, documents, mode=...)`` takes Documents
from Python. Documents are streamed to a new immutable segment file while they are tokenized
(``factseek.text.tokenize`` of title + text); the BM25 index over all segments is then written to
a new ``index-NNNNNN`` folder and the store switches to it with one atomic ``config.json``
replace (see ``factseek.store.layout``). Adding merges the old postings with the new ones
(O(postings), no re-tokenization) and recomputes every impact, since idf and the average
document length change.
"""

from __future__ import annotations

import os
import shutil
import time
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import numpy as np

from factseek.errors import DataError, StoreError
from factseek.files import check_writable_dir
from factseek.ml.encode import Encoder
from factseek.redact import redact_document
from factseek.store import blockmax, kernels
from factseek.store.analyze import Vocabulary, host_path, record_lines
from factseek.store.integrity import Sums, corrupt, files_in, sha256_of, write_sums
from factseek.store.layout import (
    CONFIG,
    FORMAT_VERSION,
    SEGMENT_FILES,
    SIDECAR,
    ChecksumFile,
    Segment,
    StoreConfig,
    check_writable_root,
    checksum_files,
    collect_garbage,
    commit,
    fsync_file,
    index_name,
    read_config,
    segment_name,
    write_lock,
)
from factseek.store.sources import DocumentSource, OnError
from factseek.types import Document

DEFAULT_K1 = 1.5
DEFAULT_B = 0.75
DENSE_BATCH = 256
DENSE_CHARS = 2000  # characters of title + text given to the encoder (MiniLM reads 256 tokens)

Mode = Literal["build", "add"]
ANALYZE_BATCH = 4096  # documents analyzed together (one numba pass for ASCII ones)


@dataclass(frozen=True, kw_only=True)
class WriteReport:
    """What a build or add did."""

    store: str
    added: int
    skipped: int
    n_docs: int
    seconds: float
    first_error: str = ""


def _progress(enabled: bool, in_bytes: bool) -> AbstractContextManager:
    """A rich progress bar over input bytes (or documents), or nothing."""
    if not enabled:
        return nullcontext(None)
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn() if in_bytes else MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )


class _Ingest:
    """Streams new documents into a segment file and collects what the index needs."""

    def __init__(self, root: Path, segment: str, old: _OldIndex, encoder: Encoder | None) -> None:
        self.path = root / f"{segment}.jsonl"
        self.segment = segment
        self.vocab = old.vocab
        self.hosts = old.hosts
        self.seen_ids = old.ids
        self.encoder = encoder
        self.term_ids: list[np.ndarray] = []  # per batch of documents: their term ids
        self.doc_lens: list[np.ndarray] = []  # per batch: each document's number of terms
        self._texts: list[str] = []  # lower-cased title + text of documents not yet analyzed
        self.days = array("i")
        self.host_id = array("i")
        self.flags = array("B")
        self.offsets = array("q", [0])
        self.card_offsets = array("q", [0])
        self.urls: list[str] = []
        self.ids: list[str] = []
        self.vectors: list[np.ndarray] = []
        self._pending: list[str] = []
        self.duplicates = 0

    def run(
        self,
        docs: Iterable[Document],
        on_dup: OnError,
        tick: Callable[[], None],
        where: Callable[[], str] | None = None,
    ) -> None:
        texts_append = self._texts.append
        offsets_append, ids_append, urls_append = (
            self.offsets.append,
            self.ids.append,
            self.urls.append,
        )
        days_append, host_append, flags_append = (
            self.days.append,
            self.host_id.append,
            self.flags.append,
        )
        seen, hosts = self.seen_ids, self.hosts
        pos = card_pos = 0
        cards_path = self.path.with_suffix(".cards.jsonl")
        with self.path.open("wb") as out, cards_path.open("wb") as cards:
            write, write_card = out.write, cards.write
            for n, doc in enumerate(docs, start=1):
                if doc.meta or "@" in doc.url or "=" in doc.url:  # else redaction changes nothing
                    doc = redact_document(doc)  # where stored URLs enter factseek: no credentials
                doc_id = doc.id or doc.url
                if doc_id in seen or _has_line_break(doc_id) or _has_line_break(doc.url):
                    if on_dup == "stop":
                        what = "duplicate document id" if doc_id in seen else "line break in id/url"
                        at = f"{where()}: " if where is not None else ""
                        raise DataError(f"{at}{what} {doc_id!r} (--on-error skip drops it)")
                    self.duplicates += 1
                    continue
                seen.add(doc_id)
                line, card = record_lines(doc, doc_id)
                write(line)
                pos += len(line)
                offsets_append(pos)
                write_card(card)
                card_pos += len(card)
                self.card_offsets.append(card_pos)
                texts_append((doc.title + "\n" + doc.text).lower())
                if len(self._texts) >= ANALYZE_BATCH:
                    self._analyze()
                days_append(doc.published.toordinal() if doc.published else 0)
                host, path = host_path(doc.url)
                host_append(hosts.setdefault(host, len(hosts)))
                flags_append(1 if path.lower().endswith(".pdf") else 0)
                urls_append(doc.url.lower())
                ids_append(doc_id)
                if self.encoder is not None:
                    self._pending.append((doc.title + "\n" + doc.text)[:DENSE_CHARS])
                    if len(self._pending) >= DENSE_BATCH:
                        self._encode()
                        tick()  # encoding is the slow part: show every batch
                if n % 1000 == 0:
                    tick()
            if self.encoder is not None and self._pending:
                self._encode()
            self._analyze()
            out.flush()
        fsync_file(self.path)
        fsync_file(cards_path)
        folder = self.path.parent
        np.save(folder / f"{self.segment}.offsets.npy", np.frombuffer(self.offsets, np.int64))
        np.save(
            folder / f"{self.segment}.cards.offsets.npy", np.frombuffer(self.card_offsets, np.int64)
        )
        if self.encoder is not None:
            dim = self.encoder.dim
            vecs = np.concatenate(self.vectors) if self.vectors else np.zeros((0, dim), np.float32)
            np.save(self.path.parent / f"{self.segment}.dense.npy", vecs.astype(np.float32))
        names = [f"{self.segment}.{suffix}" for suffix in SEGMENT_FILES if suffix != SIDECAR]
        sidecar = folder / f"{self.segment}.{SIDECAR}"
        write_sums(sidecar, files_in(folder, names))
        fsync_file(sidecar)

    def _analyze(self) -> None:
        """Term ids of the documents read since the last call (in order, so ids are given in
        order of first appearance, as one document at a time would)."""
        if self._texts:
            ids, lens = self.vocab.term_ids(self._texts)
            self.term_ids.append(ids)
            self.doc_lens.append(lens)
            self._texts.clear()  # in place: run() holds its append

    def _encode(self) -> None:
        assert self.encoder is not None
        vecs = np.asarray(self.encoder.encode(self._pending), dtype=np.float32)
        if vecs.shape != (len(self._pending), self.encoder.dim):
            raise StoreError(f"encoder {self.encoder.name} returned shape {vecs.shape}")
        self.vectors.append(vecs)
        self._pending = []

    @property
    def n(self) -> int:
        return len(self.ids)

    def terms_and_lengths(self) -> tuple[np.ndarray, np.ndarray]:
        """Term ids without stop words, and the number of terms of each new document."""
        if not self.term_ids:
            return np.zeros(0, np.int32), np.zeros(0, np.int32)
        return np.concatenate(self.term_ids), np.concatenate(self.doc_lens)


def _has_line_break(s: str) -> bool:
    return "\n" in s or "\r" in s


@dataclass(kw_only=True)
class _OldIndex:
    """The current index's vocabulary, hosts, ids and arrays (empty for a fresh build)."""

    vocab: Vocabulary
    hosts: dict[str, int]
    ids: set[str]
    folder: Path | None = None

    def __post_init__(self) -> None:
        self.n_terms = len(self.vocab.terms)  # the dicts grow during ingest; remember the old sizes
        self.n_hosts = len(self.hosts)


def _read_lines(path: Path) -> list[str]:
    text = path.read_bytes().decode("utf-8")  # no newline translation
    return text.split("\n")[:-1] if text else []


def _load_old(root: Path, cfg: StoreConfig | None) -> _OldIndex:
    if cfg is None or not cfg.n_docs:
        return _OldIndex(vocab=Vocabulary(), hosts={}, ids=set())
    folder = root / cfg.index
    try:
        terms = _read_lines(folder / "terms.txt")
        hosts = _read_lines(folder / "hosts.txt")
        ids = _read_lines(folder / "ids.txt")
    except (OSError, UnicodeDecodeError) as e:
        raise StoreError(f"{root} is corrupt: {e}") from None
    if len(terms) != cfg.n_terms or len(ids) != cfg.n_docs:
        raise StoreError(f"{root} is corrupt: term or id count differs from {CONFIG}")
    return _OldIndex(
        vocab=Vocabulary(terms),
        hosts={h: i for i, h in enumerate(hosts)},
        ids=set(ids),
        folder=folder,
    )


def _write_lines(path: Path, lines: Iterable[str], *, append_to: Path | None = None) -> None:
    if append_to is not None:
        shutil.copyfile(append_to, path)
    with path.open("a" if append_to is not None else "w", encoding="utf-8") as f:
        for line in lines:
            f.write(line)
            f.write("\n")


def _old_array(old: _OldIndex, name: str, dtype: type) -> np.ndarray:
    if old.folder is None:
        return np.zeros(0, dtype)
    return np.load(old.folder / f"{name}.npy", mmap_mode="r")


def _write_index(
    root: Path, folder: Path, cfg: StoreConfig, old: _OldIndex, new: _Ingest, n_old: int
) -> tuple[int, int]:
    """Write the merged index for old + new documents into ``folder``; returns (terms, postings)."""
    folder.mkdir()
    n_terms = len(new.vocab.terms)
    tokens, new_len = new.terms_and_lengths()
    indptr, pdoc, ptf = kernels.postings_from_tokens(tokens, new_len, n_old, n_terms)
    if old.folder is not None:
        indptr, pdoc, ptf = kernels.merge_postings(
            np.load(old.folder / "indptr.npy"),
            np.load(old.folder / "postings_doc.npy"),
            np.load(old.folder / "postings_tf.npy"),
            indptr,
            pdoc,
            ptf,
        )
    doc_len = np.concatenate([_old_array(old, "doc_len", np.int32), new_len])
    impact, term_max = kernels.bm25_impacts(indptr, pdoc, ptf, doc_len, cfg.k1, cfg.b)

    def cat(name: str, values: array, dtype: type) -> np.ndarray:
        fresh = np.frombuffer(values, dtype) if len(values) else np.zeros(0, dtype)
        return np.concatenate([_old_array(old, name, dtype), fresh])

    arrays = {
        "indptr": indptr,
        "postings_doc": pdoc,
        "postings_tf": ptf,
        "postings_impact": impact,
        "term_max": term_max,
        "blockmax": blockmax.block_maxima(indptr, impact, blockmax.BLOCK),
        "doc_len": doc_len,
        "days": cat("days", new.days, np.int32),
        "host_id": cat("host_id", new.host_id, np.int32),
        "url_flags": cat("url_flags", new.flags, np.uint8),
    }
    for name, arr in arrays.items():
        np.save(folder / f"{name}.npy", arr)
    new_terms = new.vocab.terms[old.n_terms :]
    new_hosts = list(new.hosts)[old.n_hosts :]
    prev = old.folder

    def prior(name: str) -> Path | None:
        return prev / name if prev is not None else None

    _write_lines(folder / "terms.txt", new_terms, append_to=prior("terms.txt"))
    _write_lines(folder / "hosts.txt", new_hosts, append_to=prior("hosts.txt"))
    _write_lines(folder / "ids.txt", new.ids, append_to=prior("ids.txt"))
    _write_lines(folder / "urls_lower.txt", new.urls, append_to=prior("urls_lower.txt"))
    write_sums(folder / SIDECAR, sorted(folder.iterdir()))
    for p in folder.iterdir():
        fsync_file(p)
    return n_terms, len(pdoc)


def write_documents(
    store: str | Path,
    documents: Iterable[Document],
    *,
    mode: Mode = "build",
    k1: float = DEFAULT_K1,
    b: float = DEFAULT_B,
    encoder: Encoder | None = None,
    on_duplicate: OnError = "stop",
    progress: bool = False,
    total_bytes: int = 0,
    bytes_read: Callable[[], int] | None = None,
    skipped: Callable[[], int] | None = None,
    where: Callable[[], str] | None = None,
    overwrite: bool = False,
) -> WriteReport:
    """Write ``documents`` as a new store (``mode="build"``; ``overwrite`` replaces one) or add them.

    ``k1``/``b`` apply to a build; an add keeps the store's. The store changes only at the final
    atomic commit: an exception before it leaves it as it was (new files are removed).
    """
    t0 = time.perf_counter()
    root = Path(store)
    if mode not in ("build", "add"):
        raise StoreError(f"mode must be 'build' or 'add', got {mode!r}")
    if mode == "build":
        check_writable_root(root)
        if (root / CONFIG).exists() and not overwrite:
            raise StoreError(f"{root} already holds a store; add to it, or replace it (--force)")
    else:
        read_config(root)  # a clear error before taking the lock
    check_writable_dir(root, "store folder")  # before reading any input
    with write_lock(root):
        current = read_config(root) if (root / CONFIG).exists() else None
        collect_garbage(root, current or StoreConfig())  # leftovers of a crashed write
        if mode == "add":
            assert current is not None
            base = current
            if base.dense_encoder and encoder is None:
                raise StoreError(
                    f"{root} has dense vectors ({base.dense_encoder}); an encoder is needed to add"
                )
            if encoder is not None and not base.dense_encoder and base.n_docs:
                raise StoreError(f"{root} has no dense vectors; rebuild it with --dense")
            if encoder is not None and base.dense_dim and encoder.dim != base.dense_dim:
                raise StoreError(
                    f"encoder dim {encoder.dim} differs from the store's {base.dense_dim}"
                )
            from factseek.store.reader import Store

            Store(root, base).verify()  # never bless a damaged store with fresh checksums
            old = _load_old(root, base)
        else:
            base = StoreConfig(k1=k1, b=b)
            old = _load_old(root, None)
        last = (
            max((int(s.name.split("-")[1]) for s in current.segments), default=0) if current else 0
        )
        seg = segment_name(last + 1)
        generation = (current.generation if current else 0) + 1
        ingest = _Ingest(root, seg, old, encoder)
        try:
            with _progress(progress, bool(total_bytes and bytes_read)) as bar:
                task = (
                    bar.add_task(f"{mode} {root.name}", total=total_bytes or None) if bar else None
                )

                def tick() -> None:
                    if bar is not None:
                        done = bytes_read() if bytes_read else ingest.n
                        bar.update(task, completed=done, description=f"{mode}: {ingest.n:,} docs")

                ingest.run(documents, on_duplicate, tick, where)
                tick()
                if ingest.n == 0:
                    collect_garbage(root, current or StoreConfig())
                    if mode == "build":
                        raise DataError("no documents were read", str(root))
                    return WriteReport(
                        store=str(root),
                        added=0,
                        skipped=(skipped() if skipped else 0) + ingest.duplicates,
                        n_docs=base.n_docs,
                        seconds=time.perf_counter() - t0,
                    )
                if bar is not None:
                    bar.update(task, description=f"indexing {ingest.n:,} docs")
                n_old = base.n_docs if mode == "add" else 0
                folder = root / index_name(generation)
                n_terms, n_postings = _write_index(root, folder, base, old, ingest, n_old)
            segments = (base.segments if mode == "add" else ()) + (
                Segment(name=seg, n_docs=ingest.n),
            )
            n_skipped = (skipped() if skipped else 0) + ingest.duplicates
            kept = base.checksums if mode == "add" else ()  # old segments' files, verified above
            checksums = (
                *(c for c in kept if not c.name.startswith("index-")),
                _record(root, f"{seg}.{SIDECAR}"),
                _record(root, f"{folder.name}/{SIDECAR}"),
            )
            cfg = replace(
                base,
                format_version=FORMAT_VERSION,
                checksums=tuple(sorted(checksums, key=lambda c: c.name)),
                generation=generation,
                index=folder.name,
                segments=segments,
                n_docs=n_old + ingest.n,
                n_terms=n_terms,
                n_postings=n_postings,
                dense_encoder=encoder.name if encoder is not None else "",
                dense_dim=encoder.dim if encoder is not None else 0,
                skipped_lines=(base.skipped_lines if mode == "add" else 0) + n_skipped,
                block_size=blockmax.BLOCK,
            )
        except BaseException:
            collect_garbage(root, current or StoreConfig())  # drop this attempt's files
            raise
        commit(root, cfg)  # the one atomic step; outside the cleanup above on purpose
    return WriteReport(
        store=str(root),
        added=ingest.n,
        skipped=n_skipped,
        n_docs=cfg.n_docs,
        seconds=time.perf_counter() - t0,
    )


@dataclass(frozen=True, kw_only=True)
class SealReport:
    """What ``seal_store`` did."""

    store: str
    verified: tuple[str, ...] = ()  # checksum files checked against every file they cover
    written: tuple[str, ...] = ()  # checksum files made from the files as they are now
    already_sealed: bool = False


def seal_store(store: str | Path, *, trust_contents: bool = False) -> SealReport:
    """Record a format 1 store's checksum files in its config.json (``factseek index seal``).

    The store's structure is validated, and every checksum file it has is verified against every
    file it covers. A missing or partial checksum file is refused unless ``trust_contents``, which
    writes one from the files as they are now (nothing can tell whether they were altered). A
    store sealed already is verified in full and left as it is.
    """
    from factseek.store.reader import Store

    root = Path(store)
    read_config(root)  # a clear error before taking the lock
    with write_lock(root):
        cfg = read_config(root)
        if cfg.sealed:
            Store(root, cfg).verify()
            return SealReport(store=str(root), already_sealed=True)
        Store(root, cfg, unsealed_ok=True)  # the structural pass (every posting in range)
        verified, written = [], []
        for rel, covers in checksum_files(cfg):
            sidecar = root / rel
            complete = False
            if sidecar.is_file():
                sums = Sums(root, sidecar.parent, sidecar)
                complete = set(covers) <= set(sums.files)
                if complete:
                    sums.check_sizes()
                    sums.verify_all()
                    verified.append(rel)
                    continue
            if not trust_contents:
                what = "covers only some of its files" if sidecar.exists() else "is missing"
                raise StoreError(
                    f"store {root}: checksum file {rel} {what}, so those files cannot be verified; "
                    f"rebuild the store (factseek index build SOURCES --store {root} --force), or "
                    "seal the files as they are now with --trust-contents"
                )
            absent = [name for name in covers if not (sidecar.parent / name).is_file()]
            if absent:
                raise corrupt(root, f"{absent[0]} is missing")
            tmp = sidecar.with_name(sidecar.name + ".tmp")
            write_sums(tmp, [sidecar.parent / name for name in covers])
            fsync_file(tmp)
            os.replace(tmp, sidecar)
            written.append(rel)
        sealed = replace(
            cfg,
            format_version=FORMAT_VERSION,
            checksums=tuple(_record(root, rel) for rel, _ in checksum_files(cfg)),
        )
        commit(root, sealed)
        Store(root, sealed)  # opens as sealed, or says why not
    return SealReport(store=str(root), verified=tuple(verified), written=tuple(written))


def _record(root: Path, rel: str) -> ChecksumFile:
    return ChecksumFile(name=rel, sha256=sha256_of(root / rel))


def _chain(sources: Sequence[DocumentSource]) -> Iterator[Document]:
    for s in sources:
        yield from s


def _from_sources(
    paths: Sequence[str | Path], store: str | Path, mode: Mode, on_error: OnError, **kw
) -> WriteReport:
    sources = [DocumentSource(p, on_error=on_error) for p in paths]
    report = write_documents(
        store,
        _chain(sources),
        mode=mode,
        on_duplicate=on_error,
        total_bytes=sum(s.total_bytes for s in sources),
        bytes_read=lambda: sum(s.bytes_read for s in sources),
        skipped=lambda: sum(s.skipped for s in sources),
        where=lambda: next((s.where for s in reversed(sources) if s.where), ""),
        **kw,
    )
    first = next((s.first_error for s in sources if s.first_error), "")
    return replace(report, first_error=first)


def build_store(
    sources: Sequence[str | Path],
    store: str | Path,
    *,
    on_error: OnError = "stop",
    k1: float = DEFAULT_K1,
    b: float = DEFAULT_B,
    encoder: Encoder | None = None,
    progress: bool = False,
    overwrite: bool = False,
) -> WriteReport:
    """A new store at ``store`` from JSONL files / HTML folders (``overwrite`` replaces one)."""
    return _from_sources(
        sources,
        store,
        "build",
        on_error,
        k1=k1,
        b=b,
        encoder=encoder,
        progress=progress,
        overwrite=overwrite,
    )


def add_to_store(
    sources: Sequence[str | Path],
    store: str | Path,
    *,
    on_error: OnError = "stop",
    encoder: Encoder | None = None,
    progress: bool = False,
) -> WriteReport:
    """Add documents to an existing store (atomically: all of them or none)."""
    return _from_sources(sources, store, "add", on_error, encoder=encoder, progress=progress)
