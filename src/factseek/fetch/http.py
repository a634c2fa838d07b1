"""The HTTP fetcher: URLs in, ``Document``s and per-URL ``FetchFailure``s out.

One async implementation (httpx) with a sync facade. Per URL:

1. Only ``http``/``https``; PDFs, media files and video sites are skipped, as in the paper
   (``keep_pdf=True``, for ``check --keep-pdf``: PDFs are fetched and read by
   ``factseek.pages.pdftext``).
2. Each hop, the first request and every redirect (at most ``max_redirects``), passes the SSRF
   guard (``factseek.fetch.guard``) and connects to the address that was checked.
3. Bounded concurrency overall and per host, with ``host_delay`` between requests to one host.
   A URL first waits for its host's slot and only then takes one of the global slots, so a slow
   host holds at most ``per_host`` of them and cannot starve the other hosts.
4. Time limits: connect and read timeouts; ``total_timeout`` per request (headers and body of one
   hop), counted from when the request is sent, never while it waits for a slot (a server that
   drips one byte a second cannot hold a slot for long, and the pages queued behind it on the
   same host still get their full time); and ``deadline`` for the whole ``fetch`` call (one
   claim's pages): URLs not done by then are recorded as failures and the claim goes on.
5. HTML and plain text only (by ``Content-Type``; and PDF with ``keep_pdf``); the body is read raw and decompressed here,
   so both the bytes on the wire and the decoded bytes are capped at ``max_bytes`` while
   streaming (a gzip bomb stops at the cap, not in memory).
6. Text and dates by ``factseek.pages.extract``; the optional on-disk cache keeps decoded bodies.

Any failure of one URL (a bad page, a malformed or hostile redirect, a timeout, even an
unexpected error) becomes ``FetchFailure(url, one line)`` and the other URLs go on.
"""

from __future__ import annotations

import asyncio
import dataclasses
import zlib
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from factseek.constraints.hits import VIDEO_SITES, site_matches
from factseek.errors import ConfigError, FactseekError, FetchError
from factseek.fetch.cache import CachedPage, PageCache
from factseek.fetch.guard import AllowList, resolve_checked
from factseek.types import Document, FetchFailure


@dataclass(frozen=True, kw_only=True)
class FetchConfig:
    """Limits for fetching. All times in seconds, sizes in bytes."""

    concurrency: int = 8
    per_host: int = 2
    host_delay: float = 0.5
    connect_timeout: float = 10.0
    read_timeout: float = 15.0
    total_timeout: float = 30.0  # per request (one hop), from when it is sent
    deadline: float = 120.0  # the whole fetch call (one claim's pages)
    max_bytes: int = 5_000_000
    max_redirects: int = 5
    user_agent: str = "factseek/0.1 (evidence retrieval for fact-checking)"
    content_types: tuple[str, ...] = ("text/html", "application/xhtml+xml", "text/plain")
    keep_pdf: bool = False  # fetch PDFs and read their text (check --keep-pdf)


DEFAULT_FETCH = FetchConfig()

#: Path endings that are never HTML or text (the paper skipped PDFs and videos).
SKIP_EXTENSIONS: tuple[str, ...] = (
    ".pdf", ".doc", ".docx", ".ppt", ".pptx", ".xls", ".xlsx", ".zip", ".gz", ".tar",
    ".mp3", ".mp4", ".m4a", ".mov", ".avi", ".mkv", ".webm", ".wav", ".flac",
    ".jpg", ".jpeg", ".png", ".gif", ".webp", ".svg", ".exe", ".dmg", ".iso",
)  # fmt: skip
REDIRECTS = frozenset({301, 302, 303, 307, 308})


def _one_line(text: str, limit: int = 300) -> str:
    return " ".join(str(text).split())[:limit]


def skip_reason(url: str, *, keep_pdf: bool = False) -> str | None:
    """Why ``url`` is not fetched at all (scheme, file type, video site), or None."""
    try:
        parts = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError):
        return "invalid URL"
    if parts.scheme not in ("http", "https"):
        return f"unsupported scheme {parts.scheme or 'none'}"
    if not parts.host:
        return "URL has no host"
    path = parts.path.lower()
    for ext in SKIP_EXTENSIONS:
        if path.endswith(ext) and not (keep_pdf and ext == ".pdf"):
            return f"skipped {ext[1:]} file"
    if any(site_matches(url, s) for s in VIDEO_SITES):
        return "skipped video site"
    return None


async def read_limited(response: httpx.Response, max_bytes: int) -> bytes:
    """The body, decompressed here (gzip/deflate), with raw and decoded sizes capped."""
    declared = response.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > max_bytes:
        raise FetchError(f"body of {int(declared)} bytes exceeds the {max_bytes}-byte limit")
    encoding = response.headers.get("content-encoding", "").strip().lower()
    if encoding in ("gzip", "x-gzip", "deflate"):
        decoder: Any = zlib.decompressobj(zlib.MAX_WBITS | 32)  # zlib or gzip header
    elif encoding in ("", "identity"):
        decoder = None
    else:
        raise FetchError(f"unsupported content encoding {encoding[:40]}")
    raw = 0
    out = bytearray()
    try:
        async for chunk in response.aiter_raw():
            raw += len(chunk)
            if raw > max_bytes:
                raise FetchError(f"body exceeds the {max_bytes}-byte limit")
            if decoder is None:
                out += chunk
                continue
            data = chunk
            while data:
                out += decoder.decompress(data, max_bytes + 1 - len(out))
                if len(out) > max_bytes:
                    raise FetchError(
                        f"decompressed body exceeds the {max_bytes}-byte limit (compression bomb?)"
                    )
                data = decoder.unconsumed_tail
        if decoder is not None:
            out += decoder.flush()
    except zlib.error:
        raise FetchError("corrupt compressed body") from None
    if len(out) > max_bytes:
        raise FetchError(f"decompressed body exceeds the {max_bytes}-byte limit")
    return bytes(out)


class _Politeness:
    """Per-run concurrency: a global cap, a per-host cap, and spacing between requests to a host."""

    def __init__(self, cfg: FetchConfig) -> None:
        self._cfg = cfg
        self._global = asyncio.Semaphore(cfg.concurrency)
        self._hosts: dict[str, asyncio.Semaphore] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._last: dict[str, float] = {}

    @asynccontextmanager
    async def slot(self, host: str) -> AsyncIterator[None]:
        """The host's slot first, then the spacing, then a global slot: waiting on a busy host
        never holds a global slot that another host could use."""
        sem = self._hosts.setdefault(host, asyncio.Semaphore(self._cfg.per_host))
        async with sem:
            lock = self._locks.setdefault(host, asyncio.Lock())
            loop = asyncio.get_running_loop()
            async with lock:
                wait = self._last.get(host, -1e18) + self._cfg.host_delay - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                self._last[host] = loop.time()
            async with self._global:
                yield


class HttpFetcher:
    """Fetches pages over HTTP with the guards above; ``fetch(urls) -> (documents, failures)``."""

    def __init__(
        self,
        *,
        config: FetchConfig = DEFAULT_FETCH,
        allow_hosts: Sequence[str] = (),
        cache_dir: Path | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.config = config
        self._allow = AllowList.parse(allow_hosts)
        self._cache = PageCache(cache_dir) if cache_dir is not None else None
        self._transport = transport

    # ------------------------------------------------------------------ public

    def fetch(self, urls: Sequence[str]) -> tuple[list[Document], list[FetchFailure]]:
        """Fetch ``urls`` (duplicates once); documents and failures in input order."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.afetch(urls))
        with ThreadPoolExecutor(max_workers=1) as pool:  # called from async code: own loop
            return pool.submit(asyncio.run, self.afetch(urls)).result()

    async def afetch(self, urls: Sequence[str]) -> tuple[list[Document], list[FetchFailure]]:
        cfg = self.config
        unique = list(dict.fromkeys(urls))
        polite = _Politeness(cfg)
        timeout = httpx.Timeout(
            connect=cfg.connect_timeout, read=cfg.read_timeout, write=cfg.read_timeout, pool=None
        )
        async with httpx.AsyncClient(
            timeout=timeout,
            follow_redirects=False,
            trust_env=False,
            transport=self._transport,
            limits=httpx.Limits(max_connections=cfg.concurrency, max_keepalive_connections=0),
            event_hooks={"response": [_stash_location]},
        ) as client:
            tasks = [asyncio.create_task(self._one(client, polite, u)) for u in unique]
            _, pending = await asyncio.wait(tasks, timeout=cfg.deadline)
            for t in pending:
                t.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        results = [_outcome(t, u, cfg) for t, u in zip(tasks, unique, strict=True)]
        docs = [r for r in results if isinstance(r, Document)]
        failures = [r for r in results if isinstance(r, FetchFailure)]
        return docs, failures

    # ------------------------------------------------------------------ one URL

    async def _one(
        self, client: httpx.AsyncClient, polite: _Politeness, url: str
    ) -> Document | FetchFailure:
        reason = skip_reason(url, keep_pdf=self.config.keep_pdf)
        if reason:
            return FetchFailure(url=url, error=reason)
        page: CachedPage | None = None
        try:
            page = self._cache.get(url) if self._cache else None
            if page is None:
                page = await self._download(client, polite, url)
                if self._cache:
                    self._cache.put(page)
            return await asyncio.to_thread(_extract, page, self.config.keep_pdf)
        except FactseekError as e:
            message = str(e)
            final = page.final_url if page is not None else url
            for prefix in (f"{url}: ", f"{final}: "):
                message = message.removeprefix(prefix)  # extraction errors name the URL
            return FetchFailure(url=url, error=_one_line(message))
        except httpx.TimeoutException as e:
            return FetchFailure(
                url=url, error=f"{type(e).__name__}: no data within the read timeout"
            )
        except httpx.HTTPError as e:
            return FetchFailure(url=url, error=_one_line(f"{type(e).__name__}: {e}"))
        except (OSError, httpx.InvalidURL, ValueError, UnicodeError, OverflowError) as e:
            return FetchFailure(url=url, error=_one_line(f"{type(e).__name__}: {e}"))
        except Exception as e:  # one page must never take down the others: record it
            return FetchFailure(url=url, error=_one_line(f"unexpected {type(e).__name__}: {e}"))

    async def _download(
        self, client: httpx.AsyncClient, polite: _Politeness, url: str
    ) -> CachedPage:
        cfg = self.config
        current = httpx.URL(url)
        for _ in range(cfg.max_redirects + 1):
            host, port = _host_port(current)
            try:
                async with asyncio.timeout(cfg.connect_timeout):
                    ip = await resolve_checked(host, port, self._allow)
            except TimeoutError:
                raise FetchError(f"cannot resolve {host}: timed out") from None
            headers = {
                "Host": current.netloc.decode("ascii"),
                "User-Agent": cfg.user_agent,
                "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,"
                + ("application/pdf;q=0.9," if cfg.keep_pdf else "")
                + "*/*;q=0.1",
                "Accept-Encoding": "gzip, deflate",
            }
            extensions = {"sni_hostname": host} if current.scheme == "https" else {}
            pinned = current.copy_with(host=str(ip))
            async with polite.slot(host):
                try:  # the time limit starts once the request is sent, not in the queue
                    async with (
                        asyncio.timeout(cfg.total_timeout),
                        client.stream("GET", pinned, headers=headers, extensions=extensions) as r,
                    ):
                        location = _location(r)
                        if location is None:
                            ctype = r.headers.get("content-type", "text/html")
                            mime = ctype.split(";")[0].strip().lower()
                            if mime not in cfg.content_types and not (
                                cfg.keep_pdf and _pdf_response(mime, current)
                            ):
                                raise FetchError(f"unsupported content type {mime[:60] or 'none'}")
                            body = await read_limited(r, cfg.max_bytes)
                            return CachedPage(
                                url=url,
                                final_url=str(current),
                                content_type=ctype,
                                last_modified=r.headers.get("last-modified"),
                                body=body,
                            )
                except TimeoutError:
                    raise FetchError(f"timed out after {cfg.total_timeout:g}s") from None
            current = next_hop(current, location)
        raise FetchError(f"more than {cfg.max_redirects} redirects")


def _location(r: httpx.Response) -> str | None:
    """The ``Location`` of a redirect, None for a 200; ``FetchError`` for any other status."""
    if r.status_code in REDIRECTS:
        location = r.headers.get(STASHED_LOCATION)
        if not location:
            raise FetchError(f"HTTP {r.status_code} without a Location header")
        return location
    if r.status_code != 200:
        raise FetchError(f"HTTP {r.status_code}")
    return None


STASHED_LOCATION = "x-factseek-location"


async def _stash_location(response: httpx.Response) -> None:
    """Move ``Location`` aside before httpx parses it (it builds ``next_request`` even when not
    following, and a malformed value would raise there): ``next_hop`` checks it instead."""
    if "location" in response.headers:
        response.headers[STASHED_LOCATION] = response.headers["location"]
        del response.headers["location"]


def _host_port(url: httpx.URL) -> tuple[str, int]:
    """The host to resolve and the port of an http(s) URL; ``FetchError`` for anything else."""
    if url.scheme not in ("http", "https"):
        raise FetchError(f"redirect to unsupported scheme {url.scheme[:20] or 'none'}")
    try:
        host = url.raw_host.decode("ascii").lower()
    except UnicodeDecodeError:
        host = ""
    if not host or any(c in host for c in "%@ /\\"):
        raise FetchError(f"URL has no usable host: {_one_line(str(url), 120)}")
    port = url.port or (443 if url.scheme == "https" else 80)
    if not 0 < port < 65536:
        raise FetchError(f"invalid port {port}")
    return host, port


def next_hop(current: httpx.URL, location: str) -> httpx.URL:
    """The URL a ``Location`` points to, checked like a first request; ``FetchError`` if unusable."""
    try:
        target = current.join(location.strip())
        _host_port(target)
        target.copy_with(host="0.0.0.0")  # what _download does with it: must not raise later
    except (httpx.InvalidURL, ValueError, UnicodeError, TypeError) as e:
        shown = _one_line(repr(location), 120)
        raise FetchError(f"malformed redirect Location {shown}: {_one_line(str(e), 100)}") from None
    return target


def _outcome(task: asyncio.Task, url: str, cfg: FetchConfig) -> Document | FetchFailure:
    """A finished task's result; a failure for one the claim's deadline cut off."""
    if not task.done() or task.cancelled():
        return FetchFailure(
            url=url, error=f"not fetched within the {cfg.deadline:g}s deadline for this claim"
        )
    error = task.exception()
    if error is not None:  # _one records every error; kept as a last line of defence
        return FetchFailure(url=url, error=_one_line(f"unexpected {type(error).__name__}: {error}"))
    return task.result()


def _pdf_response(mime: str, url: httpx.URL) -> bool:
    """A PDF by its type, or a generic binary type on a path ending in ``.pdf``."""
    from factseek.pages.pdftext import PDF_TYPES

    generic = mime in ("application/octet-stream", "binary/octet-stream", "")
    return mime in PDF_TYPES or (generic and url.path.lower().endswith(".pdf"))


def _extract(page: CachedPage, keep_pdf: bool = False) -> Document:
    from factseek.pages.extract import extract_html, extract_text

    headers = {"content-type": page.content_type}
    if page.last_modified:
        headers["last-modified"] = page.last_modified
    mime = page.content_type.split(";")[0].strip().lower()
    if keep_pdf and page.body.lstrip()[:5] == b"%PDF-":
        from factseek.pages.pdftext import extract_pdf

        extract: Any = extract_pdf
    else:
        extract = extract_text if mime == "text/plain" else extract_html
    doc = extract(page.body, page.final_url, headers=headers)
    meta = {**doc.meta, "content_type": mime[:100]}
    if page.final_url != page.url:
        meta["final_url"] = page.final_url
    return dataclasses.replace(doc, url=page.url, meta=meta)


def make_fetcher(
    *,
    allow_hosts: Sequence[str] = (),
    cache_dir: Path | None = None,
    **limits: Any,
) -> HttpFetcher:
    """An ``HttpFetcher``; ``limits`` are ``FetchConfig`` fields (``max_bytes=...``)."""
    names = {f.name for f in dataclasses.fields(FetchConfig)}
    unknown = sorted(set(limits) - names)
    if unknown:
        raise ConfigError(
            f"unknown fetch limit(s) {', '.join(unknown)}; choose from: {', '.join(sorted(names))}"
        )
    return HttpFetcher(config=FetchConfig(**limits), allow_hosts=allow_hosts, cache_dir=cache_dir)
