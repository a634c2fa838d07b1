"""Constraints as one int32 "gate" per document, computed once and cached.

The search kernels keep a posting only when ``lo <= gate[doc] < hi``. ``gate`` is the document's
publication day (``date.toordinal()``, 0 when undated), or ``EXCLUDED`` when the site constraint
removes it; ``[lo, hi)`` encodes the temporal constraint:

=========================  =====  ======================  =======================================
constraint                 lo     hi                      keeps
=========================  =====  ======================  =======================================
no before-date             0      EXCLUDED                every site-allowed document
before, undated="drop"     1      before.toordinal()      dated strictly before, site-allowed
before, undated="keep"     0      before.toordinal()      the same, plus undated ones
=========================  =====  ======================  =======================================

The site part mirrors ``factseek.constraints.hits.site_reason`` exactly: excluded sites (host and
its subdomains, optionally a path prefix), URL markers (substring of the lower-cased URL), PDFs
and video sites. Host-level decisions are made once per distinct host; path prefixes are checked
only on the URLs of matching hosts; markers are found with one scan over all lower-cased URLs.
The site gate depends only on the site fields of ``Constraints``, so claims with different dates
share it. The numba kernels read ``allowed``: the whole decision as one byte per document
(``gate`` in ``[lo, hi)``), cached per site policy and date range, with the range ``[1, 2)``.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from typing import NamedTuple

import numpy as np

from factseek.constraints.hits import Constraints, normalize_site, site_matches

EXCLUDED = np.iinfo(np.int32).max
SiteKey = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], bool]


class Gate(NamedTuple):
    gate: np.ndarray  # int32 per document
    lo: int
    hi: int


def site_key(c: Constraints) -> SiteKey:
    video = c.video_sites if c.exclude_video else ()
    return (c.all_excluded_sites, c.excluded_markers, video, c.exclude_pdf)


def date_range(c: Constraints) -> tuple[int, int]:
    if c.before is None:
        return 0, int(EXCLUDED)
    return (1 if c.undated == "drop" else 0), c.before.toordinal()


class UrlTable:
    """Lower-cased URLs as one byte blob with line offsets (from ``urls_lower.txt``)."""

    def __init__(self, blob: bytes) -> None:
        self.blob = blob
        ends = np.flatnonzero(np.frombuffer(blob, np.uint8) == 10)
        self.starts = np.concatenate([[0], ends[:-1] + 1]).astype(np.int64) if len(ends) else ends
        self.ends = ends

    def __len__(self) -> int:
        return len(self.ends)

    def url(self, i: int) -> str:
        return self.blob[self.starts[i] : self.ends[i]].decode("utf-8")

    def containing(self, needle: str) -> np.ndarray:
        """Indices of URLs that contain ``needle``."""
        n = len(self)
        if needle == "":
            return np.arange(n)
        if "\n" in needle:
            return np.zeros(0, np.int64)
        pos = [m.start() for m in re.finditer(re.escape(needle.encode("utf-8")), self.blob)]
        if not pos:
            return np.zeros(0, np.int64)
        return np.unique(np.searchsorted(self.ends, np.asarray(pos, np.int64), side="left"))


def site_excluded(
    key: SiteKey, hosts: list[str], host_id: np.ndarray, url_flags: np.ndarray, urls: UrlTable
) -> np.ndarray:
    """Boolean per document: does the site constraint remove it."""
    sites, markers, video, exclude_pdf = key
    host_out = np.zeros(len(hosts), bool)
    out = np.zeros(len(host_id), bool)
    for site in (*sites, *video):
        s = normalize_site(site)
        s_host, _, s_path = s.partition("/")
        match = [i for i, h in enumerate(hosts) if h == s_host or h.endswith("." + s_host)]
        if not match:
            continue
        if not s_path:
            host_out[match] = True
            continue
        for d in np.flatnonzero(np.isin(host_id, match)):
            if not out[d] and site_matches(urls.url(int(d)), site):
                out[d] = True
    out |= host_out[host_id]
    for marker in markers:
        out[urls.containing(marker)] = True
    if exclude_pdf:
        out |= (url_flags & 1).astype(bool)
    return out


class GateCache:
    """Per-``Constraints`` gates for one store, computed once per distinct site policy (LRU)."""

    def __init__(
        self,
        days: np.ndarray,
        hosts: list[str],
        host_id: np.ndarray,
        url_flags: np.ndarray,
        urls: UrlTable,
        max_items: int = 8,
    ) -> None:
        self.days = days
        self.hosts = hosts
        self.host_id = host_id
        self.url_flags = url_flags
        self.urls = urls
        self.max_items = max_items
        self._cache: OrderedDict[SiteKey, np.ndarray] = OrderedDict()
        self._masks: OrderedDict[tuple[SiteKey, int, int], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def gate(self, c: Constraints) -> Gate:
        lo, hi = date_range(c)
        return Gate(self.site_gate(site_key(c)), lo, hi)

    def allowed(self, c: Constraints) -> Gate:
        """The same decision as ``gate(c)`` as one byte per document (1: allowed), with the
        range ``[1, 2)``: a quarter of the int32 gate's memory, so the kernels' random reads of
        it stay in the CPU cache. Cached per site policy and date range (LRU)."""
        lo, hi = date_range(c)
        key = (site_key(c), lo, hi)
        mask = self._get(self._masks, key)
        if mask is None:
            g = self.site_gate(key[0])
            mask = self._put(self._masks, key, ((g >= lo) & (g < hi)).view(np.uint8))
        return Gate(mask, 1, 2)

    def site_gate(self, key: SiteKey) -> np.ndarray:
        gate = self._get(self._cache, key)
        if gate is None:
            excluded = site_excluded(key, self.hosts, self.host_id, self.url_flags, self.urls)
            gate = np.array(self.days, dtype=np.int32)
            gate[excluded] = EXCLUDED
            gate = self._put(self._cache, key, gate)
        return gate

    def _get(self, cache: OrderedDict, key: object) -> np.ndarray | None:
        """``cache[key]``, marked as the most recently used, or None."""
        with self._lock:
            if key in cache:
                cache.move_to_end(key)
                return cache[key]
        return None

    def _put(self, cache: OrderedDict, key: object, value: np.ndarray) -> np.ndarray:
        """Keep ``value`` under ``key``, dropping the least recently used past ``max_items``."""
        with self._lock:
            cache[key] = value
            while len(cache) > self.max_items:
                cache.popitem(last=False)
        return value
