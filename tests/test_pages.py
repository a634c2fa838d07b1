"""Hand-written pages, one or more per failure class of issue 13, with their true date and text.

``tests/pages/pages.json`` lists each page: file, class, URL, HTTP headers, true publication date
(null when the page states none) and the article text a reader would call the article. The same
set is the first half of ``bench/bench_dates.py``.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from factseek.constraints.hits import Constraints
from factseek.constraints.temporal import TemporalConfig, post_fetch_check
from factseek.metrics.extraction import token_prf
from factseek.pages.extract import extract_html
from factseek.report import render_html, render_markdown
from factseek.types import Claim, Document, Hit, Report

PAGES_DIR = Path(__file__).parent / "pages"
PAGES: list[dict[str, Any]] = json.loads((PAGES_DIR / "pages.json").read_text(encoding="utf-8"))
BY_NAME = {p["file"].removesuffix(".html"): p for p in PAGES}
# pages whose stated dates cannot give the true day: the policy's answer is asserted on its own below
NOT_EXACT = {"ambiguous-no-signal", "conflict-across-cutoff", "archive-undated"}
_FLAG = TemporalConfig(on_conflict="flag")


def extract(name: str) -> Document:
    p = BY_NAME[name]
    return extract_html((PAGES_DIR / p["file"]).read_bytes(), p["url"], headers=p["headers"])


def test_every_class_has_pages() -> None:
    classes = {p["class"] for p in PAGES}
    assert classes >= {
        "xml-declaration",
        "encoding",
        "fragment",
        "time-zone",
        "conflict",
        "day-month",
        "cjk",
        "visible-text",
        "archive",
    }


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_page_text(name: str) -> None:
    doc = extract(name)
    _, recall, f1 = token_prf(doc.text, BY_NAME[name]["text"])
    assert f1 >= 0.9, (name, doc.meta["extractor"], doc.text[:300])
    assert recall >= 0.9
    assert doc.meta["extractor"] == "trafilatura"  # no page falls back to the whole-page dump


@pytest.mark.parametrize("name", sorted(set(BY_NAME) - NOT_EXACT))
def test_page_date(name: str) -> None:
    doc = extract(name)
    assert doc.published == dt.date.fromisoformat(BY_NAME[name]["date"]), doc.meta["date_rule"]
    assert doc.meta["date_source"] and doc.meta["date_rule"]
    assert "date_warning" not in doc.meta


def test_xml_declaration_keeps_every_structured_source() -> None:
    doc = extract("xhtml-declaration")
    sources = {e.source for e in doc.date_evidence}
    assert {"json-ld", "json-ld:dateModified", "meta:article:published_time"} <= sources
    # the same page as a str (an XML declaration in a unicode string used to defeat lxml)
    text = (PAGES_DIR / "xhtml-declaration.html").read_text(encoding="utf-8")
    assert (
        extract_html(text, BY_NAME["xhtml-declaration"]["url"]).date_evidence == doc.date_evidence
    )


def test_odd_encodings_decode() -> None:
    assert extract("xml-declaration-latin1").title == "La mairie rénove le marché couvert"
    assert extract("utf16-bom").title == "Volunteers clear the canal towpath"
    assert "駅前広場" in extract("japanese-shift-jis").text


def test_utc_time_is_read_in_the_pages_own_zone() -> None:
    ev = {e.source: e for e in extract("utc-near-midnight-page-offset").date_evidence}
    assert ev["json-ld"].raw == "2019-10-18T22:04:00Z"  # the original string is kept
    assert ev["json-ld"].date == dt.date(2019, 10, 19)
    assert ev["json-ld"].rule == "UTC 22:04 read at the page's offset +02:00"
    assert ev["json-ld:dateModified"].date == dt.date(2019, 10, 19)
    # no offset on the page at all: the URL's day, which an offset can reach, decides
    ev = {e.source: e for e in extract("utc-near-midnight-url").date_evidence}
    assert ev["json-ld"].date == ev["meta:article:published_time"].date == dt.date(2019, 10, 19)
    assert "read as the page's own day" in ev["json-ld"].rule
    # west of Greenwich: 04:30Z on the 1st is the 28th at the page's -05:00
    ev = {e.source: e for e in extract("negative-offset-near-midnight").date_evidence}
    assert ev["json-ld"].date == dt.date(2021, 2, 28)


def test_agreeing_sources_outvote_an_odd_json_ld() -> None:
    for name, odd in (("jsonld-odd-3-days", "2018-05-07"), ("jsonld-odd-3-years", "2016-03-02")):
        doc = extract(name)
        assert doc.meta["date_rule"].startswith("majority: ")
        assert f"json-ld {odd}" in doc.meta["date_rule"]


def test_day_month_order_from_the_page() -> None:
    ev = {e.source: e for e in extract("mmdd-en-us").date_evidence}
    assert ev["meta:date"].date == dt.date(2023, 11, 1)
    assert ev["meta:date"].rule.startswith("MM/DD/YYYY: page language en-us")
    ev = {e.source: e for e in extract("ddmm-en-gb").date_evidence}
    assert ev["meta:date"].rule.startswith("DD/MM/YYYY: page language en-gb")
    ev = {e.source: e for e in extract("ddmm-other-dates").date_evidence}
    assert "other numeric dates are day first (e.g. 14/04/2021)" in ev["meta:date"].rule
    ev = {e.source: e for e in extract("dotted-german").date_evidence}
    assert ev["text"].date == dt.date(2020, 3, 5) and ev["text"].rule.startswith("DD.MM.YYYY")


def test_ambiguous_date_is_flagged_not_guessed_silently() -> None:
    doc = extract("ambiguous-no-signal")
    ev = {e.source: e for e in doc.date_evidence}
    assert ev["meta:date"].rule == (
        "ambiguous day/month order: read as the later 2020-06-05 (2020-05-06 the other way)"
    )
    assert doc.published == dt.date(2020, 6, 5)  # the later reading: the safe side
    _, notes = post_fetch_check(
        Hit(url=doc.url), doc, Constraints(before=dt.date(2020, 6, 1)), config=_FLAG
    )
    assert any("ambiguous day/month order" in n for n in notes)


def test_visible_text_skips_mastheads_and_related_stories() -> None:
    doc = extract("visible-text-only")
    ev = {e.source: e for e in doc.date_evidence}
    assert ev["text"].raw.endswith("Published March 5, 2020")
    assert doc.published == dt.date(2020, 3, 5)


def test_archive_copy() -> None:
    doc = extract("archive-copy")
    assert doc.domain == "stadium-news.example.com"
    ev = {e.source: e for e in doc.date_evidence}
    assert ev["url"].date == dt.date(2020, 1, 8)  # the archived page's URL
    assert ev["archive"].raw == "2020-01-10T12:30:00Z"
    doc = extract("archive-undated")
    assert doc.published == dt.date(2020, 1, 11)  # 12:30 UTC can be the 11th east of +11:30
    assert doc.meta["date_rule"].startswith("upper bound")
    keep, _ = post_fetch_check(Hit(url=doc.url), doc, Constraints(before=dt.date(2020, 1, 12)))
    drop, _ = post_fetch_check(Hit(url=doc.url), doc, Constraints(before=dt.date(2020, 1, 11)))
    assert keep.kept and not drop.kept


def test_disagreeing_sources_on_both_sides_of_a_cutoff() -> None:
    doc = extract("conflict-across-cutoff")  # meta 2020-03-10, URL 2020-03-20
    hit = Hit(url=doc.url)
    # cut-off between them: removed, whatever the chosen date, and the note says why
    d, notes = post_fetch_check(hit, doc, Constraints(before=dt.date(2020, 3, 15)))
    assert not d.kept and d.reason in ("date-conflict", "after-claim-date")
    assert any("meta:article:published_time 2020-03-10" in n for n in notes)
    # both before the cut-off: kept; both after: removed as after the claim
    assert post_fetch_check(hit, doc, Constraints(before=dt.date(2020, 3, 21)))[0].kept
    d, _ = post_fetch_check(hit, doc, Constraints(before=dt.date(2020, 3, 9)))
    assert d.reason == "after-claim-date"


def test_updated_after_cutoff_removes_or_is_noted() -> None:
    doc = extract("updated-after")
    ev = {e.source: e for e in doc.date_evidence}
    assert ev["text:updated"].date == dt.date(2020, 4, 2) == doc.modified
    cut = Constraints(before=dt.date(2020, 3, 15))
    d, notes = post_fetch_check(Hit(url=doc.url), doc, cut)  # the default basis: modified
    assert not d.kept and d.reason == "modified-after-claim"
    assert any("modified 2020-04-02 (text:updated)" in n for n in notes)
    paper = TemporalConfig(date_basis="published")
    d, notes = post_fetch_check(Hit(url=doc.url), doc, cut, config=paper)
    assert d.kept
    assert any("modified on or after 2020-03-15" in n and "text:updated" in n for n in notes)


def test_report_shows_each_dates_source_and_rule() -> None:
    docs = (extract("utc-near-midnight-page-offset"), extract("ambiguous-no-signal"))
    report = Report(claim=Claim(text="x", date=dt.date(2024, 1, 1)), documents=docs)
    md, html = render_markdown(report), render_html(report)
    for out in (md, html):
        assert "Page dates" in out
        assert "2019-10-19" in out and "json-ld" in out
        assert "UTC 22:04 read at the page" in out
        assert "ambiguous day/month order" in out
    assert "<script" not in html.split("<body>", 1)[1]
