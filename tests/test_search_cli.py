"""`factseek check --search serper` end to end against local servers, then `--replay` offline."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from factseek.cli import app

KEY = "serper-secret-key"
TEXT = " ".join(
    f"In 2019 the mayor of Springfield signed housing bill {i} after a council vote."
    for i in range(30)
)
# page -> (provider date, page's own date)
PAGES = {
    0: ("Jan 5, 2020", "2020-01-01"),
    1: ("Jan 6, 2020", "2020-01-02"),
    2: ("Apr 1, 2020", "2020-04-01"),  # after the claim: removed before fetching
    3: ("Jan 7, 2020", "2020-06-01"),  # provider says before, page says after: leakage
}


class World:
    """A Serper-compatible API and the pages it points to, on one 127.0.0.1 server."""

    def __init__(self) -> None:
        self.queries: list[dict[str, Any]] = []
        self.keys: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, ctype: str, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                n = int(self.headers.get("content-length") or 0)
                outer.queries.append(json.loads(self.rfile.read(n)))
                outer.keys.append(self.headers.get("x-api-key", ""))
                organic = [
                    {"title": f"p{i}", "link": f"{outer.base}/page{i}", "snippet": "s", "date": d}
                    for i, (d, _) in PAGES.items()
                ]
                self._send(200, "application/json", json.dumps({"organic": organic}).encode())

            def do_GET(self) -> None:
                i = int(self.path.rsplit("page", 1)[-1])
                html = (
                    f"<html><head><title>Page {i}</title>"
                    f'<meta property="article:published_time" content="{PAGES[i][1]}"></head>'
                    f"<body><article><p>{TEXT}</p></article></body></html>"
                )
                self._send(200, "text/html; charset=utf-8", html.encode())

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    w = World()
    monkeypatch.setenv("SERPER_API_KEY", KEY)
    monkeypatch.setenv("SERPER_BASE_URL", w.base)
    yield w
    w.close()


CLAIM = "The mayor signed the housing bill in 2019."
COMMON = ["check", CLAIM, "--date", "2020-03-15", "--format", "json", "-q", "--llm", "none"]


def test_check_with_serper_records_and_replays(world: World, tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    args = [*COMMON, "--search", "serper", "--allow-host", "127.0.0.1", "--record", str(bundle)]
    live = CliRunner().invoke(app, args)
    assert live.exit_code == 0, live.output
    report = json.loads(live.stdout)

    assert world.keys and set(world.keys) == {KEY}
    assert all(q["tbs"] == "cdr:1,cd_max:3/14/2020" for q in world.queries)
    assert all("-site:snopes.com" in q["q"] for q in world.queries)
    result = report["results"][0]
    assert result["native"] == ["date", "domain"]
    reasons = {d["url"].rsplit("/", 1)[-1]: d["reason"] for d in result["decisions"]}
    assert reasons["page2"] == "after-claim-date"
    urls = {d["url"].rsplit("/", 1)[-1] for d in report["documents"]}
    assert urls == {"page0", "page1"}  # page3 dropped after fetching: it dates itself after
    assert any("possible leakage" in n and "page3" in n for n in report["notes"])
    assert report["removed"].get("page:after-claim-date") == 1

    for path in bundle.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes()

    world.close()  # no network from here on
    replay = CliRunner().invoke(app, [*COMMON, "--search", "serper", "--replay", str(bundle)])
    assert replay.exit_code == 0, replay.output
    again = json.loads(replay.stdout)
    for field in ("questions", "results", "documents", "failures", "passages", "summaries"):
        assert again[field] == report[field], field
    assert again["notes"] == report["notes"] and again["funnel"] == report["funnel"]


def test_missing_key_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BRAVE_API_KEY", raising=False)
    result = CliRunner().invoke(app, [*COMMON, "--search", "brave"])
    assert result.exit_code == 1
    assert "BRAVE_API_KEY" in result.output and "Traceback" not in result.output
