"""What a rewritten query found that its question, searched as written, did not.

``compare_with_questions(results, search)`` searches the question of every rewritten query as
written (``search(Query) -> QueryResult``, the pipeline's own search under the same
constraints) and records, on the rewritten query's result, the kept URLs the question did not
find (``new_urls``) and the question's kept URLs the rewrite lost (``lost_urls``), each in rank
order. Queries left as written, and searches that failed, are returned unchanged. It costs one
search per rewritten query.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from factseek.types import Query, QueryResult


def kept_urls(result: QueryResult) -> list[str]:
    """The URLs a result kept after the constraints, in rank order, each once."""
    seen: dict[str, None] = {}
    for hit, decision in zip(result.hits, result.decisions, strict=True):
        if decision.kept:
            seen.setdefault(hit.url, None)
    return list(seen)


def compare_with_questions(
    results: Sequence[QueryResult], search: Callable[[Query], QueryResult]
) -> tuple[list[QueryResult], int]:
    """``(results with new_urls/lost_urls set on rewritten queries, searches made)``."""
    out, searches = [], 0
    for r in results:
        q = r.query
        if q.text == q.question or r.error:
            out.append(r)
            continue
        base = search(Query(text=q.question, question=q.question))
        searches += 1
        if base.error:
            out.append(r)
            continue
        mine, theirs = kept_urls(r), kept_urls(base)
        new = tuple(u for u in mine if u not in set(theirs))
        lost = tuple(u for u in theirs if u not in set(mine))
        out.append(replace(r, new_urls=new, lost_urls=lost))
    return out, searches
