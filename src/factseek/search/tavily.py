"""Tavily (``POST /search``), key in ``TAVILY_API_KEY`` sent as a bearer token.

Native: the date cut-off (``end_date``, inclusive, so the day before the claim), site exclusion
(``exclude_domains``, whole hosts only) and up to 20 results. No language filter.
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
    last_allowed_day,
    resolve_base,
    results_list,
    to_hits,
)
from factseek.types import Hit

DEFAULT_BASE = "https://api.tavily.com"
MAX_RESULTS = 20
#: Tavily's own codes: 432 plan limit exceeded, 433 pay-as-you-go limit exceeded.
QUOTA_STATUSES = frozenset({402, 432, 433})


class TavilySearch:
    """Tavily's search API as a ``SearchBackend``."""

    name = "tavily"

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        search_depth: str = "basic",
        config: HttpConfig = DEFAULT_HTTP,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        key = api_key or env_key("TAVILY_API_KEY", "tavily", "https://tavily.com")
        self._depth = search_depth
        self.capabilities = Capabilities(
            date_filter=True, domain_exclusion=True, max_results=MAX_RESULTS, language=False
        )
        self._client = ApiClient(
            self.name,
            resolve_base(base_url, "TAVILY_BASE_URL", DEFAULT_BASE),
            headers={"Authorization": f"Bearer {key}"},
            secret=key,
            config=config,
            quota_statuses=QUOTA_STATUSES,
            transport=transport,
            sleep=sleep,
        )

    def search(self, query: str, k: int, constraints: Constraints) -> list[Hit]:
        body: dict[str, Any] = {
            "query": query,
            "max_results": min(MAX_RESULTS, max(1, k)),
            "search_depth": self._depth,
            "topic": "general",
            "include_answer": False,
            "include_raw_content": False,
            "include_images": False,
        }
        sites = host_only_sites(constraints.all_excluded_sites)
        if sites:
            body["exclude_domains"] = sites
        last = last_allowed_day(constraints.before)
        if last is not None:
            body["end_date"] = last.isoformat()
        data = self._client.call("POST", "/search", body=body)
        hits = to_hits(results_list(data, "results"), _fields, query=query, backend=self.name)
        return dedup(hits, k)


def _fields(r: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "url": r.get("url"),
        "title": r.get("title"),
        "snippet": r.get("content"),
        "published": r.get("published_date"),
        "score": r.get("score"),
    }
