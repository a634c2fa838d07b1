from __future__ import annotations

import datetime as dt
from typing import Any

import lxml.html

from factseek.pages.pagedates import PageDates, page_dates
from factseek.pages.sources import Found
from factseek.types import DateEvidence

D = dt.date
TODAY = D(2026, 12, 1)


def dates(
    head: str = "", body: str = "", *, url: str = "https://n.example/a", lang: str = "", **kw: Any
) -> PageDates:
    attr = f' lang="{lang}"' if lang else ""
    html = f"<html{attr}><head>{head}</head><body>{body}<p>text</p></body></html>"
    return page_dates(lxml.html.document_fromstring(html), url, today=TODAY, **kw)


def by_source(ev: tuple[DateEvidence, ...]) -> dict[str, DateEvidence]:
    return {e.source: e for e in ev}


def meta(name: str, content: str) -> str:
    return f'<meta property="{name}" content="{content}">'


def test_utc_read_at_the_most_common_page_offset() -> None:
    pd = dates(
        meta("article:published_time", "2020-01-01T23:30:00Z")
        + meta("article:modified_time", "2020-01-03T10:00:00+01:00")
        + meta("og:updated_time", "2020-01-04T10:00:00+01:00")
        + meta("dcterms.modified", "2020-01-05T10:00:00-08:00")
    )
    assert pd.offset == dt.timedelta(hours=1)
    e = by_source(pd.evidence)["meta:article:published_time"]
    assert e.date == D(2020, 1, 2) and e.raw == "2020-01-01T23:30:00Z"
    # a time with its own offset keeps its day
    assert by_source(pd.evidence)["meta:dcterms.modified"].date == D(2020, 1, 5)


def test_utc_without_page_offset() -> None:
    head = meta("article:published_time", "2020-01-01T23:30:00Z")
    # no other date: the UTC day, said so
    e = by_source(dates(head).evidence)["meta:article:published_time"]
    assert e.date == D(2020, 1, 1) and e.rule == "UTC 23:30; the page gives no offset"
    # a visible local date the offset can reach decides
    pd = dates(head, '<span class="date">January 2, 2020</span>')
    assert by_source(pd.evidence)["meta:article:published_time"].date == D(2020, 1, 2)
    # ... but not one no plausible offset reaches (23:30 UTC is never the 31st)
    pd = dates(head, '<span class="date">December 31, 2019</span>')
    assert by_source(pd.evidence)["meta:article:published_time"].date == D(2020, 1, 1)
    # ... and not when the page also states the UTC day itself
    pd = dates(
        head, url="https://n.example/2020/01/01/a", body='<span class="date">2 Jan 2020</span>'
    )
    assert by_source(pd.evidence)["meta:article:published_time"].date == D(2020, 1, 1)


def test_day_month_signals_in_order() -> None:
    head = meta("date", "03/04/2021")
    # O1: another date on the page settles it (htmldate does not count)
    pd = dates(
        head,
        lang="en-US",
        url="https://n.example/2021/04/03/a",
        estimate=lambda: Found("htmldate", "2021-03-04"),
    )
    assert by_source(pd.evidence)["meta:date"].rule == "DD/MM/YYYY: matches url"
    # O2: the page's unambiguous numeric dates
    pd = dates(head, "<p>Comment, 25/12/2021</p>", lang="en-US")
    assert by_source(pd.evidence)["meta:date"].date == D(2021, 4, 3)
    # O4: the language; O5: the country domain
    assert by_source(dates(head, lang="en-US").evidence)["meta:date"].date == D(2021, 3, 4)
    assert by_source(dates(head, lang="fr").evidence)["meta:date"].date == D(2021, 4, 3)
    pd = dates(head, url="https://n.example.co.uk/a")
    assert by_source(pd.evidence)["meta:date"].rule == "DD/MM/YYYY: site domain .uk"
    pd = dates(meta("og:locale", "en_US") + head)
    assert by_source(pd.evidence)["meta:date"].date == D(2021, 3, 4)
    pd = dates(head, headers={"Content-Language": "de-DE"})
    assert by_source(pd.evidence)["meta:date"].date == D(2021, 4, 3)
    # O3: dots are day first, whatever the language
    pd = dates(meta("date", "03.04.2021"), lang="en-US")
    assert by_source(pd.evidence)["meta:date"].date == D(2021, 4, 3)
    # O6: nothing decides: the later reading, flagged
    e = by_source(dates(head, lang="en").evidence)["meta:date"]
    assert e.date == D(2021, 4, 3) and e.rule.startswith("ambiguous")


def test_json_ld_prefers_the_article() -> None:
    ld = (
        '<script type="application/ld+json">{"@graph": ['
        '{"@type": "WebSite", "datePublished": "2001-01-01"},'
        '{"@type": ["NewsArticle"], "datePublished": "2020-02-02", '
        '"comment": [{"@type": "Comment", "datePublished": "2020-02-03"}]}]}</script>'
    )
    assert by_source(dates(ld).evidence)["json-ld"].date == D(2020, 2, 2)


def test_visible_dates() -> None:
    body = (
        '<div class="site-header"><span class="date">1 December 2026</span></div>'
        '<aside><time datetime="2019-01-01">old</time></aside>'
        '<div class="related-posts"><span class="post-date">2 Feb 2019</span></div>'
        '<p class="date">3 March 2019</p>'
        '<article><p class="byline">Updated 5 May 2019</p><time datetime="2019-04-04T10:00">x</time></article>'
    )
    ev = by_source(dates("", body).evidence)
    assert ev["text"].date == D(2019, 4, 4)  # in the article first
    assert ev["text:updated"].date == D(2019, 5, 5)


def test_sources_outside_the_tree() -> None:
    pd = page_dates(
        None,
        "https://web.archive.org/web/20200110013000/https://n.example/2020/01/08/a",
        headers={"Last-Modified": "Thu, 09 Jan 2020 23:00:00 GMT"},
        today=TODAY,
    )
    ev = by_source(pd.evidence)
    assert ev["url"].date == D(2020, 1, 8) and ev["url"].rule == "archived page's URL"
    assert ev["last-modified"].date == D(2020, 1, 9)
    assert ev["archive"].date == D(2020, 1, 10)  # 01:30 UTC: no plausible zone is on the 11th yet
    assert pd.choice.date == D(2020, 1, 8)


def test_htmldate_is_asked_only_when_it_could_change_the_choice() -> None:
    calls: list[int] = []

    def estimate() -> Found:
        calls.append(1)
        return Found("htmldate", "2020-01-09")

    head = meta("article:published_time", "2020-01-10") + meta("og:published_time", "2020-01-10")
    pd = dates(head, url="https://n.example/2020/01/10/a", estimate=estimate)
    assert calls == [] and pd.choice.date == D(2020, 1, 10)  # 1 vote (meta) + url: a lead of 2
    pd = dates(head, url="https://n.example/2020/01/09/a", estimate=estimate)
    assert calls == [1]  # meta and the URL tie: htmldate decides
    assert pd.choice.date == D(2020, 1, 9) and "htmldate" in pd.choice.rule
    # an htmldate date equal to either reading of an ambiguous date is no second source
    pd = dates(
        meta("date", "03/04/2021"), lang="en", estimate=lambda: Found("htmldate", "2021-03-04")
    )
    assert by_source(pd.evidence)["htmldate"].rule.startswith("ambiguous")
    assert pd.choice.date == D(2021, 4, 3)  # a tie of two ambiguous readings: the later


def test_a_post_id_dates_the_post() -> None:
    url = "https://twitter.com/Reuters/status/1281836879789404160/photo/1"  # 2020-07-11 06:25 UTC
    calls: list[int] = []

    def estimate() -> Found:
        calls.append(1)
        return Found("htmldate:heuristic", "2020-07-15")

    pd = dates(url=url, estimate=estimate)
    assert pd.choice.date == D(2020, 7, 11) and pd.choice.source == "post-id"
    assert calls == [] and pd.confidence == ""  # exact: htmldate's guess cannot change it
    # one printed date elsewhere on the page (an embedded older post) does not outvote it ...
    pd = dates(body='<span class="date">July 2, 2020</span>', url=url)
    assert pd.choice.date == D(2020, 7, 11)
    # ... and a UTC time is read at the page's own offset like any other
    pd = dates(meta("article:modified_time", "2020-07-11T20:00:00-08:00"), url=url)
    assert by_source(pd.evidence)["post-id"].date == D(2020, 7, 10)
    # an archived copy is dated by the post it archives
    pd = dates(url="https://web.archive.org/web/20200801000000/" + url)
    assert pd.choice.date == D(2020, 7, 11)


def test_utc_read_at_the_offset_of_the_times_in_the_pages_scripts() -> None:
    head = meta("article:published_time", "2020-05-02T02:54:29Z")
    schedule = (
        '<script>{"items": [{"date": "Fri, 01 May 2020 23:00:00 -0400"},'
        ' {"date": "Sat, 02 May 2020 06:00:00 -0400"}, {"at": "2020-05-01T20:00:00+01:00"}]}'
        "</script>"
    )
    e = by_source(dates(head + schedule).evidence)["meta:article:published_time"]
    assert e.date == D(2020, 5, 1)  # 22:54 in New York, where the site's clock runs
    assert e.rule == "UTC 02:54 read at the offset of the times in the page's scripts -04:00"
    # a day the page states itself comes first (T3: here the UTC day), not the scripts
    pd = dates(head + schedule, '<span class="date">May 2, 2020</span>')
    assert by_source(pd.evidence)["meta:article:published_time"].date == D(2020, 5, 2)
    # scripts with UTC times only, or none: the UTC day
    utc_only = '<script>{"date": "2020-05-01T23:00:00+00:00"}</script>'
    assert by_source(dates(head + utc_only).evidence)["meta:article:published_time"].date == D(
        2020, 5, 2
    )


def _masthead_page(masthead: str, *, article: str = "") -> PageDates:
    body = (
        f'<div class="top"><ul><li><i class="icon"></i>{masthead}</li></ul></div>'
        f"<h1>Headline</h1>{article}"
    )
    guess = Found("htmldate", "2020-12-08")
    return dates("", body, estimate=lambda: guess)


def test_a_mastheads_date_for_today_is_when_the_page_was_served_not_published() -> None:
    # the story's own date, printed away from the headline (found by the page-wide scan)
    aside = "<p>Text.</p>" * 4 + '<div><span class="time">13 Oct 2020 18:29</span></div>'
    pd = _masthead_page("Tuesday, (08 Dec 2020)", article=aside)
    served = by_source(pd.evidence)["masthead"]
    assert served.date == D(2020, 12, 8) and "served" in served.rule
    assert pd.choice.date == D(2020, 10, 13)  # the one date left that votes
    # nothing else: the served day is an upper bound, the page existed then
    alone = _masthead_page("Tuesday, (08 Dec 2020)")
    assert alone.choice.date == D(2020, 12, 8) and alone.choice.rule.startswith("upper bound")
    # a date without a weekday above the headline is not a masthead's "today": a vote
    plain = _masthead_page("08 Dec 2020", article=aside)
    assert "masthead" not in by_source(plain.evidence)
    assert plain.choice.date == D(2020, 12, 8)
