"""What keeps the web app safe by default: CSRF tokens, strict headers, host and link checks.

- CSRF: a random token in an HttpOnly, SameSite=Strict cookie; every form carries it in a
  hidden field and every POST must echo it (compared in constant time). A POST whose ``Origin``
  names another site is refused too.
- Headers on every response: a Content-Security-Policy that allows scripts, styles and fetches
  from this origin only (no inline script or style, no framing, forms post here only), plus
  ``nosniff``, a same-origin referrer policy and ``DENY`` framing. ``SecurityHeaders`` is the
  outermost layer, so errors answered before the app (a bad ``Host``, a body too large) carry
  them too; an error nothing else answered becomes a 500 with one line, headers included
  (logged with its traceback), never a dropped connection.
- Bodies: ``BodyLimit`` reads a request body before the app sees it and answers 413 once it
  passes the limit, whether the length was declared or the body is chunked.
- Hosts: only the names the server was bound to are accepted in ``Host`` (DNS rebinding).
- JSON clients (``wants_json``: a JSON endpoint, or an ``Accept`` that names JSON and not HTML)
  get every error as JSON, ``{"status": 400, "error": "one line"}``, those answered before the
  app included (``JsonErrors`` turns a plain-text error into that).
- Links: only http(s) URLs become links (no ``javascript:``/``data:``).
"""

from __future__ import annotations

import hmac
import json
import logging
import secrets
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

CSRF_COOKIE = "factseek_csrf"
CSRF_FIELD = "csrf_token"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
#: The self-contained HTML report carries its own inline CSS and no script.
REPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # no-referrer would make browsers send "Origin: null"
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
}
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
JSON_SUFFIXES = (".json", ".jsonld", "/status")  # paths that answer JSON, errors included
JSON_TYPES = ("application/json", "application/ld+json")
log = logging.getLogger(__name__)
Scope = dict[str, Any]
Message = dict[str, Any]


def wants_json(path: str, accept: str = "") -> bool:
    """Whether a request is a JSON client's: a JSON endpoint (``JSON_SUFFIXES``), or an
    ``Accept`` header that names JSON and not HTML. Its errors are JSON too."""
    if path.endswith(JSON_SUFFIXES):
        return True
    accept = accept.lower()
    return any(t in accept for t in JSON_TYPES) and "text/html" not in accept


def error_json(status: int, reason: str) -> bytes:
    """A JSON client's error body: the status and one line saying why."""
    line = " ".join(str(reason).split())[:500]
    return json.dumps({"status": status, "error": line}, ensure_ascii=False).encode()


def _wants_json(scope: Scope) -> bool:
    headers = {k.lower(): v for k, v in scope.get("headers", [])}
    accept = headers.get(b"accept", b"").decode("latin-1")
    return wants_json(str(scope.get("path", "")), accept)


def new_token() -> str:
    return secrets.token_urlsafe(32)


def token_ok(cookie: str | None, submitted: str | None) -> bool:
    return bool(cookie) and bool(submitted) and hmac.compare_digest(str(cookie), str(submitted))


def origin_ok(origin: str | None, host: str | None) -> bool:
    """A missing Origin is allowed (the token decides); a present one must name this host."""
    if not origin:
        return True
    try:
        return urlsplit(origin).netloc.lower() == (host or "").lower()
    except ValueError:
        return False


def is_loopback(host: str) -> bool:
    return host in LOOPBACK or host.startswith("127.")


def allowed_hosts(bind: str, extra: Iterable[str] = ()) -> list[str]:
    """Host names the app answers to: loopback names, plus the bound address when it is not."""
    hosts = ["127.0.0.1", "localhost", "[::1]", "::1"]
    if bind not in ("0.0.0.0", "::") and bind not in hosts:
        hosts.append(bind)
    hosts.extend(h for h in extra if h)
    if bind in ("0.0.0.0", "::") and not list(extra):
        return ["*"]  # bound everywhere on purpose: the caller was warned; names are unknown
    return hosts


# ----------------------------------------------------------------------------- ASGI layers


class SecurityHeaders:
    """Adds ``HEADERS`` to every response that does not set its own (pure ASGI: errors too)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                present = {k.lower() for k, _ in message.get("headers", [])}
                extra = [
                    (k.lower().encode("latin-1"), v.encode("latin-1"))
                    for k, v in HEADERS.items()
                    if k.lower().encode("latin-1") not in present
                ]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception as e:
            if started:
                raise
            log.exception("unanswered error on %s", scope.get("path", ""))
            why = f"internal error ({type(e).__name__})"
            if _wants_json(scope):
                await _send(send_with_headers, 500, error_json(500, why), b"application/json")
            else:
                await _plain(send_with_headers, 500, why)


async def _send(send: Any, status: int, body: bytes, media: bytes) -> None:
    headers = [(b"content-type", media), (b"content-length", b"%d" % len(body)), (b"connection", b"close")]  # fmt: skip
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _plain(send: Any, status: int, text: str) -> None:
    await _send(send, status, text.encode(), b"text/plain; charset=utf-8")


class JsonErrors:
    """For a JSON client (``wants_json``), a plain-text error from an inner layer (a bad
    ``Host``, a body too large) is sent as ``error_json`` instead; anything else passes."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not _wants_json(scope):
            await self.app(scope, receive, send)
            return
        held: Message | None = None
        body = b""

        async def send_json_errors(message: Message) -> None:
            nonlocal held, body
            if message["type"] == "http.response.start":
                media = dict(message.get("headers", [])).get(b"content-type", b"")
                if message["status"] >= 400 and media.startswith(b"text/plain"):
                    held = message  # answered below, once the text is complete
                    return
            elif held is not None and message["type"] == "http.response.body":
                body += message.get("body", b"")
                if message.get("more_body", False):
                    return
                status = int(held["status"])
                text = body.decode("utf-8", "replace")
                await _send(send, status, error_json(status, text), b"application/json")
                return
            await send(message)

        await self.app(scope, receive, send_json_errors)


class BodyLimit:
    """Answers 413 for a request body over ``limit`` bytes, declared or streamed (chunked).

    The body is read here, up to ``limit`` bytes, before the app runs; the app then receives
    the same messages. A request without a body passes straight through.
    """

    def __init__(self, app: Any, *, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.lower(): v for k, v in scope.get("headers", [])}
        declared = headers.get(b"content-length")
        if declared is not None:
            if not declared.strip().isdigit():
                await _plain(send, 400, "malformed Content-Length")
                return
            if int(declared) > self.limit:
                await _plain(send, 413, "request too large")
                return
        if declared in (None, b"0") and b"transfer-encoding" not in headers:
            await self.app(scope, receive, send)  # no body
            return
        buffered: list[Message] = []
        size = 0
        while True:
            message = await receive()
            buffered.append(message)
            if message["type"] != "http.request":
                break  # the client went away: let the app see it
            size += len(message.get("body", b""))
            if size > self.limit:
                await _plain(send, 413, "request too large")
                return
            if not message.get("more_body", False):
                break

        async def replay() -> Message:
            return buffered.pop(0) if buffered else await receive()

        await self.app(scope, replay, send)
