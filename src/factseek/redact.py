"""Secrets out of everything factseek prints or stores.

- ``redact_url``: a URL without its userinfo (``user:pass@``) and with the values of key-like
  query, fragment or path parameters (``api_key``, ``token``, ``sig``, ``;jsessionid``...; names
  compared percent-decoded) replaced by ``***``; a URL nested in a parameter value (as
  ``?u=https%3A%2F%2Fuser%3Apass%40...``) is redacted the same way, ``MAX_DEPTH`` steps deep.
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
from urllib.parse import quote, unquote, unquote_plus, urlsplit, urlunsplit

from factseek.types import Document, FetchFailure, Hit

MASK = "***"
#: JSON keys whose values are URLs, and keys whose values are messages that may quote one.
URL_KEYS = frozenset({"url", "final_url"})
MESSAGE_KEYS = frozenset({"notes", "error", "explanation", "note"})
#: What an evidence bundle's config.json says about redaction.
RULE = (
    "URLs are redacted where they enter factseek: userinfo (user:password@) is removed and the "
    "values of key-like query, fragment and path parameters (api_key, token, access_token, sig, "
    "hmac, password, session, PHPSESSID, jsessionid, code, ...; names compared percent-decoded "
    "and in any case) are replaced by ***; a URL nested in a parameter value, percent-encoded or "
    "not, is redacted the same way; redactions.jsonl names each redacted part (never its value)"
)

#: Parameter names whose values are secrets: one of these words, alone or after a prefix that
#: ends in ``_``, ``.`` or ``-`` (``x-amz-signature``, ``client.secret``); names are compared
#: percent-decoded, lower-cased and stripped (``api%5Fkey``, ``API_KEY``, ``api_key+``).
_KEY_WORDS = (
    r"key|apikey|api[_-]?key|token|access[_-]?token|refresh[_-]?token|id[_-]?token|auth|"
    r"auth[_-]?token|authorization|secret|client[_-]?secret|password|passwd|pwd|pass|sig|"
    r"signature|hmac|credential|credentials|session|sessionid|sessid|phpsessid|jsessionid|"
    r"aspsessionid|sid|jwt|code|passphrase|otp|ticket|awsaccesskeyid|accesskeyid"
)
_KEY_NAME = re.compile(rf"(?:[a-z0-9]+[_.-])*(?:{_KEY_WORDS})")
#: The same names in free text, where a separator may also be percent-encoded (``%5F``).
_SEP_TEXT = r"(?:[_.-]|%5[fF]|%2[dDeE])"
_KEY_NAMES_TEXT = rf"(?:[a-z0-9]+{_SEP_TEXT})*(?:{_KEY_WORDS.replace('[_-]', _SEP_TEXT)})"
_KEY_PARAM_TEXT = re.compile(rf"(?i)([?&#;]{_KEY_NAMES_TEXT}(?:\+|%20)*=)[^&#;\s\"'<>]+")
_USERINFO_TEXT = re.compile(r"(?i)\b([a-z][a-z0-9+.-]{0,20}://)[^\s/?#@\"'<>]+@")
_URL_TEXT = re.compile(r"(?i)\b[a-z][a-z0-9+.-]{0,20}://[^\s\"'<>]+")
_KEY_SHAPES = re.compile(
    r"\b(?:sk|pk|rk)-[A-Za-z0-9_*-]{4,}"  # OpenAI-style keys, also partly masked echoes
    r"|(?i:\bbearer\s+)[A-Za-z0-9._~+/*-]+=*"
)
#: How deep a parameter value is taken apart (each percent-decoding and each URL inside another
#: is one step); a value deeper than that which could hold a credential is masked whole.
MAX_DEPTH = 8
_PATH_PARAM = re.compile(r";([^;/?#=]*)=([^;/?#]*)")


def _key_like(name: str) -> bool:
    """Whether a parameter name (as written in the URL) names a secret."""
    for _ in range(MAX_DEPTH):
        decoded = unquote_plus(name)
        if decoded == name:
            break
        name = decoded
    name = re.split(r"[?/#]", name.strip().lower())[-1].strip()
    return bool(_KEY_NAME.fullmatch(name))


def _shown_name(name: str) -> str:
    return " ".join(unquote_plus(name).lower().split())[:40]


class _Redaction:
    """One URL's redaction: the parts it removed (names only), nested URLs to ``MAX_DEPTH``."""

    def __init__(self) -> None:
        self.removed: list[str] = []

    def url(self, url: str, depth: int, where: str = "") -> str:
        try:
            parts = urlsplit(url)
        except ValueError:
            return self.text(url, where)
        if not parts.scheme and not parts.netloc and depth == 0:
            return self.text(url, where)
        netloc = parts.netloc
        if "@" in netloc:
            netloc = netloc.rpartition("@")[2]
            self.removed.append(f"{where}userinfo")
        path = self.path(parts.path, depth, where)
        query = self.params(parts.query, depth, where, "query")
        fragment = self.params(parts.fragment, depth, where, "fragment")
        return urlunsplit((parts.scheme, netloc, path, query, fragment))

    def text(self, text: str, where: str) -> str:
        out = _scrub(text)
        if out != text:
            self.removed.append(f"{where}text")
        return out

    def path(self, path: str, depth: int, where: str) -> str:
        """Path parameters (``;jsessionid=...``), userinfo of a URL written into the path, and
        credentials in a percent-encoded URL that is one path segment."""
        if "@" in path:
            clean = _USERINFO_TEXT.sub(r"\1", path)
            if clean != path:
                self.removed.append(f"{where}path:userinfo")
                path = clean

        def param(m: re.Match[str]) -> str:
            if not _key_like(m.group(1)):
                return m.group(0)
            if m.group(2) not in ("", MASK):
                self.removed.append(f"{where}path:{_shown_name(m.group(1))}")
            return f";{m.group(1)}={MASK}"

        if ";" in path:
            path = _PATH_PARAM.sub(param, path)
        if "%" in path:
            path = "/".join(
                self.value(seg, depth, f"{where}path/", plus=False) if "%" in seg else seg
                for seg in path.split("/")
            )
        return path

    def params(self, text: str, depth: int, where: str, kind: str) -> str:
        """``name=value`` pairs (split at ``&`` and ``;``): a key-like name's value masked, any
        other value searched for a nested URL's credentials."""
        if not text or ("=" not in text and "%" not in text and "@" not in text):
            return text
        pieces = re.split(r"([&;])", text)
        for i in range(0, len(pieces), 2):
            name, eq, value = pieces[i].partition("=")
            if not eq:
                pieces[i] = self.value(name, depth, f"{where}{kind}/", plus=True)
            elif _key_like(name):
                if value not in ("", MASK):
                    self.removed.append(f"{where}{kind}:{_shown_name(name)}")
                pieces[i] = f"{name}={MASK}"
            else:
                inner = f"{where}{kind}:{_shown_name(name)}/"
                pieces[i] = f"{name}={self.value(value, depth, inner, plus=True)}"
        return "".join(pieces)

    def value(self, raw: str, depth: int, where: str, *, plus: bool) -> str:
        """A parameter value or path segment with the credentials of a URL (or query string)
        nested in it, percent-encoded or not, removed; re-encoded only when something was."""
        if not raw or ("%" not in raw and "@" not in raw and "=" not in raw):
            return raw
        if depth >= MAX_DEPTH:  # too deep to take apart: masked whole if it may hold a secret
            text = raw
            for _ in range(4 * MAX_DEPTH):
                decoded = unquote_plus(text)
                if decoded == text:
                    break
                text = decoded
            if "@" in text or "=" in text or "%" in text:
                self.removed.append(f"{where}nested")
                return MASK
            return raw
        text = unquote_plus(raw) if plus else unquote(raw)
        if text == raw:  # not encoded: a URL written as it is (``&`` ends it: the outer split)
            if "://" in raw or raw.startswith(("/", "?")):
                return self.url(raw, depth + 1, where)
            clean = _USERINFO_TEXT.sub(r"\1", raw)
            if clean != raw:
                self.removed.append(f"{where}userinfo")
            return clean
        if "://" in text or text.startswith(("/", "?")):
            inner = self.url(text, depth + 1, where)
        elif "=" in text:
            inner = self.params(text, depth + 1, where, "query")
        else:
            inner = self.value(text, depth + 1, where, plus=False)
        return raw if inner == text else quote(inner, safe="*")


def _scrub(text: str) -> str:
    """Free text with URL userinfo, key-like URL parameters and key shapes masked."""
    if "@" in text:
        text = _USERINFO_TEXT.sub(r"\1", text)
    if "=" in text:
        text = _KEY_PARAM_TEXT.sub(rf"\1{MASK}", text)
    return _KEY_SHAPES.sub(MASK, text)


def _may_hold_secret(url: str) -> bool:
    return "@" in url or "=" in url or "%" in url


def redact_url(url: str) -> str:
    """``url`` without userinfo and with key-like parameter values masked: query, fragment and
    path (``;jsessionid=``) parameters, names compared percent-decoded; a URL nested in a
    parameter value (percent-encoded or not) is redacted the same way, ``MAX_DEPTH`` deep."""
    url = str(url)
    if not _may_hold_secret(url):
        return url  # fast path: nothing that could hold a secret
    redaction = _Redaction()
    out = redaction.url(url, 0)
    return out if redaction.removed or out.count(MASK) > url.count(MASK) else url


def redact_text(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with ``secrets`` and anything that looks like a credential replaced by ``***``
    (each URL in it through ``redact_url``)."""
    text = str(text)
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, MASK)
    if "://" in text:
        text = _URL_TEXT.sub(lambda m: redact_url(m.group(0)), text)
    return _scrub(text)


def redacted_parts(url: str) -> tuple[str, ...]:
    """What ``redact_url`` removes from ``url``: ``"userinfo"``, ``"query:NAME"``,
    ``"fragment:NAME"``, ``"path:NAME"``, and for a URL nested in parameter ``u`` the same
    behind ``"query:u/"`` (parameter names only, never values); ``()`` when nothing."""
    url = str(url)
    if not _may_hold_secret(url):
        return ()
    redaction = _Redaction()
    redaction.url(url, 0)
    return tuple(redaction.removed)


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
