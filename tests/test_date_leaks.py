"""Pages whose date came out too early, on small made-up pages (issue 47, item 8).

Each page states no modification date, and somewhere holds a date *before* its own: another
story's (a related list, a teaser, a link's address, a JSON-LD video), a year or a month alone
(a copyright line, an upload folder), a date in the prose under the headline, or a change that
the same line as the publication states. factseek must give the page's own date, or no date
(the undated policy then decides: unknown is safer than too early), never the earlier one.
"""

from __future__ import annotations

import datetime as dt

import pytest

from factseek.constraints.hits import Constraints
from factseek.constraints.temporal import constraint_date, post_fetch_check
from factseek.pages.extract import extract_html
from factseek.types import Document, Hit

D = dt.date
OWN = D(2021, 6, 15)  # the page's own publication date
EARLY = D(2019, 3, 12)  # another story's date on the same page
URL = "https://news.example/news/council-budget"
TEXT = "<p>" + " ".join(["The council voted on the new budget plan for the city."] * 12) + "</p>"


def page(body: str, head: str = "") -> str:
    return f"<html lang='en'><head><title>Council budget</title>{head}</head><body>{body}</body></html>"


def related(cls: str) -> str:
    return (
        f"<div class='{cls}'><h3>Read also</h3><ul>"
        "<li><a href='https://news.example/2019/03/12/older-story/'>Older story</a> "
        "<time datetime='2019-03-12'>March 12, 2019</time></li>"
        "<li><a href='https://news.example/2018/11/02/another/'>Another story</a> "
        "<span class='date'>November 2, 2018</span></li></ul></div>"
    )


def ld(obj: str) -> str:
    return f'<script type="application/ld+json">{obj}</script>'


def extract(html: str) -> Document:
    return extract_html(html, URL)


#: name -> (page, the date factseek must give: the page's own, or None for no date)
CASES: dict[str, tuple[str, D | None]] = {
    # a list of other stories inside the article, its class unknown to the block list
    "related list, no own date": (
        page(f"<article><h1>Council budget</h1>{related('also-read')}{TEXT}</article>"),
        None,
    ),
    "related list before the byline": (
        page(
            f"<article><h1>Council budget</h1>{related('top-stories')}"
            f"<p class='byline'>By Ann Lee, June 15, 2021</p>{TEXT}</article>"
        ),
        OWN,
    ),
    "sidebar list of other stories": (
        page(
            f"<article><h1>Council budget</h1>{TEXT}</article><div class='sidebar'><ul>"
            "<li><a href='/a'>Older story</a> <span class='date'>March 3, 2015</span></li>"
            "<li><a href='/b'>Older story</a> <span class='date'>February 11, 2015</span></li>"
            "</ul></div>"
        ),
        None,  # htmldate's markup search took the list's first date
    ),
    "list of other stories in a responsive block": (
        page(
            f"<article><h1>Council budget</h1>{TEXT}</article><div class='grid-responsive'><ul>"
            "<li><a href='/a'>Older story</a> <span class='date'>March 3, 2015</span></li>"
            "<li><a href='/b'>Older story</a> <span class='date'>February 11, 2015</span></li>"
            "</ul></div>"
        ),
        None,  # "responsive" is no comment thread ("responses")
    ),
    "comment thread": (
        page(
            f"<article><h1>Council budget</h1>{TEXT}</article><div class='comments'>"
            "<div class='comment'><a href='/u/ann'>Ann</a> <span class='date'>June 15, 2021</span>"
            "<p>Good.</p></div><div class='comment'><a href='/u/bo'>Bo</a> "
            "<span class='date'>June 16, 2021</span><p>Agreed.</p></div></div>"
        ),
        OWN,  # replies come on or after the page: a guess, not another story's date
    ),
    # another story's <article> (a teaser card) before the headline
    "teaser article before the headline": (
        page(
            "<div class='top-stories'><article class='post'><h2><a href='/2019/03/12/older/'>"
            "Older</a></h2><time datetime='2019-03-12'>March 12, 2019</time></article></div>"
            f"<div id='content'><h1>Council budget</h1>{TEXT}</div>"
        ),
        None,
    ),
    "teaser article, then the page's article": (
        page(
            "<div class='top-stories'><article class='post'><h2><a href='/2019/03/12/older/'>"
            "Older</a></h2><time datetime='2019-03-12'>March 12, 2019</time></article></div>"
            f"<article><h1>Council budget</h1><p class='byline'>June 15, 2021</p>{TEXT}</article>"
        ),
        OWN,
    ),
    # htmldate's heuristic search: another page's address, a year or a month alone
    "links to dated stories": (
        page(
            f"<div id='content'><h1>Council budget</h1>{TEXT}<ul>"
            "<li><a href='https://news.example/2019/03/12/older-story/'>Older story</a></li>"
            "<li><a href='https://news.example/2019/03/12/x/'>Another</a></li></ul></div>"
        ),
        None,
    ),
    "upload folder of an image": (
        page(
            "<div id='content'><h1>Council budget</h1>"
            f"<img src='https://news.example/wp-content/uploads/2019/03/photo.jpg'>{TEXT}</div>"
        ),
        None,
    ),
    "copyright line": (
        page(
            f"<div id='content'><h1>Council budget</h1>{TEXT}</div><div>© 2021 News Example</div>"
        ),
        None,
    ),
    "copyright range": (
        page(f"<div id='content'><h1>Council budget</h1>{TEXT}</div><p>Copyright 2009-2021</p>"),
        None,
    ),
    "month and year in the text": (
        page(f"<div id='content'><h1>Council budget</h1>{TEXT}<p>First drafted 03/2019.</p></div>"),
        None,
    ),
    # JSON-LD: two articles described on one page; a video nested in the article
    "JSON-LD graph of two articles": (
        page(
            f"<div><h1>Council budget</h1>{TEXT}</div>",
            ld(
                '{"@graph":[{"@type":"NewsArticle","headline":"Older","datePublished":"2019-03-12"},'
                '{"@type":"NewsArticle","headline":"Council budget","datePublished":"2021-06-15"}]}'
            ),
        ),
        OWN,
    ),
    "JSON-LD list of other articles": (
        page(
            f"<div><h1>Council budget</h1>{TEXT}</div>",
            ld(
                '{"@type":"WebPage","datePublished":"2021-06-15","mainEntity":{"@type":"ItemList",'
                '"itemListElement":[{"@type":"NewsArticle","datePublished":"2019-03-12"}]}}'
            ),
        ),
        OWN,
    ),
    "JSON-LD video nested in the article": (
        page(
            f"<div><h1>Council budget</h1>{TEXT}</div>",
            ld(
                '{"@type":"NewsArticle","video":{"@type":"VideoObject",'
                '"uploadDate":"2019-03-12","datePublished":"2019-03-12"}}'
            ),
        ),
        None,
    ),
    # a line after the headline: an older date in the text, once the text has begun
    "dated paragraph after the text began": (
        page(
            f"<main><h1>Council budget</h1>{TEXT}<p>See the 2019 report of 12 March 2019.</p>"
            "</main><footer><p>Page last updated: 20 June 2021</p></footer>"
        ),
        D(2021, 6, 20),  # htmldate reads the footer's change: late, the safe side
    ),
}


@pytest.fixture(scope="module")
def docs() -> dict[str, Document]:
    return {name: extract(html) for name, (html, _) in CASES.items()}


@pytest.mark.parametrize("name", list(CASES))
def test_no_earlier_date_than_the_pages_own(docs: dict[str, Document], name: str) -> None:
    doc, want = docs[name], CASES[name][1]
    assert doc.published == want, doc.meta
    assert constraint_date(doc) == want


@pytest.mark.parametrize("name", [n for n, (_, want) in CASES.items() if want is None])
def test_a_page_left_without_a_date_follows_the_undated_policy(
    docs: dict[str, Document], name: str
) -> None:
    """A claim between the earlier date and the page's own: the page is not kept as if it were
    from before the claim (it was, with the earlier date); ``undated="keep"`` keeps it, noted."""
    doc = docs[name]
    claim = D(2020, 1, 1)
    drop, _ = post_fetch_check(Hit(url=URL), doc, Constraints(before=claim))
    assert (drop.kept, drop.reason) == (False, "undated")
    keep, notes = post_fetch_check(Hit(url=URL), doc, Constraints(before=claim, undated="keep"))
    assert keep.kept and any("undated page kept" in n for n in notes)


def test_htmldates_estimate_set_aside_is_named() -> None:
    doc = extract(CASES["links to dated stories"][0])
    assert "2019-03-12 set aside" in doc.meta["date_set_aside"]
    assert "link to another page" in doc.meta["date_set_aside"]
    _, notes = post_fetch_check(Hit(url=URL), doc, Constraints(before=D(2020, 1, 1)))
    assert any("set aside" in n for n in notes)
    doc = extract(CASES["copyright line"][0])
    assert "a year or a month alone" in doc.meta["date_set_aside"]


def test_a_guess_the_page_writes_in_full_stays_a_guess() -> None:
    """The heuristic search's date that the page writes in full (a script that prints it, a
    sentence of the text) is still a guess, flagged, not set aside."""
    for body in (
        f"<div id='content'><h1>Council budget</h1>{TEXT}</div>"
        '<script>showDate("2021/06/15 10:04:00")</script>',
        f"<div id='content'><h1>Council budget</h1><p>The plan was first drafted on 12 March 2019.</p>"
        f"{TEXT}</div>",
    ):
        doc = extract(page(body))
        assert doc.published is not None and doc.meta["date_source"] == "htmldate:heuristic"
        assert doc.meta["date_confidence"] == "low" and "date_set_aside" not in doc.meta


def test_a_sentence_under_the_headline_is_no_dateline() -> None:
    doc = extract(
        page(
            f"<div id='content'><h1>Council budget</h1><p>The plan was first drafted on "
            f"March 12, 2019.</p>{TEXT}</div>"
        )
    )
    assert doc.meta["date_source"] != "text"  # at most htmldate's guess, flagged
    assert doc.meta["date_confidence"] == "low"
    byline = extract(
        page(
            f"<div id='content'><h1>Council budget</h1><p>By Ann Lee, June 15, 2021</p>{TEXT}</div>"
        )
    )
    assert byline.published == OWN and byline.meta["date_source"] == "text"


def test_a_sidebar_after_the_content_is_not_the_headlines_line() -> None:
    """A sidebar next to the block that holds the headline and the text: not a line under the
    headline (before, its date was taken as the page's, with full confidence)."""
    doc = extract(
        page(
            f"<div id='content'><h1>Council budget</h1>{TEXT}</div>"
            "<div class='widget_recent_entries'><span class='post-date'>March 12, 2019</span></div>"
        )
    )
    assert doc.meta.get("date_confidence") == "low"  # a sidebar's date: only a guess


def test_published_and_updated_on_one_line() -> None:
    """ "Published ..., updated ..." in one element: the change is the page's last modification
    (before, only the publication was read, and the constraint's date was the earlier one)."""
    doc = extract(
        page(
            "<article><h1>Council budget</h1>"
            f"<p class='date'>Published June 15, 2021 | Updated June 20, 2021</p>{TEXT}</article>"
        )
    )
    assert (doc.published, doc.modified) == (OWN, D(2021, 6, 20))
    assert constraint_date(doc) == D(2021, 6, 20)
    d, _ = post_fetch_check(Hit(url=URL), doc, Constraints(before=D(2021, 6, 18)))
    assert (d.kept, d.reason) == (False, "modified-after-claim")


def test_days_written_in_full() -> None:
    from factseek.pages.dates import days_in

    text = "© 2019. Drafted 03/2019, voted 12 March 2019, minutes of 2019-04-02 and 11/05/2019."
    assert days_in(text, today=D(2026, 1, 1)) == {
        D(2019, 3, 12),
        D(2019, 4, 2),
        D(2019, 11, 5),  # both readings of an order nothing settles
        D(2019, 5, 11),
    }


def test_json_ld_keeps_the_first_string_of_the_chosen_day() -> None:
    """Two article objects on the same day: the first one's string, with its time and offset
    (the time zone rules need it), not a later date-only copy."""
    doc = extract(
        page(
            f"<div><h1>Council budget</h1>{TEXT}</div>",
            ld('{"@type":"NewsArticle","datePublished":"2021-06-15T23:30:00-04:00"}')
            + ld('{"@type":"NewsArticle","datePublished":"2021-06-15"}'),
        )
    )
    ev = {e.source: e for e in doc.date_evidence}["json-ld"]
    assert ev.raw == "2021-06-15T23:30:00-04:00" and doc.published == OWN
