"""Ranking metrics for one query: AP@k, recall@k, reciprocal rank. Pure functions.

``ranking`` is a list of document ids, best first (duplicates count once, at their first rank);
``relevant`` the ids judged relevant. An empty ``relevant`` raises ``InputError``: there is no
meaningful value to return.

- ``average_precision(r, rel, k)``: sum over relevant ranks i <= k of precision@i, divided by
  ``min(|rel|, k)`` so that a perfect top-k scores 1.0 even with more than k relevant documents.
- ``recall_at_k(r, rel, k)``: relevant documents in the top k over ``|rel|``.
- ``reciprocal_rank(r, rel, k)``: 1 / rank of the first relevant document in the top k, else 0.

``METRICS`` maps a name to its function; ``parse_metric("ap@50") -> ("ap", 50)``;
``best_possible(name, n_relevant, k)`` is the highest value a ranking can reach.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from factseek.errors import ConfigError, InputError


def _check(relevant: Collection[str], k: int) -> None:
    if not relevant:
        raise InputError("no relevant documents: the metric is undefined")
    if k < 1:
        raise InputError(f"k must be at least 1, got {k}")


def _top(ranking: Sequence[str], k: int) -> list[str]:
    seen: dict[str, None] = {}
    for doc in ranking:
        if len(seen) == k:
            break
        seen.setdefault(doc, None)
    return list(seen)


def average_precision(ranking: Sequence[str], relevant: Collection[str], k: int = 50) -> float:
    """AP@k.

    >>> average_precision(["a", "x", "b"], {"a", "b"}, 10)  # (1/1 + 2/3) / 2
    0.8333333333333333
    """
    _check(relevant, k)
    hits = 0
    total = 0.0
    for i, doc in enumerate(_top(ranking, k), 1):
        if doc in relevant:
            hits += 1
            total += hits / i
    return total / min(len(relevant), k)


def recall_at_k(ranking: Sequence[str], relevant: Collection[str], k: int = 50) -> float:
    """Recall@k.

    >>> recall_at_k(["a", "x", "b"], {"a", "b", "c", "d"}, 2)
    0.25
    """
    _check(relevant, k)
    return sum(doc in relevant for doc in _top(ranking, k)) / len(relevant)


def reciprocal_rank(ranking: Sequence[str], relevant: Collection[str], k: int = 50) -> float:
    """Reciprocal rank within the top k.

    >>> reciprocal_rank(["x", "y", "a"], {"a"}, 10)
    0.3333333333333333
    """
    _check(relevant, k)
    for i, doc in enumerate(_top(ranking, k), 1):
        if doc in relevant:
            return 1.0 / i
    return 0.0


METRICS: dict[str, Callable[[Sequence[str], Collection[str], int], float]] = {
    "ap": average_precision,
    "recall": recall_at_k,
    "rr": reciprocal_rank,
}


def parse_metric(spec: str, default_k: int = 50) -> tuple[str, int]:
    """``"ap@50"`` -> ``("ap", 50)``; ``"rr"`` -> ``("rr", default_k)``."""
    name, _, k = spec.strip().lower().partition("@")
    if name not in METRICS:
        raise ConfigError(f"unknown metric {spec!r}; choose one of: {', '.join(METRICS)} (@k)")
    try:
        value = int(k) if k else default_k
    except ValueError:
        raise ConfigError(f"bad cut-off in {spec!r}; want NAME@K, e.g. ap@50") from None
    if value < 1:
        raise ConfigError(f"cut-off must be at least 1 in {spec!r}")
    return name, value


def best_possible(name: str, n_relevant: int, k: int) -> float:
    """The highest value of metric ``name`` with ``n_relevant`` relevant documents at cut-off k."""
    if n_relevant < 1:
        raise InputError("no relevant documents: the metric is undefined")
    if name == "recall":
        return min(n_relevant, k) / n_relevant
    if name in METRICS:
        return 1.0
    raise ConfigError(f"unknown metric {name!r}; choose one of: {', '.join(METRICS)}")
