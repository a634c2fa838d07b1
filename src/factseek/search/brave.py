"""Brave Search (``GET /res/v1/web/search``), key in ``BRAVE_API_KEY``.

Native: the date cut-off (``freshness=1990-01-01to<last day>``), the language (``search_lang``)
and up to 20 results a page, 10 pages. Site exclusion is emulated by factseek.
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
    last_allowed_day,
    resolve_base,
    results_list,
    to_hits,
)
from factseek.types import Hit

DEFAULT_BASE = "https://api.search.brave.com/res/v1"
PAGE_SIZE = 20  # Brave's maximum ``count``
MAX_PAGES = 10  # ``offset`` runs 0..9


class BraveSearch:
    """Brave's web search API as a ``SearchBackend``."""

    name = "brave"

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        language: str | None = None,
        country: str | None = None,
        config: HttpConfig = DEFAULT_HTTP,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        key = api_key or env_key("BRAVE_API_KEY", "brave", "https://brave.com/search/api/")
        self._language = language
        self._country = country
        self.capabilities = Capabilities(
            date_filter=True,
            domain_exclusion=False,
            max_results=PAGE_SIZE * MAX_PAGES,
            language=True,
        )
        self._client = ApiClient(
            self.name,
            resolve_base(base_url, "BRAVE_BASE_URL", DEFAULT_BASE),
            headers={"X-Subscription-Token": key},
            secret=key,
            config=config,
            transport=transport,
            sleep=sleep,
        )

    def search(self, query: str, k: int, constraints: Constraints) -> list[Hit]:
        count = min(PAGE_SIZE, max(1, k))
        params: dict[str, str | int] = {"q": query, "count": count, "result_filter": "web"}
        last = last_allowed_day(constraints.before)
        if last is not None:
            params["freshness"] = f"1990-01-01to{last.isoformat()}"
        if self._language:
            params["search_lang"] = self._language
        if self._country:
            params["country"] = self._country
        hits: list[Hit] = []
        for page in range(MAX_PAGES):
            data = self._client.call("GET", "/web/search", params={**params, "offset": page})
            results = results_list(data, "web", "results")
            hits.extend(to_hits(results, _fields, query=query, backend=self.name))
            info = data.get("query") if isinstance(data, dict) else None
            more = isinstance(info, dict) and bool(info.get("more_results_available"))
            if len(hits) >= k or len(results) < count or not more:
                break
        return dedup(hits, k)


def _fields(r: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "url": r.get("url"),
        "title": r.get("title"),
        "snippet": r.get("description"),
        "published": r.get("page_age") or r.get("age"),
    }
