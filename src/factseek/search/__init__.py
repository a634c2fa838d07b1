"""Search backends: one protocol, one registry, and constrained search with emulation."""

from factseek.search.base import (
    BACKENDS,
    Capabilities,
    FunctionSearch,
    MemorySearch,
    SearchBackend,
    constrained_search,
    make_backend,
)

__all__ = [
    "BACKENDS",
    "Capabilities",
    "FunctionSearch",
    "MemorySearch",
    "SearchBackend",
    "constrained_search",
    "make_backend",
]
