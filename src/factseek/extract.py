"""Main text, title and publication date of a web page.

``extract_html(html, url, headers=...) -> Document``. Text comes from trafilatura, falling back to
readability-lxml + html2text and then to html2text over the whole page (the paper's tools). The
publication date is gathered from several independent sources, each kept as a ``DateEvidence``:

=========================  ===============================================================
source                     where it comes from
=========================  ===============================================================
``json-ld``                ``datePublished`` in a ``<script type="application/ld+json">``
``meta:<name>``            a publication meta tag (``article:published_time``, ``dc.date``...)
``microdata``              ``itemprop="datePublished"`` on any element (``<time datetime>``)
``htmldate``               htmldate's estimate of the original publication date
``url``                    a ``/YYYY/MM/DD/`` (or ``YYYY-MM-DD``, ``YYYYMMDD``) path segment
``json-ld:dateModified``,  modification dates: upper bounds on publication, not the date
``meta:<modified name>``,  itself
``last-modified``
=========================  ===============================================================

``Document.published`` rule: the first publication source in ``PUBLICATION_PRIORITY`` order
(json-ld, meta, microdata, htmldate, url; among meta tags, ``PUBLISHED_META`` order). If the page
has no publication date at all, the earliest modification date is used: a page cannot be
published after it was last modified, so that date is a safe upper bound for a before-date
filter. Disagreement between sources is not resolved here; ``factseek.temporal`` flags it.

Input is bounded: at most ``max_chars`` characters and ``max_tags`` tags are parsed (extraction
time grows with the number of elements; ``Document.meta["truncated"]`` says when a page was
cut), binary content is refused, and lxml's own depth limit stops deeply nested trees.
Failures raise ``ExtractionError``.
"""

from __future__ import annotations

import datetime as _dt
import email.utils
import logging
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from factseek.errors import ExtractionError
from factseek.sanitize import json_loads
from factseek.types import DateEvidence, Document

# ----------------------------------------------------------------------------- configuration


@dataclass(frozen=True, kw_only=True)
class ExtractConfig:
    """Limits and thresholds for extraction."""

    max_chars: int = 3_000_000  # characters of HTML parsed; the rest is dropped
    max_tags: int = 25_000  # tags parsed (extraction time grows with them); the rest is dropped
    min_words: int = 25  # an extractor yielding fewer words hands over to the next one
    max_title_chars: int = 500
    max_meta_chars: int = 500  # each Document.meta value
    max_jsonld_chars: int = 200_000  # one JSON-LD block larger than this is ignored
    binary_ratio: float = 0.05  # share of control characters that marks content as binary


DEFAULT_EXTRACT = ExtractConfig()

#: Publication meta tags (name, property or itemprop, lower-case), most trusted first.
PUBLISHED_META: tuple[str, ...] = (
    "article:published_time",
    "og:published_time",
    "datepublished",
    "citation_publication_date",
    "citation_date",
    "dc.date.issued",
    "dcterms.issued",
    "dc.date.created",
    "dcterms.created",
    "dc.date",
    "dcterms.date",
    "parsely-pub-date",
    "sailthru.date",
    "pubdate",
    "publishdate",
    "publish-date",
    "publish_date",
    "article.published",
    "date",
)
#: Modification meta tags: upper bounds on the publication date.
MODIFIED_META: tuple[str, ...] = (
    "article:modified_time",
    "og:updated_time",
    "datemodified",
    "dcterms.modified",
    "last-modified",
)
#: Order in which publication sources are trusted (a "meta:*" source matches "meta").
PUBLICATION_PRIORITY: tuple[str, ...] = ("json-ld", "meta", "microdata", "htmldate", "url")
#: Sources that give a modification date, not a publication date.
MODIFICATION_SOURCES: frozenset[str] = frozenset(
    {"json-ld:dateModified", "last-modified", *(f"meta:{m}" for m in MODIFIED_META)}
)

EARLIEST_DATE = _dt.date(1990, 1, 1)  # no web page is older; earlier values are junk

# ----------------------------------------------------------------------------- dates

_ISO = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")
_SLASHED = re.compile(r"(\d{4})/(\d{1,2})/(\d{1,2})")
_COMPACT = re.compile(r"^(\d{4})(\d{2})(\d{2})(?:\D|$)")
_MONTHS = {
    m: i
    for i, names in enumerate(
        [
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ],
        start=1,
    )
    for m in names
}
_MONTH_DAY_YEAR = re.compile(r"\b([A-Za-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b")
_DAY_MONTH_YEAR = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+([A-Za-z]{3,9})\.?,?\s+(\d{4})\b")
_URL_DATE = re.compile(
    r"/((?:19|20)\d{2})[/-](0?[1-9]|1[0-2])[/-](0?[1-9]|[12]\d|3[01])(?=/|-|_|\.|$)"
    r"|/((?:19|20)\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?=/|-|_|\.|$)"
)


def _valid(year: int, month: int, day: int, today: _dt.date) -> _dt.date | None:
    try:
        d = _dt.date(year, month, day)
    except ValueError:
        return None
    return d if EARLIEST_DATE <= d <= today + _dt.timedelta(days=1) else None


def parse_date(value: str, *, today: _dt.date | None = None) -> _dt.date | None:
    """A calendar date from an ISO, slashed, compact, RFC 2822 or 'March 5, 2020' string.

    Returns None for anything else and for dates before 1990 or after tomorrow.
    """
    today = today or _dt.date.today()
    s = value.strip()[:100]
    if not s:
        return None
    for pattern in (_ISO, _SLASHED, _COMPACT):
        m = pattern.search(s)
        if m:
            return _valid(int(m[1]), int(m[2]), int(m[3]), today)
    m = _MONTH_DAY_YEAR.search(s)
    if m and m[1].lower() in _MONTHS:
        return _valid(int(m[3]), _MONTHS[m[1].lower()], int(m[2]), today)
    m = _DAY_MONTH_YEAR.search(s)
    if m and m[2].lower() in _MONTHS:
        return _valid(int(m[3]), _MONTHS[m[2].lower()], int(m[1]), today)
    try:
        return _valid(*email.utils.parsedate_to_datetime(s).timetuple()[:3], today)
    except (TypeError, ValueError, IndexError):
        return None


def url_date(url: str) -> _dt.date | None:
    """The date in a URL path like ``/2020/03/15/`` or ``/2020-03-15-slug``, if any."""
    path = urlsplit(url).path[:2000]
    m = _URL_DATE.search(path)
    if not m:
        return None
    y, mo, d = (m[1], m[2], m[3]) if m[1] else (m[4], m[5], m[6])
    return _valid(int(y), int(mo), int(d), _dt.date.today())


def choose_published(evidence: tuple[DateEvidence, ...]) -> _dt.date | None:
    """Apply the module's publication-date rule to a list of evidence."""

    def rank(e: DateEvidence) -> tuple[int, int]:
        kind, _, name = e.source.partition(":")
        tier = PUBLICATION_PRIORITY.index(kind)
        sub = PUBLISHED_META.index(name) if kind == "meta" and name in PUBLISHED_META else 0
        return tier, sub

    published = [
        e
        for e in evidence
        if e.source not in MODIFICATION_SOURCES
        and e.source.partition(":")[0] in PUBLICATION_PRIORITY
    ]
    if published:
        return min(published, key=rank).date
    modified = [e.date for e in evidence if e.source in MODIFICATION_SOURCES]
    return min(modified) if modified else None


# ----------------------------------------------------------------------------- HTML date sources


def _jsonld_dates(obj: Any, depth: int = 0) -> Iterator[tuple[str, str]]:
    if depth > 20:
        return
    if isinstance(obj, list):
        for x in obj[:1000]:
            yield from _jsonld_dates(x, depth + 1)
    elif isinstance(obj, dict):
        for key in ("datePublished", "dateModified"):
            v = obj.get(key)
            if isinstance(v, str):
                yield key, v
        for key, v in obj.items():
            if key not in ("datePublished", "dateModified") and isinstance(v, (list, dict)):
                yield from _jsonld_dates(v, depth + 1)


def _tree_dates(tree: Any, cfg: ExtractConfig) -> list[DateEvidence]:
    """Dates from JSON-LD, meta tags and microdata, in document order, one per source."""
    found: dict[str, _dt.date] = {}

    def add(source: str, raw: str | None) -> None:
        if raw and source not in found:
            d = parse_date(raw)
            if d is not None:
                found[source] = d

    for script in tree.iterfind(".//script"):
        if (script.get("type") or "").strip().lower() != "application/ld+json":
            continue
        raw = script.text or ""
        if len(raw) > cfg.max_jsonld_chars:
            continue
        try:
            data = json_loads(raw)
        except (ValueError, RecursionError):
            continue
        for key, value in _jsonld_dates(data):
            add("json-ld" if key == "datePublished" else "json-ld:dateModified", value)
    wanted = set(PUBLISHED_META) | set(MODIFIED_META)
    for meta in tree.iterfind(".//meta"):
        for attr in ("property", "name", "itemprop", "http-equiv"):
            key = (meta.get(attr) or "").strip().lower()
            if key in wanted:
                add(f"meta:{key}", meta.get("content"))
                break
    for el in tree.xpath("//*[@itemprop='datePublished']")[:20]:
        if el.tag != "meta":
            add("microdata", el.get("datetime") or el.get("content") or (el.text or ""))
    return [DateEvidence(source=s, date=d) for s, d in found.items()]


def _htmldate(tree: Any, url: str) -> _dt.date | None:
    import htmldate

    try:
        value = htmldate.find_date(tree, extensive_search=False, original_date=True, url=url)
    except Exception:  # htmldate has no error hierarchy of its own; a failure means "no date"
        return None
    return parse_date(value) if value else None


def _header(headers: Mapping[str, str] | None, name: str) -> str | None:
    if not headers:
        return None
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


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


def decode_body(body: bytes, content_type: str | None = None) -> str:
    """Bytes to text: the declared charset (header, then HTML meta), then UTF-8, then detection."""
    import codecs

    declared: list[str] = []
    if content_type:
        m = re.search(r"charset\s*=\s*[\"']?([A-Za-z0-9_.:-]+)", content_type, re.I)
        if m:
            declared.append(m[1])
    m2 = _META_CHARSET.search(body[:4096])
    if m2:
        declared.append(m2[1].decode("ascii", "replace"))
    for name in (*declared, "utf-8"):
        try:
            codecs.lookup(name)
            return body.decode(name)
        except (LookupError, UnicodeDecodeError):
            continue
    from charset_normalizer import from_bytes

    best = from_bytes(body[:1_000_000]).best()
    encoding = best.encoding if best is not None else "utf-8"
    return body.decode(encoding, errors="replace")


def _quiet(*names: str) -> None:
    # readability and trafilatura log tracebacks for ordinary bad pages; those become our
    # ExtractionError instead.
    for name in names:
        logging.getLogger(name).setLevel(logging.CRITICAL)


def _trafilatura(html: str, url: str) -> tuple[str, dict[str, str]]:
    import trafilatura

    try:
        r = trafilatura.bare_extraction(
            html, url=url, with_metadata=True, include_comments=False, include_tables=True
        )
    except Exception:  # trafilatura raises bare ValueError/TypeError/lxml errors on bad input
        return "", {}
    if r is None:
        return "", {}
    meta = {
        k: str(v)
        for k in ("title", "author", "sitename", "language", "description")
        if (v := getattr(r, k, None))
    }
    return r.text or "", meta


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


def _parse(html: str) -> Any:
    import lxml.html
    from lxml import etree

    try:
        return lxml.html.document_fromstring(html)
    except (etree.ParserError, ValueError):
        return None


def _tag_cut(html: str, max_tags: int) -> int | None:
    """Where the tag after the first ``max_tags`` starts, or None if there are not that many."""
    if html.count("<") <= max_tags:
        return None
    pos = -1
    for _ in range(max_tags + 1):
        pos = html.find("<", pos + 1)
    return pos


def _words(text: str) -> int:
    return len(text.split())


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

    evidence: list[DateEvidence] = []
    tree = _parse(html)
    page_title = ""
    if tree is not None:
        evidence.extend(_tree_dates(tree, config))
        t = tree.find(".//title")
        page_title = (t.text_content() if t is not None else "") or ""
        d = _htmldate(tree, url)  # last: htmldate may prune the tree it is given
        if d is not None:
            evidence.append(DateEvidence(source="htmldate", date=d))
    d = url_date(url)
    if d is not None:
        evidence.append(DateEvidence(source="url", date=d))
    lm = _header(headers, "last-modified")
    d = parse_date(lm) if lm else None
    if d is not None:
        evidence.append(DateEvidence(source="last-modified", date=d))

    text, meta = _trafilatura(html, url)
    extractor = "trafilatura"
    candidates = [(text, extractor)]
    if _words(text) < config.min_words:
        rtext, rtitle = _readability(html)
        page_title = page_title or rtitle
        candidates.append((rtext, "readability"))
        if _words(rtext) < config.min_words:
            import html2text

            candidates.append((_html2text(html2text, html), "html2text"))
        text, extractor = max(candidates, key=lambda c: _words(c[0]))
    text = clean_text(text)
    if not text:
        raise ExtractionError(f"{url}: no text could be extracted")

    title = clean_text(meta.pop("title", "") or page_title).replace("\n", " ")
    ev = tuple(evidence)
    info = {k: clean_text(v)[: config.max_meta_chars] for k, v in meta.items()}
    info["extractor"] = extractor
    if truncated:
        info["truncated"] = truncated
    return Document(
        url=url,
        text=text,
        title=title[: config.max_title_chars],
        published=choose_published(ev),
        domain=_domain(url),
        date_evidence=ev,
        meta=info,
    )


def extract_text(
    text: str | bytes, url: str, *, headers: Mapping[str, str] | None = None
) -> Document:
    """A plain-text page as a ``Document`` (dates from the URL and Last-Modified only)."""
    if isinstance(text, bytes):
        text = decode_body(text, _header(headers, "content-type"))
    if looks_binary(text):
        raise ExtractionError(f"{url}: binary content, not text")
    body = clean_text(text)
    if not body:
        raise ExtractionError(f"{url}: empty page")
    evidence: list[DateEvidence] = []
    if (d := url_date(url)) is not None:
        evidence.append(DateEvidence(source="url", date=d))
    lm = _header(headers, "last-modified")
    if lm and (d := parse_date(lm)) is not None:
        evidence.append(DateEvidence(source="last-modified", date=d))
    ev = tuple(evidence)
    first = body.split("\n", 1)[0][: DEFAULT_EXTRACT.max_title_chars]
    return Document(
        url=url,
        text=body,
        title=first,
        published=choose_published(ev),
        domain=_domain(url),
        date_evidence=ev,
        meta={"extractor": "text"},
    )


def _domain(url: str) -> str:
    host = (urlsplit(url).hostname or "").lower()
    return host[4:] if host.startswith("www.") else host
