"""Where store documents come from: JSONL files and folders of HTML pages.

JSONL: one object per line with ``url``, ``text``, optional ``title``, ``published`` and
``modified`` (the last modification; each ``YYYY-MM-DD``, an ISO date-time, or empty), ``id``
(default: the URL) and ``domain`` (default: the URL's host); every other field is kept in
``Document.meta`` (non-strings as JSON).
HTML: every ``*.html``/``*.htm`` file under a folder (sorted), main text, title and date by
``factseek.pages.extract.extract_html``; the URL is the page's canonical link, else its ``og:url``,
else the file's ``file://`` URI.

Files must be UTF-8 (HTML may declare another charset in a ``<meta charset>``). A malformed
record raises ``DataError`` naming ``file:line``; with ``on_error="skip"`` it is counted in
``DocumentSource.skipped`` instead and reading goes on.
"""

from __future__ import annotations

import codecs
import datetime as _dt
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from factseek.constraints.hits import url_host_path
from factseek.errors import DataError, FactseekError
from factseek.sanitize import json_loads
from factseek.types import Document

OnError = Literal["stop", "skip"]

MAX_URL_CHARS = 4096
MAX_TEXT_CHARS = 2_000_000  # longer texts are cut (bounded input)
MAX_HTML_BYTES = 20_000_000
MAX_LINE_BYTES = 64 * 2**20  # one JSONL record; longer lines are malformed (streamed past)
HTML_SUFFIXES = (".html", ".htm")
_STANDARD = frozenset(("id", "url", "title", "text", "published", "modified", "domain"))
_MESSY_SPACE = re.compile(r"\s\s|[^\S ]")
_BAD_URL = re.compile(r"[\x00-\x20\x7f]")
_CANONICAL = (
    re.compile(
        rb"""<link\b[^>]*\brel\s*=\s*["']?canonical\b[^>]*?\bhref\s*=\s*["']([^"'<>\s]+)""", re.I
    ),
    re.compile(
        rb"""<link\b[^>]*\bhref\s*=\s*["']([^"'<>\s]+)["'][^>]*\brel\s*=\s*["']?canonical""", re.I
    ),
    re.compile(
        rb"""<meta\b[^>]*\bproperty\s*=\s*["']og:url["'][^>]*\bcontent\s*=\s*["']([^"'<>\s]+)""",
        re.I,
    ),
)
_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)


_scan_once = json.JSONDecoder().scan_once  # what json.loads runs, without its wrapper


def _json_line(line: str) -> Any:
    """``sanitize.json_loads(line)`` for one JSONL line: the common case (one value, then the
    newline) straight from the scanner; anything else, errors included, by ``json_loads``."""
    if "\\ud" not in line and "\\uD" not in line and line.endswith("\n"):
        try:
            obj, end = _scan_once(line, 0)
        except (StopIteration, ValueError, RecursionError):
            pass
        else:
            if end == len(line) - 1:
                return obj
    return json_loads(line)


def parse_published(value: Any, field: str = "published") -> _dt.date | None:
    """``YYYY-MM-DD`` (or an ISO date-time, or empty/None) -> date; anything else is ValueError."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"{field} must be a string, got {type(value).__name__}")
    s = value.strip()
    if len(s) >= 10 and s[10:11] in ("", "T", " "):
        try:
            return _dt.date.fromisoformat(s[:10])
        except ValueError:
            pass
    raise ValueError(f"{field} {value!r} is not YYYY-MM-DD")


def _check_url(url: Any) -> str:
    if not isinstance(url, str) or not url.strip():
        raise ValueError("url is missing or empty")
    url = url.strip()
    if len(url) > MAX_URL_CHARS:
        raise ValueError(f"url longer than {MAX_URL_CHARS} characters")
    if _BAD_URL.search(url):
        raise ValueError("url contains whitespace or control characters")
    return url


def _check_id(value: Any, url: str) -> str:
    if value is None or value == "":
        return url
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ValueError(f"id must be a string or integer, got {type(value).__name__}")
    s = str(value)
    if "\n" in s or "\r" in s:
        raise ValueError("id contains a line break")
    return s


def document_from_record(obj: Any) -> Document:
    """Validate one JSONL record; ``ValueError`` says what is wrong."""
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    url = _check_url(obj.get("url"))
    text = obj.get("text", "")
    title = obj.get("title") or ""
    if not isinstance(text, str) or not isinstance(title, str):
        raise ValueError("text and title must be strings")
    if not text.strip() and not title.strip():
        raise ValueError("text and title are both empty")
    domain = obj.get("domain") or url_host_path(url)[0]
    if not isinstance(domain, str):
        raise ValueError("domain must be a string")
    meta: dict[str, str] = {}
    if not obj.keys() <= _STANDARD:
        for key, value in obj.items():
            if key in _STANDARD:
                continue
            if key == "meta" and isinstance(value, dict):
                meta.update(
                    {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in value.items()}
                )
            else:
                meta[key] = (
                    value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                )
    if len(title) > 1000 or _MESSY_SPACE.search(title):
        title = " ".join(title.split())[:1000]
    return Document(
        url=url,
        text=text[:MAX_TEXT_CHARS],
        title=title,
        published=parse_published(obj.get("published")),
        domain=domain.strip().lower(),
        id=_check_id(obj.get("id"), url),
        meta=meta,
        modified=parse_published(obj.get("modified"), "modified"),
    )


def canonical_url(html: bytes) -> str | None:
    head = html[:200_000]
    for pattern in _CANONICAL:
        m = pattern.search(head)
        if m:
            url = m.group(1).decode("ascii", "replace")
            if url.startswith(("http://", "https://")):
                return url
    return None


def decode_html(raw: bytes) -> str:
    """UTF-8, or the charset a ``<meta>`` declares; otherwise ``ValueError``."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        m = _CHARSET.search(raw[:10_000])
        if m:
            name = m.group(1).decode("ascii")
            try:
                codecs.lookup(name)
                return raw.decode(name)
            except (LookupError, UnicodeDecodeError):
                pass
        raise ValueError(
            f"not UTF-8 (byte {e.start}) and no usable <meta charset>; convert it, e.g. iconv -t utf-8"
        ) from None


def document_from_html(raw: bytes, path: Path, root: Path) -> Document:
    """One HTML file -> Document via ``factseek.pages.extract`` (``ValueError`` if unusable)."""
    from factseek.pages.extract import extract_html

    html = decode_html(raw)
    url = canonical_url(raw) or path.resolve().as_uri()
    try:
        doc = extract_html(html, url)
    except FactseekError as e:
        raise ValueError(str(e)) from None
    rel = path.relative_to(root).as_posix() if path != root else path.name
    return Document(
        url=_check_url(doc.url),
        text=doc.text[:MAX_TEXT_CHARS],
        title=" ".join(doc.title.split())[:1000],
        published=doc.published,
        domain=doc.domain or url_host_path(url)[0],
        id=url,
        meta={**dict(doc.meta), "source_file": rel},
        modified=doc.modified,
    )


class DocumentSource:
    """Iterate the documents of one input (a ``.jsonl`` file, an ``.html`` file, or a folder).

    ``bytes_read``/``total_bytes`` drive a progress bar; ``skipped`` counts records dropped
    under ``on_error="skip"`` and ``first_error`` keeps the first message.
    """

    def __init__(self, path: str | Path, *, on_error: OnError = "stop") -> None:
        self.path = Path(path)
        if on_error not in ("stop", "skip"):
            raise DataError(f"on_error must be 'stop' or 'skip', got {on_error!r}")
        self.on_error = on_error
        try:
            self.files = self._files()
            self.total_bytes = sum(p.stat().st_size for p in self.files)
        except OSError as e:  # a name too long, a folder that cannot be listed...
            from factseek.files import os_error

            raise os_error(e, e.filename or self.path, "document source") from None
        self.bytes_read = 0
        self.skipped = 0
        self.first_error = ""
        self.where = ""  # "file:line" of the document last yielded

    def _files(self) -> list[Path]:
        if self.path.is_dir():
            files = sorted(
                p for p in self.path.rglob("*") if p.is_file() and p.suffix.lower() in HTML_SUFFIXES
            )
            if not files:
                raise DataError("no .html or .htm files in this folder", str(self.path))
            return files
        if self.path.is_file():
            return [self.path]
        raise DataError("no such file or folder", str(self.path))

    def _fail(self, message: str, path: Path, line: int | None) -> None:
        err = DataError(message, str(path), line)
        if self.on_error == "stop":
            raise err
        self.skipped += 1
        self.first_error = self.first_error or str(err)

    def __iter__(self) -> Iterator[Document]:
        for path in self.files:
            if path.suffix.lower() in HTML_SUFFIXES:
                yield from self._html(path)
            else:
                yield from self._jsonl(path)

    def _lines(self, path: Path) -> Iterator[tuple[int, bytes | None]]:
        """(line number, raw line) streamed; None for a line over ``MAX_LINE_BYTES`` (skipped
        to its end, never held in memory)."""
        from factseek.files import os_error

        try:
            with path.open("rb") as f:
                n = 0
                while raw := f.readline(MAX_LINE_BYTES + 1):
                    n += 1
                    self.bytes_read += len(raw)
                    if len(raw) <= MAX_LINE_BYTES or raw.endswith(b"\n"):
                        yield n, raw
                        continue
                    while (rest := f.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                        self.bytes_read += len(rest)
                    self.bytes_read += len(rest)
                    yield n, None
        except OSError as e:
            raise os_error(e, path, "document file") from None

    def _jsonl(self, path: Path) -> Iterator[Document]:
        for n, raw in self._lines(path):
            if raw is None:
                self._fail(f"line longer than {MAX_LINE_BYTES:,} bytes", path, n)
                continue
            if not raw.strip():
                continue
            try:
                line = raw.decode("utf-8-sig" if n == 1 else "utf-8")
            except UnicodeDecodeError as e:
                self._fail(f"not valid UTF-8 (byte {e.start}); the file must be UTF-8", path, n)
                continue
            try:
                doc = document_from_record(_json_line(line))
            except json.JSONDecodeError as e:
                self._fail(f"invalid JSON: {e.msg} (column {e.colno})", path, n)
                continue
            except ValueError as e:
                self._fail(str(e), path, n)
                continue
            except (TypeError, AttributeError, KeyError, OverflowError, RecursionError) as e:
                self._fail(f"malformed record ({type(e).__name__}: {e})"[:300], path, n)
                continue
            self.where = f"{path}:{n}"
            yield doc

    def _html(self, path: Path) -> Iterator[Document]:
        size = path.stat().st_size
        self.bytes_read += size
        if size > MAX_HTML_BYTES:
            self._fail(f"larger than {MAX_HTML_BYTES} bytes", path, None)
            return
        try:
            doc = document_from_html(path.read_bytes(), path, self.path)
        except (ValueError, TypeError, AttributeError, RecursionError) as e:
            self._fail(str(e), path, None)
            return
        self.where = str(path)
        yield doc
