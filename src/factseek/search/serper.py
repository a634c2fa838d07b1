"""Serper, Google results (``POST /search``), key in ``SERPER_API_KEY`` sent as ``X-API-KEY``.

Native: the date cut-off (Google's custom range ``tbs=cdr:1,cd_max:M/D/YYYY``, inclusive, so the
day before the claim), site exclusion (``-site:host`` operators appended to the query, whole
hosts only), the interface language (``hl``) and up to 100 results.
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

DEFAULT_BASE = "https://google.serper.dev"
MAX_RESULTS = 100


class SerperSearch:
    """Serper's Google search API as a ``SearchBackend``."""

    name = "serper"

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
        key = api_key or env_key("SERPER_API_KEY", "serper", "https://serper.dev")
        self._language = language
        self._country = country
        self.capabilities = Capabilities(
            date_filter=True, domain_exclusion=True, max_results=MAX_RESULTS, language=True
        )
        self._client = ApiClient(
            self.name,
            resolve_base(base_url, "SERPER_BASE_URL", DEFAULT_BASE),
            headers={"X-API-KEY": key},
            secret=key,
            config=config,
            transport=transport,
            sleep=sleep,
        )

    def search(self, query: str, k: int, constraints: Constraints) -> list[Hit]:
        q = " ".join(
            [query, *(f"-site:{s}" for s in host_only_sites(constraints.all_excluded_sites))]
        )
        body: dict[str, Any] = {"q": q, "num": min(MAX_RESULTS, max(1, k))}
        last = last_allowed_day(constraints.before)
        if last is not None:
            body["tbs"] = f"cdr:1,cd_max:{last.month}/{last.day}/{last.year}"
        if self._language:
            body["hl"] = self._language
        if self._country:
            body["gl"] = self._country
        data = self._client.call("POST", "/search", body=body)
        hits = to_hits(results_list(data, "organic"), _fields, query=query, backend=self.name)
        return dedup(hits, k)


def _fields(r: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "url": r.get("link"),
        "title": r.get("title"),
        "snippet": r.get("snippet"),
        "published": r.get("date"),
    }
