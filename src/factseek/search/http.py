"""Shared HTTP plumbing for the web search providers: one JSON call with retries and errors.

Status codes become factseek errors at this seam:

* 401, 403 -> ``AuthError`` (the key is missing, wrong, or lacks the plan).
* 402 and the providers' own quota codes (Tavily's 432/433) -> ``QuotaExceeded``; so is any
  other 4xx whose body talks about a quota, credits or a plan's usage limit (Serper answers 400
  "Not enough credits", Brave 429 "QUOTA_LIMITED"): retrying will not help.
* 429 -> wait ``Retry-After`` (seconds or an HTTP date; exponential backoff if absent, never
  longer than ``max_retry_after``) and retry; then ``RateLimited``. Where shared limits apply
  (``factseek.net.ratelimit``: a configured rate, or a Ray run), every request first waits for the
  provider's slot, and a ``Retry-After`` pauses the provider for every client that shares them.
* 5xx, timeouts, connection errors -> retry with backoff; then ``BackendUnavailable``.
* any other status, or a body that is not JSON -> ``SearchError``.

Messages are one line and never contain the API key.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import httpx

from factseek.errors import (
    AuthError,
    BackendUnavailable,
    QuotaExceeded,
    RateLimited,
    SearchError,
)
from factseek.net import ratelimit
from factseek.net.retry import retry_after_seconds
from factseek.pages.extract import parse_date
from factseek.redact import redact_text, redact_url
from factseek.types import Hit


@dataclass(frozen=True, kw_only=True)
class HttpConfig:
    """Timeouts and retry policy for provider calls."""

    timeout: float = 20.0  # seconds, connect and read
    retries: int = 3  # extra attempts after a 429, a 5xx or a network error
    backoff: float = 1.0  # first wait in seconds; doubles each attempt
    max_retry_after: float = 60.0  # a longer Retry-After gives up at once with RateLimited
    max_response_bytes: int = 5_000_000


DEFAULT_HTTP = HttpConfig()

#: Words in an error body that mean "out of quota" rather than "slow down".
_QUOTA_WORDS = re.compile(
    r"quota|credit|usage limit|plan'?s? (?:set )?(?:usage )?limit|monthly limit|exceeds your plan",
    re.I,
)


def env_key(var: str, provider: str, where: str) -> str:
    """The API key in ``var``, or ``AuthError`` saying how to get one."""
    key = os.environ.get(var, "").strip()
    if not key:
        raise AuthError(f"{provider}: set {var} to your API key (get one at {where})")
    return key


def resolve_base(explicit: str | None, var: str, default: str) -> str:
    """``explicit``, else the environment variable ``var``, else ``default``; no trailing slash."""
    return (explicit or os.environ.get(var, "") or default).rstrip("/")


def _one_line(text: str, secret: str, limit: int = 200) -> str:
    """One line, secrets scrubbed *before* it is cut (no prefix of a key survives)."""
    return " ".join(redact_text(text, [secret]).split())[:limit]


def _error_text(response: httpx.Response) -> str:
    """The provider's error message from a JSON body, else the raw body."""
    try:
        data = response.json()
    except ValueError:
        return response.text
    if isinstance(data, Mapping):
        for key in ("detail", "error", "message", "errors"):
            v = data.get(key)
            if isinstance(v, Mapping):
                v = v.get("detail") or v.get("message") or v.get("code") or json.dumps(v)
            if v:
                return str(v)
    return json.dumps(data)


class ApiClient:
    """A JSON API client for one provider: ``call(method, path, ...) -> parsed JSON``."""

    def __init__(
        self,
        provider: str,
        base: str,
        *,
        headers: Mapping[str, str],
        secret: str = "",
        config: HttpConfig = DEFAULT_HTTP,
        quota_statuses: frozenset[int] = frozenset({402}),
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.provider = provider
        self.base = base
        self._secret = secret
        self._config = config
        self._quota = quota_statuses
        self._sleep = sleep
        self._client = httpx.Client(
            headers={"Accept": "application/json", **headers},
            timeout=config.timeout,
            transport=transport,
            follow_redirects=False,
        )
        self.calls = 0  # HTTP requests made (usage reporting)

    def close(self) -> None:
        self._client.close()

    def call(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Mapping[str, Any] | None = None,
    ) -> Any:
        cfg = self._config
        name = self.provider
        wait = cfg.backoff
        last = ""
        paused = False  # the last Retry-After went to the shared limits: hold() waits it out
        for attempt in range(cfg.retries + 1):
            if attempt:
                if not paused:
                    self._sleep(wait)
                wait *= 2
            paused = False
            ratelimit.hold(name, self._sleep)  # one rate and back-off per provider (ratelimit.py)
            self.calls += 1
            try:
                r = self._client.request(method, self.base + path, params=params, json=body)
            except httpx.TimeoutException:
                last = f"{name}: timed out after {cfg.timeout:g}s"
                continue
            except httpx.TransportError as e:
                last = f"{name}: cannot reach {redact_url(self.base)}: {type(e).__name__}"
                continue
            status = r.status_code
            if 200 <= status < 300:
                if len(r.content) > cfg.max_response_bytes:
                    raise SearchError(
                        f"{name}: response larger than {cfg.max_response_bytes} bytes"
                    )
                try:
                    return r.json()
                except ValueError:
                    raise SearchError(f"{name}: response is not JSON (HTTP {status})") from None
            detail = _one_line(_error_text(r), self._secret)
            if status in (401, 403):
                raise AuthError(f"{name}: key rejected (HTTP {status}): {detail}")
            if status in self._quota or (
                400 <= status < 500 and status != 404 and _QUOTA_WORDS.search(detail)
            ):
                raise QuotaExceeded(f"{name}: quota exhausted (HTTP {status}): {detail}")
            if status == 429:
                after = retry_after_seconds(r.headers.get("retry-after"))
                if after is not None and after > cfg.max_retry_after:
                    raise RateLimited(
                        f"{name}: rate limited; retry after {after:.0f}s", retry_after=after
                    )
                if attempt == cfg.retries:
                    raise RateLimited(
                        f"{name}: rate limited after {attempt + 1} attempts: {detail}",
                        retry_after=after,
                    )
                if after is not None:
                    wait = after
                    paused = ratelimit.pause(name, after)
                continue
            if status >= 500:
                last = f"{name}: server error HTTP {status}: {detail}"
                continue
            raise SearchError(f"{name}: HTTP {status}: {detail}")
        raise BackendUnavailable(f"{last} (after {cfg.retries + 1} attempts)")


# ----------------------------------------------------------------------------- shared mapping


def last_allowed_day(before: _dt.date | None) -> _dt.date | None:
    """The last day a page may carry under a strict ``before`` cut-off (providers' ends are inclusive)."""
    return None if before is None else before - _dt.timedelta(days=1)


def host_only_sites(sites: tuple[str, ...]) -> list[str]:
    """Excluded sites that are whole hosts; path-prefixed ones are left to factseek's own check
    (a provider given ``washingtonpost.com`` would drop the whole paper, not just its fact-checker)."""
    return [s for s in sites if "/" not in s]


def make_hit(
    *,
    url: Any,
    title: Any,
    snippet: Any,
    published: Any,
    rank: int,
    query: str,
    backend: str,
    score: Any = None,
) -> Hit | None:
    """A ``Hit`` from one provider result, or None when it has no usable http(s) URL."""
    if not isinstance(url, str) or not url.lower().startswith(("http://", "https://")):
        return None
    date = parse_date(published) if isinstance(published, str) else None
    return Hit(
        url=url[:2000],
        title=" ".join(str(title or "").split())[:500],
        snippet=" ".join(str(snippet or "").split())[:2000],
        published=date,
        rank=rank,
        score=float(score) if isinstance(score, (int, float)) else None,
        query=query,
        backend=backend,
    )


def to_hits(
    rows: list[Any],
    fields: Callable[[Mapping[str, Any]], Mapping[str, Any]],
    *,
    query: str,
    backend: str,
) -> list[Hit]:
    """Hits for provider result rows, in order; ``fields(row)`` gives ``make_hit``'s url, title,
    snippet, published (and optional score). Rows that are not objects or have no usable URL are
    skipped; ``dedup`` assigns the final ranks."""
    out: list[Hit] = []
    for r in rows:
        if isinstance(r, Mapping):
            hit = make_hit(**fields(r), rank=len(out) + 1, query=query, backend=backend)
            if hit is not None:
                out.append(hit)
    return out


def results_list(data: Any, *keys: str) -> list[Any]:
    """``data[keys[0]][keys[1]]...`` when it is a list, else an empty list."""
    for key in keys:
        data = data.get(key) if isinstance(data, Mapping) else None
    return data if isinstance(data, list) else []


def dedup(hits: list[Hit], k: int) -> list[Hit]:
    """The first ``k`` hits with distinct URLs, ranked 1..n in order."""
    seen: set[str] = set()
    out: list[Hit] = []
    for h in hits:
        if h.url in seen:
            continue
        seen.add(h.url)
        out.append(replace(h, rank=len(out) + 1))
        if len(out) == k:
            break
    return out
