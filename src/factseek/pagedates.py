"""The dates a web page gives for itself, read in the page's own time zone and day/month order.

``page_dates(tree, url, *, headers=None, estimate=None) -> PageDates`` gathers every date a page
states, reads each string with ``factseek.dates.read_date``, settles what one string cannot say
alone (its time zone, its day/month order) from the rest of the page, and picks the publication
date with ``factseek.datepolicy.choose``. Each date is one ``DateEvidence(source, date, raw, rule)``:

=========================  ==================================================================
source                     where it comes from
=========================  ==================================================================
``json-ld``                ``datePublished`` in JSON-LD (article types first, any nesting)
``json-ld:dateModified``   ``dateModified`` in JSON-LD (an upper bound)
``meta:<name>``            a publication or modification meta tag (``datepolicy.PUBLISHED_META``,
                           ``datepolicy.MODIFIED_META``)
``microdata``              ``itemprop="datePublished"`` on an element (``<time datetime>``)
``text``, ``text:updated`` a date printed on the page: a ``<time>`` element or a date/byline
                           element, in the article first, never in navigation, asides, footers,
                           related-story, comment or masthead blocks; failing those in the
                           article, a short line right after the headline, then the rest of
                           the page; "Updated ..." dates are ``text:updated`` (an upper bound)
``htmldate``               htmldate's estimate (extensive search), asked for only when it
                           could change the choice
``url``                    a date in the URL path (of the archived page, for an archive copy)
``last-modified``          the HTTP header (an upper bound)
``archive``                a web-archive snapshot's timestamp (an upper bound)
=========================  ==================================================================

Time zones (``DateEvidence.date`` is always the day in the page's own zone; ``raw`` keeps the string):

- T1. A time with a non-UTC offset (``+02:00``, ``EDT``) keeps the day as written.
- T2. A UTC time (``Z``, ``+00:00``, ``GMT``) is read at the page's own offset: the most common
  non-UTC offset among all the page's dates (the first one on a tie).
- T3. With no such offset, a UTC time is read as the day that the page gives in its own zone
  (dates without a time, or wall times without an offset: URL, visible text, tags), when exactly
  one such day differs from the UTC day, the UTC day is not among them, and a plausible offset
  (``dates.PLAUSIBLE_OFFSETS``) reaches it.
- T4. Otherwise the UTC day, and the rule says the offset was unknown. The archive snapshot's
  bound is then the latest day the plausible offsets reach (a bound must not be too early).

Day/month order of a numeric date that can be read both ways (``11/01/2023``), first rule that
decides:

- O1. Exactly one reading equals another date on the page (any unambiguous source but htmldate,
  which reads the same tags with its own guess at the order).
- O2. The page's other numeric dates (its tags and the first 200,000 characters of its text) that
  can only be read one way are mostly one order (``25/12/2022`` says day first).
- O3. Dotted dates (``01.11.2023``) are day first.
- O4. The page language (``<html lang>``, ``content-language``, ``og:locale``, the header):
  ``en-US`` (and ``en-PH``, ``en-CA``...: ``MONTH_FIRST``) month first; other English regions
  and most other languages day first.
- O5. The site's country domain (``.uk``, ``.de``... day first; ``.us``, ``.gov``, ``.edu``,
  ``.mil`` month first).
- O6. Otherwise the date is *ambiguous*: read as the later of the two days (the safe side for a
  before-the-claim filter), its rule starts with ``"ambiguous"``, and it votes with a low weight;
  an htmldate date equal to either reading is that same string read with htmldate's own guess,
  and is marked ambiguous too.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import json
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from factseek.datepolicy import (
    AMBIGUOUS,
    ARCHIVE_SOURCE,
    BOUND_SOURCES,
    MODIFIED_META,
    PUBLISHED_META,
    WEIGHTS,
    DateChoice,
    choose,
    could_change,
)
from factseek.dates import (
    DayOrder,
    Reading,
    local_day,
    reachable_days,
    read_date,
    url_date,
)
from factseek.textlen import text_units
from factseek.types import DateEvidence
from factseek.webarchive import snapshot

MAX_JSONLD_CHARS = 200_000  # one JSON-LD block larger than this is ignored
MAX_TEXT_SCAN = 200_000  # characters of page text scanned for other numeric dates (O2)
MAX_CANDIDATES = 40  # visible date elements examined
HEADLINE_LINE_WORDS = (
    16  # a line after the headline longer than this (textlen) is text, not a dateline
)

#: Languages (and English regions) that write numeric dates month first.
MONTH_FIRST: frozenset[str] = frozenset({"en-us", "en-ph", "en-ca", "en-um", "en-as", "en-gu"})
#: Languages whose numeric dates are day first (their region does not matter).
DAY_FIRST_LANGS: frozenset[str] = frozenset(
    [
        "de",
        "fr",
        "es",
        "it",
        "pt",
        "nl",
        "ru",
        "pl",
        "tr",
        "sv",
        "da",
        "no",
        "nb",
        "nn",
        "fi",
        "cs",
        "sk",
        "el",
        "ro",
        "uk",
        "ar",
        "he",
        "id",
        "ms",
        "vi",
        "hr",
        "sr",
        "sl",
        "bg",
        "et",
        "lv",
        "lt",
        "ca",
        "gl",
        "eu",
        "is",
        "ga",
        "cy",
        "af",
        "sw",
        "hi",
        "bn",
        "ur",
        "fa",
        "th",
    ]
)
DAY_FIRST_TLDS: frozenset[str] = frozenset(
    [
        "uk",
        "ie",
        "au",
        "nz",
        "in",
        "za",
        "de",
        "at",
        "ch",
        "fr",
        "be",
        "nl",
        "es",
        "it",
        "pt",
        "br",
        "ar",
        "mx",
        "co",
        "cl",
        "pe",
        "ru",
        "pl",
        "se",
        "dk",
        "no",
        "fi",
        "cz",
        "sk",
        "gr",
        "ro",
        "ua",
        "il",
        "id",
        "my",
        "sg",
        "vn",
        "tr",
        "ng",
        "ke",
        "eu",
    ]
)
MONTH_FIRST_TLDS: frozenset[str] = frozenset({"us", "gov", "edu", "mil"})

_ARTICLE_TYPES = re.compile(r"article|posting|report|story|news", re.I)
_NOT_MAIN = re.compile(
    r"related|comment|sidebar|widget|footer|recommend|popular|trending|teaser|most-|more-|"
    r"nav|menu|breadcrumb|share|promo|newsletter|calendar|archive|ticker|reply|masthead|"
    r"site-header|topbar|top-bar|weather|today|cookie|rail|card",
    re.I,
)
_NOT_MAIN_TAGS = frozenset({"nav", "aside", "footer", "script", "style", "noscript", "template"})
_UPDATED = re.compile(
    r"updat|modif|aktualisiert|geändert|mis à jour|actualiz|aggiornat|bijgewerkt|更新|修改", re.I
)
_PUBLISHED = re.compile(
    r"publi|posted|veröffentlicht|erschienen|publié|publicado|pubblicato|公開|发布|發佈|掲載", re.I
)
_DIGIT = re.compile(r"\d")
_NUMERIC_ANY = re.compile(
    r"(?<![\d/.\-])(\d{1,2})([/.\-])(\d{1,2})\2((?:19|20)\d{2})(?![\d/.\-]\d)"
)


@dataclass(frozen=True, kw_only=True)
class PageDates:
    """A page's date evidence and the publication date chosen from it."""

    evidence: tuple[DateEvidence, ...]
    choice: DateChoice
    offset: _dt.timedelta | None = None  # the page's own UTC offset, when its dates give one


@dataclass(frozen=True)
class _Found:
    source: str
    raw: str


# ----------------------------------------------------------------------------- gathering


def _jsonld(tree: Any) -> list[_Found]:
    published: list[tuple[int, str]] = []  # (0 for an article type, else 1; value)
    modified: list[tuple[int, str]] = []
    for script in tree.iterfind(".//script"):
        if (script.get("type") or "").strip().lower() != "application/ld+json":
            continue
        raw = script.text or ""
        if len(raw) > MAX_JSONLD_CHARS:
            continue
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        for kind, key, value in _jsonld_walk(data):
            (published if key == "datePublished" else modified).append((kind, value))
    out: list[_Found] = []
    if published:
        out.append(_Found("json-ld", min(published, key=lambda x: x[0])[1]))
    if modified:
        out.append(_Found("json-ld:dateModified", min(modified, key=lambda x: x[0])[1]))
    return out


def _jsonld_walk(obj: Any, depth: int = 0) -> Iterator[tuple[int, str, str]]:
    if depth > 20:
        return
    if isinstance(obj, list):
        for x in obj[:1000]:
            yield from _jsonld_walk(x, depth + 1)
    elif isinstance(obj, dict):
        types = obj.get("@type")
        names = " ".join(types if isinstance(types, list) else [str(types or "")])
        kind = 0 if _ARTICLE_TYPES.search(names) else 1
        for key in ("datePublished", "dateModified"):
            v = obj.get(key)
            if isinstance(v, str):
                yield kind, key, v
        for key, v in obj.items():
            if key not in ("datePublished", "dateModified") and isinstance(v, (list, dict)):
                yield from _jsonld_walk(v, depth + 1)


def _meta(tree: Any) -> list[_Found]:
    wanted = set(PUBLISHED_META) | set(MODIFIED_META)
    found: dict[str, str] = {}
    for meta in tree.iterfind(".//meta"):
        for attr in ("property", "name", "itemprop", "http-equiv"):
            key = (meta.get(attr) or "").strip().lower()
            if key in wanted:
                content = (meta.get("content") or "").strip()
                if content and key not in found:
                    found[key] = content
                break
    order = [*PUBLISHED_META, *MODIFIED_META]
    return [_Found(f"meta:{k}", found[k]) for k in sorted(found, key=order.index)]


def _microdata(tree: Any) -> list[_Found]:
    for el in tree.xpath("//*[@itemprop]")[:2000]:  # cheaper than testing the value in XPath
        if el.get("itemprop") == "datePublished" and el.tag != "meta":
            raw = el.get("datetime") or el.get("content") or _text(el)
            if raw:
                return [_Found("microdata", raw)]
    return []


def _text(el: Any, limit: int = 300) -> str:
    try:
        t = el.text_content()
    except ValueError:
        return ""
    t = " ".join(t[: limit * 2].split())
    return t if len(t) <= limit else ""


def _outside_main(el: Any) -> bool:
    for a in (el, *el.iterancestors()):
        if a.tag in _NOT_MAIN_TAGS:
            return True
        marks = f"{a.get('class') or ''} {a.get('id') or ''}"
        if a is not el and marks.strip() and _NOT_MAIN.search(marks):
            return True
    return False


def _in_article(el: Any) -> bool:
    return any(
        a.tag in ("article", "main") or a.get("itemprop") == "articleBody"
        for a in el.iterancestors()
    )


_MARKS = re.compile(r"date|time|byline|publi|posted|meta|submitted", re.I)


def _marked(root: Any) -> Iterator[Any]:
    """``<time>`` elements and elements whose class or id speaks of dates or bylines, in order."""
    for el in root.iter():
        if el.tag == "time" or (
            isinstance(el.tag, str)
            and _MARKS.search(f"{el.get('class') or ''} {el.get('id') or ''}")
        ):
            yield el


def _visible(tree: Any) -> list[_Found]:
    """The first visible publication date and the first "Updated" date (article first).

    Candidates: ``<time>`` elements and elements whose class or id speaks of dates or bylines,
    in the first ``<article>`` or ``<main>``; failing those, a short line right after the
    headline; failing that, such elements anywhere on the page.
    """
    candidates: list[tuple[bool, str, str]] = []  # (in article, kind, raw)

    def has_date() -> bool:
        return any(kind == "text" for _, kind, _ in candidates)

    def scan(root: Any, inside: bool) -> None:
        after_pick = 0  # candidates examined since the first publication date
        for el in itertools.islice(_marked(root), MAX_CANDIDATES * 5):
            found = _dated(el)
            if found is not None:
                candidates.append((inside or _in_article(el), *found))
            after_pick += has_date()
            if len(candidates) >= MAX_CANDIDATES or after_pick > 3:
                break  # an "Updated" line sits next to the date it updates, if anywhere

    article = next(tree.iter("article", "main"), None)
    if article is not None:
        scan(article, True)
    if not has_date():
        for el in _after_headline(tree):
            found = _dated(el)
            if found and found[0] == "text" and text_units(found[1]) <= HEADLINE_LINE_WORDS:
                candidates.append((True, *found))
                break
    if not has_date():
        scan(tree, False)
    out: list[_Found] = []
    for kind in ("text", "text:updated"):
        mine = [c for c in candidates if c[1] == kind]
        pick = next((c for c in mine if c[0]), mine[0] if mine else None)
        if pick is not None:
            out.append(_Found(kind, pick[2]))
    return out


def _dated(el: Any) -> tuple[str, str] | None:
    """("text" or "text:updated", the raw string) for a short element stating a date."""
    if el.get("itemprop") == "datePublished":
        return None  # the microdata source already
    text = _text(el)
    raw = (el.get("datetime") or text) if el.tag == "time" else text
    if not raw or not _DIGIT.search(raw) or _outside_main(el) or read_date(raw) is None:
        return None
    words = f"{el.get('class') or ''} {el.get('id') or ''} {text}"
    updated = bool(_UPDATED.search(words)) and not _PUBLISHED.search(words)
    return ("text:updated" if updated else "text"), raw


def _after_headline(tree: Any) -> list[Any]:
    """Up to 4 elements after the first ``<h1>`` (the article's first), and after its parent."""
    h1s = tree.xpath("//article//h1 | //main//h1") or tree.xpath("//h1")
    if not h1s:
        return []
    h1 = h1s[0]
    out = list(itertools.islice(h1.itersiblings(), 4))
    parent = h1.getparent()
    if parent is not None and parent.tag not in ("body", "article", "main"):
        out += list(itertools.islice(parent.itersiblings(), 4))
    return [el for el in out if isinstance(el.tag, str)]


def _language(tree: Any | None, headers: Mapping[str, str]) -> str:
    langs: list[str] = []
    if tree is not None:
        langs.append(
            tree.get("lang") or tree.get("{http://www.w3.org/XML/1998/namespace}lang") or ""
        )
        for meta in tree.iterfind(".//meta"):
            key = (meta.get("http-equiv") or meta.get("property") or "").strip().lower()
            if key in ("content-language", "og:locale"):
                langs.append(meta.get("content") or "")
    langs.append(headers.get("content-language", ""))
    for lang in langs:
        lang = lang.strip().lower().replace("_", "-").split(",")[0]
        if lang:
            return lang[:20]
    return ""


# ----------------------------------------------------------------------------- resolving


def _fmt(r: Reading, order: str) -> str:
    parts = ["MM", "DD"] if order == "mdy" else ["DD", "MM"]
    return r.separator.join([*parts, "YYYY"])


def _order_signals(
    readings: list[tuple[_Found, Reading]], page_text: str, lang: str, host: str
) -> list[tuple[DayOrder, str]]:
    """Page-wide day/month order signals, strongest first (rules O2, O4, O5; O3 is per date)."""
    signals: list[tuple[DayOrder, str]] = []
    counts: Counter[str] = Counter()
    example: dict[str, str] = {}
    raws = [f.raw for f, _ in readings]
    for m in (
        *_NUMERIC_ANY.finditer(page_text[:MAX_TEXT_SCAN]),
        *(_NUMERIC_ANY.search(r) for r in raws),
    ):
        if m is None or m[2] == ".":
            continue
        a, b = int(m[1]), int(m[3])
        if a > 12 >= b >= 1:
            counts["dmy"] += 1
            example.setdefault("dmy", m[0])
        elif b > 12 >= a >= 1:
            counts["mdy"] += 1
            example.setdefault("mdy", m[0])
        if sum(counts.values()) >= 200:
            break
    if counts and counts["dmy"] != counts["mdy"]:
        best: DayOrder = "dmy" if counts["dmy"] > counts["mdy"] else "mdy"
        first = "day" if best == "dmy" else "month"
        signals.append(
            (best, f"the page's other numeric dates are {first} first (e.g. {example[best]})")
        )
    if lang:
        base = lang.split("-")[0]
        if lang in MONTH_FIRST:
            signals.append(("mdy", f"page language {lang}"))
        elif (base == "en" and "-" in lang) or base in DAY_FIRST_LANGS:
            signals.append(("dmy", f"page language {lang}"))
    tld = host.rsplit(".", 1)[-1] if "." in host else ""
    if tld in DAY_FIRST_TLDS:
        signals.append(("dmy", f"site domain .{tld}"))
    elif tld in MONTH_FIRST_TLDS:
        signals.append(("mdy", f"site domain .{tld}"))
    return signals


def _settle_order(
    readings: list[tuple[_Found, Reading]],
    signals: list[tuple[DayOrder, str]],
    bound: _dt.date | None,
) -> list[tuple[_Found, Reading, str]]:
    # htmldate re-reads the page's own tags with its own day/month guess: not an independent date
    firm = {(r.date, f.source) for f, r in readings if not r.ambiguous and f.source != "htmldate"}
    out: list[tuple[_Found, Reading, str]] = []
    for f, r in readings:
        if r.form != "numeric":
            out.append((f, r, ""))
            continue
        if not r.ambiguous:
            other = "either order" if r.order == "either" else "the other order is impossible"
            out.append((f, r, f"{_fmt(r, r.order or 'mdy')} ({other})"))
            continue
        assert r.other is not None
        alt_order: DayOrder = "dmy" if r.order == "mdy" else "mdy"
        later, earlier = (r, r.order), (replace(r, date=r.other, other=None), alt_order)
        pick: tuple[Reading, str] | None = None
        why = ""
        if bound is not None and r.date > bound >= r.other:
            pick, why = earlier, "the other reading is after the archive snapshot"
        matches = [s for d, s in firm if d in (r.date, r.other)]
        if pick is None and matches:
            days = {d for d, s in firm if d in (r.date, r.other)}
            if len(days) == 1:
                pick = later if r.date in days else earlier
                why = f"matches {sorted(matches)[0]}"
        if pick is None and r.separator == ".":
            pick = later if r.order == "dmy" else earlier
            why = "dotted dates are day first"
        if pick is None and signals:
            order, why = signals[0]
            pick = later if r.order == order else earlier
        if pick is None:
            rule = (
                f"{AMBIGUOUS} day/month order: read as the later {r.date.isoformat()} "
                f"({r.other.isoformat()} the other way)"
            )
            out.append((f, r, rule))
            continue
        chosen, order = pick
        out.append((f, replace(chosen, other=None, order=order), f"{_fmt(r, order)}: {why}"))
    return out


def _page_offset(readings: list[tuple[_Found, Reading, str]]) -> _dt.timedelta | None:
    offsets = Counter(
        r.offset for _, r, _ in readings if r.offset is not None and r.offset != _dt.timedelta(0)
    )
    if not offsets:
        return None
    top = max(offsets.values())
    return next(
        r.offset for _, r, _ in readings if r.offset is not None and offsets[r.offset] == top
    )


def _fmt_offset(off: _dt.timedelta) -> str:
    minutes = int(off.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def _settle_zone(
    f: _Found, r: Reading, page_offset: _dt.timedelta | None, local_days: set[_dt.date]
) -> tuple[_dt.date, str]:
    """Rules T1-T4 for one reading: its local day and the rule text."""
    if r.time is None:
        return r.date, ""
    hhmm = r.time.strftime("%H:%M")
    if r.offset is None:
        return r.date, f"local time {hhmm}, no offset"
    if not r.is_utc:
        return r.date, f"local time {hhmm}{_fmt_offset(r.offset)}"
    if page_offset is not None:
        return local_day(
            r, page_offset
        ), f"UTC {hhmm} read at the page's offset {_fmt_offset(page_offset)}"
    reach = reachable_days(r)
    if f.source == ARCHIVE_SOURCE:
        return reach[-1], f"UTC {hhmm}; the page gives no offset, so the latest day it can be"
    hints = sorted(d for d in local_days if d in reach and d != r.date)
    if r.date not in local_days and len(hints) == 1:
        return hints[0], f"UTC {hhmm} read as the page's own day {hints[0].isoformat()}"
    return r.date, f"UTC {hhmm}; the page gives no offset"


def page_dates(
    tree: Any | None,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    estimate: Callable[[], str | None] | None = None,
    today: _dt.date | None = None,
) -> PageDates:
    """Every date the page states, as ``DateEvidence``, and the chosen publication date.

    Sources are read cheapest first, and a costlier one only when it could matter:

    1. structured data (JSON-LD, meta tags, microdata), the URL, the HTTP header, the archive;
    2. visible text, when its vote could change the choice (``datepolicy.could_change`` with
       its weight plus htmldate's) or a UTC time has no page offset to be read at (rule T3
       needs the page's own days);
    3. ``estimate()``, htmldate's estimate (source ``htmldate``), when its vote could change
       the choice.
    """
    today = today or _dt.date.today()
    hdrs = {k.lower(): v for k, v in (headers or {}).items()}
    snap = snapshot(url)
    page_url = snap.original if snap is not None else url
    found: list[_Found] = []
    if tree is not None:
        found += _jsonld(tree) + _meta(tree) + _microdata(tree)
    d = url_date(page_url, today=today)
    if d is not None:
        found.append(_Found("url", d.isoformat()))
    if hdrs.get("last-modified"):
        found.append(_Found("last-modified", hdrs["last-modified"]))
    if snap is not None and snap.taken is not None:
        found.append(_Found(ARCHIVE_SOURCE, snap.taken.strftime("%Y-%m-%dT%H:%M:%SZ")))
    page = _Page(tree=tree, headers=hdrs, url=page_url, archived=snap is not None, today=today)

    evidence, settled, offset = _resolve(found, page)
    lone_utc = any(r.is_utc for _, r, _ in settled) and offset is None
    if tree is not None and (lone_utc or could_change(evidence, VISIBLE_AND_ESTIMATE)):
        found += _visible(tree)
        evidence, settled, offset = _resolve(found, page)
    if estimate is not None and could_change(evidence, WEIGHTS["htmldate"]):
        value = estimate()
        r = read_date(value, today=today) if value else None
        if r is not None:
            # both readings of a date whose order stayed unknown: htmldate picking either one
            # is that same string read with htmldate's own guess, not a second source
            unsure = {d for _, x, _ in settled if x.other is not None for d in (x.date, x.other)}
            rule = f"{AMBIGUOUS}: one reading of a date whose day/month order is unknown"
            evidence.append(
                DateEvidence(
                    source="htmldate", date=r.date, raw=value, rule=rule if r.date in unsure else ""
                )
            )
    ev = tuple(evidence)
    return PageDates(evidence=ev, choice=choose(ev), offset=offset)


VISIBLE_AND_ESTIMATE = WEIGHTS["text"] + WEIGHTS["htmldate"]


@dataclass(frozen=True)
class _Page:
    tree: Any | None
    headers: Mapping[str, str]
    url: str
    archived: bool
    today: _dt.date


def _resolve(
    found: list[_Found], page: _Page
) -> tuple[list[DateEvidence], list[tuple[_Found, Reading, str]], _dt.timedelta | None]:
    """Read every string, settle day/month order and time zones: the page's evidence."""
    readings = [(f, r) for f in found if (r := read_date(f.raw, today=page.today)) is not None]
    signals: list[tuple[DayOrder, str]] = []
    if any(r.ambiguous for _, r in readings):  # the page-wide signals cost a scan of its text
        body = page.tree.find("body") if page.tree is not None else None
        text = body.text_content()[:MAX_TEXT_SCAN] if body is not None else ""
        host = (urlsplit(page.url).hostname or "").lower()
        signals = _order_signals(readings, text, _language(page.tree, page.headers), host)
    bound = next((r.date for f, r in readings if f.source == ARCHIVE_SOURCE), None)
    settled = _settle_order(readings, signals, bound + _dt.timedelta(days=1) if bound else None)
    offset = _page_offset(settled)
    local_days = {  # days the page gives in its own zone: dates alone, wall times with no offset
        r.date for f, r, _ in settled if r.offset is None and f.source not in BOUND_SOURCES
    }
    evidence: list[DateEvidence] = []
    for f, r, order_rule in settled:
        day, zone_rule = _settle_zone(f, r, offset, local_days)
        rule = "; ".join(x for x in (order_rule, zone_rule) if x)
        if f.source == "url":
            rule = rule or ("archived page's URL" if page.archived else "")
        evidence.append(DateEvidence(source=f.source, date=day, raw=f.raw[:200], rule=rule))
    return evidence, settled, offset
