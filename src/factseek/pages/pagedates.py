"""The dates a web page gives for itself, read in the page's own time zone and day/month order.

``page_dates(tree, url, *, headers=None, estimate=None) -> PageDates`` gathers every date a page
states (``factseek.pages.sources`` finds them in the tree), reads each string with ``factseek.pages.dates.read_date``, settles what one string cannot say
alone (its time zone, its day/month order) from the rest of the page, and picks the publication
date with ``factseek.pages.datepolicy.choose``. Each date is one ``DateEvidence(source, date, raw, rule)``:

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
``htmldate``,              htmldate's estimate, asked for only when it could change the
``htmldate:heuristic``     choice: its markup search, else its extensive heuristic search
                           (running text, copyright years: a guess)
``masthead``               htmldate's estimate when it is the date a masthead prints for
                           today above the headline ("Tuesday, 08 Dec 2020":
                           ``sources.masthead_day``): the day the page was served, an upper
                           bound, not a vote
``url``                    a date in the URL path (of the archived page, for an archive copy)
``post-id``                a social post's creation time, from the ID in its URL (X/Twitter
                           status IDs, Bluesky record keys: ``dates.post_time``): exact
``last-modified``          the HTTP header (an upper bound)
``archive``                a web-archive snapshot's timestamp (an upper bound)
``pdf:created``,           a PDF's ``/CreationDate`` and ``/ModDate`` (``factseek.pages.pdftext``;
``pdf:modified``           the second a modification)
=========================  ==================================================================

Time zones (``DateEvidence.date`` is always the day in the page's own zone; ``raw`` keeps the string):

- T1. A time with a non-UTC offset (``+02:00``, ``EDT``) keeps the day as written.
- T2. A UTC time (``Z``, ``+00:00``, ``GMT``) is read at the page's own offset: the most common
  non-UTC offset among all the page's dates (the first one on a tie).
- T3. With no such offset, a UTC time is read as the day that the page gives in its own zone
  (dates without a time, or wall times without an offset: URL, visible text, tags), when exactly
  one such day differs from the UTC day, the UTC day is not among them, and a plausible offset
  (``dates.PLAUSIBLE_OFFSETS``) reaches it.
- T3b. Otherwise, when the page gives no day of its own that an offset reaches, at the most
  common non-UTC offset of the full times (ISO 8601, RFC 2822) written in the page's scripts:
  feeds, schedules and comment times run on the site's clock (``script_offset``).
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

htmldate's estimate is another page's date, or no day at all, and is set aside
(``PageDates.set_aside`` says why; a page left with no date then follows the temporal
constraint's undated policy: unknown is safer than too early), when the page states that day in
no source of its own and:

- G1. it is printed only in items of a list of other stories or in another story's
  ``<article>`` (``sources.printed_outside`` gives ``OTHER_STORIES``);
- G2. it is the JSON-LD date of something else the page describes: a video, an image, an article
  in a list, the publisher (``sources.jsonld_other_days``);
- G3. it came from the heuristic search alone and is the date in the address of a link to
  another page, or the 1st of a month written nowhere in full: a copyright line or a year
  (read as 1 January), a month and year or an upload folder (read as the 1st)
  (``sources.unwritten_guess``).
"""

from __future__ import annotations

import datetime as _dt
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

from factseek.pages.datepolicy import (
    AMBIGUOUS,
    ARCHIVE_SOURCE,
    BOUND_SOURCES,
    HEURISTIC_SOURCE,
    MODIFICATION_SOURCES,
    OUTSIDE_ARTICLE,
    POST_ID_SOURCE,
    SERVED_SOURCE,
    WEIGHTS,
    DateChoice,
    choose,
    choose_modified,
    confidence,
    could_change,
)
from factseek.pages.dates import (
    DayOrder,
    Reading,
    local_day,
    out_of_range,
    post_time,
    reachable_days,
    read_date,
    url_date,
)
from factseek.pages.sources import (
    OTHER_STORIES,
    Found,
    jsonld_other_days,
    language,
    masthead_day,
    printed_outside,
    structured,
    unwritten_guess,
    visible,
)
from factseek.pages.webarchive import snapshot
from factseek.types import DateEvidence

MAX_TEXT_SCAN = 200_000  # characters of page text scanned for other numeric dates (O2)

#: Languages (and English regions) that write numeric dates month first.
MONTH_FIRST: frozenset[str] = frozenset({"en-us", "en-ph", "en-ca", "en-um", "en-as", "en-gu"})
#: Languages whose numeric dates are day first (their region does not matter).
DAY_FIRST_LANGS: frozenset[str] = frozenset({
    "de", "fr", "es", "it", "pt", "nl", "ru", "pl", "tr", "sv", "da", "no", "nb", "nn", "fi", "cs",
    "sk", "el", "ro", "uk", "ar", "he", "id", "ms", "vi", "hr", "sr", "sl", "bg", "et", "lv", "lt",
    "ca", "gl", "eu", "is", "ga", "cy", "af", "sw", "hi", "bn", "ur", "fa", "th",
})  # fmt: skip
DAY_FIRST_TLDS: frozenset[str] = frozenset({
    "uk", "ie", "au", "nz", "in", "za", "de", "at", "ch", "fr", "be", "nl", "es", "it", "pt", "br",
    "ar", "mx", "co", "cl", "pe", "ru", "pl", "se", "dk", "no", "fi", "cz", "sk", "gr", "ro", "ua",
    "il", "id", "my", "sg", "vn", "tr", "ng", "ke", "eu",
})  # fmt: skip
MONTH_FIRST_TLDS: frozenset[str] = frozenset({"us", "gov", "edu", "mil"})

_DIGIT = re.compile(r"\d")
_NUMERIC_ANY = re.compile(
    r"(?<![\d/.\-])(\d{1,2})([/.\-])(\d{1,2})\2((?:19|20)\d{2})(?![\d/.\-]\d)"
)


@dataclass(frozen=True, kw_only=True)
class PageDates:
    """A page's date evidence, the publication date chosen from it, its last stated
    modification (``datepolicy.choose_modified``) and the publication date's confidence
    (``"low"`` for a guess, ``datepolicy.confidence``)."""

    evidence: tuple[DateEvidence, ...]
    choice: DateChoice
    offset: _dt.timedelta | None = None  # the page's own UTC offset, when its dates give one
    modified: DateChoice = field(default_factory=lambda: DateChoice(date=None))
    confidence: str = ""
    set_aside: str = ""  # htmldate's estimate, when it was another page's date or no day (G1-G3)


# ----------------------------------------------------------------------------- resolving


def _fmt(r: Reading, order: str) -> str:
    parts = ["MM", "DD"] if order == "mdy" else ["DD", "MM"]
    return r.separator.join([*parts, "YYYY"])


def _order_signals(
    readings: list[tuple[Found, Reading]], page_text: str, lang: str, host: str
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
    readings: list[tuple[Found, Reading]],
    signals: list[tuple[DayOrder, str]],
    bound: _dt.date | None,
) -> list[tuple[Found, Reading, str]]:
    # htmldate re-reads the page's own tags with its own day/month guess: not an independent date
    firm = {(r.date, f.source) for f, r in readings if not r.ambiguous and f.source != "htmldate"}
    out: list[tuple[Found, Reading, str]] = []
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


def _page_offset(readings: list[tuple[Found, Reading, str]]) -> _dt.timedelta | None:
    offsets = Counter(
        r.offset for _, r, _ in readings if r.offset is not None and r.offset != _dt.timedelta(0)
    )
    if not offsets:
        return None
    top = max(offsets.values())
    return next(
        r.offset for _, r, _ in readings if r.offset is not None and offsets[r.offset] == top
    )


_SCRIPT_TIME = re.compile(
    r"\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?([+-]\d\d):?(\d\d)(?!\d)"  # ISO 8601
    r"|\b\d{1,2} [A-Z][a-z]{2} \d{4} \d\d:\d\d(?::\d\d)? ([+-]\d\d)(\d\d)\b"  # RFC 2822
)
MAX_SCRIPT_SCAN = 200_000  # characters of the page's scripts scanned for times with offsets (T3b)


def script_offset(tree: Any) -> _dt.timedelta | None:
    """T3b: the most common non-UTC offset of the full times (ISO 8601, RFC 2822) written in the
    page's scripts (feeds, schedules, comment times: the site's own clock), when its dates give
    none. None when they state no such time."""
    seen = 0
    offsets: Counter[_dt.timedelta] = Counter()
    for text in tree.xpath("//script/text()"):
        chunk = str(text)[: MAX_SCRIPT_SCAN - seen]
        seen += len(chunk)
        for m in _SCRIPT_TIME.finditer(chunk):
            hh, mm = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
            minutes = int(hh[1:]) * 60 + int(mm)
            off = _dt.timedelta(minutes=-minutes if hh[0] == "-" else minutes)
            if off and abs(off) <= _dt.timedelta(hours=14):
                offsets[off] += 1
        if seen >= MAX_SCRIPT_SCAN:
            break
    return offsets.most_common(1)[0][0] if offsets else None


def _fmt_offset(off: _dt.timedelta) -> str:
    minutes = int(off.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def _settle_zone(
    f: Found,
    r: Reading,
    page_offset: _dt.timedelta | None,
    local_days: set[_dt.date],
    scripts: _dt.timedelta | None = None,
) -> tuple[_dt.date, str]:
    """Rules T1-T4 for one reading: its local day and the rule text (``scripts``: T3b's
    offset)."""
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
    if scripts is not None and not any(d in reach for d in local_days):
        return local_day(r, scripts), (
            f"UTC {hhmm} read at the offset of the times in the page's scripts "
            f"{_fmt_offset(scripts)}"
        )
    return r.date, f"UTC {hhmm}; the page gives no offset"


def page_dates(
    tree: Any | None,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    estimate: Callable[[], Found | None] | None = None,
    today: _dt.date | None = None,
    extra: Sequence[Found] = (),
) -> PageDates:
    """Every date the page states, as ``DateEvidence``, and the chosen publication date.

    Sources:

    1. structured data (JSON-LD, meta tags, microdata), the URL, the HTTP header, the archive;
    2. visible text, always: its "Updated ..." line can be the page's last modification even
       when structured data settles the publication date (about 4% of extraction time on real
       news pages);
    3. ``estimate()``, htmldate's estimate (``Found("htmldate", ...)`` when its markup search
       found it, ``Found("htmldate:heuristic", ...)`` when only its extensive search did), when
       its vote could change the choice.
    """
    today = today or _dt.date.today()
    hdrs = {k.lower(): v for k, v in (headers or {}).items()}
    snap = snapshot(url)
    page_url = snap.original if snap is not None else url
    found: list[Found] = []
    if tree is not None:
        found += structured(tree)
    found += extra  # dates found elsewhere (a PDF's document information)
    d = url_date(page_url, today=today)
    if d is not None:
        found.append(Found("url", d.isoformat()))
    posted = post_time(page_url, today=today)
    if posted is not None:
        found.append(Found(POST_ID_SOURCE, posted.strftime("%Y-%m-%dT%H:%M:%SZ")))
    if hdrs.get("last-modified"):
        found.append(Found("last-modified", hdrs["last-modified"]))
    if snap is not None and snap.taken is not None:
        found.append(Found(ARCHIVE_SOURCE, snap.taken.strftime("%Y-%m-%dT%H:%M:%SZ")))
    page = _Page(tree=tree, headers=hdrs, url=page_url, archived=snap is not None, today=today)

    if tree is not None:
        found += visible(tree)
    evidence, settled, offset = _resolve(found, page)
    set_aside = ""
    if estimate is not None and could_change(evidence, WEIGHTS["htmldate"]):
        guess = estimate()
        value = guess.raw if guess is not None else ""
        r = read_date(value, today=today) if guess is not None else None
        if guess is not None and r is not None:
            # both readings of a date whose order stayed unknown: htmldate picking either one
            # is that same string read with htmldate's own guess, not a second source
            unsure = {d for _, x, _ in settled if x.other is not None for d in (x.date, x.other)}
            rule = ""
            where = printed_outside(tree, r.date) if tree is not None else ""
            if r.date in unsure:
                rule = f"{AMBIGUOUS}: one reading of a date whose day/month order is unknown"
            elif where:
                rule = f"{OUTSIDE_ARTICLE} (a sidebar's, footer's or related story's date)"
            source = guess.source
            stated = {e.date for e in evidence} | unsure
            why = _not_the_pages(tree, guess, r.date, where, stated, today)
            if why:
                set_aside = f"htmldate's {r.date.isoformat()} set aside: {why}"
            elif not rule and tree is not None and masthead_day(tree) == r.date:
                source = SERVED_SOURCE  # an upper bound, not a vote
                rule = "htmldate's date is the masthead's date for today: the day it was served"
            if not why:
                evidence.append(
                    DateEvidence(source=source, date=r.date, raw=value[:200], rule=rule)
                )
    ev = tuple(evidence)
    choice = choose(ev)
    absurd = [
        (f.source, f.raw[:200], day)
        for f in found
        if f.source in MODIFICATION_SOURCES and (day := out_of_range(f.raw, today=today))
    ]
    return PageDates(
        evidence=ev,
        choice=choice,
        offset=offset,
        modified=choose_modified(ev, choice.date, absurd=absurd),
        confidence=confidence(ev, choice),
        set_aside=set_aside,
    )


def _not_the_pages(
    tree: Any | None,
    guess: Found,
    day: _dt.date,
    where: str,
    stated: set[_dt.date],
    today: _dt.date,
) -> str:
    """Why htmldate's estimate ``day`` is another page's date or no day at all (rules G1-G3 of
    the module docstring), or ``""``. A day the page states in a source of its own stays."""
    if tree is None or day in stated:
        return ""
    if where == OTHER_STORIES:
        return "printed only in a list of other stories or in another story's <article>"
    if day in jsonld_other_days(tree):
        return (
            "the JSON-LD date of something else on the page (a video, an image, a listed article)"
        )
    if guess.source == HEURISTIC_SOURCE:
        return unwritten_guess(tree, day, today=today)
    return ""


@dataclass(frozen=True)
class _Page:
    tree: Any | None
    headers: Mapping[str, str]
    url: str
    archived: bool
    today: _dt.date


def _resolve(
    found: list[Found], page: _Page
) -> tuple[list[DateEvidence], list[tuple[Found, Reading, str]], _dt.timedelta | None]:
    """Read every string, settle day/month order and time zones: the page's evidence."""
    readings = [(f, r) for f in found if (r := read_date(f.raw, today=page.today)) is not None]
    signals: list[tuple[DayOrder, str]] = []
    if any(r.ambiguous for _, r in readings):  # the page-wide signals cost a scan of its text
        body = page.tree.find("body") if page.tree is not None else None
        text = body.text_content()[:MAX_TEXT_SCAN] if body is not None else ""
        host = (urlsplit(page.url).hostname or "").lower()
        signals = _order_signals(readings, text, language(page.tree, page.headers), host)
    bound = next((r.date for f, r in readings if f.source == ARCHIVE_SOURCE), None)
    settled = _settle_order(readings, signals, bound + _dt.timedelta(days=1) if bound else None)
    offset = _page_offset(settled)
    scripts = None  # T3b's offset, read only when a UTC time needs it
    if offset is None and page.tree is not None and any(r.is_utc for _, r, _ in settled):
        scripts = script_offset(page.tree)
    local_days = {  # days the page gives in its own zone: dates alone, wall times with no offset
        r.date for f, r, _ in settled if r.offset is None and f.source not in BOUND_SOURCES
    }
    evidence: list[DateEvidence] = []
    for f, r, order_rule in settled:
        day, zone_rule = _settle_zone(f, r, offset, local_days, scripts)
        rule = "; ".join(x for x in (order_rule, zone_rule) if x)
        if f.source == "url":
            rule = rule or ("archived page's URL" if page.archived else "")
        if f.outside:
            rule = "; ".join(x for x in (f"{OUTSIDE_ARTICLE} (page-wide scan)", rule) if x)
        evidence.append(DateEvidence(source=f.source, date=day, raw=f.raw[:200], rule=rule))
    return evidence, settled, offset
