"""Temporal integrity after fetching: is this page really from before the claim?

A search provider's date (``Hit.published``) is a guess made before the page was read; the
page's own date evidence (``Document.date_evidence``, see ``factseek.pages.pagedates``) is better.
``post_fetch_check`` decides with the page's chosen date (``Document.published``, chosen by
``factseek.pages.datepolicy``), falling back to the provider's date when the page has none, and
applies the undated policy of the ``Constraints`` when neither exists:

* kept only if that date is strictly before ``constraints.before``, the claim's day: a page
  dated after it is removed (``"after-claim-date"``), and a page dated *on* it too, with its own
  reason (``"claim-day"``): a day-granular date cannot say whether the page came before or after
  the claim that day, and same-day coverage is often the report of the claim itself;
* ``undated="drop"`` removes pages with no date at all (``"undated"``); ``"keep"`` keeps them
  and says so in a note;
* **the date basis** (``TemporalConfig.date_basis``): with ``"modified"`` (the default) a page
  whose last stated modification (``Document.modified``, ``datepolicy.choose_modified``) falls on
  or after the claim's day is removed (``"modified-after-claim"``): it can carry what was learned
  after the claim. ``"published"`` reproduces the paper (the publication date alone decides) and
  only notes such a page;
* **guessed dates** (``Document.meta["date_confidence"] == "low"``: htmldate's heuristic search
  or a date printed outside the article, ``datepolicy.confidence``): ``guessed="keep"`` uses the
  guess like any date, ``"flag"`` (the default, chosen on real pages: docs/web.md) uses it and
  notes it as possible leakage, ``"drop"`` removes the page (``"guessed-date"``);
* **the safe side**: when the page's *credible* sources (``datepolicy.credible``: structured
  data, URL, visible text; not htmldate's estimate, not an ambiguous day/month reading) give
  dates on both sides of the cut-off, the page is removed as if after it (``"date-conflict"``),
  whatever date was chosen, and a note names the sources on each side.
  ``TemporalConfig(on_conflict="undated")`` treats such a page as undated instead (so
  ``undated="keep"`` keeps it, with a note); ``"flag"`` only notes it.

Notes also flag, without changing the decision: the provider dated the page before the cut-off
but the page dates itself after it; the provider's and the page's dates disagree across the
cut-off; a date's day/month order is ambiguous; a modification on or after it that did not
decide (the ``published`` basis, or the HTTP ``Last-Modified`` header); the page's dates could
not all be read (``Document.meta["date_warning"]``); htmldate's estimate was set aside as another
page's date or no day at all (``Document.meta["date_set_aside"]``, ``pages.pagedates`` rules
G1-G3), so the page has no date of its own and the undated policy decides.

``stored_check`` applies the date basis and the guessed policy to a document a knowledge store
returned (its index already kept only publication dates before the claim's day).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Literal

from factseek.constraints.hits import Constraints
from factseek.pages.datepolicy import (
    AMBIGUOUS,
    BOUND_SOURCES,
    LOW_CONFIDENCE,
    MODIFICATION_SOURCES,
    credible,
)
from factseek.types import ConstraintDecision, DateEvidence, Document, Hit

ConflictPolicy = Literal["after", "undated", "flag"]
CONFLICT_POLICIES: tuple[ConflictPolicy, ...] = ("after", "undated", "flag")
DateBasis = Literal["modified", "published"]
DATE_BASES: tuple[DateBasis, ...] = ("modified", "published")
GuessPolicy = Literal["keep", "drop", "flag"]
GUESS_POLICIES: tuple[GuessPolicy, ...] = ("keep", "drop", "flag")
#: What a guessed date does by default, chosen on real pages (docs/web.md, bench_dates --real).
DEFAULT_GUESSED: GuessPolicy = "flag"


@dataclass(frozen=True, kw_only=True)
class TemporalConfig:
    """``on_conflict``: what a page whose credible dates straddle the cut-off is treated as;
    ``date_basis``: whether a modification on or after the claim's day removes the page;
    ``guessed``: what a guessed (low-confidence) publication date does."""

    on_conflict: ConflictPolicy = "after"
    date_basis: DateBasis = "modified"
    guessed: GuessPolicy = DEFAULT_GUESSED


DEFAULT_TEMPORAL = TemporalConfig()


def _fmt(evidence: list[DateEvidence]) -> str:
    return ", ".join(f"{e.source} {e.date.isoformat()}" for e in evidence)


def constraint_date(doc: Document, basis: DateBasis = "modified") -> _dt.date | None:
    """The page's date that the temporal constraint compares with the claim's day: the
    publication date, or under the ``modified`` basis the later of it and the last stated
    modification."""
    if basis == "published" or doc.modified is None:
        return doc.published
    return doc.modified if doc.published is None else max(doc.published, doc.modified)


def publication_evidence(hit: Hit, doc: Document) -> list[DateEvidence]:
    """The page's publication-date evidence plus the provider's date, if any."""
    ev = [e for e in doc.date_evidence if e.source not in BOUND_SOURCES]
    if hit.published is not None:
        ev.append(DateEvidence(source="provider", date=hit.published))
    return ev


def _chosen(doc: Document) -> str:
    source, rule = doc.meta.get("date_source", ""), doc.meta.get("date_rule", "")
    return f" (from {source}: {rule})" if source else ""


def post_fetch_check(
    hit: Hit,
    doc: Document,
    constraints: Constraints,
    *,
    config: TemporalConfig = DEFAULT_TEMPORAL,
) -> tuple[ConstraintDecision, tuple[str, ...]]:
    """The temporal decision for one fetched page, and notes for the report."""
    before = constraints.before
    if before is None:
        return ConstraintDecision(url=hit.url, kept=True, reason="ok"), ()
    notes: list[str] = []
    url = hit.url
    cut = before.isoformat()
    if doc.meta.get("date_warning"):
        notes.append(f"{url}: {doc.meta['date_warning']}")
    if doc.meta.get("date_set_aside"):
        notes.append(f"{url}: {doc.meta['date_set_aside']}")
    date: _dt.date | None = doc.published
    if date is None and hit.published is not None:
        date = hit.published
        notes.append(f"{url}: page has no date; using the provider's {date.isoformat()}")

    sources = credible(doc.date_evidence)
    early = [e for e in sources if e.date < before]
    late = [e for e in sources if e.date >= before]
    conflict = bool(early and late)
    provider, page = hit.published, doc.published
    if provider is not None and page is not None and provider < before <= page:
        notes.append(
            f"possible leakage: {url}: provider dated it {provider.isoformat()} "
            f"but the page says {page.isoformat()}"
        )
    elif provider is not None and page is not None and page < before <= provider:
        notes.append(
            f"{url}: the provider dates it {provider.isoformat()}, on or after {cut}, but the "
            f"page says {page.isoformat()}{_chosen(doc)}"
        )
    for e in doc.date_evidence:
        if e.rule.startswith(AMBIGUOUS):
            notes.append(f"{url}: {e.source} {e.raw!r}: {e.rule}")

    if date is None:
        if constraints.undated == "drop":
            return ConstraintDecision(url=url, kept=False, reason="undated"), tuple(notes)
        notes.append(f"{url}: undated page kept (undated policy: keep)")
        return ConstraintDecision(url=url, kept=True, reason="ok"), tuple(notes)
    if date >= before:
        if conflict:
            notes.append(
                f"{url}: removed, dated {date.isoformat()}{_chosen(doc)}; sources before "
                f"{cut} were outweighed ({_fmt(early)})"
            )
        reason = "claim-day" if date == before else "after-claim-date"
        return ConstraintDecision(url=url, kept=False, reason=reason), tuple(notes)
    guess = _guessed(doc, config) if page is not None and date == page else ""
    if guess == "drop":
        notes.append(f"{url}: removed: {_guess_words(doc)} (guessed policy: drop)")
        return ConstraintDecision(url=url, kept=False, reason="guessed-date"), tuple(notes)
    if conflict:
        why = (
            f"date sources disagree across {cut} (before: {_fmt(early)}; on or after: {_fmt(late)})"
        )
        policy = config.on_conflict
        if policy == "after" or (policy == "undated" and constraints.undated == "drop"):
            treated = "after the cut-off" if policy == "after" else "undated (undated policy: drop)"
            notes.append(f"{url}: removed: {why}; treated as {treated}")
            return ConstraintDecision(url=url, kept=False, reason="date-conflict"), tuple(notes)
        treated = "undated, kept (undated policy: keep)" if policy == "undated" else "flagged only"
        notes.append(f"possible leakage: {url}: {why}; {treated}")
    return _modification(doc, url, before, config, notes, flag=guess == "flag")


def _guessed(doc: Document, config: TemporalConfig) -> str:
    """The guessed policy that applies to the page's publication date ("" for no guess)."""
    return config.guessed if doc.meta.get("date_confidence") == LOW_CONFIDENCE else ""


def _guess_words(doc: Document) -> str:
    date = doc.published.isoformat() if doc.published else "undated"
    return f"its date {date} is only a guess{_chosen(doc)}"


def _modification(
    doc: Document,
    url: str,
    before: _dt.date,
    config: TemporalConfig,
    notes: list[str],
    *,
    flag: bool = False,
) -> tuple[ConstraintDecision, tuple[str, ...]]:
    """The date basis, for a page whose publication date passed; the modification notes; and,
    when the page is kept, the note on a flagged guess."""
    cut = before.isoformat()
    if config.date_basis == "modified" and doc.modified is not None and doc.modified >= before:
        source = doc.meta.get("modified_source", "")
        notes.append(
            f"{url}: removed: modified {doc.modified.isoformat()}"
            f"{f' ({source})' if source else ''}, on or after {cut} (date basis: modified)"
        )
        return ConstraintDecision(url=url, kept=False, reason="modified-after-claim"), tuple(notes)
    modified = [
        e for e in doc.date_evidence if e.source in MODIFICATION_SOURCES and e.date >= before
    ]
    if modified:
        notes.append(f"possible leakage: {url}: modified on or after {cut} ({_fmt(modified)})")
    if flag:
        notes.append(f"possible leakage: {url}: {_guess_words(doc)}; kept (guessed policy: flag)")
    return ConstraintDecision(url=url, kept=True, reason="ok"), tuple(notes)


def stored_check(
    doc: Document, constraints: Constraints, *, config: TemporalConfig = DEFAULT_TEMPORAL
) -> tuple[ConstraintDecision, tuple[str, ...]]:
    """The date basis and the guessed policy for a document a knowledge store returned under
    ``constraints`` (its publication date already passed the store's own filter)."""
    if constraints.before is None:
        return ConstraintDecision(url=doc.url, kept=True, reason="ok"), ()
    notes: list[str] = []
    guess = _guessed(doc, config) if doc.published is not None else ""
    if guess == "drop":
        notes.append(f"{doc.url}: removed: {_guess_words(doc)} (guessed policy: drop)")
        return ConstraintDecision(url=doc.url, kept=False, reason="guessed-date"), tuple(notes)
    return _modification(doc, doc.url, constraints.before, config, notes, flag=guess == "flag")
