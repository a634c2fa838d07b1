"""Web-archive copies: which page a Wayback Machine URL archives, and when it was taken.

Fact-checkers cite archived copies (``https://web.archive.org/web/20191019220400/https://example.com/a``)
because pages change or vanish. Two things follow from such a URL:

* the site constraint must judge the *archived* URL (its host, path and file type), not
  ``web.archive.org``;
* the snapshot timestamp (14 digits, UTC) says the page existed by then: an upper bound on its
  publication date (``factseek.pages.pagedates`` turns it into date evidence, source ``"archive"``).

Recognised: ``http(s)://web.archive.org/web/TIMESTAMP[modifier_]/URL`` (modifiers such as ``id_``,
``if_``, ``im_``), with a timestamp of 4 to 14 digits, and the original URL with or without its
scheme. Anything else is not an archive copy. Only a full 14-digit timestamp dates the copy: for a
shorter one Wayback serves the nearest capture, whose time the URL does not say (the fetcher
follows the redirect, and the final URL has the full timestamp).
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

ARCHIVE_HOSTS: frozenset[str] = frozenset({"web.archive.org", "wayback.archive.org"})

_PATH = re.compile(r"^/web/(\d{4,14})(?:[a-z]{2}_)?/+(.+)$", re.S)


@dataclass(frozen=True, kw_only=True)
class Snapshot:
    """An archived copy: the page it archives and when the archive took it (UTC)."""

    original: str  # the archived page's URL, with a scheme
    taken: _dt.datetime | None  # timezone-aware, UTC; None when the URL's timestamp is partial
    raw: str  # the timestamp as written in the URL


def snapshot(url: str) -> Snapshot | None:
    """The ``Snapshot`` a Wayback Machine URL points at, or None for any other URL."""
    try:
        parts = urlsplit(url[:4000])
    except ValueError:
        return None
    if (parts.hostname or "").lower() not in ARCHIVE_HOSTS:
        return None
    rest = parts.path + (f"?{parts.query}" if parts.query else "")
    m = _PATH.match(rest)
    if m is None:
        return None
    stamp, original = m[1], m[2]
    if re.match(r"^https?:/(?!/)", original, re.I):  # "https:/x.com": slashes folded by a proxy
        original = original.replace(":/", "://", 1)
    if not re.match(r"^https?://", original, re.I):
        original = "http://" + original
    return Snapshot(original=original, taken=_timestamp(stamp), raw=stamp)


def original_url(url: str) -> str:
    """The archived page's URL for an archive copy; ``url`` itself otherwise."""
    s = snapshot(url)
    return s.original if s is not None else url


def _timestamp(stamp: str) -> _dt.datetime | None:
    if len(stamp) != 14:
        return None
    try:
        return _dt.datetime.strptime(stamp, "%Y%m%d%H%M%S").replace(tzinfo=_dt.UTC)
    except ValueError:
        return None
