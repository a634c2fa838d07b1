"""Main text, title and dates of a web page.

``extract_html(html, url, headers=...) -> Document``. Text comes from trafilatura, falling back to
readability-lxml + html2text and then to html2text over the whole page (the paper's tools); an
extractor whose text is shorter than ``min_words`` hands over to the next, and the longest wins.
Length is counted script-aware (``text_units``): a word in scripts written with spaces, half a
character in those written without (Chinese, Japanese, Thai...), so a Japanese article is not
mistaken for an empty page.

The page is parsed once, bytes-first: the body is decoded (BOM, ``Content-Type``, XML
declaration, ``<meta charset>``, UTF-8, detection), an XML declaration or doctype is dropped, and
lxml parses the UTF-8 bytes with the encoding stated; XHTML, odd encodings and fragments parse.
The same tree feeds trafilatura (text), its readers of meta tags and JSON-LD (title, author,
site name, description) and every date source; htmldate runs on a copy only when its vote
could change the chosen date (its markup search, then its heuristic search if that found nothing). If lxml still fails, the text extractors run on the
string and ``Document.meta["date_warning"]`` says which date sources were lost.

Dates: every date the page states is a ``DateEvidence(source, date, raw, rule)`` (sources,
time zones and day/month order: ``factseek.pages.pagedates``); ``Document.published`` is chosen by the
policy in ``factseek.pages.datepolicy`` (agreement first; ties to the later date; upper bounds when
nothing else), with ``Document.meta["date_source"]`` and ``["date_rule"]`` saying why, and
``["date_confidence"] == "low"`` when it is only a guess; ``Document.modified`` is the last
modification the page states (``["modified_source"]``, ``["modified_rule"]``). For an
archive copy (``web.archive.org/web/TIMESTAMP/URL``) the URL date and the domain are the archived
page's, and the snapshot is an upper bound.

Input is bounded: at most ``max_chars`` characters and ``max_tags`` tags are parsed (extraction
time grows with the number of elements; ``Document.meta["truncated"]`` says when a page was
cut), binary content is refused, and lxml's own depth limit stops deeply nested trees.
Failures raise ``ExtractionError``.
"""

from __future__ import annotations

import copy
import functools
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from factseek.errors import ExtractionError
from factseek.pages.datepolicy import (
    HEURISTIC_SOURCE,
    MODIFICATION_SOURCES,
    MODIFIED_META,
    PUBLISHED_META,
    choose_published,
)
from factseek.pages.dates import EARLIEST_DATE, parse_date, url_date
from factseek.pages.pagedates import PageDates, page_dates
from factseek.pages.sources import Found
from factseek.pages.webarchive import original_url
from factseek.text import text_units
from factseek.types import Document

__all__ = [
    "DEFAULT_EXTRACT",
    "EARLIEST_DATE",
    "MODIFICATION_SOURCES",
    "MODIFIED_META",
    "PUBLISHED_META",
    "ExtractConfig",
    "choose_published",
    "clean_text",
    "decode_body",
    "extract_html",
    "extract_text",
    "looks_binary",
    "parse_date",
    "text_units",
    "url_date",
]

# ----------------------------------------------------------------------------- configuration


@dataclass(frozen=True, kw_only=True)
class ExtractConfig:
    """Limits and thresholds for extraction."""

    max_chars: int = 3_000_000  # characters of HTML parsed; the rest is dropped
    max_tags: int = 25_000  # tags parsed (extraction time grows with them); the rest is dropped
    min_words: int = 25  # an extractor yielding fewer text units hands over to the next one
    max_title_chars: int = 500
    max_meta_chars: int = 500  # each Document.meta value
    binary_ratio: float = 0.05  # share of control characters that marks content as binary


DEFAULT_EXTRACT = ExtractConfig()

# ----------------------------------------------------------------------------- text


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_BLANK_LINES = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")
_SPACES = re.compile(r"[ \t\u00a0]+")


def clean_text(text: str) -> str:
    """Strip control characters, collapse runs of spaces and blank lines."""
    text = _CONTROL.sub("", text)
    text = _SPACES.sub(" ", text)
    text = _BLANK_LINES.sub("\n\n", text)
    return "\n".join(line.strip() for line in text.split("\n")).strip()


def looks_binary(text: str, ratio: float = DEFAULT_EXTRACT.binary_ratio) -> bool:
    """True when the start of ``text`` is mostly control or replacement characters."""
    sample = text[:8192]
    if not sample:
        return False
    bad = len(_CONTROL.findall(sample)) + sample.count("\ufffd")
    return bad / len(sample) > ratio


_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_XML_ENCODING = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9_.:-]+)""", re.I)
_BOMS = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


def _fits(codec: str, body: bytes) -> bool:
    """Whether a declared charset can be the body's: a UTF-16/32 body has NUL bytes in its ASCII
    markup, an ASCII-compatible one has (almost) none. A declaration that does not fit the bytes
    (``charset=utf-16`` over UTF-8, the reverse) is not trusted."""
    sample = body[:4096]
    if not sample:
        return True
    nul_share = sample.count(0) / len(sample)
    wide = codec.startswith(("utf-16", "utf-32", "utf_16", "utf_32"))
    return nul_share >= 0.2 if wide else nul_share < 0.1


def decode_body(body: bytes, content_type: str | None = None) -> str:
    """Bytes to text: a byte-order mark, the declared charset (header, XML declaration, HTML
    meta) when it fits the bytes (``_fits``), then UTF-8, then detection."""
    import codecs

    for bom, name in _BOMS:
        if body.startswith(bom):
            return body[len(bom) :].decode(name, errors="replace")
    declared: list[str] = []
    if content_type:
        m = re.search(r"charset\s*=\s*[\"']?([A-Za-z0-9_.:-]+)", content_type, re.I)
        if m:
            declared.append(m[1])
    m1 = _XML_ENCODING.search(body[:200])
    if m1:
        declared.append(m1[1].decode("ascii", "replace"))
    m2 = _META_CHARSET.search(body[:4096])
    if m2:
        declared.append(m2[1].decode("ascii", "replace"))
    for name in (*declared, "utf-8"):
        try:
            codec = codecs.lookup(name).name
            if not _fits(codec, body):
                continue
            return body.decode(name)
        except (LookupError, UnicodeDecodeError):
            continue
    from charset_normalizer import from_bytes

    best = from_bytes(body[:1_000_000]).best()
    encoding = best.encoding if best is not None else "utf-8"
    return body.decode(encoding, errors="replace")


@functools.cache
def _quiet(*names: str) -> None:
    # readability and trafilatura log tracebacks for ordinary bad pages; those become our
    # ExtractionError instead. Once: setLevel clears every logger's cache, which is not free.
    for name in names:
        logging.getLogger(name).setLevel(logging.CRITICAL)


def _trafilatura(page: Any, url: str) -> str:
    """The main text from a tree (trafilatura copies it) or an HTML string."""
    import trafilatura

    try:
        r = trafilatura.bare_extraction(page, url=url, include_comments=False, include_tables=True)
    except Exception:  # trafilatura raises bare ValueError/TypeError/lxml errors on bad input
        return ""
    return (r.text or "") if r is not None else ""


#: Meta tags read into ``Document.meta`` (name or property, lower-case) and the key they fill.
META_FIELDS: dict[str, str] = {
    "og:title": "title",
    "twitter:title": "title",
    "og:site_name": "sitename",
    "application-name": "sitename",
    "author": "author",
    "article:author": "author",
    "description": "description",
    "og:description": "description",
}


def _metadata(tree: Any) -> dict[str, str]:
    """Title, author, site name, description and language from the page's tags.

    The title is ``og:title`` (or ``twitter:title``), else the first ``<h1>`` when the
    ``<title>`` contains it (dropping the " | Site name" part), else the ``<title>``.
    """
    out: dict[str, str] = {}
    for m in tree.iterfind(".//meta"):
        key = (m.get("property") or m.get("name") or "").strip().lower()
        field = META_FIELDS.get(key)
        if field and field not in out and (content := (m.get("content") or "").strip()):
            out[field] = content
    if "title" not in out:
        t = tree.find(".//title")
        title = " ".join((t.text_content() if t is not None else "").split())
        h1 = tree.find(".//h1")
        head = " ".join((h1.text_content() if h1 is not None else "").split())
        if head and head in title:
            title = head
        if title:
            out["title"] = title
    lang = (tree.get("lang") or "").strip()
    if lang:
        out["language"] = lang.split("-")[0].lower()
    return out


def _htmldate(page: Any, url: str) -> Found | None:
    """htmldate's estimate on a copy of the tree (or on the HTML string): its markup search
    first (source ``htmldate``), its extensive heuristic search only when that found nothing
    (source ``htmldate:heuristic``, a guess: ``datepolicy.confidence``)."""
    import htmldate

    for extensive, source in ((False, "htmldate"), (True, HEURISTIC_SOURCE)):
        try:
            tree = copy.deepcopy(page) if not isinstance(page, str) else page
            value = htmldate.find_date(
                tree, extensive_search=extensive, original_date=True, url=url
            )
        except Exception:  # htmldate has no error hierarchy of its own; a failure means "no date"
            return None
        if value:
            return Found(source, str(value))
    return None


def _header(headers: Mapping[str, str] | None, name: str) -> str | None:
    if not headers:
        return None
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


def _readability(html: str) -> tuple[str, str]:
    import html2text
    from readability import Document as Readable

    try:
        doc = Readable(html)
        summary = doc.summary(html_partial=True)
        title = doc.short_title() or ""
    except Exception:  # readability raises its own Unparseable and lxml errors
        return "", ""
    return _html2text(html2text, summary), title


def _html2text(module: Any, html: str) -> str:
    h = module.HTML2Text()
    h.ignore_links = True
    h.ignore_images = True
    h.ignore_emphasis = True
    h.body_width = 0
    try:
        return h.handle(html)
    except Exception:  # html2text's parser is forgiving, but not on every input
        return ""


_PROLOGUE = re.compile(r"^\s*(?:<\?xml[^>]*>\s*)?(?:<!doctype[^>]*>\s*)?", re.I)


def _parse(html: str) -> tuple[Any, str]:
    """A tree (or None) and, when parsing failed, why. Bytes-first: lxml gets UTF-8 bytes."""
    import lxml.html
    from lxml import etree

    body = _PROLOGUE.sub("", html, count=1).encode("utf-8", "surrogatepass")
    parser = lxml.html.HTMLParser(
        encoding="utf-8", remove_comments=True, remove_pis=True, collect_ids=False
    )
    try:
        return lxml.html.document_fromstring(body, parser=parser), ""
    except (etree.ParserError, ValueError, UnicodeError) as e:
        return None, " ".join(str(e).split())[:200] or type(e).__name__


def _tag_cut(html: str, max_tags: int) -> int | None:
    """Where the tag after the first ``max_tags`` starts, or None if there are not that many."""
    if html.count("<") <= max_tags:
        return None
    pos = -1
    for _ in range(max_tags + 1):
        pos = html.find("<", pos + 1)
    return pos


def extract_html(
    html: str | bytes,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    config: ExtractConfig = DEFAULT_EXTRACT,
) -> Document:
    """Turn one HTML page into a ``Document``; raise ``ExtractionError`` if it has no text.

    ``headers`` are the HTTP response headers (``Content-Type`` picks the charset of a
    ``bytes`` page, ``Last-Modified`` becomes date evidence).
    """
    if isinstance(html, bytes):
        html = decode_body(html[: config.max_chars * 4], _header(headers, "content-type"))
    truncated = ""
    if len(html) > config.max_chars:
        html, truncated = html[: config.max_chars], "chars"
    cut = _tag_cut(html, config.max_tags)
    if cut is not None:
        html, truncated = html[:cut], "tags"
    if looks_binary(html, config.binary_ratio):
        raise ExtractionError(f"{url}: binary content, not HTML")
    html = _CONTROL.sub("", html)
    if not html.strip():
        raise ExtractionError(f"{url}: empty page")
    _quiet("trafilatura", "readability.readability", "htmldate")

    tree, parse_error = _parse(html)
    page = tree if tree is not None else html
    text = _trafilatura(page, url)
    meta = _metadata(tree) if tree is not None else {}
    dates = page_dates(
        tree, url, headers=headers, estimate=lambda: _htmldate(page, original_url(url))
    )
    page_title = ""
    if tree is not None:
        t = tree.find(".//title")
        page_title = (t.text_content() if t is not None else "") or ""

    extractor = "trafilatura"
    candidates = [(text, extractor)]
    if text_units(text) < config.min_words:
        rtext, rtitle = _readability(html)
        page_title = page_title or rtitle
        candidates.append((rtext, "readability"))
        if text_units(rtext) < config.min_words:
            import html2text

            candidates.append((_html2text(html2text, html), "html2text"))
        text, extractor = max(candidates, key=lambda c: text_units(c[0]))
    text = clean_text(text)
    if not text:
        raise ExtractionError(f"{url}: no text could be extracted")

    title = clean_text(meta.pop("title", "") or page_title).replace("\n", " ")
    info = {k: clean_text(v)[: config.max_meta_chars] for k, v in meta.items()}
    info["extractor"] = extractor
    if truncated:
        info["truncated"] = truncated
    info.update(date_meta(dates))
    if parse_error:
        info["date_warning"] = (
            f"the HTML could not be parsed ({parse_error}): JSON-LD, meta, microdata and "
            "visible-text dates were not read"
        )[: config.max_meta_chars]
    return dated_document(url, text, title, dates, info, max_title_chars=config.max_title_chars)


def dated_document(
    url: str,
    text: str,
    title: str,
    dates: PageDates,
    meta: dict[str, str],
    *,
    max_title_chars: int = DEFAULT_EXTRACT.max_title_chars,
) -> Document:
    """The ``Document`` of a page's text, title, found dates and meta (HTML and PDF alike)."""
    return Document(
        url=url,
        text=text,
        title=title[:max_title_chars],
        published=dates.choice.date,
        domain=page_domain(url),
        date_evidence=dates.evidence,
        meta=meta,
        modified=dates.modified.date,
    )


def date_meta(dates: PageDates) -> dict[str, str]:
    """``date_source``/``date_rule`` (the publication date), ``date_confidence`` ("low" for a
    guess), ``modified_source``/``modified_rule`` (the last stated modification, or why a stated
    one was ignored), ``date_set_aside`` (htmldate's estimate, when it was not the page's date)."""
    cut = DEFAULT_EXTRACT.max_meta_chars
    out: dict[str, str] = {}
    if dates.choice.source:
        out.update(date_source=dates.choice.source, date_rule=dates.choice.rule[:cut])
    if dates.confidence:
        out["date_confidence"] = dates.confidence
    if dates.modified.source:
        out["modified_source"] = dates.modified.source
    if dates.modified.rule:
        out["modified_rule"] = dates.modified.rule[:cut]
    if dates.set_aside:
        out["date_set_aside"] = dates.set_aside[:cut]
    return out


def extract_text(
    text: str | bytes, url: str, *, headers: Mapping[str, str] | None = None
) -> Document:
    """A plain-text page as a ``Document`` (dates from the URL, Last-Modified and an archive)."""
    if isinstance(text, bytes):
        text = decode_body(text, _header(headers, "content-type"))
    if looks_binary(text):
        raise ExtractionError(f"{url}: binary content, not text")
    body = clean_text(text)
    if not body:
        raise ExtractionError(f"{url}: empty page")
    dates = page_dates(None, url, headers=headers)
    first = body.split("\n", 1)[0][: DEFAULT_EXTRACT.max_title_chars]
    return Document(
        url=url,
        text=body,
        title=first,
        published=dates.choice.date,
        domain=page_domain(url),
        date_evidence=dates.evidence,
        meta={"extractor": "text", **date_meta(dates)},
        modified=dates.modified.date,
    )


def page_domain(url: str) -> str:
    """The page's host without ``www.`` (the archived page's host for an archive copy)."""
    host = (urlsplit(original_url(url)).hostname or "").lower()
    return host[4:] if host.startswith("www.") else host
