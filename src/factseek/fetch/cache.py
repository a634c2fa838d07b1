"""On-disk cache of fetched response bodies, content-hashed.

Layout (plain files, safe to share)::

    cache_dir/
      config.json              {"format_version": 1}
      urls/<sha256(url)>.json  {"url", "final_url", "content_type", "last_modified", "sha256"}
      bodies/<sha256>.gz       the response body (decoded), gzip-compressed

Identical bodies fetched from different URLs are stored once. Writes are atomic (temp file +
``os.replace``); a damaged or partial entry reads as a miss. Headers other than Content-Type
and Last-Modified are not kept (no cookies, nothing secret).
"""

from __future__ import annotations

import gzip
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from factseek.files import atomic_write
from factseek.sanitize import json_loads

FORMAT_VERSION = 1


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
            meta = json_loads(self._entry(url).read_text())
            body = gzip.decompress((self.root / "bodies" / f"{meta['sha256']}.gz").read_bytes())
        except (OSError, ValueError, KeyError, EOFError, gzip.BadGzipFile):
            return None
        if sha256(body) != meta["sha256"] or meta.get("url") != url:
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
            "url": page.url,
            "final_url": page.final_url,
            "content_type": page.content_type,
            "last_modified": page.last_modified,
            "sha256": digest,
        }
        atomic_write(self._entry(page.url), json.dumps(meta, ensure_ascii=False).encode())
        return digest
