"""Where a web page states dates: structured data, meta tags, microdata and its visible text.

Each function returns ``Found(source, raw)`` records (the source names of
``factseek.pages.pagedates``'s table and the string as the page wrote it), in the order a reader
would trust them; ``factseek.pages.pagedates`` reads the strings and settles their time zone and
day/month order.

* ``structured(tree)``: JSON-LD (``datePublished``/``dateModified`` of the objects that describe
  the page: top level, ``@graph``, ``mainEntity``; not those of a video, an image, a listed
  article or the publisher nested in them; article types first, the latest when two such
  articles disagree), meta tags (``datepolicy.PUBLISHED_META`` then ``MODIFIED_META`` order),
  microdata.
* ``visible(tree)``: the first printed publication date and the first "Updated" date.
  Candidates are ``<time>`` elements and elements whose class or id speaks of dates or bylines,
  first in the page's ``<article>``/``<main>`` (``main_article``: the one holding the headline),
  then a short line right after the headline (before the text begins; not a line of prose,
  not a sidebar), then anywhere; never inside navigation, asides, footers, related-story,
  comment, masthead or similar blocks (``NOT_MAIN``), never in an item of a list of other
  stories whatever its class (``in_listing``), never in another story's ``<article>`` (a
  teaser). A line stating a publication and a later change ("Published ..., updated ...")
  gives both.
* ``printed_outside(tree, day)``: whether a day is printed only outside the main content (a
  sidebar's or a comment's date that htmldate's markup search picked up: a guess), or only in
  other stories' items (their date, not the page's).
* ``unwritten_guess(tree, day)``, ``jsonld_other_days(tree)``: whether a date htmldate found is
  another page's date or no day at all (``pagedates`` rules G1-G3).
* ``language(tree, headers)``: the page's declared language, for day/month order.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from factseek.pages.datepolicy import MODIFIED_META, PUBLISHED_META
from factseek.pages.dates import days_in, read_date, url_date
from factseek.text import text_units

MAX_JSONLD_CHARS = 200_000  # one JSON-LD block larger than this is ignored
MAX_CANDIDATES = 40  # visible date elements examined
HEADLINE_LINE_WORDS = (
    16  # a line after the headline longer than this (textlen) is text, not a dateline
)

_ARTICLE_TYPES = re.compile(r"article|posting|report|story|news", re.I)
NOT_MAIN = re.compile(
    r"related|comment|sidebar|widget|footer|recommend|popular|trending|teaser|most-|more-|"
    r"nav|menu|breadcrumb|share|promo|newsletter|calendar|archive|ticker|reply|masthead|"
    r"site-header|topbar|top-bar|weather|today|cookie|rail|card",
    re.I,
)
NOT_MAIN_TAGS = frozenset({"nav", "aside", "footer", "script", "style", "noscript", "template"})
_UPDATED = re.compile(
    r"updat|modif|aktualisiert|geändert|mis à jour|actualiz|aggiornat|bijgewerkt|更新|修改", re.I
)
_PUBLISHED = re.compile(
    r"publi|posted|veröffentlicht|erschienen|publié|publicado|pubblicato|公開|发布|發佈|掲載", re.I
)
_DIGIT = re.compile(r"\d")


@dataclass(frozen=True)
class Found:
    """A source name and the date string it gave, as written; ``outside`` marks a printed date
    found by the page-wide scan, outside the article and the lines under its headline."""

    source: str
    raw: str
    outside: bool = False


def structured(tree: Any) -> list[Found]:
    """JSON-LD, meta-tag and microdata dates."""
    return _jsonld(tree) + _meta(tree) + _microdata(tree)


def _jsonld_blocks(tree: Any) -> Iterator[Any]:
    for script in tree.iterfind(".//script"):
        if (script.get("type") or "").strip().lower() != "application/ld+json":
            continue
        raw = script.text or ""
        if len(raw) > MAX_JSONLD_CHARS:
            continue
        try:
            yield json.loads(raw)
        except (ValueError, RecursionError):
            continue


def _jsonld(tree: Any) -> list[Found]:
    published: list[tuple[int, str]] = []  # (0 for an article type, else 1; value)
    modified: list[tuple[int, str]] = []
    for data in _jsonld_blocks(tree):
        for kind, key, value in _jsonld_walk(data):
            (published if key == "datePublished" else modified).append((kind, value))
    return [
        Found(source, _latest_of_best(values))
        for source, values in (("json-ld", published), ("json-ld:dateModified", modified))
        if values
    ]


def _latest_of_best(values: list[tuple[int, str]]) -> str:
    """The value of the best kind; among several of that kind that disagree (a page that
    describes two articles), the latest day: the safe side for a before-the-claim filter."""
    best = min(kind for kind, _ in values)
    same = [v for kind, v in values if kind == best]
    days = [(r.date, i) for i, v in enumerate(same) if (r := read_date(v)) is not None]
    if len({d for d, _ in days}) < 2:
        return same[0]
    return same[max(days, key=lambda x: (x[0], -x[1]))[1]]  # the first with the latest day


#: Keys through which a JSON-LD object still describes the page itself; any other key of a
#: typed object leads to something else (a video, an image, a list of other articles, the
#: publisher), whose dates are not the page's.
_PAGE_KEYS = frozenset({"@graph", "mainEntity", "mainEntityOfPage"})


def jsonld_other_days(tree: Any) -> set[Any]:
    """The days of the JSON-LD dates that describe something other than the page (a video, an
    image, another article in a list, the publisher): not its dates. htmldate reads them all."""
    days = set()
    for data in _jsonld_blocks(tree):
        for _, _, value in _jsonld_walk(data, others=True):
            r = read_date(value)
            if r is not None:
                days.add(r.date)
    return days


def _jsonld_walk(
    obj: Any, depth: int = 0, *, own: bool = True, others: bool = False
) -> Iterator[tuple[int, str, str]]:
    """(kind, key, value) of the page's own dates; with ``others`` those of everything else."""
    if depth > 20:
        return
    if isinstance(obj, list):
        for x in obj[:1000]:
            yield from _jsonld_walk(x, depth + 1, own=own, others=others)
    elif isinstance(obj, dict):
        types = obj.get("@type")
        names = " ".join(types if isinstance(types, list) else [str(types or "")])
        kind = 0 if _ARTICLE_TYPES.search(names) else 1
        if own != others:
            for key in ("datePublished", "dateModified", "uploadDate")[: 3 if others else 2]:
                v = obj.get(key)
                if isinstance(v, str):
                    yield kind, key, v
        typed = bool(types)
        for key, v in obj.items():
            if key not in ("datePublished", "dateModified") and isinstance(v, (list, dict)):
                inner = own and (not typed or key in _PAGE_KEYS)
                yield from _jsonld_walk(v, depth + 1, own=inner, others=others)


def _meta(tree: Any) -> list[Found]:
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
    return [Found(f"meta:{k}", found[k]) for k in sorted(found, key=order.index)]


def _microdata(tree: Any) -> list[Found]:
    for el in tree.xpath("//*[@itemprop]")[:2000]:  # cheaper than testing the value in XPath
        if el.get("itemprop") == "datePublished" and el.tag != "meta":
            raw = el.get("datetime") or el.get("content") or _text(el)
            if raw:
                return [Found("microdata", raw)]
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
        if a.tag in ("body", "html"):
            break  # page-wide classes ("nav-no-loaded", "has-sidebar") mark no block
        if a.tag in NOT_MAIN_TAGS:
            return True
        if "Blog" in (a.get("class") or "").split():
            break  # Blogger's post widget ("widget Blog") holds the article itself
        marks = f"{a.get('class') or ''} {a.get('id') or ''}"
        if a is not el and marks.strip() and NOT_MAIN.search(marks):
            return True
    return False


def _in_other_article(el: Any, page: Any) -> bool:
    """Inside an ``<article>`` other than the page's own (``page_article``; nested in it, or
    around it, counts as its own): another story's teaser. False when ``page`` is ``NO_H1``."""
    if page is NO_H1:
        return False
    holder = next(el.iterancestors("article"), None)
    if holder is None or holder is page:
        return False
    if page is None:
        return True  # every <article> of the page lies before its headline, none holds it
    return not any(a is holder for a in page.iterancestors()) and not any(
        a is page for a in holder.iterancestors()
    )


NO_H1 = object()  # ``page_article``'s answer on a page with no <h1>: any article may be its own


def page_article(tree: Any) -> Any:
    """The page's own ``<article>``: the one holding the first ``<h1>``, else the first one
    after it; None when every ``<article>`` lies before the headline; ``NO_H1`` on a page with
    no ``<h1>`` (nothing tells its article from a teaser)."""
    seen_h1 = False
    for el in tree.iter("article", "h1"):
        if el.tag == "h1":
            if seen_h1:
                continue
            seen_h1 = True
            holder = next(el.iterancestors("article"), None)
            if holder is not None:
                return holder
        elif seen_h1:
            return el
    return None if seen_h1 else NO_H1


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


def visible(tree: Any) -> list[Found]:
    """The first visible publication date and the first "Updated" date (article first).

    Candidates: ``<time>`` elements and elements whose class or id speaks of dates or bylines,
    in the first ``<article>`` or ``<main>``; failing those, a short line right after the
    headline; failing that, such elements anywhere on the page.
    """
    candidates: list[tuple[bool, str, str]] = []  # (in article, kind, raw)

    def has_date() -> bool:
        return any(kind == "text" for _, kind, _ in candidates)

    def scan(root: Any, inside: bool, main: Any = None) -> None:
        after_pick = 0  # candidates examined since the first publication date
        for el in itertools.islice(_marked(root), MAX_CANDIDATES * 5):
            if not inside and _in_other_article(el, main):
                continue  # a teaser: another story's <article>
            for found in _dated_all(el):
                candidates.append((inside or _in_article(el), *found))
            after_pick += has_date()
            if len(candidates) >= MAX_CANDIDATES or after_pick > 3:
                break  # an "Updated" line sits next to the date it updates, if anywhere

    article = main_article(tree)
    if article is not None:
        scan(article, True)
    if not has_date():
        for el in _after_headline(tree):
            found = _dated(el)
            if found and found[0] == "text" and text_units(found[1]) <= HEADLINE_LINE_WORDS:
                if not _prose(found[1]) and not any(
                    in_listing(x) for x in itertools.islice(_marked(el), 10)
                ):
                    candidates.append((True, *found))
                break
    if not has_date():
        scan(tree, False, page_article(tree))
    out: list[Found] = []
    for kind in ("text", "text:updated"):
        mine = [c for c in candidates if c[1] == kind]
        pick = next((c for c in mine if c[0]), mine[0] if mine else None)
        if pick is not None:
            out.append(Found(kind, pick[2], outside=not pick[0]))
    return out


def main_article(tree: Any) -> Any:
    """The page's ``<article>`` or ``<main>``: the one holding the first ``<h1>``; failing that,
    the first one after it (a headline above the article); with no ``<h1>``, the first one. An
    ``<article>`` before the headline that does not hold it is another story's teaser."""
    seen_h1 = False
    first = None
    for el in tree.iter("article", "main", "h1"):
        if el.tag == "h1":
            if seen_h1:
                continue
            seen_h1 = True
            holder = next((a for a in el.iterancestors("article", "main")), None)
            if holder is not None:
                return holder
            continue
        if seen_h1:
            return el
        first = first if first is not None else el
    return None if seen_h1 else first


LISTING_DEPTH = 4  # levels above a date element searched for a list item of other stories
LISTING_SIBLINGS = 3  # siblings of such an item examined on each side


def in_listing(el: Any) -> bool:
    """True when a date element sits in one item of a list of other stories (related, latest,
    "read also"...), whatever the list's class: an ancestor (``LISTING_DEPTH`` levels at most,
    not past ``<article>``, ``<main>`` or ``<body>``) that holds a link and has a sibling of the
    same tag and class holding a link and a different date. A byline does not repeat that
    way."""
    raw = _raw(el)
    r = read_date(raw) if raw else None
    if r is None:
        return False
    for a in itertools.islice(el.iterancestors(), LISTING_DEPTH):
        if a.tag in ("article", "main", "body", "html"):
            return False
        if a.find(".//a[@href]") is None and a.tag != "a":
            continue
        sibs = [
            *itertools.islice(a.itersiblings(preceding=True), LISTING_SIBLINGS),
            *itertools.islice(a.itersiblings(), LISTING_SIBLINGS),
        ]
        for sib in sibs:
            if (
                sib.tag != a.tag
                or (sib.get("class") or "").split() != (a.get("class") or "").split()
            ):
                continue  # list items share their tag and class
            if sib.tag != "a" and sib.find(".//a[@href]") is None:
                continue
            for other in _marked_in(sib):
                o_raw = _raw(other)
                o = read_date(o_raw) if o_raw else None
                if o is not None and o.date != r.date:
                    return True
    return False


LISTING_SCAN = 300  # elements of a sibling item searched for its date


def _marked_in(item: Any) -> Iterator[Any]:
    """The first date-marked elements among an item's first ``LISTING_SCAN`` elements: bounded,
    so a large sibling (a whole content block) costs no more than a list item."""
    for el in itertools.islice(item.iter(), LISTING_SCAN):
        if el.tag == "time" or (
            isinstance(el.tag, str)
            and _MARKS.search(f"{el.get('class') or ''} {el.get('id') or ''}")
        ):
            yield el


_COMMENTS = re.compile(
    r"comment|reply|repli|respons(?!iv)|discuss|disqus", re.I
)  # not "responsive"


def _in_comments(el: Any) -> bool:
    """Inside a comment thread (class or id of an ancestor), before ``<body>``."""
    for a in el.iterancestors():
        if a.tag in ("body", "html"):
            return False
        if _COMMENTS.search(f"{a.get('class') or ''} {a.get('id') or ''}"):
            return True
    return False


def _raw(el: Any) -> str:
    text = _text(el)
    raw = (el.get("datetime") or text) if el.tag == "time" else text
    return raw if raw and _DIGIT.search(raw) else ""


OTHER_STORIES = "other stories"  # ``printed_outside``: printed only in other stories' items
OUTSIDE_MAIN = "outside"  # ``printed_outside``: printed only outside the main content


def printed_outside(tree: Any, day: Any, *, limit: int = MAX_CANDIDATES * 5) -> str:
    """Where ``day`` is printed in ``<time>`` and date/byline elements, when it is printed only
    outside the page's own story; ``""`` otherwise (printed in it, or not printed at all).

    ``OTHER_STORIES`` when every print is an item of a list of other stories (``in_listing``,
    wherever the list is: in the article, a sidebar, a related-story block) or inside another
    story's ``<article>`` (a teaser): another page's date. ``OUTSIDE_MAIN`` when some print is
    elsewhere in navigation, an aside, a footer, a comment thread (its items are a list too, but
    of replies to this page: on or after its date, never before) or a related-story block
    (``NOT_MAIN``): a date htmldate's markup search found there is a sidebar's, a guess."""
    kinds: set[str] = set()
    page = page_article(tree)
    for el in itertools.islice(_marked(tree), limit):
        raw = _raw(el)
        r = read_date(raw) if raw else None
        if r is None or day not in (r.date, r.other):
            continue
        if not _in_comments(el) and (in_listing(el) or _in_other_article(el, page)):
            kinds.add(OTHER_STORIES)
        elif _outside_main(el):
            kinds.add(OUTSIDE_MAIN)
        else:
            return ""
    return OUTSIDE_MAIN if OUTSIDE_MAIN in kinds else (OTHER_STORIES if kinds else "")


MAX_WRITTEN_SCAN = 200_000  # characters of visible text searched for a date written in full
_VISIBLE_TEXT = (
    "//body//text()[not(ancestor::script) and not(ancestor::style)"
    " and not(ancestor::noscript) and not(ancestor::template)]"
)


def unwritten_guess(tree: Any, day: Any, *, today: Any = None) -> str:
    """Why a date htmldate's heuristic search returned is not the page's date, or ``""``.

    That search reads dates wherever the HTML has them. Two kinds are another page's date or
    no day at all, and are too early on pages with no other date:

    * the date of a **link to another page** (``/2019/03/12/older-story/`` in an ``<a href>``)
      that the page neither prints nor carries in its own canonical address;
    * **the 1st of a month that is written nowhere in full**: a copyright line or a year alone
      (read as 1 January), a month and year (``03/2019``, an upload folder ``/2019/03/``: read
      as the 1st).

    A date printed in the visible text, in the canonical address (``<link rel="canonical">``,
    ``og:url``), or written in full anywhere else (a script that prints it, a timestamp) stays.
    """
    own = tree.xpath("//link[@rel='canonical']/@href | //meta[@property='og:url']/@content")
    if any(url_date(str(href)[:2000], today=today) == day for href in own[:5]):
        return ""
    if day in days_in(_joined(tree.xpath(_VISIBLE_TEXT)), today=today):
        return ""
    links = itertools.islice(tree.iterfind(".//a[@href]"), MAX_LINKS)
    if any(url_date(str(a.get("href"))[:2000], today=today) == day for a in links):
        return "the date in the address of a link to another page"
    if day.day == 1 and not _in_markup(tree, day, today):
        return "a year or a month alone (a copyright line, a month and year) read as the 1st"
    return ""


MAX_LINKS = 5_000  # links examined for another page's date


def _joined(texts: Any) -> str:
    parts: list[str] = []
    seen = 0
    for t in texts:
        chunk = str(t)[: MAX_WRITTEN_SCAN - seen]
        parts.append(chunk)
        seen += len(chunk)
        if seen >= MAX_WRITTEN_SCAN:
            break
    return " ".join(" ".join(parts).split())


def _in_markup(tree: Any, day: Any, today: Any) -> bool:
    """Whether ``day`` is written in full anywhere in the page's markup (attributes, scripts),
    with separators or as ``YYYYMMDD``."""
    from lxml import etree

    html = etree.tostring(tree, encoding="unicode")[: MAX_WRITTEN_SCAN * 5]
    return day in days_in(html, today=today) or day.strftime("%Y%m%d") in html


_WEEKDAY = re.compile(
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b"
    r"|\b(?:lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche)\b"
    r"|\b(?:lunes|martes|miércoles|jueves|viernes|sábado|domingo)\b"
    r"|\b(?:montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag)\b"
    r"|\b(?:segunda|terça|quarta|quinta|sexta)-feira\b",
    re.I,
)
MASTHEAD_SCAN = 2_000  # elements examined before the headline for a masthead's date
MASTHEAD_CHARS = 60  # the longest element text read as a masthead's date


def masthead_day(tree: Any) -> Any:
    """The date a masthead prints for today ("Tuesday, 08 Dec 2020") above the headline: the
    day the page was served, not the day it was published. It is the first short element before
    the first ``<h1>``, ``<article>`` or ``<main>`` whose text names a weekday and reads as a
    date; None when there is none."""
    for el in itertools.islice(tree.iter(), MASTHEAD_SCAN):
        if el.tag in ("h1", "article", "main"):
            return None
        if not isinstance(el.tag, str) or el.tag in NOT_MAIN_TAGS - {"nav", "aside"}:
            continue
        text = el.text_content() if len(el) <= 3 else ""
        if len(text) > MASTHEAD_CHARS or not _DIGIT.search(text) or not _WEEKDAY.search(text):
            continue
        r = read_date(" ".join(text.split()))
        if r is not None and r.other is None:
            return r.date
    return None


def _dated(el: Any) -> tuple[str, str] | None:
    """("text" or "text:updated", the raw string) for a short element stating a date."""
    found = _dated_all(el)
    return found[0] if found else None


def _dated_all(el: Any) -> list[tuple[str, str]]:
    """``_dated``'s answer, then, for a line that states a publication and a later change
    ("Published 12 March 2019, updated 16 June 2021"), ("text:updated", the change's part)."""
    if el.get("itemprop") == "datePublished":
        return []  # the microdata source already
    text = _text(el)
    raw = (el.get("datetime") or text) if el.tag == "time" else text
    if not raw or not _DIGIT.search(raw) or _outside_main(el) or read_date(raw) is None:
        return []
    if in_listing(el):
        return []  # one of a list of other stories
    words = f"{el.get('class') or ''} {el.get('id') or ''} {text}"
    updated = bool(_UPDATED.search(words)) and not _PUBLISHED.search(words)
    out = [("text:updated" if updated else "text", raw)]
    change = _UPDATED.search(text) if not updated else None
    if change is not None:
        r, rest = read_date(raw), text[change.end() :]
        later = read_date(rest) if _DIGIT.search(rest) else None
        if r is not None and later is not None and later.date != r.date:
            out.append(("text:updated", rest.strip(" :,|-")[:200]))
    return out


PROSE_RUN = 5  # consecutive lower-case words that make a line prose, not a dateline
_PROSE = re.compile(rf"(?:\b[^\W\d_A-Z]*[a-zß-ÿ][^\W\d_]*\b[\s,;]+){{{PROSE_RUN}}}")


def _prose(line: str) -> bool:
    """A line of prose ("The plan was first drafted on 12 March 2019."), not a dateline or a
    byline ("By Ann Lee, 15 June 2021", "Publicado el 15 de junio de 2021"): ``PROSE_RUN``
    lower-case words in a row, month names and "de"/"of" included."""
    return bool(_PROSE.search(line))


def _after_headline(tree: Any) -> list[Any]:
    """Up to 4 elements after the first ``<h1>`` (the article's first), and after its parent."""
    h1s = tree.xpath("//article//h1 | //main//h1") or tree.xpath("//h1")
    if not h1s:
        return []
    h1 = h1s[0]
    out = _lines(h1)
    parent = h1.getparent()
    if (
        parent is not None
        and parent.tag not in ("body", "article", "main")
        and text_units(_text(parent, 2000)) <= text_units(_text(h1, 2000)) + HEADLINE_LINE_WORDS
    ):  # a headline's wrapper (``<header>``): the lines after it; not a whole content block
        out += _lines(parent)
    return [el for el in out if not _not_main_block(el)]


def _lines(el: Any) -> list[Any]:
    """Up to 4 elements after ``el``, up to the first longer than a dateline: the text has
    begun, and a date further down is the text's, not the page's."""
    out = []
    for sib in itertools.islice(el.itersiblings(), 4):
        if not isinstance(sib.tag, str):
            continue
        try:
            words = text_units(" ".join(sib.text_content()[:4000].split()))
        except ValueError:
            words = 0
        if words > HEADLINE_LINE_WORDS:
            break
        out.append(sib)
    return out


def _not_main_block(el: Any) -> bool:
    """An element that is itself a navigation, aside, footer, related or similar block."""
    marks = f"{el.get('class') or ''} {el.get('id') or ''}"
    return el.tag in NOT_MAIN_TAGS or bool(marks.strip() and NOT_MAIN.search(marks))


def language(tree: Any | None, headers: Mapping[str, str]) -> str:
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
