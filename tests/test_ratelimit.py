"""Shared rate limits (``factseek.net.ratelimit``): the buckets on a fake clock, the environment's
rates, and the search and LLM clients consulting whatever limits are installed (as a Ray worker
installs the cluster's)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from factseek.errors import ConfigError
from factseek.llm.openai import OpenAILLM
from factseek.net import ratelimit
from factseek.search.http import ApiClient, HttpConfig


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def no_installed_limits(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(ratelimit.RATES_ENV, raising=False)
    previous = ratelimit.install(None)
    yield
    ratelimit.install(previous)


def test_rate_spaces_requests_per_key_without_bursts() -> None:
    clock = Clock()
    b = ratelimit.Buckets({"brave": 2.0}, clock)
    assert [b.reserve("brave") for _ in range(3)] == [0.0, 0.5, 1.0]
    assert b.reserve("llm") == 0.0  # no rate for this key
    clock.now += 10  # idle time is not saved up for a burst
    assert [b.reserve("brave") for _ in range(2)] == [0.0, 0.5]


def test_retry_after_pauses_the_key_and_is_never_shortened() -> None:
    clock = Clock()
    b = ratelimit.Buckets({"brave": 1.0}, clock)
    b.pause("brave", 3.0)
    b.pause("brave", 1.0)  # a shorter pause keeps the longer one
    assert b.reserve("brave") == 3.0
    assert b.reserve("brave") == 4.0  # the rate counts from the pause's end
    assert b.reserve("tavily") == 0.0
    b.pause("llm", 2.0)  # a key with no rate is paused too
    assert b.reserve("llm") == 2.0 and b.reserve("llm") == 2.0
    clock.now += 2.5
    assert b.reserve("llm") == 0.0


def test_rates_are_parsed_with_one_clear_error() -> None:
    assert ratelimit.parse_rates("brave=1, LLM=0.5,") == {"brave": 1.0, "llm": 0.5}
    assert ratelimit.parse_rates("") == {}
    for bad in ("brave", "brave=0", "brave=-1", "brave=fast", "=2", "brave=inf"):
        with pytest.raises(ConfigError, match="KEY=REQUESTS_PER_SECOND"):
            ratelimit.parse_rates(bad)
    with pytest.raises(ConfigError):
        ratelimit.Buckets({"brave": 0.0})


def test_environment_limits_apply_to_their_keys_and_installed_ones_to_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert ratelimit.active("brave") is None
    assert ratelimit.pause("brave", 1.0) is False  # the caller waits alone, as before
    monkeypatch.setenv(ratelimit.RATES_ENV, "brave=1000")
    limits = ratelimit.active("brave")
    assert limits is not None and ratelimit.active("brave") is limits  # one per process
    assert ratelimit.active("llm") is None
    installed = ratelimit.LocalLimits({})
    ratelimit.install(installed)
    assert ratelimit.active("llm") is installed and ratelimit.active("brave") is installed


class Recording:
    """Limits that record calls and answer a pause's remaining time (a clock that never moves)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, float]] = []
        self.paused: dict[str, float] = {}

    def reserve(self, key: str) -> float:
        self.calls.append(("reserve", key, 0.0))
        return self.paused.pop(key, 0.0)

    def pause(self, key: str, seconds: float) -> None:
        self.calls.append(("pause", key, seconds))
        self.paused[key] = seconds


def script(*replies: tuple[int, dict[str, str], bytes]) -> httpx.MockTransport:
    queue = list(replies)

    def handle(request: httpx.Request) -> httpx.Response:
        status, headers, body = queue.pop(0)
        return httpx.Response(status, headers=headers, content=body)

    return httpx.MockTransport(handle)


def test_search_client_waits_for_its_slot_and_shares_a_retry_after() -> None:
    limits = Recording()
    ratelimit.install(limits)
    sleeps: list[float] = []
    client = ApiClient(
        "serper",
        "https://search.example",
        headers={},
        config=HttpConfig(retries=2, backoff=0.25),
        transport=script((429, {"Retry-After": "2"}, b"{}"), (200, {}, b'{"ok": 1}')),
        sleep=sleeps.append,
    )
    assert client.call("GET", "/q") == {"ok": 1}
    assert limits.calls == [
        ("reserve", "serper", 0.0),
        ("pause", "serper", 2.0),  # every worker sharing the limits holds off
        ("reserve", "serper", 0.0),
    ]
    assert sleeps == [2.0]  # waited once, through the shared pause, not twice


def test_search_client_without_limits_sleeps_the_retry_after_itself() -> None:
    sleeps: list[float] = []
    client = ApiClient(
        "serper",
        "https://search.example",
        headers={},
        config=HttpConfig(retries=2, backoff=0.25),
        transport=script(
            (429, {"Retry-After": "2"}, b"{}"), (503, {}, b"{}"), (200, {}, b'{"ok": 1}')
        ),
        sleep=sleeps.append,
    )
    assert client.call("GET", "/q") == {"ok": 1}
    assert sleeps == [2.0, 4.0]  # as before: the Retry-After, then doubled


def test_llm_client_waits_for_its_slot_and_shares_a_retry_after() -> None:
    limits = Recording()
    ratelimit.install(limits)
    sleeps: list[float] = []
    ok = json.dumps({"choices": [{"message": {"content": "yes"}}]}).encode()
    llm = OpenAILLM(
        model="m",
        base_url="https://llm.example/v1",
        api_key="k",
        transport=script((429, {"Retry-After": "3"}, b"{}"), (200, {}, ok)),
        sleep=sleeps.append,
    )
    assert llm.generate(["hi"]) == [["yes"]]
    assert [c for c in limits.calls if c[0] == "pause"] == [("pause", "llm", 3.0)]
    assert [c[0] for c in limits.calls] == ["reserve", "pause", "reserve"]
    assert sleeps == [3.0]
