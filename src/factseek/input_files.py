"""Input files read with a size cap, and their OS errors as one line.

Every file factseek reads whole (a report, a batch journal, an evidence bundle's logs, a data
set's JSON array) goes through ``read_input``, and every file it streams line by line (claims
files, JSON Lines data sets, reports in JSONL) through ``input_lines``:

1. at most ``input_limit()`` bytes are read from one file, 256 MiB unless the environment
   variable ``FACTSEEK_MAX_INPUT_BYTES`` (or the command line's ``--max-input-bytes``) says
   otherwise; a larger file, or an endless one (``/dev/zero``, a pipe that never closes), stops
   at the cap with ``InputError``, so memory stays bounded;
2. ``input_lines`` also caps each line (``max_line`` bytes), so a file without newlines never
   becomes one huge line;
3. OS errors become ``InputError`` naming the file: not found, a folder, a name too long, no
   permission, not readable.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from factseek.errors import DataError, InputError

ENV = "FACTSEEK_MAX_INPUT_BYTES"
DEFAULT_LIMIT = 256 * 2**20
CHUNK = 2**20


def input_limit() -> int:
    """The most bytes one input file may have (``FACTSEEK_MAX_INPUT_BYTES``, else 256 MiB)."""
    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return DEFAULT_LIMIT
    try:
        value = int(raw.replace("_", ""))
    except ValueError:
        raise InputError(f"{ENV}={raw[:40]!r} is not a number of bytes") from None
    if value < 1:
        raise InputError(f"{ENV} must be at least 1, got {value}")
    return value


def _shown(path: str | Path) -> str:
    text = str(path)
    return text if len(text) <= 120 else text[:60] + "..." + text[-40:]


def os_error(e: OSError, path: str | Path, what: str) -> InputError:
    """An OS error while opening or reading ``path`` as one line."""
    shown = _shown(path)
    if isinstance(e, FileNotFoundError):
        return InputError(f"{what} not found: {shown}")
    if isinstance(e, IsADirectoryError):
        return InputError(f"{shown} is a folder, not a {what}")
    if e.errno == errno.ENAMETOOLONG:
        return InputError(f"cannot read {what} {shown}: file name too long")
    return InputError(f"cannot read {what} {shown}: {e.strerror or type(e).__name__}")


@contextmanager
def os_errors(path: str | Path, what: str) -> Iterator[None]:
    """OS errors inside the block (a name too long for ``Path.exists``, a folder that cannot be
    listed) become ``InputError`` naming ``path``."""
    try:
        yield
    except OSError as e:
        raise os_error(e, e.filename or path, what) from None


def too_large(path: str | Path, what: str, limit: int) -> InputError:
    return InputError(
        f"{_shown(path)}: the {what} is larger than the input limit of {limit:,} bytes; "
        f"raise it with `factseek --max-input-bytes N ...` or {ENV}"
    )


def _open(path: str | Path, what: str) -> BinaryIO:
    try:
        return open(path, "rb")
    except OSError as e:
        raise os_error(e, path, what) from None


def read_input(path: str | Path, what: str = "file", *, limit: int | None = None) -> bytes:
    """The bytes of ``path``: at most ``limit`` (default ``input_limit()``), else ``InputError``."""
    limit = input_limit() if limit is None else limit
    parts: list[bytes] = []
    size = 0
    with _open(path, what) as f:
        try:
            while chunk := f.read(min(CHUNK, limit + 1 - size)):
                parts.append(chunk)
                size += len(chunk)
                if size > limit:
                    raise too_large(path, what, limit)
        except OSError as e:
            raise os_error(e, path, what) from None
    return b"".join(parts)


def input_lines(
    path: str | Path, what: str = "file", *, max_line: int, limit: int | None = None
) -> Iterator[tuple[int, bytes]]:
    """``(line number, raw line)`` for each line of ``path``, streamed; a line over ``max_line``
    bytes is a ``DataError`` naming it, a file over ``limit`` bytes an ``InputError``."""
    limit = input_limit() if limit is None else limit
    size = 0
    with _open(path, what) as f:
        n = 0
        while True:
            try:
                raw = f.readline(max_line + 1)
            except OSError as e:
                raise os_error(e, path, what) from None
            if not raw:
                return
            n += 1
            size += len(raw)
            if size > limit:
                raise too_large(path, what, limit)
            if len(raw) > max_line:
                raise DataError(f"line longer than {max_line:,} bytes", str(path), n)
            yield n, raw
