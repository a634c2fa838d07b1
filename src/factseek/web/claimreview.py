"""schema.org ClaimReview JSON-LD for a reviewed report: the markup fact-checkers publish.

``claim_review(report, ...)`` reads the (reviewed) report's verdict and cited evidence. Ratings
use these documented scales (``reviewRating``: ``ratingValue`` between ``worstRating`` and
``bestRating``, the label's words in ``alternateName``):

- PolitiFact, 1-6: pants-fire 1 "Pants on Fire", false 2 "False", barely-true 3 "Mostly False",
  half-true 4 "Half True", mostly-true 5 "Mostly True", true 6 "True".
- AVeriTeC, 1-3: refuted 1 "Refuted", conflicting-evidence 2 "Conflicting evidence", supported 3
  "Supported"; not-enough-evidence has no place on a truth scale, so its rating carries only
  ``alternateName`` "Not enough evidence" (no ``ratingValue``).

A report with no verdict (not judged, not overridden) has nothing to publish: ``InputError``.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from factseek.errors import InputError
from factseek.labels import AVERITEC, POLITIFACT
from factseek.types import Report
from factseek.web.security import safe_url

RATINGS: dict[str, dict[str, tuple[int | None, str]]] = {
    "politifact": {
        "pants-fire": (1, "Pants on Fire"),
        "false": (2, "False"),
        "barely-true": (3, "Mostly False"),
        "half-true": (4, "Half True"),
        "mostly-true": (5, "Mostly True"),
        "true": (6, "True"),
    },
    "averitec": {
        "refuted": (1, "Refuted"),
        "conflicting-evidence": (2, "Conflicting evidence"),
        "supported": (3, "Supported"),
        "not-enough-evidence": (None, "Not enough evidence"),
    },
}
BEST = {"politifact": 6, "averitec": 3}


def scale_of(label: str, scale: str = "") -> str:
    """The rating scale of a verdict label (its own ``scale`` when it names a known one)."""
    if scale in RATINGS and label in RATINGS[scale]:
        return scale
    if label in POLITIFACT:
        return "politifact"
    if label in AVERITEC:
        return "averitec"
    raise InputError(f"the verdict {label!r} is on no ClaimReview scale (politifact, averitec)")


def rating(label: str, scale: str = "") -> dict[str, Any]:
    scale = scale_of(label, scale)
    value, words = RATINGS[scale][label]
    out: dict[str, Any] = {"@type": "Rating", "alternateName": words}
    if value is not None:
        out.update(ratingValue=value, bestRating=BEST[scale], worstRating=1)
    return out


def cited(report: Report) -> list[dict[str, str]]:
    """The evidence the review rests on: cards, else relevant summaries (http(s) URLs, once)."""
    pairs = [(e.url, e.title) for e in report.evidence] or [
        (s.url, s.title) for s in report.summaries if s.relevant
    ]
    out: list[dict[str, str]] = []
    seen: set[str] = set()
    for url, title in pairs:
        if safe_url(url) and url not in seen:
            seen.add(url)
            item = {"@type": "CreativeWork", "url": url}
            if title:
                item["name"] = title
            out.append(item)
    return out


def claim_review(
    report: Report,
    *,
    author: str,
    organisation: bool = False,
    url: str = "",
    published: _dt.date | None = None,
) -> dict[str, Any]:
    """The ClaimReview object (``json.dumps`` it into a ``<script type="application/ld+json">``)."""
    v = report.verdict
    if not v.judged or not v.label:
        raise InputError("no verdict to publish: override the verdict first")
    c = report.claim
    claim: dict[str, Any] = {"@type": "Claim"}
    if c.speaker:
        claim["author"] = {"@type": "Person", "name": c.speaker}
    if c.date:
        claim["datePublished"] = c.date.isoformat()
    if c.venue:
        claim["appearance"] = [{"@type": "CreativeWork", "name": c.venue}]
    out: dict[str, Any] = {
        "@context": "https://schema.org",
        "@type": "ClaimReview",
        "claimReviewed": c.text,
        "datePublished": (published or _dt.date.today()).isoformat(),
        "author": {"@type": "Organization" if organisation else "Person", "name": author},
        "itemReviewed": claim,
        "reviewRating": rating(v.label, v.scale),
        "citation": cited(report),
    }
    if url:
        if not safe_url(url):
            raise InputError("the review URL must start with http:// or https://")
        out["url"] = url
    return out
