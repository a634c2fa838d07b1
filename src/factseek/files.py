"""Files in and out: atomic writes, and input files read with a size cap.

**Writing.** Atomic file writes: a temporary file beside the target, then one rename.

A reader sees the old file or the new one, never half of one; a failed write leaves no
temporary file behind. Every module that writes results, caches or checkpoints uses these.
The new file gets the permissions of any newly created file (``0o666`` less the process's umask,
so ``-rw-r--r--`` under the usual umask 022), not the owner-only mode of a ``mkstemp`` file.

**Reading.** Input files read with a size cap, and their OS errors as one line.

Every side file factseek reads whole (a report, a rating scale, a store's config and checksum
files, verdict rules, a model folder's config, a batch journal, an evidence bundle's logs, a data
set's JSON array) goes through ``read_input`` (``read_json`` for JSON), and every file it streams
line by line (claims files, JSON Lines data sets, reports in JSONL) through ``input_lines``:

1. at most ``input_limit()`` bytes are read from one file, 256 MiB unless the environment
   variable ``FACTSEEK_MAX_INPUT_BYTES`` (or the command line's ``--max-input-bytes``) says
   otherwise; small side files have a fixed, smaller cap (``SIDE_LIMIT``, 16 MiB: rating
   scales, configs, rules). A larger file, or an endless one (a pipe that never closes), stops
   at the cap with ``InputError`` naming the cap, so memory stays bounded;
2. a device (``/dev/zero``, ``/dev/urandom``, a terminal) is refused before anything is read;
   a regular file or a pipe is read;
3. ``input_lines`` also caps each line (``max_line`` bytes), so a file without newlines never
   becomes one huge line;
4. OS errors become ``InputError`` naming the file: not found, a folder, a name too long, no
   permission, not readable;
5. ``read_json`` decodes UTF-8 with or without a byte-order mark; text that is not UTF-8 or not
   JSON is a ``DataError`` naming the file.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from factseek.errors import DataError, InputError


def cache_root() -> Path:
    """Where factseek keeps caches: ``$FACTSEEK_CACHE``, else ``$XDG_CACHE_HOME/factseek``, else
    ``~/.cache/factseek``."""
    if os.environ.get("FACTSEEK_CACHE"):
        return Path(os.environ["FACTSEEK_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "factseek"


@contextmanager
def atomic_path(path: str | Path, suffix: str = ".tmp") -> Iterator[Path]:
    """A temporary path beside ``path`` to write to (for writers that take a file name: keep
    ``suffix`` when they infer the format from it); it replaces ``path`` when the block ends
    without an error, and is removed when it raises."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _create_temp(path, suffix)
    mode = os.stat(tmp).st_mode & 0o777  # what a new file gets here
    try:
        yield tmp
        if (
            os.stat(tmp).st_mode & 0o777 != mode
        ):  # a writer that made the file anew (safetensors: 0600)
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextmanager
def atomic_dir(path: str | Path, ready: Callable[[Path], bool]) -> Iterator[Path]:
    """A new temporary folder beside ``path`` to fill (a cache made once); when the block ends
    without an error it replaces ``path`` (an older folder that is not ``ready`` is removed
    first), so a reader never sees half of it. When another process put a ready folder there
    first, that one stays. The temporary folder never outlives the block."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}"
    tmp.mkdir()  # the mode any new folder gets (mkdtemp's is owner-only)
    try:
        yield tmp
        if path.exists() and not ready(path):
            shutil.rmtree(path, ignore_errors=True)
        try:
            os.replace(tmp, path)
        except OSError:  # another process won the race: use its copy
            if not ready(path):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


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


# ----------------------------------------------------------------------------- reading

ENV = "FACTSEEK_MAX_INPUT_BYTES"
DEFAULT_LIMIT = 256 * 2**20
#: The cap for small side files (rating scales, configs, rules), not changed by the input limit.
SIDE_LIMIT = 16 * 2**20
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


def size_words(n: int) -> str:
    """ "16 MiB (16,777,216 bytes)", or "100 bytes" below a MiB."""
    if n >= 2**20 and n % 2**20 == 0:
        return f"{n // 2**20:,} MiB ({n:,} bytes)"
    return f"{n:,} bytes"


def too_large(path: str | Path, what: str, limit: int, *, fixed: bool = False) -> InputError:
    if fixed:
        return InputError(
            f"{_shown(path)}: the {what} is larger than {size_words(limit)}, the most factseek "
            f"reads for one"
        )
    return InputError(
        f"{_shown(path)}: the {what} is larger than the input limit of {size_words(limit)}; "
        f"raise it with `factseek --max-input-bytes N ...` or {ENV}"
    )


def _open(path: str | Path, what: str) -> BinaryIO:
    """``path`` open for reading; a device (``/dev/zero``, a terminal) is refused unread."""
    try:
        f = open(path, "rb")  # noqa: SIM115 (returned to the caller's ``with``)
    except OSError as e:
        raise os_error(e, path, what) from None
    try:
        mode = os.fstat(f.fileno()).st_mode
    except OSError as e:
        f.close()
        raise os_error(e, path, what) from None
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISSOCK(mode):
        f.close()
        raise InputError(f"{_shown(path)} is a device, not a {what}; give a regular file")
    return f


def read_input(path: str | Path, what: str = "file", *, limit: int | None = None) -> bytes:
    """The bytes of ``path``: at most ``limit`` (default ``input_limit()``, which the user can
    raise), else ``InputError`` naming the cap."""
    fixed = limit is not None
    limit = input_limit() if limit is None else limit
    parts: list[bytes] = []
    size = 0
    with _open(path, what) as f:
        try:
            while chunk := f.read(min(CHUNK, limit + 1 - size)):
                parts.append(chunk)
                size += len(chunk)
                if size > limit:
                    raise too_large(path, what, limit, fixed=fixed)
        except OSError as e:
            raise os_error(e, path, what) from None
    return b"".join(parts)


def read_json(path: str | Path, what: str = "file", *, limit: int | None = None) -> Any:
    """The JSON in ``path``, read by ``read_input`` (so capped), as UTF-8 with or without a
    byte-order mark; ``DataError`` naming the file when it is not UTF-8 or not JSON (nested too
    deeply, a lone surrogate escape: ``sanitize.json_loads``)."""
    from factseek.sanitize import json_loads

    raw = read_input(path, what, limit=limit)
    try:
        return json_loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as e:
        raise DataError(f"not UTF-8 text (byte {e.start})", str(path)) from None
    except json.JSONDecodeError as e:
        raise DataError(f"not valid JSON ({e})", str(path)) from None


def input_lines(
    path: str | Path, what: str = "file", *, max_line: int, limit: int | None = None
) -> Iterator[tuple[int, bytes]]:
    """``(line number, raw line)`` for each line of ``path``, streamed; a line over ``max_line``
    bytes is a ``DataError`` naming it, a file over ``limit`` bytes an ``InputError``."""
    fixed = limit is not None
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
                raise too_large(path, what, limit, fixed=fixed)
            if len(raw) > max_line:
                raise DataError(f"line longer than {max_line:,} bytes", str(path), n)
            yield n, raw
