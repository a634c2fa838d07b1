"""Malformed data never leaves a loader as a Python error.

Loaders check the fields they know and raise ``DataError`` with a precise message; ``@loader``
is the seam behind those checks: any ``TypeError``, ``KeyError``, ``ValueError``... that a
record the checks did not foresee still raises (a nested list where a string was expected, a
number too large for a float) becomes ``DataError("malformed record (...)", file, line)``,
naming the line that the loader's reader last reported with ``at(path, line)``.

``as_paths`` turns a loader's path argument, given once, several times or not at all, into a
list (``--corpus`` of the formats that take several).
"""

from __future__ import annotations

import csv
import functools
import json
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TypeVar

from factseek.errors import DataError, FactseekError
from factseek.sanitize import json_loads

F = TypeVar("F", bound=Callable[..., Any])
MAX_LINE_BYTES = 64 * 2**20  # a longer line is malformed input, not a record

_WHERE: ContextVar[tuple[str, int | None] | None] = ContextVar("factseek_data_where", default=None)
_UNFORESEEN = (
    TypeError,
    AttributeError,
    KeyError,
    IndexError,
    ValueError,
    OverflowError,
    RecursionError,
    UnicodeError,
    csv.Error,
)


def as_paths(value: str | Path | Sequence[str | Path] | None) -> list[Path]:
    """One path, several, or none, as a list of paths (the ``--corpus`` of some formats)."""
    if value is None:
        return []
    if isinstance(value, str | Path):
        return [Path(value)]
    return [Path(p) for p in value]


def at(path: str | Path, line: int | None) -> None:
    """Record the file and line being read (for the message of an unforeseen error)."""
    _WHERE.set((str(path), line))


def loader(fn: F) -> F:
    """Turn unforeseen errors of a loader into ``DataError`` naming the file and line."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        token = _WHERE.set(None)
        try:
            return fn(*args, **kwargs)
        except FactseekError:
            raise
        except _UNFORESEEN as e:
            where = _WHERE.get()
            path, line = where if where is not None else (str(args[0]) if args else None, None)
            detail = " ".join(str(e).split())[:120]
            raise DataError(
                f"malformed record ({type(e).__name__}: {detail})", path, line
            ) from None
        finally:
            _WHERE.reset(token)

    return wrapper  # type: ignore[return-value]


def jsonl_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of a JSON Lines file, streamed; a line
    that is not UTF-8, not JSON or not an object raises ``DataError`` naming it."""
    from factseek.files import input_lines

    # one streamed reader with the input caps (factseek.files)
    for i, raw in input_lines(path, "data file", max_line=MAX_LINE_BYTES):
        at(path, i)
        if not raw.strip():
            continue
        try:
            obj = json_loads(raw.decode("utf-8-sig" if i == 1 else "utf-8"))
        except UnicodeDecodeError as e:
            raise DataError(f"not valid UTF-8 (byte {e.start})", str(path), i) from None
        except json.JSONDecodeError as e:
            raise DataError(f"invalid JSON: {e.msg}", str(path), i) from None
        if not isinstance(obj, dict):
            raise DataError("expected a JSON object", str(path), i)
        yield i, obj
