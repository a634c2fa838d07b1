"""Atomic file writes: a temporary file beside the target, then one rename.

A reader sees the old file or the new one, never half of one; a failed write leaves no
temporary file behind. Every module that writes results, caches or checkpoints uses these.
The new file gets the permissions of any newly created file (``0o666`` less the process's umask,
so ``-rw-r--r--`` under the usual umask 022), not the owner-only mode of a ``mkstemp`` file.
"""

from __future__ import annotations

import os
import secrets
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
    tmp = _create_temp(path, suffix)
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _create_temp(path: Path, suffix: str) -> Path:
    """Create an empty, new temporary file beside ``path``; the kernel applies the umask to
    mode 0o666 (``O_EXCL``: never an existing file, never through a symlink)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}{suffix}"
        try:
            os.close(os.open(tmp, flags, 0o666))
        except FileExistsError:
            continue
        return tmp
    raise FileExistsError(f"could not create a temporary file beside {path}")


def atomic_write(path: str | Path, data: str | bytes, *, fsync: bool = False) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` atomically; ``fsync``: also flush it to disk
    before the rename (for journals that must survive a crash)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with atomic_path(path) as tmp, tmp.open("wb") as f:
        f.write(raw)
        if fsync:
            f.flush()
            os.fsync(f.fileno())


def check_writable_dir(path: str | Path, what: str) -> Path:
    """Create folder ``path`` if needed and prove it writable; ``InputError`` (one line) if not.

    Called before expensive work starts, so a bad output path fails in a second, not after a run.
    """
    from factseek.errors import InputError

    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path, prefix=".write-test.")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise InputError(f"{what} {path} is not a writable folder: {e.strerror or e}") from None
    return path


def check_writable_file(path: str | Path, what: str) -> Path:
    """Prove that file ``path`` can be written (its folder is created if needed); ``InputError``."""
    from factseek.errors import InputError

    path = Path(path)
    if path.is_dir():
        raise InputError(f"{what} {path} is a folder; give a file name")
    check_writable_dir(path.parent if str(path.parent) else Path("."), what)
    if path.exists() and not os.access(path, os.W_OK):
        raise InputError(f"{what} {path} is not writable")
    return path
