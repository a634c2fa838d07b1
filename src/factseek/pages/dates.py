"""Date strings to calendar days, keeping what the string said about time zone and order.

``read_date(value) -> Reading | None`` reads one string the way pages write dates and keeps
everything a later rule needs: the day as written, the wall time and UTC offset when given, and,
for a numeric date whose day and month could be swapped, both readings. ``parse_date(value)`` is
the plain form (a ``date`` or None). Deciding *between* readings needs the rest of the page
(its offset, its language, its other dates); ``factseek.pages.pagedates`` does that.

Forms, tried in this order (the first that matches anywhere in the first 200 characters wins):

==========  =========================================  ============================================
form        examples                                   notes
==========  =========================================  ============================================
``iso``     ``2019-10-18T22:04:00Z``, ``2019-10-18``   time, fractions, ``Z``/``+02:00``/``+0200``
``ymd``     ``2019/10/18``, ``2019.10.18``             year first is never ambiguous
``compact`` ``20191018``, ``20191018T220400Z``         only at the start of the string
``cjk``     ``2019年10月18日``, ``2019년 10월 18일``
``numeric`` ``10/18/2019``, ``18.10.2019``, ``1-2-2020``  day/month order: see below
``words``   ``Oct. 18, 2019 10:04 PM EDT``, ``18 October 2019``, ``18. Oktober 2019``,
            ``18 de octubre de 2019``, ``Fri, 18 Oct 2019 22:04:00 GMT`` (RFC 2822)
==========  =========================================  ============================================

Month names: English, German, French, Spanish, Italian, Portuguese and Dutch. Times may follow a
date (``22:04``, ``10:04 pm``, ``um 22.04``) with an offset or a common zone abbreviation (``Z``,
``UTC``, ``GMT``, ``EDT``, ``CEST``, ``JST``...); an ambiguous abbreviation (``IST``) is ignored.

Numeric day/month order: with ``order="mdy"`` or ``"dmy"`` that order is used. Without one, a
value that can only be read one way (``10/18/2019``: 18 is no month; ``12/11/2027``: one reading
is in the future) is read that way; one that can be read both ways (``11/01/2023``) gives
``Reading.ambiguous``: ``date`` is the *later* reading and ``other`` the earlier one, so a caller
that does nothing more errs on the safe side of a before-the-claim filter.

Every day must lie between ``EARLIEST_DATE`` (1990-01-01: no web page is older) and tomorrow;
anything else is junk (None).
"""

from __future__ import annotations

import datetime as _dt
import functools
import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

DayOrder = Literal["mdy", "dmy"]

EARLIEST_DATE = _dt.date(1990, 1, 1)  # no web page is older; earlier values are junk
MAX_CHARS = 200  # of a date string read; the rest is ignored

_MONTH_NAMES: tuple[tuple[str, ...], ...] = (
    # en, de, fr, es, it, pt, nl and common abbreviations
    ("jan", "january", "januar", "jänner", "janv", "janvier", "ene", "enero", "gen", "gennaio", "janeiro", "januari"),
    ("feb", "february", "februar", "févr", "fevr", "février", "fevrier", "febrero", "febbraio", "fev", "fevereiro", "februari"),
    ("mar", "march", "mär", "märz", "maerz", "mars", "marzo", "março", "marco", "mrt", "maart"),
    ("apr", "april", "avr", "avril", "abr", "abril", "aprile"),
    ("may", "mai", "mayo", "mag", "maggio", "maio", "mei"),
    ("jun", "june", "juni", "juin", "junio", "giu", "giugno", "junho"),
    ("jul", "july", "juli", "juil", "juillet", "julio", "lug", "luglio", "julho"),
    ("aug", "august", "août", "aout", "ago", "agosto", "augustus"),
    ("sep", "sept", "september", "septembre", "septiembre", "setiembre", "set", "settembre", "setembro"),
    ("oct", "october", "okt", "oktober", "octobre", "octubre", "ott", "ottobre", "out", "outubro"),
    ("nov", "november", "novembre", "noviembre", "novembro"),
    ("dec", "december", "dez", "dezember", "déc", "décembre", "decembre", "dic", "diciembre", "dicembre", "dezembro"),
)  # fmt: skip
MONTHS: dict[str, int] = {name: i for i, names in enumerate(_MONTH_NAMES, 1) for name in names}

#: Zone abbreviations read after a time; minutes east of UTC. Ambiguous ones (IST, CST in Asia) are
#: left out on purpose: CST is read as US Central, the common meaning on English pages.
ZONES: dict[str, int] = {
    "Z": 0, "UT": 0, "UTC": 0, "GMT": 0, "WET": 0, "WEST": 60, "BST": 60, "CET": 60, "CEST": 120,
    "MEZ": 60, "MESZ": 120, "EET": 120, "EEST": 180, "MSK": 180, "EST": -300, "EDT": -240,
    "CST": -360, "CDT": -300, "MST": -420, "MDT": -360, "PST": -480, "PDT": -420, "AKST": -540,
    "AKDT": -480, "HST": -600, "JST": 540, "KST": 540, "HKT": 480, "SGT": 480, "AEST": 600,
    "AEDT": 660, "ACST": 570, "AWST": 480, "NZST": 720, "NZDT": 780,
}  # fmt: skip

_MONTH = r"([^\W\d_]{3,10})\.?"
_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("iso", re.compile(r"(?<!\d)(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)")),
    ("ymd", re.compile(r"(?<!\d)(\d{4})([/.])(\d{1,2})\2(\d{1,2})(?![\d/.]\d)")),
    ("compact", re.compile(r"^(\d{4})(\d{2})(\d{2})(?=T\d|\D|$)")),
    ("cjk", re.compile(r"(\d{4})\s*[年년]\s*(\d{1,2})\s*[月월]\s*(\d{1,2})\s*[日일]?")),
    ("numeric", re.compile(r"(?<![\d/.\-])(\d{1,2})([/.\-])(\d{1,2})\2(\d{4})(?![\d/.\-]\d)")),
    ("words-mdy", re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})(?!\d)")),
    (
        "words-dmy",
        re.compile(
            rf"(?<!\d)(\d{{1,2}})(?:st|nd|rd|th|er|º|\.)?\s*(?:de\s+)?{_MONTH},?\s+(?:de\s+)?(\d{{4}})(?!\d)"
        ),
    ),
)
_TIME = re.compile(
    r"^[\s,T]*(?:at\s+|um\s+|à\s+|a\s+las\s+|alle\s+|-\s*|\|\s*)?"
    r"(\d{1,2})[:h.](\d{2})(?::(\d{1,2}))?(?:[.,]\d{1,9})?\s*"
    r"(?:([AaPp])\.?\s?[Mm]\.?)?\s*(?:Uhr\s*)?"
    r"(Z(?![a-z])|[+-]\d{2}(?::?\d{2})?(?!\d)|(?:UTC|GMT)(?:[+-]\d{1,2}(?::?\d{2})?)?|[A-Z]{2,5}(?![A-Za-z]))?"
)
_COMPACT_TIME = re.compile(r"^T?(\d{2})(\d{2})(\d{2})?(Z|[+-]\d{2}:?\d{2})?")


@dataclass(frozen=True, kw_only=True)
class Reading:
    """What one date string says.

    ``date`` is the calendar day as written (in the string's own offset, if it has one). For an
    ambiguous numeric date, ``date`` is the later reading and ``other`` the earlier one.
    """

    date: _dt.date
    form: str  # "iso", "ymd", "compact", "cjk", "numeric", "words"
    other: _dt.date | None = None  # the day/month-swapped reading, when both are possible
    order: str = ""  # numeric forms: "mdy", "dmy" (the order ``date`` was read in), "either"
    separator: str = ""  # numeric forms: "/", "." or "-"
    time: _dt.time | None = None  # wall time, when given
    offset: _dt.timedelta | None = None  # offset from UTC, when given (zero for Z, UTC, GMT)

    @property
    def ambiguous(self) -> bool:
        return self.other is not None

    @property
    def is_utc(self) -> bool:
        """True for a time given in UTC (``Z``, ``+00:00``, ``GMT``): its local day is unknown."""
        return self.time is not None and self.offset == _dt.timedelta(0)


def _valid(year: int, month: int, day: int, today: _dt.date) -> _dt.date | None:
    try:
        d = _dt.date(year, month, day)
    except ValueError:
        return None
    if today == _UNBOUNDED:  # ``out_of_range``: any calendar day
        return d
    return d if EARLIEST_DATE <= d <= today + _dt.timedelta(days=1) else None


_UNBOUNDED = _dt.date(9000, 1, 1)  # a ``today`` that turns the range check off (``out_of_range``)


def _offset(token: str | None) -> _dt.timedelta | None:
    if not token:
        return None
    t = token.upper()
    if t in ZONES:
        return _dt.timedelta(minutes=ZONES[t])
    m = re.fullmatch(r"(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?", t)
    if m is None:
        return None
    minutes = int(m[2]) * 60 + int(m[3] or 0)
    if minutes > 14 * 60:
        return None
    return _dt.timedelta(minutes=-minutes if m[1] == "-" else minutes)


def _time_after(rest: str) -> tuple[_dt.time | None, _dt.timedelta | None]:
    m = _TIME.match(rest[:60])
    if m is None:
        return None, None
    hour, minute, second = int(m[1]), int(m[2]), int(m[3] or 0)
    if m[4]:
        if not 1 <= hour <= 12:
            return None, None
        hour = hour % 12 + (12 if m[4].lower() == "p" else 0)
    if hour > 23 or minute > 59 or second > 59:
        return None, None
    return _dt.time(hour, minute, second), _offset(m[5])


def read_date(
    value: str, *, order: DayOrder | None = None, today: _dt.date | None = None
) -> Reading | None:
    """Read one date string (see the module docstring); None when it holds no valid date."""
    s = value.strip()[:MAX_CHARS]
    if not s or not _DIGIT.search(s):
        return None
    return _read(s, order, today or _dt.date.today())


_DIGIT = re.compile(r"\d")


@functools.lru_cache(maxsize=4096)  # a page's strings are read more than once (pure function)
def _read(s: str, order: DayOrder | None, today: _dt.date) -> Reading | None:
    for form, pattern in _FORMS:
        m = pattern.search(s)
        if m is None:
            continue
        if form.startswith("words"):
            m = next((x for x in pattern.finditer(s) if _month_of(x, form) is not None), None)
            if m is None:
                continue  # "Sentence 5, 2020": no month name; a later form may still match
        rest = s[m.end() :]
        if form == "compact":
            tm = _COMPACT_TIME.match(rest)
            t, off = (None, None)
            if tm and int(tm[1]) < 24 and int(tm[2]) < 60:
                t, off = _dt.time(int(tm[1]), int(tm[2]), int(tm[3] or 0)), _offset(tm[4])
            d = _valid(int(m[1]), int(m[2]), int(m[3]), today)
            return Reading(date=d, form=form, time=t, offset=off) if d else None
        t, off = _time_after(rest)
        if form in ("iso", "cjk"):
            d = _valid(int(m[1]), int(m[2]), int(m[3]), today)
        elif form == "ymd":
            d = _valid(int(m[1]), int(m[3]), int(m[4]), today)
        elif form == "numeric":
            return _numeric(m, order, today, t, off)
        else:
            day = m[2] if form == "words-mdy" else m[1]
            d = _valid(int(m[3]), _month_of(m, form) or 0, int(day), today)
            form = "words"
        return Reading(date=d, form=form, time=t, offset=off) if d else None
    return None


def _month_of(m: re.Match[str], form: str) -> int | None:
    return MONTHS.get((m[1] if form == "words-mdy" else m[2]).lower())


def _numeric(
    m: re.Match[str],
    order: DayOrder | None,
    today: _dt.date,
    t: _dt.time | None,
    off: _dt.timedelta | None,
) -> Reading | None:
    a, sep, b, year = int(m[1]), m[2], int(m[3]), int(m[4])
    mdy, dmy = _valid(year, a, b, today), _valid(year, b, a, today)
    common = {"form": "numeric", "separator": sep, "time": t, "offset": off}
    if order is not None:
        d = mdy if order == "mdy" else dmy
        return Reading(date=d, order=order, **common) if d else None
    if mdy and dmy and mdy != dmy:
        later, earlier, later_order = (mdy, dmy, "mdy") if mdy > dmy else (dmy, mdy, "dmy")
        return Reading(date=later, other=earlier, order=later_order, **common)
    if mdy and dmy:
        return Reading(date=mdy, order="either", **common)
    if mdy:
        return Reading(date=mdy, order="mdy", **common)
    if dmy:
        return Reading(date=dmy, order="dmy", **common)
    return None


def days_in(text: str, *, today: _dt.date | None = None) -> set[_dt.date]:
    """Every calendar day written in full (day, month and year) anywhere in ``text``, in any
    form ``read_date`` reads; both readings of a numeric date whose order is unknown."""
    today = today or _dt.date.today()
    out: set[_dt.date] = set()
    for form, pattern in _FORMS:
        if form == "compact":
            continue  # only at the start of a string: a date string, not running text
        for m in pattern.finditer(text):
            r = read_date(m[0], today=today)
            if r is not None:
                out.update(d for d in (r.date, r.other) if d is not None)
    return out


def out_of_range(value: str, *, today: _dt.date | None = None) -> _dt.date | None:
    """The day a date string gives when it is a real calendar day outside the range every page
    date must lie in (before ``EARLIEST_DATE`` or after tomorrow); None otherwise (in range, or no
    date at all). Lets a caller say *why* a stated date was ignored."""
    s = value.strip()[:MAX_CHARS]
    if not s or not _DIGIT.search(s) or read_date(s, today=today) is not None:
        return None
    r = _read(s, None, _UNBOUNDED)
    return r.date if r is not None else None


def parse_date(value: str, *, today: _dt.date | None = None) -> _dt.date | None:
    """The calendar day a date string gives, as written (see ``read_date``), or None."""
    r = read_date(value, today=today)
    return r.date if r is not None else None


def local_day(reading: Reading, offset: _dt.timedelta) -> _dt.date:
    """The day a UTC time falls on at ``offset``; other readings keep the day as written."""
    if not reading.is_utc or reading.time is None:
        return reading.date
    return (_dt.datetime.combine(reading.date, reading.time) + offset).date()


#: The UTC offsets where nearly all news is published (Hawaii to New Zealand's standard time).
PLAUSIBLE_OFFSETS = (_dt.timedelta(hours=-10), _dt.timedelta(hours=12))


def reachable_days(reading: Reading) -> tuple[_dt.date, ...]:
    """The local days a UTC time can fall on at a plausible offset (``PLAUSIBLE_OFFSETS``)."""
    if not reading.is_utc or reading.time is None:
        return (reading.date,)
    at = _dt.datetime.combine(reading.date, reading.time)
    return tuple(sorted({(at + off).date() for off in (*PLAUSIBLE_OFFSETS, _dt.timedelta(0))}))


# ----------------------------------------------------------------------------- URLs

_URL_DATE = re.compile(
    r"/((?:19|20)\d{2})[/-](0?[1-9]|1[0-2])[/-](0?[1-9]|[12]\d|3[01])(?=/|-|_|\.|$)"
    r"|/((?:19|20)\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?=/|-|_|\.|$)"
)


def url_date(url: str, *, today: _dt.date | None = None) -> _dt.date | None:
    """The date in a URL path like ``/2020/03/15/``, ``/2020-03-15-slug`` or ``/20200315/``."""
    try:
        path = urlsplit(url).path[:2000]
    except ValueError:
        return None
    m = _URL_DATE.search(path)
    if not m:
        return None
    y, mo, d = (m[1], m[2], m[3]) if m[1] else (m[4], m[5], m[6])
    return _valid(int(y), int(mo), int(d), today or _dt.date.today())


# ----------------------------------------------------------------------------- post IDs

#: X/Twitter "snowflake" IDs: milliseconds since this instant, shifted left 22 bits.
SNOWFLAKE_EPOCH_MS = 1_288_834_974_657  # 2010-11-04T01:42:54.657Z
_SNOWFLAKE_HOSTS = frozenset({"twitter.com", "x.com", "mobile.twitter.com", "mobile.x.com"})
_STATUS = re.compile(r"^/[A-Za-z0-9_]{1,50}/status(?:es)?/(\d{15,20})(?:/|$)")
#: Bluesky record keys (TIDs): 13 characters of base32-sortable, microseconds << 10.
_TID_ALPHABET = "234567abcdefghijklmnopqrstuvwxyz"
_BSKY_POST = re.compile(r"^/profile/[^/]{1,253}/post/([2-7a-j][2-7a-z]{12})(?:/|$)")


def post_time(url: str, *, today: _dt.date | None = None) -> _dt.datetime | None:
    """When a social post was created, from the ID in its URL (UTC; None for other URLs).

    An X/Twitter status ID since November 2010 is a snowflake whose top bits are the creation
    time in milliseconds (``twitter.com/NAME/status/ID``, also ``x.com`` and their photo and
    video sub-paths); a Bluesky post's record key is a TID whose top bits are microseconds
    (``bsky.app/profile/HANDLE/post/TID``). IDs from before snowflakes (sequential numbers) and
    times outside ``EARLIEST_DATE``..tomorrow give None.
    """
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower().removeprefix("www.")
        path = parts.path[:500]
    except ValueError:
        return None
    ms: float | None = None
    if host in _SNOWFLAKE_HOSTS and (m := _STATUS.match(path)):
        stamp = int(m[1]) >> 22
        if stamp >= 86_400_000:  # at least a day after the epoch: not a pre-snowflake ID
            ms = SNOWFLAKE_EPOCH_MS + stamp
    elif host == "bsky.app" and (m := _BSKY_POST.match(path)):
        value = 0
        for ch in m[1]:
            value = value * 32 + _TID_ALPHABET.index(ch)
        ms = (value >> 10) / 1000
    if ms is None:
        return None
    at = _dt.datetime.fromtimestamp(ms / 1000, _dt.UTC)
    return at if _valid(at.year, at.month, at.day, today or _dt.date.today()) else None
