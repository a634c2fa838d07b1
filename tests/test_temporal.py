from __future__ import annotations

import datetime as dt

from factseek.constraints.hits import Constraints
from factseek.constraints.temporal import TemporalConfig, post_fetch_check
from factseek.types import DateEvidence, Document, Hit

D = dt.date
CUT = Constraints(before=D(2020, 3, 15))
URL = "https://news.example/a"


def hit(published: dt.date | None = None) -> Hit:
    return Hit(url=URL, published=published)


def doc(*evidence: tuple[str, dt.date], published: dt.date | None = None) -> Document:
    ev = tuple(DateEvidence(source=s, date=d) for s, d in evidence)
    if published is None and evidence:
        published = ev[0].date
    return Document(url=URL, text="t", published=published, date_evidence=ev)


def test_strictly_before() -> None:
    d, notes = post_fetch_check(hit(), doc(("json-ld", D(2020, 3, 14))), CUT)
    assert d.kept and d.reason == "ok" and notes == ()
    d, _ = post_fetch_check(hit(), doc(("json-ld", D(2020, 3, 16))), CUT)
    assert not d.kept and d.reason == "after-claim-date"


def test_the_claim_day_itself_is_not_before_the_claim() -> None:
    # the policy: a page dated on the claim's day is removed, with its own reason and words
    from factseek.constraints.hits import check
    from factseek.report import reason_words

    d, _ = post_fetch_check(hit(), doc(("json-ld", D(2020, 3, 15))), CUT)
    assert not d.kept and d.reason == "claim-day"
    assert reason_words(d.reason) == "published on the claim's day"
    # the provider's date, before fetching, follows the same rule
    assert check(hit(D(2020, 3, 15)), CUT).reason == "claim-day"
    assert check(hit(D(2020, 3, 16)), CUT).reason == "after-claim-date"
    assert check(hit(D(2020, 3, 14)), CUT).kept
    # a page with no date of its own dated by the provider on the claim's day
    d, _ = post_fetch_check(hit(D(2020, 3, 15)), doc(), CUT)
    assert not d.kept and d.reason == "claim-day"


def test_no_cutoff_keeps_everything() -> None:
    d, notes = post_fetch_check(hit(), doc(), Constraints(before=None))
    assert d.kept and notes == ()


def test_undated_policy() -> None:
    d, notes = post_fetch_check(hit(), doc(), CUT)
    assert not d.kept and d.reason == "undated" and notes == ()
    d, notes = post_fetch_check(hit(), doc(), Constraints(before=D(2020, 3, 15), undated="keep"))
    assert d.kept and any("undated page kept" in n for n in notes)


def test_provider_date_used_when_page_has_none() -> None:
    d, notes = post_fetch_check(hit(D(2020, 1, 1)), doc(), CUT)
    assert d.kept and "using the provider's 2020-01-01" in notes[0]
    d, _ = post_fetch_check(hit(D(2020, 5, 1)), doc(), CUT)
    assert not d.kept and d.reason == "after-claim-date"


def test_provider_before_page_after_is_flagged_and_dropped() -> None:
    d, notes = post_fetch_check(hit(D(2020, 1, 1)), doc(("meta:date", D(2020, 6, 1))), CUT)
    assert not d.kept and d.reason == "after-claim-date"
    assert notes == (
        f"possible leakage: {URL}: provider dated it 2020-01-01 but the page says 2020-06-01",
    )


def test_disagreeing_sources_across_cutoff_are_treated_as_after() -> None:
    page = doc(("json-ld", D(2020, 1, 1)), ("url", D(2020, 4, 1)), published=D(2020, 1, 1))
    d, notes = post_fetch_check(hit(), page, CUT)
    assert not d.kept and d.reason == "date-conflict"
    assert len(notes) == 1 and "removed: date sources disagree across 2020-03-15" in notes[0]
    assert "before: json-ld 2020-01-01; on or after: url 2020-04-01" in notes[0]
    assert "treated as after the cut-off" in notes[0]
    # as undated: the undated policy decides
    undated = TemporalConfig(on_conflict="undated")
    d, notes = post_fetch_check(hit(), page, CUT, config=undated)
    assert not d.kept and d.reason == "date-conflict" and "undated policy: drop" in notes[0]
    keep = Constraints(before=D(2020, 3, 15), undated="keep")
    d, notes = post_fetch_check(hit(), page, keep, config=undated)
    assert d.kept and "possible leakage" in notes[0] and "undated policy: keep" in notes[0]
    d, notes = post_fetch_check(hit(), page, CUT, config=TemporalConfig(on_conflict="flag"))
    assert d.kept and "flagged only" in notes[0]


def test_agreeing_sources_not_flagged() -> None:
    page = doc(("json-ld", D(2020, 1, 1)), ("url", D(2019, 12, 31)), ("htmldate", D(2020, 1, 1)))
    assert post_fetch_check(hit(D(2020, 1, 2)), page, CUT)[1] == ()


def test_modified_after_cutoff_flagged() -> None:
    page = doc(("json-ld", D(2020, 1, 1)), ("last-modified", D(2021, 1, 1)))
    d, notes = post_fetch_check(hit(), page, CUT)
    assert d.kept
    assert notes == (
        f"possible leakage: {URL}: modified on or after 2020-03-15 (last-modified 2021-01-01)",
    )


def test_on_conflict_reaches_fetched_pages_through_check_config() -> None:
    import pytest

    from factseek.api import check_config
    from factseek.errors import ConfigError
    from factseek.pipeline import Parts, run
    from factseek.search.base import FunctionSearch
    from factseek.summarize.extractive import ExtractiveSummarizer
    from factseek.types import Claim, Question

    page = doc(("json-ld", D(2020, 1, 1)), ("url", D(2020, 4, 1)), published=D(2020, 1, 1))

    class OneQuestion:
        name = "one"

        def decompose(self, claim: Claim) -> list[Question]:
            return [Question(text="Did the bridge open?")]

    class Fetch:
        def fetch(self, urls):
            return [page for u in urls if u == URL], []

    parts = Parts(
        search=FunctionSearch(lambda q, k: [Hit(url=URL)]),
        decomposer=OneQuestion(),
        summarizer=ExtractiveSummarizer(),
        fetcher=Fetch(),
    )
    claim = Claim(text="The bridge opened.", date=D(2020, 3, 15))
    kept = {}
    for policy in ("after", "undated", "flag"):
        for undated in ("drop", "keep"):
            cfg = check_config(on_conflict=policy, undated=undated)
            report = run(claim, parts, cfg)
            kept[policy, undated] = [d.url for d in report.documents]
            assert report.config["temporal"]["on_conflict"] == policy
    assert kept == {
        ("after", "drop"): [],
        ("after", "keep"): [],
        ("undated", "drop"): [],
        ("undated", "keep"): [URL],
        ("flag", "drop"): [URL],
        ("flag", "keep"): [URL],
    }
    with pytest.raises(ConfigError, match="date-conflict policy 'sometimes'"):
        check_config(on_conflict="sometimes")
