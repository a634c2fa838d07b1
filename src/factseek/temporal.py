"""Temporal integrity after fetching: is this page really from before the claim?

A search provider's date (``Hit.published``) is a guess made before the page was read; the
page's own date evidence (``Document.date_evidence``, see ``factseek.pagedates``) is better.
``post_fetch_check`` decides with the page's chosen date (``Document.published``, chosen by
``factseek.datepolicy``), falling back to the provider's date when the page has none, and
applies the undated policy of the ``Constraints`` when neither exists:

* kept only if that date is strictly before ``constraints.before`` (``"after-claim-date"``);
* ``undated="drop"`` removes pages with no date at all (``"undated"``); ``"keep"`` keeps them
  and says so in a note;
* **the safe side**: when the page's *credible* sources (``datepolicy.credible``: structured
  data, URL, visible text; not htmldate's estimate, not an ambiguous day/month reading) give
  dates on both sides of the cut-off, the page is removed as if after it (``"date-conflict"``),
  whatever date was chosen, and a note names the sources on each side.
  ``TemporalConfig(on_conflict="undated")`` treats such a page as undated instead (so
  ``undated="keep"`` keeps it, with a note); ``"flag"`` only notes it.

Notes also flag, without changing the decision: the provider dated the page before the cut-off
but the page dates itself after it; the provider's date and the page's disagree across the
cut-off; a date's day/month order is ambiguous; the page was modified on or after it; the
page's dates could not all be read (``Document.meta["date_warning"]``).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Literal

from factseek.constraints import Constraints
from factseek.datepolicy import AMBIGUOUS, BOUND_SOURCES, MODIFICATION_SOURCES, credible
from factseek.types import ConstraintDecision, DateEvidence, Document, Hit

ConflictPolicy = Literal["after", "undated", "flag"]
CONFLICT_POLICIES: tuple[ConflictPolicy, ...] = ("after", "undated", "flag")


@dataclass(frozen=True, kw_only=True)
class TemporalConfig:
    """``on_conflict``: what a page whose credible dates straddle the cut-off is treated as."""

    on_conflict: ConflictPolicy = "after"


DEFAULT_TEMPORAL = TemporalConfig()


def _fmt(evidence: list[DateEvidence]) -> str:
    return ", ".join(f"{e.source} {e.date.isoformat()}" for e in evidence)


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
        return ConstraintDecision(url=url, kept=False, reason="after-claim-date"), tuple(notes)
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
    modified = [
        e for e in doc.date_evidence if e.source in MODIFICATION_SOURCES and e.date >= before
    ]
    if modified:
        notes.append(f"possible leakage: {url}: modified on or after {cut} ({_fmt(modified)})")
    return ConstraintDecision(url=url, kept=True, reason="ok"), tuple(notes)
