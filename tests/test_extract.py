from __future__ import annotations

import datetime as dt
import time

import pytest

from factseek.errors import ExtractionError
from factseek.pages.extract import (
    choose_published,
    decode_body,
    extract_html,
    extract_text,
    parse_date,
    url_date,
)
from factseek.types import DateEvidence

BODY = " ".join(
    f"Sentence number {i} explains how the city council voted on the new budget plan."
    for i in range(30)
)


def page(head: str = "", body: str = "", title: str = "Council votes on budget") -> str:
    return (
        f"<html><head><title>{title}</title>{head}</head><body><nav>Home | About</nav>"
        f"<article><h1>{title}</h1><p>{BODY}</p>{body}</article>"
        "<footer>Copyright</footer></body></html>"
    )


def test_main_text_and_title() -> None:
    doc = extract_html(page(), "https://www.example.com/news/budget")
    assert "city council voted" in doc.text
    assert "Home | About" not in doc.text
    assert doc.title == "Council votes on budget"
    assert doc.domain == "example.com"
    assert doc.meta["extractor"] == "trafilatura"
    assert doc.published is None and doc.date_evidence == ()


def test_every_date_source_is_recorded() -> None:
    head = (
        '<meta property="article:published_time" content="2020-03-15T10:00:00Z">'
        '<meta property="article:modified_time" content="2021-01-02">'
        '<script type="application/ld+json">'
        '{"@context": "https://schema.org", "@graph": [{"@type": "NewsArticle",'
        ' "datePublished": "2020-03-14", "dateModified": "2020-06-01"}]}</script>'
    )
    body = '<time itemprop="datePublished" datetime="2020-03-13">March 13</time>'
    doc = extract_html(
        page(head, body),
        "https://example.com/2020/03/12/budget-vote",
        headers={"Last-Modified": "Wed, 01 Jul 2020 08:00:00 GMT"},
    )
    got = {e.source: e.date for e in doc.date_evidence}
    assert got["json-ld"] == dt.date(2020, 3, 14)
    assert got["json-ld:dateModified"] == dt.date(2020, 6, 1)
    assert got["meta:article:published_time"] == dt.date(2020, 3, 15)
    assert got["meta:article:modified_time"] == dt.date(2021, 1, 2)
    assert got["microdata"] == dt.date(2020, 3, 13)
    assert got["url"] == dt.date(2020, 3, 12)
    assert got["last-modified"] == dt.date(2020, 7, 1)
    assert "htmldate" in got
    # five sources, four days: the URL and htmldate agree, and together outweigh each of the others
    assert doc.published == dt.date(2020, 3, 12)
    assert doc.meta["date_source"] == "htmldate" or doc.meta["date_source"] == "url"
    assert doc.meta["date_rule"].startswith("majority: ")


def test_published_rule() -> None:
    E = DateEvidence
    d = dt.date
    assert choose_published(()) is None
    # two sources disagree with equal weight... the URL outweighs htmldate's estimate
    ev = (E(source="url", date=d(2020, 1, 1)), E(source="htmldate", date=d(2020, 1, 2)))
    assert choose_published(ev) == d(2020, 1, 1)
    ev = (
        E(source="meta:date", date=d(2019, 1, 1)),
        E(source="meta:article:published_time", date=d(2019, 5, 5)),
    )
    assert choose_published(ev) == d(2019, 5, 5)  # PUBLISHED_META order, not document order
    # only modification dates: the earliest is a safe upper bound
    ev = (
        E(source="last-modified", date=d(2022, 1, 1)),
        E(source="meta:article:modified_time", date=d(2021, 1, 1)),
    )
    assert choose_published(ev) == d(2021, 1, 1)


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("2020-03-15T10:00:00+02:00", dt.date(2020, 3, 15)),
        ("2020/3/5", dt.date(2020, 3, 5)),
        ("20200315", dt.date(2020, 3, 15)),
        ("March 5th, 2020", dt.date(2020, 3, 5)),
        ("5 Sept 2020", dt.date(2020, 9, 5)),
        ("Wed, 01 Jul 2020 08:00:00 GMT", dt.date(2020, 7, 1)),
        ("2020-02-30", None),
        ("1970-01-01", None),
        ("3000-01-01", None),
        ("yesterday", None),
        ("", None),
    ],
)
def test_parse_date(raw: str, want: dt.date | None) -> None:
    assert parse_date(raw) == want


@pytest.mark.parametrize(
    ("url", "want"),
    [
        ("https://x.com/2019/07/04/story", dt.date(2019, 7, 4)),
        ("https://x.com/news/2019-07-04-story.html", dt.date(2019, 7, 4)),
        ("https://x.com/a/20190704/story", dt.date(2019, 7, 4)),
        ("https://x.com/2019/07/story", None),
        ("https://x.com/item/12345678901", None),
        ("https://x.com/2019/13/40/story", None),
    ],
)
def test_url_date(url: str, want: dt.date | None) -> None:
    assert url_date(url) == want


def test_fallback_extractor_when_trafilatura_finds_little() -> None:
    # a page with text only in table cells scattered around: some extractor must produce it
    html = (
        "<html><body>"
        + "".join(f"<div><span>{w}</span></div>" for w in BODY.split())
        + "</body></html>"
    )
    doc = extract_html(html, "https://example.com/x")
    assert "budget" in doc.text
    assert doc.meta["extractor"] in {"trafilatura", "readability", "html2text"}


def test_bytes_with_declared_charset() -> None:
    html = page(title="Café à Paris").encode("latin-1")
    doc = extract_html(
        html, "https://example.com/x", headers={"content-type": "text/html; charset=ISO-8859-1"}
    )
    assert doc.title == "Café à Paris"
    # meta charset when the header says nothing
    html2 = page('<meta charset="windows-1252">', title="naïve").encode("cp1252")
    assert extract_html(html2, "https://example.com/y").title == "naïve"


def test_decode_body_detects_undeclared() -> None:
    text = "Le conseil municipal a voté le budget équilibré à l'unanimité. " * 20
    assert decode_body(text.encode("utf-8")) == text
    assert "équilibré" in decode_body(text.encode("latin-1"))


@pytest.mark.parametrize(
    "html",
    [
        "",
        "   ",
        "<html><body></body></html>",
        bytes(range(256)) * 200,
        "<html><body>" + "<div>" * 50_000 + "</body></html>",
    ],
    ids=["empty", "blank", "no-text", "binary", "deep-no-text"],
)
def test_no_text_raises(html: str | bytes) -> None:
    with pytest.raises(ExtractionError):
        extract_html(html, "https://example.com/x")


def test_hostile_html_bounded() -> None:
    cases = {
        "deep": "<html><body>" + "<div>" * 100_000 + BODY + "</div>" * 100_000 + "</body></html>",
        "unclosed": "<html><body>" + "<p><b><i>" * 30_000 + BODY,
        "malformed": f"<html><body><p>{BODY} <b><i></p></b> <<<>>> &&& &#xffffff; <a href='x>l</htm",
        "nul": f"<html>\x00<body><p>{BODY}\x00</p></body></html>",
    }
    for name, html in cases.items():
        t0 = time.monotonic()
        try:
            doc = extract_html(html, "https://example.com/x")
        except ExtractionError:
            continue
        assert time.monotonic() - t0 < 20, name
        assert "\x00" not in doc.text


def test_input_is_truncated_to_max_chars() -> None:
    from factseek.pages.extract import ExtractConfig

    html = page(body="<p>" + "tail words here " * 10_000 + "THE-END</p>")
    doc = extract_html(html, "https://example.com/x", config=ExtractConfig(max_chars=20_000))
    assert "THE-END" not in doc.text
    assert "budget" in doc.text


def test_plain_text() -> None:
    doc = extract_text(
        b"Title line\n\n\n\nBody   text here.\x00",
        "https://example.com/2021/02/03/notes.txt",
        headers={"Last-Modified": "Thu, 04 Feb 2021 00:00:00 GMT"},
    )
    assert doc.text == "Title line\n\nBody text here."
    assert doc.title == "Title line"
    assert doc.published == dt.date(2021, 2, 3)
    assert [e.source for e in doc.date_evidence] == ["url", "last-modified"]
    with pytest.raises(ExtractionError):
        extract_text(b"", "https://example.com/empty.txt")


def test_tag_cap_bounds_pathological_pages() -> None:
    from factseek.pages.extract import ExtractConfig

    html = "<html><body>" + "<p>word word</p>" * 50_000 + "<p>THE-END</p>"
    t0 = time.monotonic()
    doc = extract_html(html, "https://example.com/x", config=ExtractConfig(max_tags=2_000))
    assert time.monotonic() - t0 < 10
    assert doc.meta["truncated"] == "tags"
    assert "THE-END" not in doc.text and doc.n_words <= 2_000


def test_text_units_are_script_aware() -> None:
    from factseek.pages.extract import text_units

    assert text_units("The council met on Monday.") == 5
    assert text_units("市議会は予算案を可決した。") == 6  # 12 Han/kana characters, 2 per word
    assert text_units("Tokyo 市議会 voted") == 3  # 2 spaced words + 3 Han characters // 2
    assert text_units("") == 0


def test_cjk_article_is_not_replaced_by_the_whole_page() -> None:
    article = "".join(
        f"<p>市議会は{i}日の本会議で、駅前広場の再整備案を賛成多数で可決した。工事は来年春に始まる。</p>"
        for i in range(1, 6)
    )
    menu = " ".join(f"<a href='/s{i}'>Section number {i}</a>" for i in range(40))
    html = f"<html lang='ja'><body><div class='nav'>{menu}</div><article>{article}</article></body></html>"
    doc = extract_html(html, "https://example.jp/a")
    assert doc.meta["extractor"] == "trafilatura"
    assert "Section number" not in doc.text and "駅前広場" in doc.text


@pytest.mark.parametrize(
    "html",
    [
        b'<?xml version="1.0" encoding="utf-8"?>\n<html><head><meta name="date" content="2020-01-02">'
        b"</head><body><p>" + BODY.encode() + b"</p></body></html>",
        '<?xml version="1.0" encoding="utf-8"?><html><head><meta name="date" content="2020-01-02">'
        "</head><body><p>" + BODY + "</p></body></html>",
        '<meta name="date" content="2020-01-02"><p>' + BODY + "</p>",  # a fragment
    ],
    ids=["xml-bytes", "xml-str", "fragment"],
)
def test_parses_bytes_first(html: str | bytes) -> None:
    doc = extract_html(html, "https://example.com/x")
    assert doc.published == dt.date(2020, 1, 2)
    assert doc.date_evidence[0].source == "meta:date"
    assert "date_warning" not in doc.meta


def test_parse_failure_is_said_in_the_date_evidence(monkeypatch: pytest.MonkeyPatch) -> None:
    import factseek.pages.extract as ex
    from factseek.constraints.hits import Constraints
    from factseek.constraints.temporal import post_fetch_check
    from factseek.types import Hit

    monkeypatch.setattr(ex, "_parse", lambda html: (None, "Document is empty"))
    doc = extract_html(
        page('<meta name="date" content="2020-01-02">'), "https://example.com/2020/01/03/x"
    )
    assert doc.meta["date_warning"].startswith("the HTML could not be parsed (Document is empty)")
    assert [e.source for e in doc.date_evidence if e.source != "htmldate"] == ["url"]
    _, notes = post_fetch_check(Hit(url=doc.url), doc, Constraints(before=dt.date(2021, 1, 1)))
    assert any("could not be parsed" in n for n in notes)


def test_utf16_and_declared_xml_encoding() -> None:
    html = page(title="Œuvres à l'été").replace(
        "<html>", '<?xml version="1.0" encoding="iso-8859-15"?><html>'
    )
    assert (
        extract_html(html.encode("iso-8859-15"), "https://example.com/x").title == "Œuvres à l'été"
    )
    assert (
        extract_html(b"\xff\xfe" + page(title="naïve").encode("utf-16-le"), "https://e.com/y").title
        == "naïve"
    )
