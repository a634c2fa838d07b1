"""Untrusted text made safe to print, render, store and name files after.

One small mechanism that every writer and face calls (like ``files.py``):

1. ``clean_text``: strips what can drive a terminal or fool a reader: ANSI/VT escape sequences
   (CSI ``ESC [ ... final``, OSC ``ESC ] ... BEL|ESC \\``, and other two-byte ``ESC x``), C0 and C1
   control characters and DEL (``\\t`` and ``\\n`` kept only with ``keep_newlines``), Unicode
   bidirectional overrides and isolates (U+202A-202E, U+2066-2069: "Trojan source" reordering), and
   lone surrogates (replaced by U+FFFD, since they cannot be written as UTF-8).
2. ``lone_surrogate``: the first lone surrogate in a string (input validation names it).
3. ``safe_name``: a file name from an untrusted id: ``[A-Za-z0-9._-]`` only, never ``.``/``..``
   or hidden, at most ``MAX_NAME`` characters; an id that had to change gets a hash suffix so two
   ids never share a name.
4. ``json_loads``: ``json.loads`` whose "nested too deeply" is a ``JSONDecodeError`` like any other
   malformed input, not a ``RecursionError``.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any
from urllib.parse import urlsplit

MAX_NAME = 100

_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"  # CSI: ESC [ params intermediates final
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: ESC ] ... BEL or ST (hyperlinks, titles)
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC strings
    r"|\x1b[ -~]?"  # any other escape (and a lone ESC)
    r"|\x9b[0-?]*[ -/]*[@-~]?"  # 8-bit CSI
    r"|\x9d[^\x07\x9c]*(?:\x07|\x9c)?"  # 8-bit OSC
)
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_CONTROLS_KEEP_NL = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def _replace(m: re.Match[str]) -> str:
    ch = m.group()
    if "\ud800" <= ch <= "\udfff":
        return "\ufffd"
    return " " if ch in "\t\n\x0b\x0c\r" else ""


def clean_text(text: str, *, keep_newlines: bool = False, keep_length: bool = False) -> str:
    """``text`` without escape sequences, control characters, bidi overrides or lone surrogates.

    Tabs and line breaks become spaces unless ``keep_newlines`` (then ``\\n`` and ``\\t`` stay).
    ``keep_length``: every character is replaced one for one (controls by a space, a lone
    surrogate by U+FFFD) and escape sequences lose only their ESC, so character offsets into the
    text stay valid (for the JSON report). Text without any of these is returned unchanged (the
    common case costs one regex scan).
    """
    text = str(text)
    if not keep_length and ("\x1b" in text or "\x9b" in text or "\x9d" in text):
        text = _ESCAPES.sub("", text)
    pattern = _CONTROLS_KEEP_NL if keep_newlines else _CONTROLS
    if not pattern.search(text):
        return text
    return pattern.sub(_replace_one if keep_length else _replace, text)


def _replace_one(m: re.Match[str]) -> str:
    return "\ufffd" if "\ud800" <= m.group() <= "\udfff" else " "


def lone_surrogate(text: str) -> str | None:
    """The first lone surrogate in ``text`` as ``\\udXXX`` (for error messages), or None."""
    m = _SURROGATE.search(text)
    return None if m is None else f"\\u{ord(m.group()):04x}"


def safe_name(identifier: str) -> str:
    """A file name for ``identifier`` that cannot leave its folder or collide with another id's."""
    name = _UNSAFE_NAME.sub("_", identifier).strip("._")[:MAX_NAME]
    if name == identifier and name:
        return name
    digest = hashlib.sha1(identifier.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{name[: MAX_NAME - 11]}-{digest}" if name else digest


def json_loads(text: str | bytes) -> Any:
    """``json.loads`` for untrusted input: input nested too deeply, or holding a lone surrogate
    escape (``"\\ud800"``, which no UTF-8 writer can write back), raises ``json.JSONDecodeError``
    like any other malformed JSON. Input without a ``\\ud``/``\\uD`` escape costs one scan."""
    try:
        obj = json.loads(text)
    except RecursionError:
        doc = text if isinstance(text, str) else text.decode("utf-8", "replace")
        raise json.JSONDecodeError("nested too deeply", doc[:100], 0) from None
    raw = text if isinstance(text, str) else text.decode("utf-8", "replace")
    if "\\ud" in raw or "\\uD" in raw:
        try:
            json.dumps(obj, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as e:
            bad = f"\\u{ord(e.object[e.start]):04x}"
            raise json.JSONDecodeError(
                f"lone surrogate {bad} (not valid text)", raw[:100], 0
            ) from None
    return obj


def safe_url(url: object) -> str:
    """The URL if it is http(s), else empty."""
    text = str(url or "")
    try:
        scheme = urlsplit(text).scheme.lower()
    except ValueError:
        return ""
    return text if scheme in ("http", "https") else ""
