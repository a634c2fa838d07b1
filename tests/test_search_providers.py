"""Each web search adapter against a local server that speaks the provider's wire format."""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from factseek.constraints.hits import Constraints
from factseek.errors import (
    AuthError,
    BackendUnavailable,
    ConfigError,
    QuotaExceeded,
    RateLimited,
    SearchError,
)
from factseek.search import BACKENDS, constrained_search, make_backend
from factseek.search.brave import BraveSearch
from factseek.search.exa import ExaSearch
from factseek.search.http import HttpConfig, retry_after_seconds
from factseek.search.searxng import SearxngSearch
from factseek.search.serper import SerperSearch
from factseek.search.tavily import TavilySearch
from factseek.types import Query

KEY = "sk-test-SECRET-123"
FAST = HttpConfig(timeout=5, retries=2, backoff=0.01, max_retry_after=2)
CLAIM_DAY = dt.date(2020, 3, 15)
C = Constraints(before=CLAIM_DAY)


@dataclass
class Seen:
    method: str
    path: str
    params: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass
class Reply:
    status: int = 200
    body: Any = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)


class FakeProvider:
    """A threaded HTTP server on 127.0.0.1 that records requests and plays scripted replies."""

    def __init__(self) -> None:
        self.seen: list[Seen] = []
        self.replies: list[Reply] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                n = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(n) if n else b""
                parts = urlsplit(self.path)
                outer.seen.append(
                    Seen(
                        method=self.command,
                        path=parts.path,
                        params=parse_qs(parts.query),
                        headers={k.lower(): v for k, v in self.headers.items()},
                        body=json.loads(raw) if raw else None,
                    )
                )
                reply = outer.replies.pop(0) if len(outer.replies) > 1 else outer.replies[0]
                data = (
                    reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                )
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            do_GET = _handle
            do_POST = _handle

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def play(self, *replies: Reply) -> None:
        self.replies = list(replies)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[FakeProvider]:
    s = FakeProvider()
    yield s
    s.close()


# ----------------------------------------------------------------------------- per provider


def test_brave_wire_format(server: FakeProvider) -> None:
    server.play(
        Reply(
            body={
                "type": "search",
                "query": {"original": "vaccine budget", "more_results_available": False},
                "web": {
                    "type": "search",
                    "results": [
                        {
                            "title": "Budget  vote",
                            "url": "https://news.example/a",
                            "description": "The <strong>council</strong> voted",
                            "page_age": "2020-03-01T10:00:00",
                            "age": "March 1, 2020",
                        },
                        {"title": "No date", "url": "https://b.example/b", "description": "x"},
                        {"title": "bad", "url": "javascript:alert(1)"},
                    ],
                },
            }
        )
    )
    b = BraveSearch(api_key=KEY, base_url=server.url + "/res/v1", language="en", config=FAST)
    hits = b.search("vaccine budget", 5, C)
    req = server.seen[0]
    assert req.method == "GET" and req.path == "/res/v1/web/search"
    assert req.headers["x-subscription-token"] == KEY
    assert req.params["q"] == ["vaccine budget"]
    assert req.params["count"] == ["5"]
    assert req.params["offset"] == ["0"]
    assert req.params["freshness"] == ["1990-01-01to2020-03-14"]
    assert req.params["search_lang"] == ["en"]
    assert [h.url for h in hits] == ["https://news.example/a", "https://b.example/b"]
    assert hits[0].title == "Budget vote"
    assert hits[0].published == dt.date(2020, 3, 1)
    assert hits[1].published is None
    assert [h.rank for h in hits] == [1, 2]
    assert {h.backend for h in hits} == {"brave"}
    assert b.capabilities.date_filter and not b.capabilities.domain_exclusion


def test_brave_pages_until_k(server: FakeProvider) -> None:
    def page(n: int) -> Reply:
        results = [{"title": f"t{n}{i}", "url": f"https://x.example/{n}/{i}"} for i in range(20)]
        return Reply(body={"query": {"more_results_available": True}, "web": {"results": results}})

    server.play(page(0), page(1), page(2))
    hits = BraveSearch(api_key=KEY, base_url=server.url, config=FAST).search("q", 30, C)
    assert len(hits) == 30
    assert [r.params["offset"] for r in server.seen] == [["0"], ["1"]]
    assert len({h.url for h in hits}) == 30


def test_tavily_wire_format(server: FakeProvider) -> None:
    server.play(
        Reply(
            body={
                "query": "q",
                "results": [
                    {
                        "title": "A",
                        "url": "https://a.example/x",
                        "content": "snippet A",
                        "score": 0.91,
                        "published_date": "Sun, 01 Mar 2020 12:00:00 GMT",
                    },
                    {
                        "title": "B",
                        "url": "https://b.example/y",
                        "content": "snippet B",
                        "score": 0.5,
                    },
                ],
                "response_time": 1.2,
            }
        )
    )
    t = TavilySearch(api_key=KEY, base_url=server.url, config=FAST)
    hits = t.search("q", 10, C.with_sites("example.org"))
    req = server.seen[0]
    assert req.method == "POST" and req.path == "/search"
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert req.body["query"] == "q" and req.body["max_results"] == 10
    assert req.body["end_date"] == "2020-03-14"
    assert (
        "snopes.com" in req.body["exclude_domains"] and "example.org" in req.body["exclude_domains"]
    )
    # a path-prefixed site would drop the whole host: left to factseek's own check
    assert not any("/" in s for s in req.body["exclude_domains"])
    assert hits[0].published == dt.date(2020, 3, 1) and hits[0].score == pytest.approx(0.91)
    assert hits[1].snippet == "snippet B"


def test_exa_wire_format(server: FakeProvider) -> None:
    server.play(
        Reply(
            body={
                "requestId": "r1",
                "results": [
                    {
                        "id": "https://a.example/x",
                        "title": "A",
                        "url": "https://a.example/x",
                        "publishedDate": "2019-11-16T01:36:32.547Z",
                        "author": "Ann",
                        "score": 0.3,
                    }
                ],
            }
        )
    )
    e = ExaSearch(api_key=KEY, base_url=server.url, config=FAST)
    hits = e.search("q", 7, C)
    req = server.seen[0]
    assert req.path == "/search" and req.headers["x-api-key"] == KEY
    assert req.body["numResults"] == 7
    assert req.body["endPublishedDate"] == "2020-03-15T00:00:00.000Z"
    assert "fullfact.org" in req.body["excludeDomains"]
    assert hits[0].published == dt.date(2019, 11, 16) and hits[0].backend == "exa"


def test_serper_wire_format(server: FakeProvider) -> None:
    server.play(
        Reply(
            body={
                "searchParameters": {"q": "q", "type": "search"},
                "organic": [
                    {
                        "title": "A",
                        "link": "https://a.example/x",
                        "snippet": "s",
                        "date": "Mar 5, 2020",
                        "position": 1,
                    },
                    {"title": "B", "link": "https://b.example/y", "snippet": "t", "position": 2},
                ],
            }
        )
    )
    s = SerperSearch(api_key=KEY, base_url=server.url, language="en", config=FAST)
    hits = s.search("the claim", 20, C)
    req = server.seen[0]
    assert req.path == "/search" and req.headers["x-api-key"] == KEY
    assert req.body["q"].startswith("the claim -site:politifact.com")
    assert "-site:washingtonpost.com" not in req.body["q"]
    assert req.body["num"] == 20 and req.body["hl"] == "en"
    assert req.body["tbs"] == "cdr:1,cd_max:3/14/2020"
    assert [h.published for h in hits] == [dt.date(2020, 3, 5), None]
    assert hits[0].query == "the claim"


def test_searxng_wire_format_and_paging(server: FakeProvider) -> None:
    def page(urls: list[str]) -> Reply:
        return Reply(
            body={
                "query": "q",
                "number_of_results": 0,
                "results": [
                    {
                        "url": u,
                        "title": u[-1],
                        "content": "c",
                        "engine": "bing",
                        "score": 1.0,
                        "publishedDate": "2020-01-02T00:00:00" if u.endswith("a") else None,
                    }
                    for u in urls
                ],
                "unresponsive_engines": [],
            }
        )

    server.play(
        page(["https://x.example/a", "https://x.example/b"]),
        page(["https://x.example/b", "https://x.example/c"]),
        page([]),
    )
    s = SearxngSearch(base_url=server.url, language="en", config=FAST)
    hits = s.search("q", 10, C)
    assert [h.url for h in hits] == [f"https://x.example/{c}" for c in "abc"]
    assert hits[0].published == dt.date(2020, 1, 2)
    assert [r.params["pageno"] for r in server.seen] == [["1"], ["2"], ["3"]]
    assert server.seen[0].params["format"] == ["json"]
    assert server.seen[0].params["language"] == ["en"]
    assert not s.capabilities.date_filter


def test_searxng_403_explains_json_format(server: FakeProvider) -> None:
    server.play(Reply(status=403, body=b"Forbidden"))
    with pytest.raises(AuthError, match="json enabled"):
        SearxngSearch(base_url=server.url, config=FAST).search("q", 5, C)


# ----------------------------------------------------------------------------- errors


ADAPTERS = {
    "brave": lambda url: BraveSearch(api_key=KEY, base_url=url, config=FAST),
    "tavily": lambda url: TavilySearch(api_key=KEY, base_url=url, config=FAST),
    "exa": lambda url: ExaSearch(api_key=KEY, base_url=url, config=FAST),
    "serper": lambda url: SerperSearch(api_key=KEY, base_url=url, config=FAST),
}


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_auth_error_never_shows_key(server: FakeProvider, name: str) -> None:
    server.play(Reply(status=401, body={"error": f"invalid key {KEY}"}))
    with pytest.raises(AuthError) as info:
        ADAPTERS[name](server.url).search("q", 5, C)
    assert KEY not in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("name", "reply"),
    [
        (
            "tavily",
            Reply(
                status=432,
                body={"detail": {"error": "This request exceeds your plan's set usage limit."}},
            ),
        ),
        ("tavily", Reply(status=433, body={"detail": {"error": "pay-as-you-go limit"}})),
        ("serper", Reply(status=400, body={"message": "Not enough credits", "statusCode": 400})),
        ("exa", Reply(status=402, body={"error": "payment required"})),
        (
            "brave",
            Reply(
                status=429,
                body={
                    "type": "ErrorResponse",
                    "error": {"code": "QUOTA_LIMITED", "detail": "Monthly quota exceeded"},
                },
            ),
        ),
    ],
)
def test_quota_is_one_line_without_retry(server: FakeProvider, name: str, reply: Reply) -> None:
    server.play(reply)
    with pytest.raises(QuotaExceeded) as info:
        ADAPTERS[name](server.url).search("q", 5, C)
    assert len(server.seen) == 1
    assert "\n" not in str(info.value) and name in str(info.value)


def test_429_honours_retry_after_then_succeeds(server: FakeProvider) -> None:
    waits: list[float] = []
    server.play(
        Reply(status=429, body={"error": "slow down"}, headers={"Retry-After": "1.5"}),
        Reply(body={"organic": [{"title": "A", "link": "https://a.example/"}]}),
    )
    s = SerperSearch(api_key=KEY, base_url=server.url, config=FAST, sleep=waits.append)
    assert [h.url for h in s.search("q", 5, C)] == ["https://a.example/"]
    assert waits == [1.5]


def test_429_gives_up_with_rate_limited(server: FakeProvider) -> None:
    waits: list[float] = []
    server.play(Reply(status=429, body={"error": "Too many requests"}))
    s = ExaSearch(api_key=KEY, base_url=server.url, config=FAST, sleep=waits.append)
    with pytest.raises(RateLimited):
        s.search("q", 5, C)
    assert len(server.seen) == FAST.retries + 1
    assert waits == [0.01, 0.02]  # exponential backoff when there is no Retry-After


def test_429_with_long_retry_after_fails_fast(server: FakeProvider) -> None:
    server.play(Reply(status=429, body={}, headers={"Retry-After": "3600"}))
    with pytest.raises(RateLimited) as info:
        ADAPTERS["brave"](server.url).search("q", 5, C)
    assert info.value.retry_after == 3600
    assert len(server.seen) == 1


def test_5xx_retries_then_unavailable(server: FakeProvider) -> None:
    server.play(Reply(status=503, body={"error": "down"}))
    with pytest.raises(BackendUnavailable, match="503"):
        TavilySearch(api_key=KEY, base_url=server.url, config=FAST, sleep=lambda s: None).search(
            "q", 5, C
        )
    assert len(server.seen) == FAST.retries + 1


def test_5xx_then_ok(server: FakeProvider) -> None:
    server.play(Reply(status=502, body=b"bad gateway"), Reply(body={"results": []}))
    t = TavilySearch(api_key=KEY, base_url=server.url, config=FAST, sleep=lambda s: None)
    assert t.search("q", 5, C) == []


def test_not_json_and_other_4xx(server: FakeProvider) -> None:
    server.play(Reply(body=b"<html>oops</html>"))
    with pytest.raises(SearchError, match="not JSON"):
        ADAPTERS["exa"](server.url).search("q", 5, C)
    server.play(Reply(status=422, body={"message": "bad parameter count"}))
    with pytest.raises(SearchError, match="422"):
        ADAPTERS["serper"](server.url).search("q", 5, C)


def test_unreachable_is_backend_unavailable() -> None:
    s = SerperSearch(api_key=KEY, base_url="http://127.0.0.1:9", config=FAST, sleep=lambda s: None)
    with pytest.raises(BackendUnavailable, match="cannot reach"):
        s.search("q", 5, C)


def test_keys_from_environment(monkeypatch: pytest.MonkeyPatch, server: FakeProvider) -> None:
    for var in ("BRAVE_API_KEY", "TAVILY_API_KEY", "EXA_API_KEY", "SERPER_API_KEY", "SEARXNG_URL"):
        monkeypatch.delenv(var, raising=False)
    for name in ("brave", "tavily", "exa", "serper"):
        with pytest.raises(AuthError, match=f"{name.upper()}_API_KEY"):
            make_backend(name)
    with pytest.raises(ConfigError, match="SEARXNG_URL"):
        make_backend("searxng")
    monkeypatch.setenv("SERPER_API_KEY", KEY)
    monkeypatch.setenv("SERPER_BASE_URL", server.url)
    server.play(Reply(body={"organic": []}))
    assert make_backend("serper").search("q", 3, C) == []
    assert server.seen[0].headers["x-api-key"] == KEY


def test_registry_lists_providers() -> None:
    assert {"brave", "tavily", "exa", "serper", "searxng"} <= set(BACKENDS)


def test_constrained_search_reports_native_and_emulated(server: FakeProvider) -> None:
    results = [
        {"title": "ok", "url": "https://a.example/1", "page_age": "2020-01-01T00:00:00"},
        {"title": "fc", "url": "https://www.snopes.com/x", "page_age": "2020-01-01T00:00:00"},
        {"title": "late", "url": "https://a.example/2", "page_age": "2020-04-01T00:00:00"},
    ]
    server.play(Reply(body={"web": {"results": results}}))
    r = constrained_search(ADAPTERS["brave"](server.url), Query(text="q", question="q"), 10, C)
    assert r.native == ("date",) and r.emulated == ("domain",)
    assert [d.reason for d in r.decisions] == ["ok", "excluded-site:snopes.com", "after-claim-date"]
    assert server.seen[0].params["count"] == ["20"]  # over-fetched for the emulated filter


def test_retry_after_http_date() -> None:
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:10 GMT", now=0) > 1e9
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:10 GMT") == 0.0
    assert retry_after_seconds("7") == 7.0
    assert retry_after_seconds("soon") is None
