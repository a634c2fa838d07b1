"""Per-text rows for training, cached on disk: state embeddings, action masks, word vectors.

Every distinct query of a trajectory folder is encoded once (``state_table``), tagged once for
its action mask (``mask_table``) and its words looked up once (``word_table``); rows live in
``$FACTSEEK_CACHE/rewrite-dt`` (``RowCache``: 16-byte digests + rows, keyed by encoder or
editor), so runs on overlapping trajectories share the work. A long fill is saved to the cache
every ``SAVE_EVERY`` seconds as it goes, so a killed run keeps what it had encoded or tagged and
the next run starts from there.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from factseek.files import atomic_path, cache_root
from factseek.ml.encode import Encoder
from factseek.rewrite.transformer.editor import Editor, WordVectors

#: Seconds between saves of a long fill to the disk cache (a killed run keeps its rows).
SAVE_EVERY = 300.0


def _cache_dir() -> Path:
    return cache_root() / "rewrite-dt"


def _atomic_save_npy(path: Path, arr: np.ndarray) -> None:
    with atomic_path(path) as tmp, tmp.open("wb") as f:
        np.save(f, arr)


class RowCache:
    """Rows keyed by text, on disk: ``<name>.keys.npy`` (16-byte digests) + ``<name>.rows.npy``.

    Rows computed for one trajectory folder are reused for any other that shares texts (the
    ablation's runs, a run with extra STOP claims); both files are rewritten atomically.
    """

    def __init__(self, name: str, width: int, dtype: Any) -> None:
        self.keys_path = _cache_dir() / f"{name}.keys.npy"
        self.rows_path = _cache_dir() / f"{name}.rows.npy"
        self.width, self.dtype = width, np.dtype(dtype)
        self.keys = np.zeros(0, dtype="S16")
        self.rows = np.zeros((0, width), dtype=self.dtype)
        if self.keys_path.is_file() and self.rows_path.is_file():
            keys, rows = np.load(self.keys_path), np.load(self.rows_path)
            # rows are saved before keys: a kill between the two leaves extra rows at the end
            fits = rows.ndim == 2 and rows.shape[1] == width and rows.dtype == self.dtype
            if fits and len(rows) >= len(keys):
                self.keys, self.rows = keys, rows[: len(keys)]

    @staticmethod
    def digest(text: str) -> bytes:
        return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()

    def lookup(self, texts: Sequence[str], use: bool = True) -> tuple[np.ndarray, list[int]]:
        """(len(texts), width) rows (zeros where missing) and the indices of the missing texts;
        ``use=False`` ignores the cache (everything missing)."""
        out = np.zeros((len(texts), self.width), dtype=self.dtype)
        if not use:
            return out, list(range(len(texts)))
        where = {k: i for i, k in enumerate(self.keys.tolist())}
        missing = []
        for i, t in enumerate(texts):
            j = where.get(self.digest(t))
            if j is None:
                missing.append(i)
            else:
                out[i] = self.rows[j]
        return out, missing

    def add(self, texts: Sequence[str], rows: np.ndarray) -> None:
        if not len(texts):
            return
        self.keys = np.concatenate([self.keys, np.array([self.digest(t) for t in texts], "S16")])
        self.rows = np.concatenate([self.rows, rows.astype(self.dtype)])
        self.save()

    def save(self) -> None:
        """Write both files (atomically each)."""
        self.rows_path.parent.mkdir(parents=True, exist_ok=True)
        _atomic_save_npy(self.rows_path, self.rows)
        _atomic_save_npy(self.keys_path, self.keys)


def _fill(
    store: RowCache,
    texts: Sequence[str],
    out: np.ndarray,
    todo: list[int],
    rows: Callable[[list[str]], np.ndarray],
    *,
    batch_size: int,
    label: str,
    cache: bool,
    progress: bool,
) -> None:
    """``out[todo] = rows(texts[todo])`` in batches, adding them to ``store`` every
    ``SAVE_EVERY`` seconds and at the end (when ``cache``)."""
    saved, last = 0, time.monotonic()
    with progress_bar(progress) as bar:
        task = bar.add_task(label, total=len(todo))
        for i in range(0, len(todo), batch_size):
            idx = todo[i : i + batch_size]
            out[idx] = rows([texts[j] for j in idx])
            bar.update(task, advance=len(idx))
            done = i + len(idx)
            if cache and time.monotonic() - last > SAVE_EVERY:
                store.add([texts[j] for j in todo[saved:done]], out[todo[saved:done]])
                saved, last = done, time.monotonic()
    if cache:
        store.add([texts[j] for j in todo[saved:]], out[todo[saved:]])


def state_table(
    texts: Sequence[str],
    encoder: Encoder,
    *,
    batch_size: int = 256,
    cache: bool = True,
    progress: bool = True,
) -> np.ndarray:
    """(len(texts), dim) float32 embeddings; only texts not in the disk cache are encoded."""
    store = RowCache(_key("states", encoder.name, str(encoder.dim)), encoder.dim, np.float32)
    out, todo = store.lookup(texts, use=cache)
    _fill(store, texts, out, todo, encoder.encode, batch_size=batch_size,
          label="encoding queries", cache=cache, progress=progress)  # fmt: skip
    return out.astype(np.float32)


def mask_table(
    texts: Sequence[str],
    editor: Editor,
    max_positions: int,
    *,
    batch_size: int = 512,
    cache: bool = True,
    progress: bool = True,
) -> np.ndarray:
    """(len(texts), n_kinds * max_positions + 1) bool: allowed actions, STOP last (always)."""
    n_actions = len(editor.kinds) * max_positions + 1
    store = RowCache(_key("masks", editor.name, str(max_positions)), n_actions, bool)
    out, todo = store.lookup(texts, use=cache)

    def rows(chunk: list[str]) -> np.ndarray:
        m = editor.masks(chunk, max_positions)  # (b, kinds, P)
        return np.concatenate([m.reshape(len(chunk), -1), np.ones((len(chunk), 1), bool)], 1)

    _fill(store, texts, out, todo, rows, batch_size=batch_size, label="tagging queries",
          cache=cache, progress=progress)  # fmt: skip
    return out  # STOP (last column) is allowed in every row, cached or new


def word_table(
    texts: Sequence[str],
    editor: Editor,
    encoder: Encoder,
    max_positions: int,
    *,
    cache: bool = True,
    progress: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Word vectors of every text, as ``(ids, vectors)``: ``ids`` (len(texts), max_positions, 2)
    int64 rows of ``vectors`` (V + 1, dim) float32, whose last row (zeros) stands for "no word".
    Pairs are ``Editor.words``: the word at each position, the word SWAP/ADD would write."""
    pairs: list[list[tuple[str, str]]] = []
    with progress_bar(progress) as bar:
        task = bar.add_task("reading words", total=len(texts))
        for i in range(0, len(texts), 512):
            chunk = texts[i : i + 512]
            pairs.extend(editor.words(chunk, max_positions))
            bar.update(task, advance=len(chunk))
    vocab = sorted({w for row in pairs for pair in row for w in pair if w})
    row_of = {w: j for j, w in enumerate(vocab)}
    none = len(vocab)
    ids = np.full((len(texts), max_positions, 2), none, dtype=np.int64)
    for i, row in enumerate(pairs):
        for p, pair in enumerate(row[:max_positions]):
            ids[i, p] = [row_of.get(w, none) for w in pair]
    store = RowCache(_key("words", encoder.name, str(encoder.dim)), encoder.dim, np.float32)
    vectors, todo = store.lookup(vocab, use=cache)
    if todo:
        vectors[todo] = WordVectors(encoder).vectors([vocab[j] for j in todo])
        if cache:
            store.add([vocab[j] for j in todo], vectors[todo])
    return ids, np.concatenate([vectors, np.zeros((1, encoder.dim), np.float32)])


def _key(*parts: str) -> str:
    h = hashlib.blake2b(digest_size=16)
    for p in parts:
        h.update(p.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


def progress_bar(enabled: bool) -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    return Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        disable=not enabled,
        transient=True,
    )
