"""The temporal and site constraints, and constrained search with native/emulated filters."""

from __future__ import annotations

import datetime as dt

import pytest

from factseek.constraints.hits import (
    DEFAULT_CONSTRAINTS,
    Constraints,
    check,
    date_reason,
    removed_counts,
    site_reason,
)
from factseek.errors import ConfigError, SearchError
from factseek.search.base import Capabilities, FunctionSearch, constrained_search, make_backend
from factseek.types import ConstraintDecision, Hit, Query

DAY = dt.date(2024, 3, 1)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://www.politifact.com/factchecks/2024/x", "excluded-site:politifact.com"),
        ("https://politifact.com/x", "excluded-site:politifact.com"),
        ("https://m.snopes.com/fact/x", "excluded-site:snopes.com"),
        (
            "https://www.washingtonpost.com/news/fact-checker/2020/x",
            "excluded-site:washingtonpost.com/news/fact-checker",
        ),
        ("https://apnews.com/hub/ap-fact-check/abc", "excluded-site:apnews.com/hub/ap-fact-check"),
        ("https://www.reuters.com/fact-check/abc", "excluded-site:reuters.com/fact-check"),
        ("https://fullfact.org/health/x", "excluded-site:fullfact.org"),
        ("https://www.factcheck.org/2024/x", "excluded-site:factcheck.org"),
        ("https://news.example/2024/fact-check-the-mayor", "excluded-marker:fact-check"),
        ("https://news.example/FactCheck/mayor", "excluded-marker:factcheck"),
        ("https://city.example/budget.PDF", "pdf"),
        ("https://www.youtube.com/watch?v=1", "video"),
        ("https://youtu.be/abc", "video"),
    ],
)
def test_site_constraint_removes(url, reason):
    assert site_reason(url, DEFAULT_CONSTRAINTS) == reason


@pytest.mark.parametrize(
    "url",
    [
        "https://www.washingtonpost.com/politics/2020/x",  # same host, not the fact-checker path
        "https://www.reuters.com/world/x",
        "https://notpolitifact.com.example/x",
        "https://news.example/pdf-guide.html",
    ],
)
def test_site_constraint_keeps(url):
    assert site_reason(url, DEFAULT_CONSTRAINTS) is None


def test_user_sites_extend_the_list():
    c = DEFAULT_CONSTRAINTS.with_sites("https://www.Ledger.example/", "blog.example/opinion")
    assert site_reason("https://ledger.example/a", c) == "excluded-site:ledger.example"
    assert site_reason("https://blog.example/opinion/1", c) == "excluded-site:blog.example/opinion"
    assert site_reason("https://blog.example/news/1", c) is None


def test_temporal_constraint_is_strict_and_undated_policy_explicit():
    c = Constraints(before=DAY)
    assert date_reason(dt.date(2024, 2, 29), c) is None
    assert date_reason(DAY, c) == "claim-day"  # same day is not before, and says so
    assert date_reason(DAY + dt.timedelta(days=1), c) == "after-claim-date"
    assert date_reason(None, c) == "undated"
    assert date_reason(None, Constraints(before=DAY, undated="keep")) is None
    assert date_reason(dt.date(2030, 1, 1), Constraints(before=None)) is None


def test_check_reports_site_before_date():
    hit = Hit(url="https://www.snopes.com/x", published=dt.date(2025, 1, 1))
    d = check(hit, Constraints(before=DAY))
    assert not d.kept and d.reason == "excluded-site:snopes.com"


def test_removed_counts_counts_distinct_urls():
    ds = [
        ConstraintDecision(url="a", kept=False, reason="excluded-site:snopes.com"),
        ConstraintDecision(url="a", kept=False, reason="excluded-site:snopes.com"),
        ConstraintDecision(url="b", kept=False, reason="after-claim-date"),
        ConstraintDecision(url="c", kept=True, reason="ok"),
    ]
    assert removed_counts(ds) == {"after-claim-date": 1, "excluded-site": 1}


def _hits(n: int) -> list[Hit]:
    out = []
    for i in range(n):
        site = "www.snopes.com" if i % 3 == 0 else "news.example"
        date = dt.date(2024, 1, 1) if i % 2 else dt.date(2024, 6, 1)
        out.append(Hit(url=f"https://{site}/{i}", published=date, rank=i + 1))
    return out


def test_emulated_constraints_overfetch_and_filter():
    asked = []

    def fn(q, k):
        asked.append(k)
        return _hits(k)

    backend = FunctionSearch(fn, capabilities=Capabilities(max_results=50))
    r = constrained_search(backend, Query(text="q", question="q"), 2, Constraints(before=DAY))
    assert asked == [6]  # 3x over-fetch
    assert r.emulated == ("date", "domain") and r.native == ()
    kept = [h.url for h, d in zip(r.hits, r.decisions, strict=True) if d.kept]
    assert kept == ["https://news.example/1", "https://news.example/5"]


def test_native_filters_are_still_checked_and_audited():
    class Native:
        name = "native"
        capabilities = Capabilities(
            date_filter=True, domain_exclusion=True, max_results=100, audit=True
        )

        def search(self, query, k, constraints):
            return _hits(12)[:k]  # a buggy backend that ignores its filters

    r = constrained_search(Native(), Query(text="q", question="q"), 5, Constraints(before=DAY))
    assert r.native == ("date", "domain") and r.emulated == ()
    kept = [h for h, d in zip(r.hits, r.decisions, strict=True) if d.kept]
    assert kept and all("snopes" not in h.url and h.published < DAY for h in kept)


def test_search_errors_become_part_of_the_result():
    def fn(q, k):
        raise SearchError("quota exceeded")

    r = constrained_search(FunctionSearch(fn), Query(text="q", question="q"), 3, Constraints())
    assert r.error == "quota exceeded" and r.hits == ()


def test_unknown_backend_lists_the_registry():
    with pytest.raises(ConfigError, match=r"choose one of: .*local"):
        make_backend("altavista")


def test_archive_copies_are_judged_by_the_archived_url() -> None:
    from factseek.constraints.hits import check, site_reason, snapshot_before

    c = Constraints(before=dt.date(2020, 3, 15))
    wb = "https://web.archive.org/web/20200110123000/"
    assert site_reason(wb + "https://www.snopes.com/fact-check/x/", c) == "excluded-site:snopes.com"
    assert site_reason(wb + "http://example.com/report.PDF", c) == "pdf"
    assert site_reason(wb + "https://youtube.com/watch?v=1", c) == "video"
    assert site_reason(wb + "https://example.com/news/story", c) is None
    # an undated hit: the snapshot dates it when it settles the question
    assert check(Hit(url=wb + "https://example.com/a"), c).kept
    late = "https://web.archive.org/web/20200314150000/https://example.com/a"
    assert not snapshot_before(late, dt.date(2020, 3, 15))  # 15:00 UTC is the 15th at +09:00
    d = check(Hit(url=late), c)
    assert not d.kept and d.reason == "undated"
    # a partial timestamp says nothing about when the copy was taken
    assert (
        check(Hit(url="https://web.archive.org/web/2019/https://example.com/a"), c).reason
        == "undated"
    )
    # the hit's own date still wins
    assert check(
        Hit(url=wb + "https://example.com/a", published=dt.date(2020, 4, 1)), c
    ).reason == ("after-claim-date")
