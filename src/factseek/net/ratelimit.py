"""One request rate and one ``Retry-After`` back-off per remote service, shared by every client
that calls it: the web search providers (``search/http.py``) and remote LLMs (``llm/openai.py``).

A *key* names a service: a search provider's name (``brave``, ``tavily``, ``exa``, ``serper``,
``searxng``) or ``llm`` for the OpenAI-compatible LLM client. Rules:

1. **Rate.** ``FACTSEEK_RATE_LIMITS="brave=1,llm=5"`` sets requests per second per key (no
   limit for keys it does not name). Requests are spaced ``1/rate`` seconds apart, no bursts:
   each request reserves the next free slot (``Buckets.reserve`` returns how long to wait for
   it) and sleeps until then.
2. **Back-off.** A server's ``Retry-After`` pauses its key for everyone who shares the limits
   (``Buckets.pause``): no request to that key starts before the pause ends. A pause never
   shortens one already in force.
3. **Who shares.** Without a Ray cluster, the clients of one process share one ``LocalLimits``
   (only for the keys with a rate: other keys behave as before, each client honouring the
   ``Retry-After`` it was sent). Under ``--ray`` every worker installs the run's shared limits
   (``install``; ``factseek.runs.distributed`` keeps them in one small Ray actor), so the whole
   cluster keeps one rate and one back-off per key, every key included.

The clients call ``hold(key, sleep)`` before each request and ``pause(key, seconds)`` on a
``Retry-After``; both do nothing when no limits apply to the key.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import Protocol

from factseek.errors import ConfigError

RATES_ENV = "FACTSEEK_RATE_LIMITS"


class Limits(Protocol):
    """Shared rate limits: how long to wait before a request, and a pause for everyone."""

    def reserve(self, key: str) -> float: ...

    def pause(self, key: str, seconds: float) -> None: ...


class Buckets:
    """The rules of the module docstring over a clock (not thread-safe: wrap it in a lock or an
    actor). ``rates``: requests per second per key."""

    def __init__(
        self, rates: Mapping[str, float], clock: Callable[[], float] = time.monotonic
    ) -> None:
        for key, rate in rates.items():
            if not rate > 0:
                raise ConfigError(f"rate limit for {key!r} must be above 0, got {rate}")
        self.rates = dict(rates)
        self._clock = clock
        self._next: dict[str, float] = {}  # key -> the next free slot
        self._paused: dict[str, float] = {}  # key -> end of its Retry-After pause

    def reserve(self, key: str) -> float:
        """Seconds to wait before this request may start (its slot is taken)."""
        now = self._clock()
        start = max(now, self._next.get(key, now), self._paused.get(key, now))
        rate = self.rates.get(key)
        if rate is not None:
            self._next[key] = start + 1.0 / rate
        return start - now

    def pause(self, key: str, seconds: float) -> None:
        """No request to ``key`` starts in the next ``seconds`` (a longer pause is kept)."""
        until = self._clock() + max(0.0, float(seconds))
        self._paused[key] = max(self._paused.get(key, until), until)


class LocalLimits:
    """``Buckets`` shared by the threads of one process."""

    def __init__(
        self, rates: Mapping[str, float], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._buckets = Buckets(rates, clock)
        self._lock = threading.Lock()
        self.rates = self._buckets.rates

    def reserve(self, key: str) -> float:
        with self._lock:
            return self._buckets.reserve(key)

    def pause(self, key: str, seconds: float) -> None:
        with self._lock:
            self._buckets.pause(key, seconds)


def parse_rates(text: str) -> dict[str, float]:
    """``"brave=1,llm=0.5"`` -> ``{"brave": 1.0, "llm": 0.5}``; ``ConfigError`` on a bad item."""
    rates: dict[str, float] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        try:
            rate = float(value) if sep and key.strip() else float("nan")
        except ValueError:
            rate = float("nan")
        if not rate > 0 or rate == float("inf"):
            raise ConfigError(
                f"{RATES_ENV}: {item.strip()!r} is not KEY=REQUESTS_PER_SECOND (above 0), "
                f"e.g. brave=1,llm=5"
            )
        rates[key.strip().lower()] = rate
    return rates


def rates_from_env() -> dict[str, float]:
    """The rates ``$FACTSEEK_RATE_LIMITS`` sets (empty when unset)."""
    return parse_rates(os.environ.get(RATES_ENV, ""))


_installed: Limits | None = None
_local: tuple[str, LocalLimits] | None = None  # (the environment text it was built from, limits)
_guard = threading.Lock()


def install(limits: Limits | None) -> Limits | None:
    """Make ``limits`` the process's limits for every key (None: back to the environment's);
    returns the previous ones."""
    global _installed
    previous, _installed = _installed, limits
    return previous


def active(key: str) -> Limits | None:
    """The limits that apply to ``key`` in this process, or None."""
    global _local
    if _installed is not None:
        return _installed
    text = os.environ.get(RATES_ENV, "")
    if not text:
        return None
    with _guard:
        if _local is None or _local[0] != text:
            _local = (text, LocalLimits(parse_rates(text)))
        limits = _local[1]
    return limits if key in limits.rates else None


def hold(key: str, sleep: Callable[[float], None] = time.sleep) -> None:
    """Wait (with ``sleep``) until a request to ``key`` may start under the shared limits."""
    limits = active(key)
    if limits is not None:
        delay = limits.reserve(key)
        if delay > 0:
            sleep(delay)


def pause(key: str, seconds: float) -> bool:
    """Pause ``key`` for everyone sharing its limits; False when no limits apply (the caller
    then waits out the ``Retry-After`` alone, as before)."""
    limits = active(key)
    if limits is None:
        return False
    limits.pause(key, seconds)
    return True
