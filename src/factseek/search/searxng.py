"""A self-hosted SearXNG instance (``GET /search?format=json``), base URL in ``SEARXNG_URL``.

No key. Native: the language (``language``). SearXNG's ``time_range`` is relative (day, month,
year), so the date cut-off is emulated, and so is site exclusion. Pages of results are fetched
(``pageno``) until ``k`` distinct URLs or ``MAX_PAGES``. JSON output must be enabled in the
instance's ``settings.yml`` (``search.formats: [html, json]``); otherwise it answers 403.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx

from factseek.constraints.hits import Constraints
from factseek.errors import AuthError, ConfigError
from factseek.search.base import Capabilities
from factseek.search.http import (
    DEFAULT_HTTP,
    ApiClient,
    HttpConfig,
    dedup,
    resolve_base,
    results_list,
    to_hits,
)
from factseek.types import Hit

MAX_PAGES = 5
PAGE_GUESS = 10  # results one page usually has; only sizes ``max_results``


class SearxngSearch:
    """A SearXNG instance's JSON API as a ``SearchBackend``."""

    name = "searxng"

    def __init__(
        self,
        *,
        base_url: str | None = None,
        language: str | None = None,
        categories: str = "general",
        config: HttpConfig = DEFAULT_HTTP,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        base = resolve_base(base_url, "SEARXNG_URL", "")
        if not base:
            raise ConfigError(
                "searxng: set SEARXNG_URL to your instance, e.g. http://localhost:8888"
            )
        self._language = language
        self._categories = categories
        self.capabilities = Capabilities(
            date_filter=False,
            domain_exclusion=False,
            max_results=MAX_PAGES * PAGE_GUESS,
            language=True,
        )
        self._client = ApiClient(
            self.name, base, headers={}, config=config, transport=transport, sleep=sleep
        )

    def search(self, query: str, k: int, constraints: Constraints) -> list[Hit]:
        params: dict[str, str | int] = {
            "q": query,
            "format": "json",
            "categories": self._categories,
        }
        if self._language:
            params["language"] = self._language
        hits: list[Hit] = []
        seen: set[str] = set()
        for page in range(1, MAX_PAGES + 1):
            try:
                data = self._client.call("GET", "/search", params={**params, "pageno": page})
            except AuthError as e:
                raise AuthError(
                    f"{e} (is json enabled under search.formats in settings.yml?)"
                ) from None
            new = 0
            for hit in to_hits(
                results_list(data, "results"), _fields, query=query, backend=self.name
            ):
                if hit.url not in seen:
                    seen.add(hit.url)
                    hits.append(hit)
                    new += 1
            if len(hits) >= k or new == 0:
                break
        return dedup(hits, k)


def _fields(r: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "url": r.get("url"),
        "title": r.get("title"),
        "snippet": r.get("content"),
        "published": r.get("publishedDate"),
        "score": r.get("score"),
    }
