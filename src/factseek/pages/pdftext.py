"""Text and dates of a PDF, for ``--keep-pdf``: ``extract_pdf(body, url, *, headers=None) -> Document``.

The paper's site constraint removes PDF results, and factseek keeps that default. A fact-checker's
primary sources (council minutes, a closeout report) are often PDFs, so ``check --keep-pdf`` keeps
them and this module reads them with pypdf (pure Python; imported only here, when a PDF is read).

* Text: each page's text (``pypdf``'s ``extract_text``), pages separated by blank lines; at most
  ``max_pages`` pages and ``max_chars`` characters (``Document.meta["truncated"]`` says when a
  PDF was cut). An encrypted PDF is tried with the empty password (most are only
  print-protected). A PDF with no text layer (a scan) or one pypdf cannot read raises
  ``ExtractionError``.
* Title: the document information's ``/Title``, else the first line of text.
* Dates: ``/CreationDate`` is date evidence ``pdf:created`` (a publication vote, like a meta
  tag), ``/ModDate`` is ``pdf:modified`` (a modification the document states:
  ``Document.modified``); the URL, the ``Last-Modified`` header and a web-archive snapshot count
  as for HTML pages (``factseek.pages.pagedates``).
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Mapping
from typing import Any

from factseek.errors import ExtractionError, MissingDependency
from factseek.pages.extract import clean_text, date_meta, dated_document
from factseek.pages.pagedates import page_dates
from factseek.pages.sources import Found
from factseek.types import Document

MAX_PAGES = 200  # pages read; the rest are dropped
MAX_CHARS = 2_000_000  # characters of text kept
PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})

_PDF_DATE = re.compile(
    r"^\s*(?:D:)?(\d{4})(\d{2})(\d{2})(?:(\d{2})(\d{2})(\d{2})?)?\s*(Z|[+-]\d{2}'?(?:\d{2}'?)?)?"
)


def pdf_date(value: Any) -> str | None:
    """A PDF date string (``D:20200315143000+01'00'``) as ISO 8601, or None when it gives no day."""
    if not isinstance(value, str):
        return None
    m = _PDF_DATE.match(value[:64])
    if m is None:
        return None
    out = f"{m[1]}-{m[2]}-{m[3]}"
    if m[4]:
        out += f"T{m[4]}:{m[5]}:{m[6] or '00'}"
        zone = (m[7] or "").replace("'", "")
        if zone == "Z":
            out += "Z"
        elif zone:
            out += f"{zone[:3]}:{zone[3:5] or '00'}"
    return out


def _reader(body: bytes, url: str) -> Any:
    try:
        from pypdf import PdfReader
        from pypdf.errors import PyPdfError
    except ImportError as e:  # a core dependency: only a broken install lacks it
        raise MissingDependency("pypdf", "", "reading PDFs (--keep-pdf)") from e
    logging.getLogger("pypdf").setLevel(logging.CRITICAL)  # it warns about every odd object
    try:
        reader = PdfReader(io.BytesIO(body), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise ExtractionError(f"{url}: encrypted PDF")
        _ = reader.pages[0]  # an unreadable page tree fails here, not later
    except ExtractionError:
        raise
    except (PyPdfError, ValueError, KeyError, IndexError, TypeError, OSError) as e:
        raise ExtractionError(f"{url}: not a readable PDF ({type(e).__name__})") from None
    return reader


def extract_pdf(
    body: bytes,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    max_pages: int = MAX_PAGES,
    max_chars: int = MAX_CHARS,
) -> Document:
    """Turn one PDF into a ``Document``; raise ``ExtractionError`` if it has no text."""
    if not body.lstrip()[:5] == b"%PDF-":
        raise ExtractionError(f"{url}: not a PDF")
    reader = _reader(body, url)
    texts: list[str] = []
    size = 0
    truncated = ""
    for i, page in enumerate(reader.pages):
        if i >= max_pages:
            truncated = "pages"
            break
        try:
            text = page.extract_text() or ""
        except Exception:  # pypdf has no single error class for a bad content stream
            text = ""
        texts.append(text)
        size += len(text)
        if size > max_chars:
            truncated = "chars"
            break
    text = clean_text("\n\n".join(texts))[:max_chars]
    if not text:
        raise ExtractionError(f"{url}: the PDF has no text layer (a scan?)")
    info = _info(reader)
    title = clean_text(str(info.get("/Title") or "")).replace("\n", " ")
    title = title or text.split("\n", 1)[0]
    found = [
        Found(source, iso)
        for source, key in (("pdf:created", "/CreationDate"), ("pdf:modified", "/ModDate"))
        if (iso := pdf_date(info.get(key)))
    ]
    dates = page_dates(None, url, headers=headers, extra=found)
    meta = {"extractor": "pypdf", "pages": str(len(reader.pages)), **date_meta(dates)}
    if truncated:
        meta["truncated"] = truncated
    return dated_document(url, text, title, dates, meta)


def _info(reader: Any) -> Mapping[str, Any]:
    try:
        return reader.metadata or {}
    except Exception:  # a damaged information dictionary: no title, no dates
        return {}
