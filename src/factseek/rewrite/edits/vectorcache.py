"""Sentence vectors kept on disk between runs: the rewriter's search results, embedded once.

``DiskCachedEncoder(inner)`` is an ``Encoder``: texts it has seen (in this process or, through
``$FACTSEEK_CACHE/rewrite-dt/vectors-<encoder>-<dim>.{keys,rows}.npy``, in an earlier one) are
not encoded again. ``rewrite run`` and ``check --rewrite default`` embed the title and snippet of
every hit their candidate edits retrieve; on a store those are the same texts call after call,
so a warm call encodes the claim and little else. The files are ``tables.RowCache``'s (16-byte
digests + float32 rows, rewritten atomically); past ``max_rows`` the oldest rows are dropped.
Concurrent runs may each write; the last write wins and the other's new rows are computed again
next time (a cache, never a source of truth).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import numpy as np

from factseek.ml.encode import Encoder

MAX_ROWS = 50_000  # 73 MB of 384-d rows


class DiskCachedEncoder:
    """An encoder whose rows are looked up on disk first; see the module docstring."""

    def __init__(self, inner: Encoder, *, max_rows: int = MAX_ROWS) -> None:
        from factseek.rewrite.transformer.tables import RowCache

        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.max_rows = max_rows
        safe = "".join(c if c.isalnum() else "_" for c in inner.name)[-60:]
        self._disk = RowCache(f"vectors-{safe}-{inner.dim}", inner.dim, np.float32)
        self._row = {k: i for i, k in enumerate(self._disk.keys.tolist())}
        self.encoded = 0  # texts this process had to encode (the rest came from the cache)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        from factseek.rewrite.transformer.tables import RowCache

        out = np.zeros((len(texts), self.dim), np.float32)
        # numpy's "S16" drops trailing NUL bytes, so keys are compared without them
        keys = [RowCache.digest(t).rstrip(b"\0") for t in texts]
        todo: dict[bytes, str] = {}
        for i, k in enumerate(keys):
            j = self._row.get(k)
            if j is None:
                todo.setdefault(k, texts[i])
            else:
                out[i] = self._disk.rows[j]
        if todo:
            rows = np.asarray(self.inner.encode(list(todo.values())), np.float32)
            self.encoded += len(todo)
            new = dict(zip(todo, rows, strict=True))
            for i, k in enumerate(keys):
                if k in new:
                    out[i] = new[k]
            self._add(list(todo), rows)
        return out

    def _add(self, keys: list[bytes], rows: np.ndarray) -> None:
        disk = self._disk
        disk.keys = np.concatenate([disk.keys, np.array(keys, "S16")])[-self.max_rows :]
        disk.rows = np.concatenate([disk.rows, rows])[-self.max_rows :]
        self._row = {k: i for i, k in enumerate(disk.keys.tolist())}
        with contextlib.suppress(OSError):  # a read-only cache still works in memory
            disk.save()
