"""On-disk cache of fetched response bodies, content-hashed.

Layout (plain files, safe to share)::

    cache_dir/
      config.json              {"format_version": 1}
      urls/<sha256(url)>.json  {"url", "final_url", "content_type", "last_modified", "sha256"}
      bodies/<sha256>.gz       the response body (decoded), gzip-compressed

Identical bodies fetched from different URLs are stored once. Writes are atomic (temp file +
``os.replace``); a damaged or partial entry reads as a miss. Headers other than Content-Type
and Last-Modified are not kept (no cookies, nothing secret); the URLs an entry records are
redacted (``factseek.redact.redact_url``), and entries are read through the bounded reader.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from factseek.errors import FactseekError
from factseek.files import atomic_write, read_input
from factseek.redact import redact_url
from factseek.sanitize import json_loads

FORMAT_VERSION = 1
#: The most bytes one ``urls/*.json`` entry may have.
ENTRY_LIMIT = 2**20


@dataclass(frozen=True, kw_only=True)
class CachedPage:
    url: str
    final_url: str
    content_type: str
    last_modified: str | None
    body: bytes


def sha256(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


class PageCache:
    """Response bodies by URL, stored once per content hash."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        config = self.root / "config.json"
        if not config.exists():
            atomic_write(config, json.dumps({"format_version": FORMAT_VERSION}).encode())

    def _entry(self, url: str) -> Path:
        return self.root / "urls" / f"{sha256(url)}.json"

    def get(self, url: str) -> CachedPage | None:
        try:
            meta = json_loads(read_input(self._entry(url), "page cache entry", limit=ENTRY_LIMIT))
            body = gzip.decompress((self.root / "bodies" / f"{meta['sha256']}.gz").read_bytes())
        except (OSError, ValueError, KeyError, TypeError, EOFError, FactseekError):
            return None
        if sha256(body) != meta["sha256"] or meta.get("url") != redact_url(url):
            return None
        return CachedPage(
            url=url,
            final_url=meta["final_url"],
            content_type=meta["content_type"],
            last_modified=meta.get("last_modified"),
            body=body,
        )

    def put(self, page: CachedPage) -> str:
        digest = sha256(page.body)
        blob = self.root / "bodies" / f"{digest}.gz"
        if not blob.exists():
            atomic_write(blob, gzip.compress(page.body, mtime=0))
        meta = {
            "url": redact_url(page.url),
            "final_url": redact_url(page.final_url),
            "content_type": page.content_type,
            "last_modified": page.last_modified,
            "sha256": digest,
        }
        atomic_write(self._entry(page.url), json.dumps(meta, ensure_ascii=False).encode())
        return digest
