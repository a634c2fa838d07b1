"""Which publication date a page gets when its sources disagree, and which sources are credible.

``choose(evidence) -> DateChoice(date, source, rule)`` applies the rules below to the
``DateEvidence`` of one page (``factseek.pages.pagedates`` gathers it; every date there is already the
calendar day in the page's own time zone). ``DateChoice.rule`` says in words which rule decided;
``extract_html`` stores it in ``Document.meta["date_rule"]`` and the report prints it.

1. **Families.** A source belongs to the family named before its first ``:``
   (``meta:article:published_time`` is ``meta``). Modification dates (``MODIFICATION_SOURCES``)
   and the web-archive snapshot (``archive``) are upper bounds, not publication dates, and do
   not vote. Every other family votes once, with its best date: for ``meta`` the tag highest in
   ``PUBLISHED_META``, for the others the first in evidence order.
2. **Weights.** ``WEIGHTS``: a social post's ID (``post-id``: its creation time, exact by
   construction) weighs 2; the page's structured data (``json-ld``, ``meta``, ``microdata``)
   and its URL weigh 1; a date printed in the visible text 0.75; htmldate's estimate 0.5 (it
   often re-reads the same tags); any other source 1. Weaker: a date printed outside the
   article (found by the page-wide scan: often a sidebar's) 0.4, htmldate's heuristic search
   alone (``HEURISTIC_SOURCE``: a date in the running text or a script) 0.25, and a
   reading whose day and month could not be told apart (rule text starting ``"ambiguous"``)
   0.25.
3. **Bound.** A vote later than the archive snapshot's day cannot be the publication date (the
   page existed by then) and is set aside.
4. **Agreement.** The day with the largest total weight is the date: sources that agree outvote
   a single odd one, whatever its rank (JSON-LD 3 years early loses to meta + URL).
5. **Tie.** Equal weights: the *later* day. For a filter that keeps pages published before a
   claim, too late only loses a page; too early can leak one.
6. **Upper bound.** No vote at all: the earliest modification, snapshot or masthead day (the
   date a masthead prints for today, ``SERVED_SOURCE``). A page is not published after it was
   modified, archived or served, so this is safe for a before-the-claim filter.
7. Otherwise no date (None).

``choose_modified(evidence, published) -> DateChoice`` is the page's last modification, when the
page states one:

M1. Candidates are the modification dates the page states itself (``STATED_MODIFICATION``:
    JSON-LD ``dateModified``, the modification meta tags, an "Updated ..." line). The HTTP
    ``Last-Modified`` header is not one: dynamic sites send the time of the response.
M2. Ignored, and named in the rule: a date before ``EARLIEST_MODIFIED`` (1995) or in the future
    (``absurd``: strings that read as a calendar day out of range), and a date earlier than the
    publication date.
M3. The latest remaining date; for a filter that keeps pages from before a claim, a later
    change is the safe reading.
M4. None when nothing remains.

``confidence(evidence, choice)`` is ``"low"`` for a publication date that is only a guess: every
vote for the chosen day is htmldate's heuristic search (``HEURISTIC_SOURCE``: found by its
extensive search only, not in the page's markup) or a date printed outside the article (the
page-wide scan, rule text ``OUTSIDE_ARTICLE``); ``""`` otherwise. ``factseek.constraints.temporal`` applies
the ``--guessed`` policy to such dates.

``credible(evidence)`` lists the votes that count when a temporal constraint asks whether the
page's sources *disagree across the claim's cut-off*: the votes of weight at least 0.75 that
survive rule 3 (structured data, URL, visible text; not htmldate's estimate, not ambiguous
readings). ``factseek.constraints.temporal`` treats a page whose credible dates straddle the cut-off as after
it (or as undated, per its ``on_conflict`` setting).
"""

from __future__ import annotations

import datetime as _dt
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from factseek.types import DateEvidence

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
#: Sources that give a modification date, not a publication date.
MODIFICATION_SOURCES: frozenset[str] = frozenset(
    {
        "json-ld:dateModified",
        "last-modified",
        "text:updated",
        "pdf:modified",
        *(f"meta:{m}" for m in MODIFIED_META),
    }
)
ARCHIVE_SOURCE = "archive"  # a web-archive snapshot: the page existed by then
SERVED_SOURCE = "masthead"  # a masthead's date for today, htmldate's pick: the page existed then
POST_ID_SOURCE = "post-id"  # a social post's creation time, read from the ID in its URL
#: Sources that bound the publication date from above instead of giving it.
BOUND_SOURCES: frozenset[str] = MODIFICATION_SOURCES | {ARCHIVE_SOURCE, SERVED_SOURCE}
#: Modification sources the page states itself (rule M1): not the HTTP header.
STATED_MODIFICATION: frozenset[str] = MODIFICATION_SOURCES - {"last-modified"}
#: A modification date before this is absurd for a web page (rule M2).
EARLIEST_MODIFIED = _dt.date(1995, 1, 1)
#: htmldate's date when only its extensive (heuristic) search found one: a guess.
HEURISTIC_SOURCE = "htmldate:heuristic"
#: Rule text of a visible-text date found by the page-wide scan, outside the article.
OUTSIDE_ARTICLE = "printed outside the article"
LOW_CONFIDENCE = "low"
#: Vote weight per family (rule 2); families not listed weigh ``DEFAULT_WEIGHT``.
WEIGHTS: dict[str, float] = {
    POST_ID_SOURCE: 2.0,  # exact: outweighs any one other source, not two that agree
    "json-ld": 1.0,
    "meta": 1.0,
    "microdata": 1.0,
    "url": 1.0,
    "pdf": 1.0,  # a PDF's /CreationDate (factseek.pages.pdftext)
    "text": 0.75,
    "htmldate": 0.5,
}
DEFAULT_WEIGHT = 1.0
AMBIGUOUS = "ambiguous"  # rule text prefix of a reading whose day/month order is unknown
AMBIGUOUS_WEIGHT = 0.25
OUTSIDE_WEIGHT = 0.4  # a date printed outside the article: less than htmldate's markup search
HEURISTIC_WEIGHT = 0.25  # htmldate's heuristic search alone: the weakest vote
CREDIBLE_WEIGHT = 0.75


@dataclass(frozen=True, kw_only=True)
class Vote:
    """One family's vote: its best evidence and the weight it carries."""

    evidence: DateEvidence
    weight: float

    @property
    def date(self) -> _dt.date:
        return self.evidence.date


@dataclass(frozen=True, kw_only=True)
class DateChoice:
    """The chosen publication date, the source it came from and the rule that chose it."""

    date: _dt.date | None
    source: str = ""
    rule: str = ""


NO_DATE = DateChoice(date=None, rule="no date on the page")


def family(source: str) -> str:
    return source.partition(":")[0]


def _in_family_rank(e: DateEvidence) -> int:
    kind, _, name = e.source.partition(":")
    if kind == "meta" and name in PUBLISHED_META:
        return PUBLISHED_META.index(name)
    return len(PUBLISHED_META)


def _weight(e: DateEvidence) -> float:
    if e.rule.startswith(AMBIGUOUS):
        return AMBIGUOUS_WEIGHT
    if e.source == HEURISTIC_SOURCE:
        return HEURISTIC_WEIGHT
    weight = WEIGHTS.get(family(e.source), DEFAULT_WEIGHT)
    return min(weight, OUTSIDE_WEIGHT) if OUTSIDE_ARTICLE in e.rule else weight


def archive_bound(evidence: Iterable[DateEvidence]) -> _dt.date | None:
    days = [e.date for e in evidence if e.source == ARCHIVE_SOURCE]
    return min(days) if days else None


def votes(evidence: Iterable[DateEvidence]) -> tuple[list[Vote], list[Vote]]:
    """Rules 1-3: one vote per family, in evidence order; and the votes set aside by the bound."""
    evidence = list(evidence)
    best: dict[str, DateEvidence] = {}
    for e in evidence:
        if e.source in BOUND_SOURCES:
            continue
        f = family(e.source)
        if f not in best or _in_family_rank(e) < _in_family_rank(best[f]):
            best[f] = e
    bound = archive_bound(evidence)
    kept: list[Vote] = []
    out: list[Vote] = []
    for e in best.values():
        v = Vote(evidence=e, weight=_weight(e))
        (out if bound is not None and e.date > bound else kept).append(v)
    return kept, out


def credible(evidence: Iterable[DateEvidence]) -> list[DateEvidence]:
    """The votes a temporal constraint weighs for disagreement (see the module docstring)."""
    kept, _ = votes(evidence)
    return [v.evidence for v in kept if v.weight >= CREDIBLE_WEIGHT]


def _names(vs: Iterable[Vote]) -> str:
    return ", ".join(v.evidence.source for v in vs)


def choose(evidence: Iterable[DateEvidence]) -> DateChoice:
    """The publication date by rules 1-7 of the module docstring."""
    evidence = list(evidence)
    kept, out = votes(evidence)
    aside = [f"{v.evidence.source} {v.date.isoformat()} is after the archive snapshot" for v in out]
    if kept:
        total: dict[_dt.date, float] = defaultdict(float)
        for v in kept:
            total[v.date] += v.weight
        # rule 4, then rule 5: the larger weight, then the later day
        day = max(total, key=lambda d: (round(total[d], 6), d))
        agree = [v for v in kept if v.date == day]
        others = [v for v in kept if v.date != day]
        tie = any(abs(total[d] - total[day]) < 1e-9 for d in total if d != day)
        if len(kept) == 1:
            rule = f"only source: {_names(agree)}"
        elif not others:
            rule = f"{len(agree)} sources agree: {_names(agree)}"
        elif tie:
            rule = f"tie, the later date (safe side): {_names(agree)} against " + ", ".join(
                f"{v.evidence.source} {v.date.isoformat()}" for v in others
            )
        else:
            rule = f"majority: {_names(agree)} outweigh " + ", ".join(
                f"{v.evidence.source} {v.date.isoformat()}" for v in others
            )
        if aside:
            rule += "; set aside: " + "; ".join(aside)
        return DateChoice(date=day, source=agree[0].evidence.source, rule=rule)
    bounds = [e for e in evidence if e.source in BOUND_SOURCES]
    if bounds:
        first = min(bounds, key=lambda e: e.date)
        rule = f"upper bound: no publication date; the page was modified, archived or served by then ({first.source})"
        if aside:
            rule += "; set aside: " + "; ".join(aside)
        return DateChoice(date=first.date, source=first.source, rule=rule)
    return NO_DATE


def could_change(evidence: Iterable[DateEvidence], weight: float) -> bool:
    """Whether one more vote of ``weight`` could change ``choose(evidence)``.

    Not when the winning day leads every other day by more than ``weight`` (a new vote for a
    rival cannot catch up, and one for the winner or a new day leaves it ahead).
    """
    kept, _ = votes(evidence)
    if not kept:
        return True
    total: dict[_dt.date, float] = defaultdict(float)
    for v in kept:
        total[v.date] += v.weight
    ranked = sorted(total.values(), reverse=True)
    runner_up = ranked[1] if len(ranked) > 1 else 0.0
    return ranked[0] - runner_up <= weight + 1e-9


def choose_published(evidence: Iterable[DateEvidence]) -> _dt.date | None:
    """The chosen publication date alone (``choose(evidence).date``)."""
    return choose(evidence).date


def choose_modified(
    evidence: Iterable[DateEvidence],
    published: _dt.date | None,
    *,
    absurd: Iterable[tuple[str, str, _dt.date]] = (),
) -> DateChoice:
    """The page's last stated modification by rules M1-M4 of the module docstring.

    ``absurd`` lists ``(source, raw, day)`` for modification strings that read as a calendar day
    outside the range a page date may have (they are not evidence); the rule names them.
    """
    ignored = [f"{src} {day.isoformat()} is {_absurd_why(day)}" for src, _, day in absurd]
    kept: list[DateEvidence] = []
    for e in evidence:
        if e.source not in STATED_MODIFICATION:
            continue
        if e.date < EARLIEST_MODIFIED:
            ignored.append(f"{e.source} {e.date.isoformat()} is before {EARLIEST_MODIFIED.year}")
        elif published is not None and e.date < published:
            ignored.append(
                f"{e.source} {e.date.isoformat()} is earlier than the publication date "
                f"{published.isoformat()}"
            )
        else:
            kept.append(e)
    aside = f"ignored: {'; '.join(ignored)}" if ignored else ""
    if not kept:
        return DateChoice(date=None, rule=aside)
    day = max(e.date for e in kept)
    latest = [e for e in kept if e.date == day]
    rule = (
        f"only stated modification: {latest[0].source}"
        if len(kept) == 1
        else f"the latest stated modification: {', '.join(e.source for e in latest)}"
        + "".join(f"; {e.source} {e.date.isoformat()}" for e in kept if e.date != day)
    )
    return DateChoice(date=day, source=latest[0].source, rule=f"{rule}; {aside}" if aside else rule)


def _absurd_why(day: _dt.date) -> str:
    return f"before {EARLIEST_MODIFIED.year}" if day < EARLIEST_MODIFIED else "in the future"


def is_guess(e: DateEvidence) -> bool:
    """True for a date that is only a guess: htmldate's heuristic search, or a date printed
    outside the article."""
    return e.source == HEURISTIC_SOURCE or OUTSIDE_ARTICLE in e.rule


def confidence(evidence: Iterable[DateEvidence], choice: DateChoice) -> str:
    """``"low"`` when every vote for the chosen day is a guess (``is_guess``), else ``""``."""
    if choice.date is None:
        return ""
    kept, _ = votes(evidence)
    backing = [v.evidence for v in kept if v.date == choice.date]
    return LOW_CONFIDENCE if backing and all(is_guess(e) for e in backing) else ""
