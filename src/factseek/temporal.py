"""Temporal integrity after fetching: is this page really from before the claim?

A search provider's date (``Hit.published``) is a guess made before the page was read; the
page's own date evidence (``Document.date_evidence``, see ``factseek.extract``) is better.
``post_fetch_check`` decides with the page's chosen date (``Document.published``), falling back
to the provider's date when the page has none, and applies the undated policy of the
``Constraints`` when neither exists:

* kept only if that date is strictly before ``constraints.before``;
* ``undated="drop"`` removes pages with no date at all (reason ``"undated"``); ``"keep"``
  keeps them and says so in a note.

It also returns notes for the report that flag possible leakage, without changing the decision
unless ``on_conflict="drop"``:

* the provider dated the page before the cut-off but the page dates itself after it;
* otherwise, publication dates on both sides of the cut-off (sources disagree, the provider
  included);
* the page was modified on or after the cut-off (its content may postdate the claim).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Literal

from factseek.constraints import Constraints
from factseek.extract import MODIFICATION_SOURCES
from factseek.types import ConstraintDecision, DateEvidence, Document, Hit

ConflictPolicy = Literal["flag", "drop"]


@dataclass(frozen=True, kw_only=True)
class TemporalConfig:
    """``on_conflict``: what to do with a page whose publication dates straddle the cut-off."""

    on_conflict: ConflictPolicy = "flag"


DEFAULT_TEMPORAL = TemporalConfig()


def _fmt(evidence: list[DateEvidence]) -> str:
    return ", ".join(f"{e.source} {e.date.isoformat()}" for e in evidence)


def publication_evidence(hit: Hit, doc: Document) -> list[DateEvidence]:
    """The page's publication-date evidence plus the provider's date, if any."""
    ev = [e for e in doc.date_evidence if e.source not in MODIFICATION_SOURCES]
    if hit.published is not None:
        ev.append(DateEvidence(source="provider", date=hit.published))
    return ev


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
    date: _dt.date | None = doc.published
    if date is None and hit.published is not None:
        date = hit.published
        notes.append(f"{url}: page has no date; using the provider's {date.isoformat()}")

    evidence = publication_evidence(hit, doc)
    early = [e for e in evidence if e.date < before]
    late = [e for e in evidence if e.date >= before]
    conflict = bool(early and late)
    provider, page = hit.published, doc.published
    if provider is not None and page is not None and provider < before <= page:
        notes.append(
            f"possible leakage: {url}: provider dated it {provider.isoformat()} "
            f"but the page says {page.isoformat()}"
        )
    elif conflict:
        notes.append(
            f"possible leakage: {url}: date sources disagree across {before.isoformat()} "
            f"(before: {_fmt(early)}; on or after: {_fmt(late)})"
        )

    if date is None:
        if constraints.undated == "drop":
            return ConstraintDecision(url=url, kept=False, reason="undated"), tuple(notes)
        notes.append(f"{url}: undated page kept (undated policy: keep)")
        return ConstraintDecision(url=url, kept=True, reason="ok"), tuple(notes)
    if date >= before:
        return ConstraintDecision(url=url, kept=False, reason="after-claim-date"), tuple(notes)
    if conflict and config.on_conflict == "drop":
        return ConstraintDecision(url=url, kept=False, reason="date-conflict"), tuple(notes)
    modified = [
        e for e in doc.date_evidence if e.source in MODIFICATION_SOURCES and e.date >= before
    ]
    if modified:
        notes.append(
            f"possible leakage: {url}: modified on or after {before.isoformat()} ({_fmt(modified)})"
        )
    return ConstraintDecision(url=url, kept=True, reason="ok"), tuple(notes)
