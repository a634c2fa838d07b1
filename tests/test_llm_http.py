"""The OpenAI-compatible backend against a scripted local server (http.server on 127.0.0.1)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from factseek.errors import LLMError
from factseek.llm import CachedLLM, make_llm
from factseek.llm.openai import OpenAILLM, retry_after_seconds

SECRET = "sk-test-SECRET-123456"

# A reply is (status, headers, body); the script sees the request number and JSON body.
Reply = tuple[int, dict[str, str], bytes]


def ok(texts: list[str], prompt_tokens: int = 7, completion_tokens: int = 3) -> Reply:
    body = {
        "choices": [
            {"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": "stop"}
            for i, t in enumerate(texts)
        ],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens},
    }
    return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()


class FakeServer:
    def __init__(self, script: Callable[[int, dict[str, Any]], Reply]) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.auth: list[str | None] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer.lock:
                    outer.requests.append({"path": self.path, **body})
                    outer.auth.append(self.headers.get("Authorization"))
                    number = len(outer.requests)
                status, headers, payload = outer.script(number, body)
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve() -> Iterator[Callable[..., FakeServer]]:
    servers: list[FakeServer] = []

    def start(script: Callable[[int, dict[str, Any]], Reply]) -> FakeServer:
        servers.append(FakeServer(script))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def client(server: FakeServer, sleeps: list[float] | None = None, **kw: Any) -> OpenAILLM:
    record = sleeps if sleeps is not None else []
    return OpenAILLM(model="tiny", base_url=server.url, api_key=SECRET, sleep=record.append, **kw)


def test_request_shape_tokens_and_auth(serve) -> None:
    server = serve(lambda i, body: ok([f"hi {body['messages'][-1]['content']}"]))
    llm = client(server)
    out = llm.generate(
        ["a", [{"role": "system", "content": "s"}, {"role": "user", "content": "b"}]]
    )
    assert out == [["hi a"], ["hi b"]]
    req = server.requests[0]
    assert req["path"] == "/v1/chat/completions" and req["model"] == "tiny"
    assert req["max_tokens"] == 256 and req["temperature"] == 0.0 and "n" not in req
    assert server.auth[0] == f"Bearer {SECRET}"
    assert llm.usage.to_dict()["prompt_tokens"] == 14
    assert SECRET not in repr(llm)


def test_429_honours_retry_after_then_succeeds(serve) -> None:
    def script(i: int, body: dict[str, Any]) -> Reply:
        if i == 1:
            return 429, {"Retry-After": "3"}, b'{"error": {"message": "slow down"}}'
        if i == 2:
            return 503, {}, b"busy"
        return ok(["done"])

    sleeps: list[float] = []
    llm = client(serve(script), sleeps)
    assert llm.generate(["x"]) == [["done"]]
    assert sleeps[0] == 3.0  # the server's Retry-After, not our backoff
    assert 0.5 <= sleeps[1] <= 1.5  # second try: backoff 1 s with ±50% jitter for the 503
    assert llm.usage.retries == 2 and llm.usage.requests == 3


def test_retries_exhausted_is_one_line_llm_error(serve) -> None:
    llm = client(serve(lambda i, b: (500, {}, b"boom")), retries=2)
    with pytest.raises(LLMError) as e:
        llm.generate(["x"])
    assert "after 3 attempts: HTTP 500" in str(e.value) and "\n" not in str(e.value)


def test_malformed_json_is_retried(serve) -> None:
    def script(i: int, body: dict[str, Any]) -> Reply:
        if i == 1:
            return 200, {}, b"{not json"
        if i == 2:
            return 200, {}, b'{"choices": []}'
        return ok(["fine"])

    assert client(serve(script)).generate(["x"]) == [["fine"]]


def test_auth_failure_is_not_retried_and_hides_key(serve) -> None:
    server = serve(
        lambda i, b: (401, {}, json.dumps({"error": {"message": f"bad key {SECRET}"}}).encode())
    )
    with pytest.raises(LLMError) as e:
        client(server).generate(["x"])
    assert "rejected the API key" in str(e.value) and SECRET not in str(e.value)
    assert len(server.requests) == 1


def test_redirect_is_a_config_problem(serve) -> None:
    server = serve(lambda i, b: (307, {"Location": "http://elsewhere.example/v1"}, b""))
    with pytest.raises(LLMError, match="redirected"):
        client(server).generate(["x"])
    assert len(server.requests) == 1


def test_400_reason_is_scrubbed_and_bounded(serve) -> None:
    msg = f"context too long for {SECRET} " + "x" * 1000
    server = serve(lambda i, b: (400, {}, json.dumps({"error": {"message": msg}}).encode()))
    with pytest.raises(LLMError) as e:
        client(server).generate(["x"])
    assert SECRET not in str(e.value) and "***" in str(e.value) and len(str(e.value)) < 300


def test_connection_refused_is_retried_then_reported() -> None:
    sleeps: list[float] = []
    llm = OpenAILLM(model="m", base_url="http://127.0.0.1:9/v1", retries=1, sleep=sleeps.append)
    with pytest.raises(LLMError, match="cannot connect"):
        llm.generate(["x"])
    assert len(sleeps) == 1


def test_n_is_topped_up_when_server_ignores_it(serve) -> None:
    server = serve(lambda i, body: ok([f"s{body.get('seed')}"]))  # always one choice
    out = client(server).generate(["x"], n=3, temperature=0.8, seed=10)
    assert out == [["s10", "s11", "s12"]]
    assert [r.get("n") for r in server.requests] == [3, 2, None]


def test_concurrency_keeps_order(serve) -> None:
    server = serve(lambda i, body: ok([body["messages"][0]["content"].upper()]))
    llm = client(server, concurrency=4)
    prompts = [f"p{i}" for i in range(12)]
    assert llm.generate(prompts) == [[p.upper()] for p in prompts]


def test_cached_http_backend_never_writes_the_key(serve, tmp_path) -> None:
    server = serve(lambda i, body: ok(["cached answer"]))
    llm = make_llm("openai", model="tiny", base_url=server.url, api_key=SECRET, cache_dir=tmp_path)
    assert isinstance(llm, CachedLLM)
    assert llm.generate(["x"]) == llm.generate(["x"]) == [["cached answer"]]
    assert len(server.requests) == 1 and llm.usage.cached == 1
    for f in tmp_path.rglob("*"):
        if f.is_file():
            assert SECRET not in f.read_text()


def test_retry_after_parsing() -> None:
    assert retry_after_seconds("2.5") == 2.5
    assert retry_after_seconds(None) is None and retry_after_seconds("soon") is None
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == pytest.approx(
        10.0
    )
