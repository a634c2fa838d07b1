"""What keeps the web app safe by default: CSRF tokens, strict headers, host and link checks.

- CSRF: a random token in an HttpOnly, SameSite=Strict cookie; every form carries it in a
  hidden field and every POST must echo it (compared in constant time). A POST whose ``Origin``
  names another site is refused too.
- Headers on every response: a Content-Security-Policy that allows scripts, styles and fetches
  from this origin only (no inline script or style, no framing, forms post here only), plus
  ``nosniff``, a same-origin referrer policy and ``DENY`` framing.
- Hosts: only the names the server was bound to are accepted in ``Host`` (DNS rebinding).
- Links: only http(s) URLs become links (no ``javascript:``/``data:``).
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Iterable
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


def safe_url(url: object) -> str:
    """The URL if it is http(s), else empty."""
    text = str(url or "")
    try:
        scheme = urlsplit(text).scheme.lower()
    except ValueError:
        return ""
    return text if scheme in ("http", "https") else ""


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
