"""Exa (``POST /search``), key in ``EXA_API_KEY`` sent as ``x-api-key``.

Native: the date cut-off (``endPublishedDate``: only pages published before it), site exclusion
(``excludeDomains``, whole hosts only) and up to 100 results. No language filter.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx

from factseek.constraints.hits import Constraints
from factseek.search.base import Capabilities
from factseek.search.http import (
    DEFAULT_HTTP,
    ApiClient,
    HttpConfig,
    dedup,
    env_key,
    host_only_sites,
    resolve_base,
    results_list,
    to_hits,
)
from factseek.types import Hit

DEFAULT_BASE = "https://api.exa.ai"
MAX_RESULTS = 100


class ExaSearch:
    """Exa's search API as a ``SearchBackend``."""

    name = "exa"

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        search_type: str = "auto",
        config: HttpConfig = DEFAULT_HTTP,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        key = api_key or env_key("EXA_API_KEY", "exa", "https://exa.ai")
        self._type = search_type
        self.capabilities = Capabilities(
            date_filter=True, domain_exclusion=True, max_results=MAX_RESULTS, language=False
        )
        self._client = ApiClient(
            self.name,
            resolve_base(base_url, "EXA_BASE_URL", DEFAULT_BASE),
            headers={"x-api-key": key},
            secret=key,
            config=config,
            transport=transport,
            sleep=sleep,
        )

    def search(self, query: str, k: int, constraints: Constraints) -> list[Hit]:
        body: dict[str, Any] = {
            "query": query,
            "numResults": min(MAX_RESULTS, max(1, k)),
            "type": self._type,
        }
        sites = host_only_sites(constraints.all_excluded_sites)
        if sites:
            body["excludeDomains"] = sites
        if constraints.before is not None:
            body["endPublishedDate"] = f"{constraints.before.isoformat()}T00:00:00.000Z"
        data = self._client.call("POST", "/search", body=body)
        hits = to_hits(results_list(data, "results"), _fields, query=query, backend=self.name)
        return dedup(hits, k)


def _fields(r: Mapping[str, Any]) -> dict[str, Any]:
    highlights = " ".join(h for h in (r.get("highlights") or []) if isinstance(h, str))
    return {
        "url": r.get("url"),
        "title": r.get("title"),
        "snippet": r.get("summary") or r.get("text") or highlights,
        "published": r.get("publishedDate"),
        "score": r.get("score"),
    }
