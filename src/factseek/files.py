"""Atomic file writes: a temporary file beside the target, then one rename.

A reader sees the old file or the new one, never half of one; a failed write leaves no
temporary file behind. Every module that writes results, caches or checkpoints uses these.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path: str | Path, suffix: str = ".tmp") -> Iterator[Path]:
    """A temporary path beside ``path`` to write to (for writers that take a file name: keep
    ``suffix`` when they infer the format from it); it replaces ``path`` when the block ends
    without an error, and is removed when it raises."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=suffix)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write(path: str | Path, data: str | bytes, *, fsync: bool = False) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` atomically; ``fsync``: also flush it to disk
    before the rename (for journals that must survive a crash)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with atomic_path(path) as tmp, tmp.open("wb") as f:
        f.write(raw)
        if fsync:
            f.flush()
            os.fsync(f.fileno())
