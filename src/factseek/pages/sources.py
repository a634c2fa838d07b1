"""Where a web page states dates: structured data, meta tags, microdata and its visible text.

Each function returns ``Found(source, raw)`` records (the source names of
``factseek.pages.pagedates``'s table and the string as the page wrote it), in the order a reader
would trust them; ``factseek.pages.pagedates`` reads the strings and settles their time zone and
day/month order.

* ``structured(tree)``: JSON-LD (``datePublished``/``dateModified``, article types first, any
  nesting), meta tags (``datepolicy.PUBLISHED_META`` then ``MODIFIED_META`` order), microdata.
* ``visible(tree)``: the first printed publication date and the first "Updated" date.
  Candidates are ``<time>`` elements and elements whose class or id speaks of dates or bylines,
  first in the page's ``<article>``/``<main>``, then a short line right after the headline,
  then anywhere; never inside navigation, asides, footers, related-story, comment, masthead or
  similar blocks (``NOT_MAIN``).
* ``printed_outside(tree, day)``: whether a day is printed only outside the main content (a
  sidebar's or a comment's date that htmldate's markup search picked up: a guess).
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
from factseek.pages.dates import read_date
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


def _jsonld(tree: Any) -> list[Found]:
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
    out: list[Found] = []
    if published:
        out.append(Found("json-ld", min(published, key=lambda x: x[0])[1]))
    if modified:
        out.append(Found("json-ld:dateModified", min(modified, key=lambda x: x[0])[1]))
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
    out: list[Found] = []
    for kind in ("text", "text:updated"):
        mine = [c for c in candidates if c[1] == kind]
        pick = next((c for c in mine if c[0]), mine[0] if mine else None)
        if pick is not None:
            out.append(Found(kind, pick[2], outside=not pick[0]))
    return out


def printed_outside(tree: Any, day: Any, *, limit: int = MAX_CANDIDATES * 5) -> bool:
    """True when ``day`` is printed in a ``<time>`` or date/byline element only outside the main
    content (navigation, asides, footers, related-story and similar blocks: ``NOT_MAIN``): a
    date htmldate's markup search found there is a sidebar's, not the page's."""
    outside = False
    for el in itertools.islice(_marked(tree), limit):
        text = _text(el)
        raw = (el.get("datetime") or text) if el.tag == "time" else text
        if not raw or not _DIGIT.search(raw):
            continue
        r = read_date(raw)
        if r is None or day not in (r.date, r.other):
            continue
        if not _outside_main(el):
            return False
        outside = True
    return outside


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
