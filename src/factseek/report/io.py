"""The formats: render a report (JSON, Markdown, HTML), write it atomically, read a JSON report back
(validated field by field), and the URLs a report holds."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from enum import StrEnum
from pathlib import Path
from typing import Any

from factseek.errors import DataError, InputError
from factseek.files import atomic_write
from factseek.redact import MESSAGE_KEYS, URL_KEYS, redact_text, redact_tree, redact_url
from factseek.report.html import render_html
from factseek.report.markdown import render_markdown
from factseek.sanitize import clean_text
from factseek.types import Report, to_dict


class Format(StrEnum):
    """A report format: ``json`` (complete, machine-readable), ``md`` or ``html`` (for people)."""

    json = "json"
    md = "md"
    html = "html"


def _clean_tree(obj: Any, key: str = "") -> Any:
    """JSON data with every string cleaned one for one; URLs and messages also redacted."""
    if isinstance(obj, str):
        text = clean_text(obj, keep_newlines=True, keep_length=True)
        if key in URL_KEYS:
            return redact_url(text)
        return redact_text(text) if key in MESSAGE_KEYS else text
    if isinstance(obj, list):
        return [_clean_tree(x, key) for x in obj]
    if isinstance(obj, dict):
        return {_clean_tree(str(k)): _clean_tree(v, str(k)) for k, v in obj.items()}
    return obj


def render_json(report: Report) -> str:
    """The complete report as indented JSON (``read_report`` reads it back; only control
    characters, which become spaces, and credentials in URLs and messages differ)."""
    data = _clean_tree(redact_tree(to_dict(report)))
    return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


RENDERERS: dict[Format, Callable[[Report], str]] = {
    Format.json: render_json,
    Format.md: render_markdown,
    Format.html: render_html,
}


def _format(fmt: Format | str) -> Format:
    try:
        return Format(fmt)
    except ValueError:
        raise InputError(
            f"unknown report format {fmt!r}; choose one of: {', '.join(RENDERERS)}"
        ) from None


def render(report: Report, fmt: Format | str = Format.json) -> str:
    """The report as text in ``fmt``: ``"json"`` (complete), ``"md"`` or ``"html"`` (one
    self-contained page). Untrusted text is escaped in every format; an unknown format is an
    ``InputError`` that lists the choices."""
    return RENDERERS[_format(fmt)](report)


def write_report(report: Report, path: str | Path, fmt: Format | str = Format.json) -> None:
    """Render ``report`` in ``fmt`` and write it to ``path`` atomically (a reader never sees half
    a file; the file gets the usual permissions, 0o666 less the umask)."""
    atomic_write(path, render(report, _format(fmt)))


#: File suffixes and the format each one means (``format_for_path``).
SUFFIXES = {
    ".json": Format.json,
    ".md": Format.md,
    ".markdown": Format.md,
    ".html": Format.html,
    ".htm": Format.html,
}


def format_for_path(path: str | Path) -> Format:
    """The format a file name asks for by its suffix; ``InputError`` for any other suffix."""
    try:
        return SUFFIXES[Path(path).suffix.lower()]
    except KeyError:
        raise InputError(
            f"cannot tell the report format from {Path(path).name!r}: name the format "
            f"({', '.join(RENDERERS)}) or use a suffix ({', '.join(SUFFIXES)})"
        ) from None


def report_from_data(data: Any, where: str) -> Report:
    """A report from JSON data, checked field by field (``factseek.validate``); ``DataError``
    naming ``where`` and the first bad field (``verdict.confidence``...) otherwise."""
    from factseek.validate import RecordError, record_from

    if not isinstance(data, dict) or not isinstance(data.get("claim"), dict):
        raise DataError("not a factseek report (no claim)", where)
    try:
        report = record_from(Report, data)
    except RecordError as e:
        raise DataError(f"not a factseek report: {e}", where) from None
    for i, r in enumerate(report.results):  # each hit has its decision (the renderers pair them)
        if len(r.hits) != len(r.decisions):
            raise DataError(
                f"not a factseek report: results[{i}]: {len(r.hits)} hits but "
                f"{len(r.decisions)} decisions",
                where,
            )
    return report


def read_report(path: str | Path) -> Report:
    """A report from a JSON file written by factseek (``render_json``, ``check -f json``, a batch's
    ``reports/*.json``), read with the input size cap (``factseek.files``) and checked
    field by field. ``DataError`` names the file (and the field) when it is not one."""
    from factseek.files import read_json

    path = Path(path)
    try:
        data = read_json(path, "report")
    except DataError:  # not UTF-8 or not JSON (a device, a size past the cap: InputError)
        raise DataError("not a JSON report (render reads the JSON format)", str(path)) from None
    return report_from_data(data, str(path))


def iter_urls(report: Report) -> Iterable[str]:
    """URLs of the documents a report kept (for run comparisons)."""
    return (d.url for d in report.documents)
