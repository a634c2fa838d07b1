"""The fetcher against hostile pages served from 127.0.0.1, and its SSRF guard."""

from __future__ import annotations

import asyncio
import gzip
import ipaddress
import os
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from factseek.errors import BlockedAddress, ConfigError
from factseek.fetch import Fetcher, blocked_reason, make_fetcher
from factseek.fetch.guard import AllowList, resolve_checked

TEXT = " ".join(f"Paragraph {i} reports that the mayor signed the housing bill." for i in range(40))
PAGE = (
    "<html><head><title>Housing bill</title>"
    '<meta property="article:published_time" content="2020-02-01"></head>'
    f"<body><article><p>{TEXT}</p></article></body></html>"
).encode()
LIMIT = 100_000  # bytes: small limits keep the hostile cases fast
BOMB = gzip.compress(b"\0" * 20_000_000, compresslevel=9)  # ~20 KB on the wire, 20 MB decoded


class Site:
    """Routes path -> handler(request) served by a threaded HTTP/1.0 server on 127.0.0.1."""

    def __init__(self) -> None:
        self.hits: dict[str, int] = {}
        routes: dict[str, Callable[[BaseHTTPRequestHandler], None]] = {}
        self.routes = routes
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                outer.hits[path] = outer.hits.get(path, 0) + 1
                handler = routes.get(path)
                try:
                    if handler is None:
                        send(self, 404, b"missing")
                    else:
                        handler(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def send(
    h: BaseHTTPRequestHandler,
    status: int,
    body: bytes,
    ctype: str = "text/html; charset=utf-8",
    **headers: str,
) -> None:
    h.send_response(status)
    h.send_header("Content-Type", ctype)
    h.send_header("Content-Length", str(len(body)))
    for k, v in headers.items():
        h.send_header(k.replace("_", "-"), v)
    h.end_headers()
    h.wfile.write(body)


def redirect(to: str) -> Callable[[BaseHTTPRequestHandler], None]:
    def handler(h: BaseHTTPRequestHandler) -> None:
        h.send_response(302)
        h.send_header("Location", to)
        h.send_header("Content-Length", "0")
        h.end_headers()

    return handler


def huge(h: BaseHTTPRequestHandler) -> None:  # no Content-Length: only streaming can stop it
    h.send_response(200)
    h.send_header("Content-Type", "text/html")
    h.end_headers()
    h.wfile.write(b"<html><body>")
    for _ in range(2000):
        h.wfile.write(b"<p>" + b"lorem ipsum " * 100 + b"</p>")


def drip(h: BaseHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "text/html")
    h.end_headers()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        h.wfile.write(b"<p>x</p>")
        h.wfile.flush()
        time.sleep(0.1)


@pytest.fixture
def site() -> Iterator[Site]:
    s = Site()
    s.routes.update(
        {
            "/page": lambda h: send(h, 200, PAGE, Last_Modified="Sat, 01 Feb 2020 10:00:00 GMT"),
            "/text": lambda h: send(h, 200, TEXT.encode(), "text/plain"),
            "/latin1": lambda h: send(
                h,
                200,
                PAGE.decode().replace("Housing", "Café").encode("latin-1"),
                "text/html; charset=iso-8859-1",
            ),
            "/huge": huge,
            "/huge-declared": lambda h: send(h, 200, b"x" * (LIMIT + 1)),
            "/drip": drip,
            "/deep": lambda h: send(h, 200, b"<html><body>" + b"<div>" * 100_000 + TEXT.encode()),
            "/malformed": lambda h: send(
                h,
                200,
                b"<html><body><p>" + TEXT.encode() + b"<b><i></p></b> <<<>>> &&& <a href='x>l</htm",
            ),
            "/binary": lambda h: send(h, 200, os.urandom(50_000)),
            "/bomb": lambda h: send(h, 200, BOMB, Content_Encoding="gzip"),
            "/gzip-ok": lambda h: send(h, 200, gzip.compress(PAGE), Content_Encoding="gzip"),
            "/loop-a": redirect("/loop-b"),
            "/loop-b": redirect("/loop-a"),
            "/to-page": redirect("/page"),
            "/to-internal": redirect("http://10.1.2.3/admin"),
            "/to-metadata": redirect("http://169.254.169.254/latest/meta-data/"),
            "/to-ftp": redirect("ftp://example.com/x"),
            "/pdf-typed": lambda h: send(h, 200, b"%PDF-1.4 ...", "application/pdf"),
            "/empty": lambda h: send(h, 200, b""),
        }
    )
    yield s
    s.close()


def fetcher(**kw: Any) -> Fetcher:
    limits = {
        "max_bytes": LIMIT,
        "total_timeout": 3.0,
        "read_timeout": 2.0,
        "host_delay": 0.0,
        **kw,
    }
    return make_fetcher(allow_hosts=["127.0.0.1"], **limits)


def one(site: Site, path: str, **kw: Any) -> tuple[list[Any], list[Any]]:
    docs, failures = fetcher(**kw).fetch([site.base + path])
    assert len(docs) + len(failures) == 1
    return docs, failures


def error(site: Site, path: str, **kw: Any) -> str:
    docs, failures = one(site, path, **kw)
    assert not docs, f"{path} should fail"
    assert "\n" not in failures[0].error
    return failures[0].error


# ----------------------------------------------------------------------------- good pages


def test_fetch_html_with_dates(site: Site) -> None:
    docs, failures = one(site, "/page")
    assert not failures
    d = docs[0]
    assert d.url == site.base + "/page" and d.title == "Housing bill"
    assert "mayor signed the housing bill" in d.text
    sources = {e.source for e in d.date_evidence}
    assert {"meta:article:published_time", "last-modified"} <= sources
    assert str(d.published) == "2020-02-01"


def test_text_gzip_charset_and_redirect(site: Site) -> None:
    f = fetcher()
    urls = [site.base + p for p in ("/text", "/gzip-ok", "/latin1", "/to-page")]
    docs, failures = f.fetch(urls)
    assert not failures
    by_url = {d.url: d for d in docs}
    assert [d.url for d in docs] == urls  # input order
    assert by_url[urls[0]].meta["extractor"] == "text"
    assert "housing bill" in by_url[urls[1]].text
    assert by_url[urls[2]].title == "Café bill"
    assert by_url[urls[3]].meta["final_url"] == site.base + "/page"


def test_duplicates_fetched_once(site: Site) -> None:
    docs, _ = fetcher().fetch([site.base + "/page"] * 3)
    assert len(docs) == 1 and site.hits["/page"] == 1


# ----------------------------------------------------------------------------- hostile pages


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/huge", "limit"),
        ("/huge-declared", "limit"),
        ("/drip", "timed out"),
        ("/binary", "binary"),
        ("/bomb", "compression bomb"),
        ("/loop-a", "redirects"),
        ("/to-internal", "blocked address 10.1.2.3"),
        ("/to-metadata", "cloud-metadata"),
        ("/to-ftp", "unsupported scheme"),
        ("/pdf-typed", "unsupported content type application/pdf"),
        ("/missing", "HTTP 404"),
        ("/empty", "empty page"),
    ],
)
def test_hostile_pages_end_in_bounded_time(site: Site, path: str, expected: str) -> None:
    t0 = time.monotonic()
    message = error(site, path)
    assert expected in message
    assert time.monotonic() - t0 < 10


def test_deep_and_malformed_do_not_crash(site: Site) -> None:
    t0 = time.monotonic()
    docs, failures = fetcher(max_bytes=2_000_000).fetch(
        [site.base + "/deep", site.base + "/malformed"]
    )
    assert time.monotonic() - t0 < 20
    assert len(docs) + len(failures) == 2
    assert any("mayor" in d.text for d in docs)  # the malformed page still has its text


def test_redirect_to_allow_listed_internal_address_is_followed(site: Site) -> None:
    site.routes["/to-localhost"] = redirect(f"http://127.0.0.1:{site.port}/page")
    docs, failures = fetcher().fetch([site.base + "/to-localhost"])
    assert docs and not failures


def test_failures_do_not_stop_the_run(site: Site) -> None:
    urls = [site.base + p for p in ("/bomb", "/page", "/loop-a", "/text")]
    docs, failures = fetcher().fetch(urls)
    assert [d.url for d in docs] == [urls[1], urls[3]]
    assert [f.url for f in failures] == [urls[0], urls[2]]


def test_skipped_without_a_request(site: Site) -> None:
    urls = [
        site.base + "/report.pdf",
        "https://www.youtube.com/watch?v=x",
        "ftp://x.org/a",
        "not a url",
    ]
    docs, failures = fetcher().fetch(urls)
    assert not docs
    assert [f.error for f in failures] == [
        "skipped pdf file",
        "skipped video site",
        "unsupported scheme ftp",
        "unsupported scheme none",
    ]
    assert "/report.pdf" not in site.hits


# ----------------------------------------------------------------------------- SSRF guard


def test_guard_refuses_loopback_unless_allow_listed(site: Site) -> None:
    f = make_fetcher(host_delay=0.0, total_timeout=3.0)
    urls = [
        site.base + "/page",
        f"http://localhost:{site.port}/page",
        f"http://[::ffff:127.0.0.1]:{site.port}/page",
        f"http://[::1]:{site.port}/page",
        "http://169.254.169.254/latest/meta-data/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://10.0.0.1/",
        "http://0.0.0.0/",
    ]
    docs, failures = f.fetch(urls)
    assert not docs
    assert all("blocked" in x.error for x in failures), [x.error for x in failures]
    assert not site.hits  # nothing reached the server


def test_guard_refuses_redirect_to_loopback_when_only_entry_host_is_allowed(site: Site) -> None:
    # the allow-list names the host "localhost" only; a redirect to the bare IP is a new hop
    site.routes["/to-ip"] = redirect(f"http://127.0.0.1:{site.port}/page")
    f = make_fetcher(allow_hosts=["localhost"], host_delay=0.0, total_timeout=3.0)
    docs, failures = f.fetch([f"http://localhost:{site.port}/to-ip"])
    assert not docs and "blocked address 127.0.0.1" in failures[0].error
    assert site.hits == {"/to-ip": 1}


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("10.0.0.1", "private"),
        ("192.168.1.1", "private"),
        ("172.16.0.1", "private"),
        ("169.254.169.254", "cloud-metadata"),
        ("fd00:ec2::254", "cloud-metadata"),
        ("100.100.100.200", "cloud-metadata"),
        ("169.254.1.1", "link-local"),
        ("fe80::1", "link-local"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("::1", "loopback"),
        ("::ffff:10.0.0.1", "private"),
        ("100.64.0.1", "special-purpose: shared address space (RFC 6598)"),
        ("240.0.0.1", "private"),
        ("8.8.8.8", None),
        ("2606:4700::1111", None),
    ],
)
def test_blocked_reason(address: str, reason: str | None) -> None:
    assert blocked_reason(ipaddress.ip_address(address)) == reason


def test_allow_list_entries() -> None:
    allow = AllowList.parse(["127.0.0.1", "10.0.0.0/8", "Intranet.Local"])
    assert allow.allows("x", ipaddress.ip_address("10.9.9.9"))
    assert allow.allows("intranet.local")
    assert not allow.allows("x", ipaddress.ip_address("192.168.0.1"))
    ip = asyncio.run(resolve_checked("10.2.3.4", 80, allow))
    assert str(ip) == "10.2.3.4"
    with pytest.raises(BlockedAddress):
        asyncio.run(resolve_checked("192.168.0.1", 80, allow))


# ----------------------------------------------------------------------------- limits, cache


def test_per_host_delay(site: Site) -> None:
    t0 = time.monotonic()
    docs, _ = fetcher(host_delay=0.3).fetch([site.base + f"/text?{i}" for i in range(3)])
    assert len(docs) == 3
    assert time.monotonic() - t0 >= 0.6


def test_cache_serves_second_fetch(site: Site, tmp_path: Path) -> None:
    f = make_fetcher(allow_hosts=["127.0.0.1"], cache_dir=tmp_path / "cache", host_delay=0.0)
    first, _ = f.fetch([site.base + "/page", site.base + "/to-page"])
    second, _ = f.fetch([site.base + "/page", site.base + "/to-page"])
    assert first == second
    assert site.hits["/page"] == 2 and site.hits["/to-page"] == 1  # second run: no requests
    bodies = list((tmp_path / "cache" / "bodies").iterdir())
    assert len(bodies) == 1  # the same body is stored once


def test_unknown_limit_lists_choices() -> None:
    with pytest.raises(ConfigError, match="max_bytes"):
        make_fetcher(max_size=10)


def test_fetch_from_running_loop(site: Site) -> None:
    async def inside() -> int:
        docs, _ = fetcher().fetch([site.base + "/page"])
        return len(docs)

    assert asyncio.run(inside()) == 1


# ----------------------------------------------------------------------------- TLS with pinning


def _self_signed(tmp: Path, name: str) -> tuple[Path, Path]:
    pytest.importorskip("cryptography")
    import datetime as dt

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp / f"{name}.crt", tmp / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.mark.parametrize("cert_name", ["localhost", "other.example"])
def test_https_pinned_to_checked_address_keeps_sni_and_verification(
    site: Site, tmp_path: Path, cert_name: str
) -> None:
    import ssl

    import httpx

    from factseek.fetch import FetchConfig, HttpFetcher

    cert, key = _self_signed(tmp_path, cert_name)
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(cert, key)
    site.httpd.socket = server_ctx.wrap_socket(site.httpd.socket, server_side=True)
    client_ctx = ssl.create_default_context(cafile=str(cert))
    f = HttpFetcher(
        config=FetchConfig(host_delay=0.0, total_timeout=5.0),
        allow_hosts=["localhost"],
        transport=httpx.AsyncHTTPTransport(verify=client_ctx),
    )
    docs, failures = f.fetch([f"https://localhost:{site.port}/page"])
    if cert_name == "localhost":  # the IP is pinned, the name still verifies the certificate
        assert docs and "housing bill" in docs[0].text, failures
    else:
        assert not docs and "CERTIFICATE_VERIFY_FAILED" in failures[0].error


# ----------------------------------------------------------------------------- issue 14 cases

#: Location values that are not usable redirects; each must fail its own URL and nothing else.
MALFORMED_LOCATIONS = [
    "http:foo", "mailto:x@y", "a:b:c", "http://", "http://[::1", "//", "http://a b/", "\x7f",
    "http://%zz/", "http://xn--/", "https://:80/", "http://999.1.1.1/", "javascript:alert(1)",
    "data:text/html,x", "file:///etc/passwd", "http://a:99999/", "http://[fe80::1%25eth0]/",
    "////x", "http:\\\\evil.example", "http://exa mple.example", "http://ex%00ample.example",
    "http://user@/", "http://\U0001f642.example/", "http://" + "a" * 300 + ".example/",
    "http://[::ffff:127.0.0.1", "http://[1:2:3]/",
]  # fmt: skip


def test_malformed_redirects_fail_only_their_url(site: Site) -> None:
    """Issue 14 case 1: a malformed Location raised httpx.InvalidURL out of fetch()."""
    for i, location in enumerate(MALFORMED_LOCATIONS):
        site.routes[f"/bad-{i}"] = redirect(location)
    urls = [site.base + "/page"] + [
        site.base + f"/bad-{i}" for i in range(len(MALFORMED_LOCATIONS))
    ]
    docs, failures = fetcher(total_timeout=2.0, connect_timeout=1.0).fetch(urls)
    assert [d.url for d in docs] == [site.base + "/page"]
    assert [f.url for f in failures] == urls[1:]
    assert all(f.error and "\n" not in f.error for f in failures)


def drip_for(seconds: float) -> Callable[[BaseHTTPRequestHandler], None]:
    def handler(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/html")
        h.end_headers()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            h.wfile.write(b"<p>x</p>")
            h.wfile.flush()
            time.sleep(0.05)

    return handler


def test_slow_pages_do_not_starve_good_pages_on_the_same_host(site: Site) -> None:
    """Issue 14 case 2: the per-URL limit counted the wait for a slot, so 2 dripping pages made
    5 good pages on the same host time out without ever being requested."""
    site.routes["/drip-long"] = drip_for(6.0)
    slow = [site.base + f"/drip-long?{i}" for i in range(2)]
    good = [site.base + f"/text?{i}" for i in range(5)]
    f = fetcher(per_host=2, total_timeout=1.5, read_timeout=1.0)
    docs, failures = f.fetch(slow + good)
    assert sorted(d.url for d in docs) == sorted(good)
    assert sorted(x.url for x in failures) == sorted(slow)


def test_slow_host_does_not_starve_other_hosts(site: Site) -> None:
    """Waiting for a busy host's slot must not hold one of the global slots."""
    site.routes["/drip-long"] = drip_for(6.0)
    slow = [f"http://localhost:{site.port}/drip-long?{i}" for i in range(6)]
    good = [site.base + f"/text?{i}" for i in range(3)]
    f = make_fetcher(
        allow_hosts=["127.0.0.1", "localhost"],
        concurrency=3,
        per_host=1,
        host_delay=0.0,
        total_timeout=1.0,
        read_timeout=1.0,
        deadline=3.0,
    )
    t0 = time.monotonic()
    docs, failures = f.fetch(slow + good)
    assert sorted(d.url for d in docs) == sorted(good)
    assert len(failures) == len(slow)
    assert time.monotonic() - t0 < 5  # the overall deadline bounds the claim


def test_overall_deadline_records_every_unfinished_url(site: Site) -> None:
    site.routes["/drip-long"] = drip_for(6.0)
    urls = [site.base + f"/drip-long?{i}" for i in range(4)]
    f = fetcher(per_host=1, total_timeout=5.0, read_timeout=5.0, deadline=1.0)
    t0 = time.monotonic()
    docs, failures = f.fetch(urls)
    assert time.monotonic() - t0 < 3
    assert not docs and [x.url for x in failures] == urls
    assert all("deadline" in x.error or "timed out" in x.error for x in failures)


@pytest.mark.parametrize(
    "address",
    [
        "2002:a9fe:a9fe::1",  # 6to4 wrapping 169.254.169.254
        "2002:7f00:1::1",  # 6to4 wrapping 127.0.0.1
        "2002:0a00:0001::",  # 6to4 wrapping 10.0.0.1
        "fec0::1",  # site-local (deprecated, still routed internally)
        "fd12:3456::1",  # unique-local
        "64:ff9b::7f00:1",  # NAT64 wrapping 127.0.0.1
        "64:ff9b::a9fe:a9fe",  # NAT64 wrapping 169.254.169.254
        "64:ff9b:1::a00:1",  # local-use NAT64 prefix
        "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo, client 127.0.0.1
        "::127.0.0.1",  # IPv4-compatible (deprecated)
        "::ffff:169.254.169.254",  # IPv4-mapped metadata
        "::ffff:0:127.0.0.1",  # IPv4-translated
        "100::1",  # discard-only
    ],
)
def test_guard_unwraps_embedded_ipv4_and_refuses_non_global(address: str) -> None:
    """Issue 14 case 9: 6to4 addresses wrapping forbidden IPv4 and site-local fec0::/10 passed."""
    assert blocked_reason(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize("address", ["2002:0808:0808::1", "64:ff9b::808:808", "2a00:1450::1"])
def test_guard_lets_public_wrapped_addresses_through(address: str) -> None:
    assert blocked_reason(ipaddress.ip_address(address)) is None
