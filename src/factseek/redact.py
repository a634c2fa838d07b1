"""Secrets out of everything factseek prints or stores.

- ``redact_url``: a URL without its userinfo (``user:pass@``) and with the values of key-like
  query or fragment parameters (``api_key``, ``token``, ``sig``...) replaced by ``***``.
- ``redact_text``: free text (an error message, a server's reply) with the given secrets, URL
  userinfo, key-like URL parameters and well-known key shapes (``sk-...``, ``Bearer ...``)
  replaced by ``***``. Call it *before* cutting text to length, so no prefix of a secret survives.

- ``redact_hit``, ``redact_document``, ``redact_failure``: the records a URL enters factseek in
  (search results, pages, fetch failures) with their URLs redacted; ``redact_tree`` does the same
  for JSON data (``url``/``final_url`` keys redacted, message keys like ``notes`` scrubbed).
  ``redacted_parts`` names what a URL lost (``userinfo``, ``query:api_key``...), never the value.

URLs from the outside (a search engine's results, a store's documents, a redirect) are redacted
where they enter factseek, before anything is recorded, fetched, cached or stored: search results
by ``search.base.constrained_search``, pages and failures by ``pipeline`` (and by the evidence
bundle recorder, which sits at the same seam), store documents when a store is built. A page
whose URL carried credentials is fetched without them. Every message that names a configured
endpoint (``--llm-base-url``, ``SEARXNG_URL``...) shows it through ``redact_url``; the endpoint
itself keeps its credentials for the request.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from factseek.types import Document, FetchFailure, Hit

MASK = "***"
#: JSON keys whose values are URLs, and keys whose values are messages that may quote one.
URL_KEYS = frozenset({"url", "final_url"})
MESSAGE_KEYS = frozenset({"notes", "error", "explanation", "note"})
#: What an evidence bundle's config.json says about redaction.
RULE = (
    "URLs are redacted where they enter factseek: userinfo (user:password@) is removed and the "
    "values of key-like query and fragment parameters (api_key, token, access_token, sig, "
    "password, session, code, ...) are replaced by ***; redactions.jsonl names each redacted "
    "part (never its value)"
)

_KEY_NAMES = (
    r"(?:[a-z0-9]+[_.-])*"
    r"(?:key|apikey|api[_-]?key|token|access[_-]?token|refresh[_-]?token|id[_-]?token|auth|"
    r"authorization|secret|client[_-]?secret|password|passwd|pwd|pass|sig|signature|"
    r"credential|credentials|session|sessionid|sid|jwt|code|passphrase|otp|ticket)"
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


def redacted_parts(url: str) -> tuple[str, ...]:
    """What ``redact_url`` removes from ``url``: ``"userinfo"``, ``"query:NAME"``,
    ``"fragment:NAME"`` (parameter names only, never values); ``()`` when nothing."""
    url = str(url)
    if "@" not in url and "=" not in url:
        return ()
    try:
        parts = urlsplit(url)
    except ValueError:
        return ("text",) if redact_text(url) != url else ()
    if not parts.scheme and not parts.netloc:
        return ("text",) if redact_text(url) != url else ()
    out = ["userinfo"] if "@" in parts.netloc else []
    for where, text in (("query", parts.query), ("fragment", parts.fragment)):
        out += [
            f"{where}:{m.group(1).lower()[:40]}"
            for m in _KEY_PARAM.finditer(text)
            if m.group(2) not in ("", MASK)
        ]
    return tuple(out)


def _same_as_url(value: str | None, url: str) -> str | None:
    """An id that is the URL itself (a store's default id) is redacted with it."""
    return redact_url(value) if value is not None and value == url else value


def redact_hit(hit: Hit) -> Hit:
    """``hit`` with its URL (and an id that is its URL) redacted."""
    url = redact_url(hit.url)
    if url == hit.url:
        return hit
    return dataclasses.replace(hit, url=url, doc_id=_same_as_url(hit.doc_id, hit.url))


def redact_document(doc: Document) -> Document:
    """``doc`` with its URL, an id that is its URL and URL-valued metadata redacted."""
    url = redact_url(doc.url)
    meta = {k: redact_url(v) if "url" in k.lower() else v for k, v in doc.meta.items()}
    if url == doc.url and meta == dict(doc.meta):
        return doc
    return dataclasses.replace(doc, url=url, id=_same_as_url(doc.id, doc.url), meta=meta)


def redact_failure(failure: FetchFailure) -> FetchFailure:
    """``failure`` with its URL redacted and its message scrubbed."""
    url, error = redact_url(failure.url), redact_text(failure.error)
    if (url, error) == (failure.url, failure.error):
        return failure
    return FetchFailure(url=url, error=error)


def redact_tree(obj: Any, key: str = "") -> Any:
    """JSON data (``types.to_dict`` output) with URL keys redacted and messages scrubbed."""
    if isinstance(obj, str):
        if key in URL_KEYS:
            return redact_url(obj)
        return redact_text(obj) if key in MESSAGE_KEYS else obj
    if isinstance(obj, list):
        return [redact_tree(x, key) for x in obj]
    if isinstance(obj, dict):
        out = {k: redact_tree(v, str(k)) for k, v in obj.items()}
        url = obj.get("url")
        for id_key in ("id", "doc_id"):  # an id that is the URL itself goes with it
            if isinstance(url, str) and obj.get(id_key) == url:
                out[id_key] = redact_url(url)
        return out
    return obj
