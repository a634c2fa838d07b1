"""Fetching pages: the ``Fetcher`` protocol and the guarded HTTP fetcher.

``make_fetcher(allow_hosts=..., cache_dir=..., **limits).fetch(urls) -> (documents, failures)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from factseek.fetch.guard import AllowList, blocked_reason
from factseek.fetch.http import DEFAULT_FETCH, FetchConfig, HttpFetcher, make_fetcher
from factseek.types import Document, FetchFailure


@runtime_checkable
class Fetcher(Protocol):
    """Turns URLs into documents; one failure per URL that could not be turned."""

    def fetch(self, urls: Sequence[str]) -> tuple[list[Document], list[FetchFailure]]: ...


__all__ = [
    "DEFAULT_FETCH",
    "AllowList",
    "FetchConfig",
    "Fetcher",
    "HttpFetcher",
    "blocked_reason",
    "make_fetcher",
]
