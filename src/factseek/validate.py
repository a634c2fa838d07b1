"""JSON data checked against a record type, field by field, before it becomes a record.

``record_from(Report, data)`` walks the type hints of the ``factseek.types`` records and checks
every value against its field's declared type before ``types.from_dict`` builds the record:

1. a record or a mapping is a JSON object; a record's required fields are present and it has no
   unknown ones; a mapping's values have the mapping's value type;
2. ``str`` is a string; ``int`` an integer (not a boolean); ``float`` a finite number (an integer
   is accepted); ``bool`` a boolean; a date an ISO ``YYYY-MM-DD`` string (a datetime an ISO
   date-time); a ``Literal`` one of its values;
3. a tuple or list is a JSON array whose items have the item type (``tuple[A, B]``: exactly two);
4. ``None`` only where the type allows it (``X | None``); ``Any`` accepts anything.

The first problem raises ``RecordError`` (a ``DataError``) naming the field by its path from the
root, ``verdict.confidence: expected a number, got "x"`` or ``documents[0]: expected an object,
got null``, so a report that parses but has the wrong shape is one clear line, not a crash later
in a renderer. Reports are loaded through it by ``render``, ``compare-runs``, batch summaries and
the web app's history.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
import types as _pytypes
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from factseek import types as _records
from factseek.errors import DataError

T = TypeVar("T")


class RecordError(DataError):
    """JSON data does not have the shape of the record it should be; names the field."""


def _shown(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return "an object" if isinstance(value, dict) else "an array"
    text = json.dumps(value, ensure_ascii=False) if isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _fail(path: str, expected: str, value: Any) -> RecordError:
    return RecordError(f"{path or 'the record'}: expected {expected}, got {_shown(value)}")


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, globalns=vars(_records))


def _is_date(value: Any, kind: type) -> bool:
    if not isinstance(value, str):
        return False
    try:
        if kind is _dt.date:
            _dt.date.fromisoformat(value)
        else:
            _dt.datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def check_value(tp: Any, value: Any, path: str) -> None:
    """``RecordError`` naming ``path`` unless ``value`` (JSON data) fits type hint ``tp``."""
    if tp is Any or tp is object:
        return
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, _pytypes.UnionType):
        if value is None and type(None) in args:
            return
        options = [a for a in args if a is not type(None)]
        problems = []
        for option in options:
            try:
                check_value(option, value, path)
                return
            except RecordError as e:
                problems.append(e)
        raise problems[0] if len(options) == 1 else _fail(path, "another type", value)
    if value is None:
        raise _fail(path, _expected(tp), value)
    if origin is typing.Literal:
        if not any(value == a and type(value) is type(a) for a in args):
            raise _fail(path, "one of " + ", ".join(json.dumps(a) for a in args), value)
        return
    if tp is str:
        if not isinstance(value, str):
            raise _fail(path, "a string", value)
    elif tp is bool:
        if not isinstance(value, bool):
            raise _fail(path, "true or false", value)
    elif tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _fail(path, "an integer", value)
    elif tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _fail(path, "a number", value)
        if isinstance(value, float) and not math.isfinite(value):
            raise _fail(path, "a finite number", value)
    elif tp in (_dt.date, _dt.datetime):
        if not _is_date(value, tp):
            what = "a YYYY-MM-DD date" if tp is _dt.date else "an ISO date-time"
            raise _fail(path, what, value)
    elif isinstance(tp, type) and dataclasses.is_dataclass(tp):
        check_record(tp, value, path)
    elif origin in (tuple, list):
        if not isinstance(value, list):
            raise _fail(path, "an array", value)
        if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            if len(value) != len(args):
                raise _fail(path, f"an array of {len(args)} items", value)
            for i, (a, v) in enumerate(zip(args, value, strict=True)):
                check_value(a, v, f"{path}[{i}]")
            return
        item = args[0] if args else Any
        for i, v in enumerate(value):
            check_value(item, v, f"{path}[{i}]")
    elif origin in (dict, Mapping) or tp in (dict, Mapping):
        if not isinstance(value, dict):
            raise _fail(path, "an object", value)
        item = args[1] if len(args) == 2 else Any
        for k, v in value.items():
            check_value(item, v, f"{path}.{k}" if path else str(k))


def _expected(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if tp is str:
        return "a string"
    if tp in (int, float):
        return "a number"
    if tp is bool:
        return "true or false"
    if origin in (tuple, list):
        return "an array"
    return "an object" if origin in (dict, Mapping) or dataclasses.is_dataclass(tp) else "a value"


def check_record(cls: type, data: Any, path: str = "") -> None:
    """``RecordError`` naming the first field of ``data`` that does not fit record type ``cls``."""
    if not isinstance(data, dict):
        raise _fail(path, "an object", data)
    hints = _hints(cls)
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    names = {f.name for f in fields}
    for key in data:
        if key not in names:
            where = f"{path}.{key}" if path else str(key)
            raise RecordError(f"{where}: unknown field of {cls.__name__}")
    for f in fields:
        where = f"{path}.{f.name}" if path else f.name
        if f.name not in data:
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            if required:
                raise RecordError(f"{where}: missing (required)")
            continue
        check_value(hints[f.name], data[f.name], where)


def record_from(cls: type[T], data: Any) -> T:
    """The record of type ``cls`` that JSON ``data`` describes, checked field by field first."""
    check_record(cls, data)
    try:
        return _records.from_dict(cls, data)
    except (TypeError, ValueError, KeyError, AttributeError) as e:  # a case the checks missed
        raise RecordError(f"not a {cls.__name__} ({type(e).__name__}: {e})") from None
