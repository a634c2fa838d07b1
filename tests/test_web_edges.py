"""Issue 29 group 3: ids and page numbers outside int64 are 404/400, never 500; every response
(errors answered before the app included) carries the security headers; the body limit holds
for chunked uploads too; the reviewer-name cookie is HttpOnly."""

from __future__ import annotations

import re
import socket

import pytest
from fastapi.testclient import TestClient

from factseek.review.history import History
from factseek.web.app import MAX_BODY, WebSettings, create_app
from factseek.web.jobs import Runner
from factseek.web.server import LocalServer
from web_fixtures import fake_parts

BASE = "http://127.0.0.1:8321"
SECURITY = (
    "content-security-policy",
    "x-content-type-options",
    "x-frame-options",
    "referrer-policy",
)


@pytest.fixture
def client(tmp_path):
    settings = WebSettings(db=tmp_path / "h.sqlite", store=tmp_path, user="ana")
    runner = Runner(History(settings.db), workers=1, build=fake_parts)
    with TestClient(create_app(settings, runner=runner), base_url=BASE) as c:
        c.get("/")
        yield c
    runner.close()


def csrf(c: TestClient) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', c.get("/").text).group(1)


def assert_secured(headers: dict[str, str] | object) -> None:
    for name in SECURITY:
        assert name in headers, f"{name} missing"


@pytest.mark.parametrize(
    "path",
    [
        "/runs/99999999999999999999999",
        "/runs/9223372036854775808",
        "/runs/-9223372036854775809/status",
        "/runs/9223372036854775808/events",
        "/runs/9223372036854775808/export.json",
        "/runs/9223372036854775808/claimreview.jsonld",
    ],
)
def test_ids_outside_int64_are_not_found(client, path: str) -> None:
    r = client.get(path)
    assert r.status_code == 404, (r.status_code, r.text[:200])
    assert_secured(r.headers)


@pytest.mark.parametrize("page_no", ["9223372036854775807", "1e20", "-1", "99999999999999999999"])
def test_page_numbers_outside_range_are_bad_requests(client, page_no: str) -> None:
    r = client.get("/history", params={"page_no": page_no})
    assert r.status_code in (400, 422), (r.status_code, r.text[:200])
    assert_secured(r.headers)


def test_posts_to_ids_outside_int64_are_not_found(client) -> None:
    t = csrf(client)
    for path in ("/runs/99999999999999999999999/delete", "/runs/-9223372036854775809/verdict"):
        r = client.post(path, data={"csrf_token": t}, follow_redirects=False)
        assert r.status_code == 404, (path, r.status_code)


def test_a_bad_host_and_a_large_body_carry_the_security_headers(client) -> None:
    r = client.get("/", headers={"Host": "attacker.example"})
    assert r.status_code == 400
    assert_secured(r.headers)
    r = client.post("/check", content=b"x" * (MAX_BODY + 1))
    assert r.status_code == 413
    assert_secured(r.headers)


def test_the_reviewer_name_cookie_is_http_only(client) -> None:
    r = client.post(
        "/user", data={"csrf_token": csrf(client), "user": "Li"}, follow_redirects=False
    )
    cookie = r.headers["set-cookie"]
    assert cookie.startswith("factseek_user=") and "httponly" in cookie.lower()
    assert "samesite=strict" in cookie.lower()


def raw_post(port: int, path: str, chunks: list[bytes], *, chunked: bool) -> bytes:
    """A POST over a plain socket (chunked, or with a Content-Length); the response's head."""
    head = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Content-Type: application/x-www-form-urlencoded"]  # fmt: skip
    if chunked:
        head.append("Transfer-Encoding: chunked")
    else:
        head.append(f"Content-Length: {sum(map(len, chunks))}")
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        try:
            for chunk in chunks:
                s.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
            if chunked:
                s.sendall(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed before the whole body was sent
        data = b""
        while b"\r\n\r\n" not in data:
            got = s.recv(65536)
            if not got:
                break
            data += got
    return data.split(b"\r\n\r\n")[0]


@pytest.mark.parametrize("kb", [300, 900])
@pytest.mark.parametrize("chunked", [True, False])
def test_the_body_limit_holds_while_streaming(tmp_path, kb: int, chunked: bool) -> None:
    """300 KB and 900 KB POSTs, chunked or not, against a real server: 413, with headers."""
    settings = WebSettings(db=tmp_path / "h.sqlite", store=tmp_path, user="ana")
    runner = Runner(History(settings.db), workers=1, build=fake_parts)
    with LocalServer(settings, runner=runner) as server:
        chunks = [b"claim=" + b"a" * 10_000] + [b"a" * 10_240] * (kb * 1024 // 10_240)
        head = raw_post(server.port, "/check", chunks, chunked=chunked).decode("latin-1").lower()
    assert head.startswith("http/1.1 413"), head[:200]
    for name in SECURITY:
        assert f"\r\n{name}:" in head, name


def test_a_small_chunked_form_still_works(tmp_path) -> None:
    settings = WebSettings(db=tmp_path / "h.sqlite", store=tmp_path, user="ana")
    runner = Runner(History(settings.db), workers=1, build=fake_parts)
    with LocalServer(settings, runner=runner) as server:
        head = raw_post(server.port, "/check", [b"claim=", b"x" * 100], chunked=True)
    assert head.lower().startswith(b"http/1.1 403"), head[:200]  # reached the app: no token
