"""The ``SearchBackend`` protocol, its registry, and search under constraints.

A backend declares what it can filter itself (``Capabilities``). ``constrained_search`` asks it
for ``k`` hits, over-fetching when a constraint has to be emulated, and applies
``factseek.constraints.hits.check`` to every hit it returns (native filters included: a backend's
bug must not leak a page). The result says which constraint was native and which emulated.
It is also where search results enter factseek: every hit's URL is redacted here
(``factseek.redact.redact_hit``), before anything fetches, records or reports it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from factseek.constraints.hits import NO_CONSTRAINTS, Constraints, check
from factseek.errors import ConfigError, SearchError
from factseek.redact import redact_hit, redact_url
from factseek.text import tokenize
from factseek.types import ConstraintDecision, Document, Hit, Query, QueryResult


@dataclass(frozen=True, kw_only=True)
class Capabilities:
    """What a backend can do natively."""

    date_filter: bool = False  # can return only pages published before a date
    domain_exclusion: bool = False  # can exclude a list of sites
    max_results: int = 10  # most results one request can return
    language: bool = False  # can restrict results to a language
    audit: bool = False  # cheap enough to rerun unfiltered, to show what native filters removed


@runtime_checkable
class SearchBackend(Protocol):
    name: str
    capabilities: Capabilities

    def search(self, query: str, k: int, constraints: Constraints) -> list[Hit]:
        """Up to ``k`` hits for ``query``, applying what ``capabilities`` says it can."""
        ...


class FunctionSearch:
    """A backend that wraps a function ``(query, k) -> list[Hit]``; no native filtering.

    Library code: tests use it, and so can users with a search of their own.
    """

    def __init__(
        self,
        fn: Callable[[str, int], Sequence[Hit]],
        *,
        name: str = "function",
        capabilities: Capabilities | None = None,
    ) -> None:
        self._fn = fn
        self.name = name
        self.capabilities = capabilities or Capabilities(max_results=1000)

    def search(self, query: str, k: int, constraints: Constraints) -> list[Hit]:
        return list(self._fn(query, k))


class MemorySearch:
    """A backend over a list of Documents held in memory: every document sharing a query term
    (``factseek.text.tokenize``) is a hit, ranked by the number of shared terms, ties by list
    order. No native filtering. For tests, notebooks, and checking claims against a handful of pages.
    """

    name = "memory"
    capabilities = Capabilities(max_results=10_000)

    def __init__(self, documents: Sequence[Document]) -> None:
        self._docs = list(documents)
        self._terms = [set(tokenize(d.text)) for d in self._docs]
        self._by_url = {d.url: d for d in self._docs}
        self._by_url.update({redact_url(d.url): d for d in self._docs})  # hits come redacted

    def search(self, query: str, k: int, constraints: Constraints) -> list[Hit]:
        q = set(tokenize(query))
        scored = [(len(q & t), i) for i, t in enumerate(self._terms) if q & t]
        scored.sort(key=lambda x: (-x[0], x[1]))
        return [
            Hit(
                url=self._docs[i].url,
                title=self._docs[i].title,
                published=self._docs[i].published,
                rank=r + 1,
                score=float(n),
                query=query,
                backend=self.name,
            )
            for r, (n, i) in enumerate(scored[:k])
        ]

    def documents(self, hits: Sequence[Hit]) -> list[Document]:
        return [self._by_url[h.url] for h in hits]


#: name -> "module:factory". Factories take keyword options (``store=...``, ``api_key=...``).
#: Kept as strings so that listing backends imports nothing heavy.
BACKENDS: dict[str, str] = {
    "local": "factseek.store.backend:StoreBackend.open",
    "brave": "factseek.search.brave:BraveSearch",
    "tavily": "factseek.search.tavily:TavilySearch",
    "exa": "factseek.search.exa:ExaSearch",
    "serper": "factseek.search.serper:SerperSearch",
    "searxng": "factseek.search.searxng:SearxngSearch",
}


def register(name: str, target: str) -> None:
    """Add a backend: ``register("mine", "mypkg.search:MySearch")``."""
    BACKENDS[name] = target


def make_backend(name: str, **options: Any) -> SearchBackend:
    """Build the backend registered as ``name``; unknown names list the choices."""
    try:
        target = BACKENDS[name]
    except KeyError:
        raise ConfigError(
            f"unknown search backend {name!r}; choose one of: {', '.join(sorted(BACKENDS))}"
        ) from None
    module_name, _, attr = target.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj(**options)


#: How many times ``k`` to ask for when a constraint must be emulated.
OVERFETCH = 3


def constrained_search(
    backend: SearchBackend,
    query: Query,
    k: int,
    constraints: Constraints,
) -> QueryResult:
    """Search ``query.text`` and keep up to ``k`` hits that satisfy ``constraints``.

    Every returned hit gets a ``ConstraintDecision``; removed hits stay in the result so the
    report can show what each constraint took away.
    """
    caps = backend.capabilities
    needs_date = constraints.before is not None
    needs_site = (
        bool(constraints.all_excluded_sites or constraints.excluded_markers)
        or constraints.exclude_pdf
        or constraints.exclude_video
    )
    native: list[str] = []
    emulated: list[str] = []
    if needs_date:
        (native if caps.date_filter else emulated).append("date")
    if needs_site:
        (native if caps.domain_exclusion else emulated).append("domain")
    ask = k if not emulated else min(k * OVERFETCH, max(caps.max_results, k))
    try:
        hits = [redact_hit(h) for h in backend.search(query.text, ask, constraints)]
    except SearchError as e:
        return QueryResult(
            query=query,
            hits=(),
            decisions=(),
            native=tuple(native),
            emulated=tuple(emulated),
            error=str(e),
        )
    decisions: list[ConstraintDecision] = []
    n_kept = 0
    for hit in hits:
        d = check(hit, constraints, native=not emulated)
        if d.kept:
            if n_kept >= k:
                d = ConstraintDecision(url=hit.url, kept=False, reason="over-k", native=d.native)
            else:
                n_kept += 1
        decisions.append(d)
    if native and caps.audit:
        hits, decisions = _audit(backend, query, k, constraints, list(hits), decisions)
    return QueryResult(
        query=query,
        hits=tuple(hits),
        decisions=tuple(decisions),
        native=tuple(native),
        emulated=tuple(emulated),
    )


def _audit(
    backend: SearchBackend,
    query: Query,
    k: int,
    constraints: Constraints,
    hits: list[Hit],
    decisions: list[ConstraintDecision],
) -> tuple[list[Hit], list[ConstraintDecision]]:
    """Add the unfiltered top-k hits that the native filters removed, so the report can count them."""
    seen = {h.url for h in hits}
    try:
        probe = [redact_hit(h) for h in backend.search(query.text, k, NO_CONSTRAINTS)]
    except SearchError:
        return hits, decisions
    for hit in probe:
        d = check(hit, constraints, native=True)
        if not d.kept and hit.url not in seen:
            seen.add(hit.url)
            hits.append(hit)
            decisions.append(d)
    return hits, decisions
