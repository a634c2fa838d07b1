"""Secrets out of everything factseek prints or stores.

- ``redact_url``: a URL without its userinfo (``user:pass@``) and with the values of key-like
  query or fragment parameters (``api_key``, ``token``, ``sig``...) replaced by ``***``.
- ``redact_text``: free text (an error message, a server's reply) with the given secrets, URL
  userinfo, key-like URL parameters and well-known key shapes (``sk-...``, ``Bearer ...``)
  replaced by ``***``. Call it *before* cutting text to length, so no prefix of a secret survives.

Every message that names a configured endpoint (``--llm-base-url``, ``SEARXNG_URL``...) shows it
through ``redact_url``; the endpoint itself keeps its credentials for the request.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

MASK = "***"

_KEY_NAMES = (
    r"(?:[a-z0-9]+[_.-])*"
    r"(?:key|apikey|api[_-]?key|token|access[_-]?token|refresh[_-]?token|id[_-]?token|auth|"
    r"authorization|secret|client[_-]?secret|password|passwd|pwd|pass|sig|signature|"
    r"credential|credentials|session|sessionid|sid|jwt|code)"
)
_KEY_PARAM = re.compile(rf"(?i)(?<![a-z0-9])({_KEY_NAMES})=([^&#\s]*)")
_KEY_PARAM_TEXT = re.compile(rf"(?i)([?&#;]{_KEY_NAMES}=)[^&#\s\"'<>]+")
_USERINFO_TEXT = re.compile(r"(?i)\b([a-z][a-z0-9+.-]{0,20}://)[^\s/?#@\"'<>]+@")
_KEY_SHAPES = re.compile(
    r"\b(?:sk|pk|rk)-[A-Za-z0-9_*-]{4,}"  # OpenAI-style keys, also partly masked echoes
    r"|(?i:\bbearer\s+)[A-Za-z0-9._~+/*-]+=*"
)


def redact_url(url: str) -> str:
    """``url`` without userinfo and with key-like parameter values masked."""
    url = str(url)
    if "@" not in url and "=" not in url:
        return url  # fast path: nothing that could hold a secret
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact_text(url)
    netloc = parts.netloc.rpartition("@")[2]
    query = _KEY_PARAM.sub(lambda m: f"{m.group(1)}={MASK}", parts.query)
    fragment = _KEY_PARAM.sub(lambda m: f"{m.group(1)}={MASK}", parts.fragment)
    if not parts.scheme and not parts.netloc:
        return redact_text(url)
    return urlunsplit((parts.scheme, netloc, parts.path, query, fragment))


def redact_text(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with ``secrets`` and anything that looks like a credential replaced by ``***``."""
    text = str(text)
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, MASK)
    if "@" in text:
        text = _USERINFO_TEXT.sub(r"\1", text)
    if "=" in text:
        text = _KEY_PARAM_TEXT.sub(rf"\1{MASK}", text)
    return _KEY_SHAPES.sub(MASK, text)
