"""schema.org ClaimReview JSON-LD for a reviewed report, and the automated record for research.

``claim_review(report, ...)`` publishes only what a named reviewer decided: the report must come
from ``factseek.review.apply.reviewed`` with a ``ReviewRecord`` whose status is ``approved`` (the
reviewer approved the machine's verdict, and the corrections have not changed it since) or
``set`` (the reviewer set the verdict), by a reviewer with a name, with a label that has a
place on the organisation's rating scale (``factseek.review.ratings``). Anything else is an
``InputError`` that says what to do. The rating is the reviewer's label on that scale:
``reviewRating`` = ``alternateName`` (the label's words), ``ratingValue`` 1-5 with
``worstRating`` 1 and ``bestRating`` 5 (no value for a label outside the truth scale, such as
"not enough evidence"). ``citation`` lists only the cards the review keeps
(``ReviewRecord.citations``: what the verdict rests on and what the reviewer confirmed).

``automated_verdict(report)`` is the machine's verdict as it ran, for research: marked
``"automated": true``, with no author and no rating, never a ClaimReview.

``dumps(data)`` is the one serializer of both (the web app's JSON-LD, ``feedback export``'s
JSONL files): JSON safe to embed in a page's ``<script type="application/ld+json">``, with
``<``, ``>`` and ``&`` (and the line separators U+2028, U+2029) written as ``\\u`` escapes
inside strings, so no field can close the script element or open a comment; a JSON reader
gets the same text back.
"""

from __future__ import annotations

import datetime as _dt
import json
from typing import Any

from factseek.errors import InputError
from factseek.review.feedback import is_anonymous
from factseek.review.ratings import BEST, WORST
from factseek.sanitize import safe_url
from factseek.types import Report, ReviewRecord

#: What ``dumps`` escapes: what could end a ``<script>`` element or start markup in a page.
_EMBED = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_EMBED_TABLE = str.maketrans(_EMBED)

AUTOMATED_NOTICE = (
    "Automated verdict by factseek, not reviewed by a person: for research only. It is not a"
    " ClaimReview and not any organisation's finding."
)


def dumps(data: Any, *, indent: int | None = None) -> str:
    """``data`` as JSON safe to embed in an HTML page (see the module docstring).

    Outside strings JSON has none of the escaped characters, so escaping them in the text is
    escaping them inside strings."""
    return json.dumps(data, ensure_ascii=False, indent=indent).translate(_EMBED_TABLE)


def refusal(review: ReviewRecord | None) -> str:
    """Why a report cannot be published as a ClaimReview ("" when it can)."""
    if review is None or review.status == "machine":
        return (
            "no reviewer has approved or set this verdict: ClaimReview is published only for a"
            " reviewed verdict (approve the machine's verdict or set your own)"
        )
    if review.status == "stale":
        return (
            f"the verdict changed after {review.reviewer} approved it (corrections since):"
            " approve it again or set your own"
        )
    if is_anonymous(review.reviewer):
        return "the verdict has no named reviewer: set your name, then approve or set it again"
    if not review.rating_name:
        return (
            f"the label {review.label!r} has no place on the organisation's rating scale"
            f" ({review.scale}): set the verdict with one of its labels"
        )
    return ""


def rating(review: ReviewRecord) -> dict[str, Any]:
    """``reviewRating`` for a reviewed verdict (the organisation's label and its 1-5 value)."""
    out: dict[str, Any] = {"@type": "Rating", "alternateName": review.rating_name}
    if review.rating is not None:
        out.update(ratingValue=review.rating, bestRating=BEST, worstRating=WORST)
    return out


def cited(report: Report) -> list[dict[str, str]]:
    """The cards the review keeps (``ReviewRecord.citations``), http(s) URLs, each once."""
    keep = report.review.citations if report.review else ()
    by_id = {e.id: (e.url, e.title) for e in report.evidence}
    by_id.update({f"S{i}": (s.url, s.title) for i, s in enumerate(report.summaries, 1)})
    out: list[dict[str, str]] = []
    seen: set[str] = set()
    for cid in keep:
        url, title = by_id.get(cid, ("", ""))
        if safe_url(url) and url not in seen:
            seen.add(url)
            item = {"@type": "CreativeWork", "url": url}
            if title:
                item["name"] = title
            out.append(item)
    return out


def _claim(report: Report) -> dict[str, Any]:
    c = report.claim
    claim: dict[str, Any] = {"@type": "Claim"}
    if c.speaker:
        claim["author"] = {"@type": "Person", "name": c.speaker}
    if c.date:
        claim["datePublished"] = c.date.isoformat()
    if c.venue:
        claim["appearance"] = [{"@type": "CreativeWork", "name": c.venue}]
    return claim


def claim_review(
    report: Report,
    *,
    organisation: str = "",
    url: str = "",
    published: _dt.date | None = None,
) -> dict[str, Any]:
    """The ClaimReview object (``dumps`` it into a ``<script type="application/ld+json">``).

    ``report`` is ``factseek.review.apply.reviewed``'s output; the author is ``organisation`` when
    given, else the reviewer as a Person. InputError (one line) when it may not be published."""
    why = refusal(report.review)
    if why:
        raise InputError(why)
    review = report.review
    assert review is not None
    author = (
        {"@type": "Organization", "name": organisation}
        if organisation
        else {"@type": "Person", "name": review.reviewer}
    )
    out: dict[str, Any] = {
        "@context": "https://schema.org",
        "@type": "ClaimReview",
        "claimReviewed": report.claim.text,
        "datePublished": (published or _dt.date.today()).isoformat(),
        "author": author,
        "itemReviewed": _claim(report),
        "reviewRating": rating(review),
        "citation": cited(report),
    }
    if url:
        if not safe_url(url):
            raise InputError("the review URL must start with http:// or https://")
        out["url"] = url
    return out


def automated_verdict(report: Report) -> dict[str, Any]:
    """The pipeline's verdict as it ran (before any correction), marked automated, for research."""
    v = report.review.machine if report.review and report.review.machine else report.verdict
    c = report.claim
    by_id = {e.id: e for e in report.evidence}
    return {
        "automated": True,
        "reviewed": False,
        "notice": AUTOMATED_NOTICE,
        "claim": c.text,
        "claim_date": c.date.isoformat() if c.date else None,
        "speaker": c.speaker,
        "verdict": {
            "judged": v.judged,
            "label": v.label,
            "scale": v.scale,
            "judge": v.judge,
            "confidence": v.confidence,
            "precision": v.precision,
            "precision_basis": v.precision_basis,
            "abstained": v.abstained,
            "rationale": v.rationale or v.explanation,
        },
        "evidence": [
            {
                "id": i,
                "url": by_id[i].url,
                "stance": by_id[i].stance.label if by_id[i].stance else None,
            }
            for i in v.evidence_ids
            if i in by_id
        ],
        "factseek_version": report.version,
    }
