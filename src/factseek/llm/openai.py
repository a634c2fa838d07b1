"""Any OpenAI-compatible chat-completions endpoint over HTTP (httpx).

Covers OpenAI, vLLM, the llama.cpp server (and llama-cpp-python's), Ollama and LM Studio: they
differ only in base URL, model name and whether a key is needed. Requests run in a thread pool
bounded by ``concurrency``; 429, 5xx and transport errors are retried with exponential backoff
and jitter, honouring ``Retry-After`` (shared by every client of the run where
``factseek.net.ratelimit`` applies: a configured ``llm`` rate, or a Ray run); malformed bodies are
retried too. Servers that ignore ``n`` (Ollama, llama.cpp) are topped up with further requests
using shifted seeds.

The API key comes from the ``api_key`` option (config) or ``$FACTSEEK_LLM_API_KEY`` /
``$OPENAI_API_KEY``; it goes only into the Authorization header, never into messages, logs,
the cache or ``repr``.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from factseek.errors import ConfigError, LLMError
from factseek.llm.base import (
    MAX_COMPLETION_CHARS,
    Price,
    Prompt,
    Usage,
    apply_stop,
    check_params,
    to_messages,
)
from factseek.net import ratelimit
from factseek.net.retry import retry_after_seconds
from factseek.redact import redact_text, redact_url

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini"
KEY_ENV = ("FACTSEEK_LLM_API_KEY", "OPENAI_API_KEY")
BASE_URL_ENV = ("FACTSEEK_LLM_BASE_URL", "OPENAI_BASE_URL")
MODEL_ENV = "FACTSEEK_LLM_MODEL"
PRICE_ENV = "FACTSEEK_LLM_PRICE"

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 4
DEFAULT_CONCURRENCY = 4
BACKOFF_BASE = 0.5  # seconds; doubles each retry
BACKOFF_MAX = 20.0
RETRY_AFTER_MAX = 60.0  # never sleep longer than this on a server's say-so
MAX_BODY_BYTES = 10_000_000
LIMIT_KEY = "llm"  # its key in factseek.net.ratelimit ($FACTSEEK_RATE_LIMITS, Ray runs)


def _env(names: Sequence[str]) -> str | None:
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    return None


class _Retry(Exception):
    def __init__(self, reason: str, wait: float | None = None) -> None:
        super().__init__(reason)
        self.wait = wait


class OpenAILLM:
    """Chat completions from an OpenAI-compatible server."""

    name = "openai"

    def __init__(
        self,
        *,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        concurrency: int = DEFAULT_CONCURRENCY,
        price: Price | str | None = None,
        max_tokens_field: str = "max_tokens",
        transport: httpx.BaseTransport | None = None,
        sleep: Any = time.sleep,
    ) -> None:
        self.model = model or os.environ.get(MODEL_ENV) or DEFAULT_MODEL
        self.base_url = (base_url or _env(BASE_URL_ENV) or DEFAULT_BASE_URL).rstrip("/")
        self._shown = redact_url(self.base_url)  # what messages show: no userinfo, no keys
        if not self.base_url.startswith(("http://", "https://")):
            raise ConfigError(
                f"LLM base URL must start with http:// or https://: {redact_url(self.base_url)}"
            )
        self.__key = api_key or _env(KEY_ENV)
        if self.__key is None and self.base_url.startswith(DEFAULT_BASE_URL):
            raise ConfigError(
                "the OpenAI API needs a key: set FACTSEEK_LLM_API_KEY or OPENAI_API_KEY"
            )
        if retries < 0 or concurrency < 1 or timeout <= 0:
            raise ConfigError("retries must be >= 0, concurrency >= 1 and timeout > 0")
        if isinstance(price, str):
            price = Price.parse(price)
        if price is None and os.environ.get(PRICE_ENV):
            price = Price.parse(os.environ[PRICE_ENV])
        self.retries = retries
        self.concurrency = concurrency
        self.max_tokens_field = max_tokens_field  # "max_completion_tokens" for OpenAI o-series
        self.usage = Usage(price)
        self._sleep = sleep
        headers = {"Content-Type": "application/json"}
        if self.__key:
            headers["Authorization"] = f"Bearer {self.__key}"
        self._client = httpx.Client(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=min(10.0, timeout)),
            transport=transport,
            follow_redirects=False,
        )
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenAILLM(model={self.model!r}, base_url={self._shown!r})"

    def close(self) -> None:
        self._client.close()

    # ------------------------------------------------------------------ public

    def generate(
        self,
        prompts: Sequence[Prompt],
        *,
        n: int = 1,
        temperature: float = 0.0,
        max_tokens: int = 256,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
    ) -> list[list[str]]:
        check_params(n, temperature, max_tokens)
        messages = [to_messages(p) for p in prompts]

        def one(msgs: list[dict[str, str]]) -> list[str]:
            return self._complete(msgs, n, temperature, max_tokens, stop, seed)

        if len(messages) <= 1 or self.concurrency == 1:
            return [one(m) for m in messages]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(messages))) as pool:
            return list(pool.map(one, messages))

    # ------------------------------------------------------------------ internals

    def _complete(
        self,
        messages: list[dict[str, str]],
        n: int,
        temperature: float,
        max_tokens: int,
        stop: Sequence[str] | None,
        seed: int | None,
    ) -> list[str]:
        """``n`` completions of one conversation, topping up servers that ignore ``n``."""
        out: list[str] = []
        shift = 0
        while len(out) < n:
            want = n - len(out)
            body: dict[str, Any] = {
                "model": self.model,
                "messages": messages,
                "temperature": temperature,
                self.max_tokens_field: max_tokens,
            }
            if want > 1:
                body["n"] = want
            if stop:
                body["stop"] = list(stop)[:4]  # the API's limit
            if seed is not None or shift:
                body["seed"] = (seed or 0) + shift
            got = self._post(body)
            out.extend(apply_stop(c, stop)[:MAX_COMPLETION_CHARS] for c in got[:want])
            shift += len(got)
        return out

    def _post(self, body: dict[str, Any]) -> list[str]:
        last = ""
        for attempt in range(self.retries + 1):
            try:
                ratelimit.hold(LIMIT_KEY, self._sleep)  # one rate and back-off (ratelimit.py)
                return self._post_once(body)
            except _Retry as e:
                last = str(e)
                if attempt == self.retries:
                    break
                backoff = min(BACKOFF_MAX, BACKOFF_BASE * 2**attempt) * (0.5 + random.random())
                wait = backoff if e.wait is None else min(RETRY_AFTER_MAX, max(e.wait, 0.0))
                self.usage.add(retries=1)
                if e.wait is None or not ratelimit.pause(LIMIT_KEY, wait):
                    self._sleep(wait)  # else hold() waits, with every client sharing the limits
        raise LLMError(f"LLM server {self._shown} failed after {self.retries + 1} attempts: {last}")

    def _post_once(self, body: dict[str, Any]) -> list[str]:
        try:
            r = self._client.post("/chat/completions", json=body)
        except httpx.TimeoutException:
            raise _Retry("timed out") from None
        except httpx.TransportError as e:
            raise _Retry(f"cannot connect ({type(e).__name__})") from None
        self.usage.add(requests=1)
        if r.status_code in RETRY_STATUS:
            raise _Retry(f"HTTP {r.status_code}", retry_after_seconds(r.headers.get("retry-after")))
        if r.status_code in (401, 403):
            raise LLMError(f"LLM server {self._shown} rejected the API key (HTTP {r.status_code})")
        if r.status_code == 404:
            raise LLMError(
                f"LLM server {self._shown}: endpoint or model {self.model!r} not found (HTTP 404)"
            )
        if 300 <= r.status_code < 400:
            raise LLMError(
                f"LLM server {self._shown} redirected (HTTP {r.status_code}); check the base URL"
            )
        if r.status_code >= 400:
            raise LLMError(f"LLM server {self._shown}: HTTP {r.status_code}: {self._reason(r)}")
        if len(r.content) > MAX_BODY_BYTES:
            raise LLMError(f"LLM server {self._shown}: response larger than {MAX_BODY_BYTES} bytes")
        try:
            data = r.json()
            choices = data["choices"]
            texts = [c["message"]["content"] or "" for c in choices]
            if not texts or not all(isinstance(t, str) for t in texts):
                raise TypeError("no text choices")
        except (ValueError, KeyError, TypeError, IndexError):
            raise _Retry("malformed response body") from None
        usage = data.get("usage") if isinstance(data, dict) else None
        if isinstance(usage, dict):
            self.usage.add(
                prompt_tokens=int(usage.get("prompt_tokens") or 0),
                completion_tokens=int(usage.get("completion_tokens") or 0),
            )
        return texts

    def _reason(self, r: httpx.Response) -> str:
        """The server's error message: one line, bounded, with the key scrubbed."""
        try:
            err = r.json().get("error")
            text = err.get("message", "") if isinstance(err, dict) else str(err or "")
        except (ValueError, AttributeError):
            text = r.text
        text = redact_text(str(text), [self.__key])  # before cutting: no prefix survives
        return " ".join(text.split())[:200] or r.reason_phrase
