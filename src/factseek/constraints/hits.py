"""The paper's two search constraints, as data and as one pure check per hit.

* Temporal: a page counts only if published strictly before the claim's day. A page dated after
  it is removed (``"after-claim-date"``); a page dated *on* it is removed too, with its own reason
  (``"claim-day"``): pages carry a day, not a time, so a same-day page may have come after the
  claim, and it is often the report of the claim itself (the paper's "published before the
  claim", read on the safe side). Undated pages follow an explicit policy (``undated="drop"`` by
  default, or ``"keep"``) and are counted either way. After fetching, ``factseek.constraints.temporal``
  applies the same rule to the page's own dates, and its last modification (the date basis).
* Site: no fact-checking sites (the paper's list), no URL containing "fact-check"/"factcheck",
  no PDFs and no video sites; users extend the lists.
* Web-archive copies (``web.archive.org/web/TIMESTAMP/URL``): the site constraint judges the
  archived URL (its site, markers and file type), and a hit with no date of its own is dated by
  the snapshot when that settles it: a copy taken before the cut-off (with a day's margin for time
  zones) existed before the claim; otherwise it counts as undated.

Backends that can filter natively (the local store, some web APIs) take the same ``Constraints``;
``check`` is still applied to everything they return, so a backend's bug cannot leak a page.
"""

from __future__ import annotations

import datetime as _dt
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Literal
from urllib.parse import urlsplit

from factseek.pages.webarchive import original_url, snapshot
from factseek.types import ConstraintDecision, Hit

#: Fact-checking sites excluded by the paper (host, optional path prefix).
FACT_CHECK_SITES: tuple[str, ...] = (
    "politifact.com",
    "snopes.com",
    "factcheck.org",
    "washingtonpost.com/news/fact-checker",
    "apnews.com/hub/ap-fact-check",
    "fullfact.org",
    "reuters.com/fact-check",
)
#: Any URL containing one of these (case-insensitive) is treated as a fact-check.
FACT_CHECK_MARKERS: tuple[str, ...] = ("fact-check", "factcheck")
#: Video hosts: no text to extract (the paper skipped them).
VIDEO_SITES: tuple[str, ...] = (
    "youtube.com",
    "youtu.be",
    "vimeo.com",
    "dailymotion.com",
    "tiktok.com",
    "twitch.tv",
)

UndatedPolicy = Literal["drop", "keep"]


@dataclass(frozen=True, kw_only=True)
class Constraints:
    """What a hit must satisfy. ``before=None`` disables the temporal constraint."""

    before: _dt.date | None = None
    undated: UndatedPolicy = "drop"
    excluded_sites: tuple[str, ...] = FACT_CHECK_SITES
    excluded_markers: tuple[str, ...] = FACT_CHECK_MARKERS
    video_sites: tuple[str, ...] = VIDEO_SITES
    exclude_pdf: bool = True
    exclude_video: bool = True
    extra_sites: tuple[str, ...] = field(default=())  # user additions to excluded_sites

    def with_sites(self, *sites: str) -> Constraints:
        return replace(self, extra_sites=self.extra_sites + tuple(normalize_site(s) for s in sites))

    @property
    def all_excluded_sites(self) -> tuple[str, ...]:
        return self.excluded_sites + self.extra_sites


DEFAULT_CONSTRAINTS = Constraints()
NO_CONSTRAINTS = Constraints(
    before=None,
    undated="keep",
    excluded_sites=(),
    excluded_markers=(),
    exclude_pdf=False,
    exclude_video=False,
)


def normalize_site(site: str) -> str:
    """'https://www.Snopes.com/' -> 'snopes.com'; keeps a path prefix if given."""
    s = site.strip().lower()
    if "://" in s:
        s = s.split("://", 1)[1]
    s = s.rstrip("/")
    return s[4:] if s.startswith("www.") else s


def url_host_path(url: str) -> tuple[str, str]:
    """Lower-case host without 'www.' and the path, for site matching."""
    parts = urlsplit(url if "://" in url else "http://" + url)
    host = (parts.hostname or "").lower()
    if host.startswith("www."):
        host = host[4:]
    return host, parts.path or "/"


def site_matches(url: str, site: str) -> bool:
    """True if ``url`` is on ``site`` (a host, matching subdomains too, optionally with a path prefix)."""
    host, path = url_host_path(url)
    site = normalize_site(site)
    site_host, _, site_path = site.partition("/")
    if not (host == site_host or host.endswith("." + site_host)):
        return False
    if not site_path:
        return True
    return path.lower().lstrip("/").startswith(site_path)


def site_reason(url: str, c: Constraints) -> str | None:
    """Why the site constraint removes ``url`` (an archive copy: the archived URL), or None."""
    url = original_url(url)
    for site in c.all_excluded_sites:
        if site_matches(url, site):
            return f"excluded-site:{site}"
    low = url.lower()
    for marker in c.excluded_markers:
        if marker in low:
            return f"excluded-marker:{marker}"
    _, path = url_host_path(url)
    if c.exclude_pdf and path.lower().endswith(".pdf"):
        return "pdf"
    if c.exclude_video:
        for site in c.video_sites:
            if site_matches(url, site):
                return "video"
    return None


def date_reason(published: _dt.date | None, c: Constraints) -> str | None:
    """Why the temporal constraint removes a page with this date, or None if it passes."""
    if c.before is None:
        return None
    if published is None:
        return "undated" if c.undated == "drop" else None
    if published == c.before:
        return "claim-day"
    if published > c.before:
        return "after-claim-date"
    return None


def snapshot_before(url: str, before: _dt.date) -> bool:
    """True when ``url`` is an archive copy certainly taken before the day ``before``.

    The snapshot time is UTC and the claim's day is local: the copy counts only if its local day
    is before ``before`` even at +14:00, the furthest-ahead zone.
    """
    s = snapshot(url)
    if s is None or s.taken is None:
        return False
    latest_local = (s.taken + _dt.timedelta(hours=14)).date()
    return latest_local < before


def check(hit: Hit, c: Constraints, *, native: bool = False) -> ConstraintDecision:
    """One decision for one hit: the site constraint first, then the date."""
    published = hit.published
    if published is None and c.before is not None and snapshot_before(hit.url, c.before):
        published = c.before - _dt.timedelta(days=1)  # existed before the cut-off
    reason = site_reason(hit.url, c) or date_reason(published, c)
    return ConstraintDecision(
        url=hit.url, kept=reason is None, reason=reason or "ok", native=native
    )


#: The report funnel's stage for pages a check of their own dates removed, then the reason code.
PAGE_REMOVED = "removed by the page's own dates: "


def removed_counts(decisions: Iterable[ConstraintDecision]) -> dict[str, int]:
    """Distinct URLs removed, by coarse reason ("after-claim-date", "undated", "excluded-site", ...).

    A page removed for several queries counts once per reason.
    """
    seen: set[tuple[str, str]] = set()
    counts: Counter[str] = Counter()
    for d in decisions:
        if not d.kept:
            reason = d.reason.split(":", 1)[0]
            if (d.url, reason) not in seen:
                seen.add((d.url, reason))
                counts[reason] += 1
    return dict(sorted(counts.items()))
