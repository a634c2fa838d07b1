"""Issue 14 case 6: everything from a page is inert in every report format and on the terminal.

Markdown is rendered with markdown-it (CommonMark, raw HTML *on*, as many renderers do) and the
resulting HTML is inspected: no script, no event handler, no javascript: link, no link the page
did not intend. Terminal escape sequences and control characters appear in no format."""

from __future__ import annotations

import datetime as dt
import json
import re
from html.parser import HTMLParser
from typing import Any

import pytest
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from factseek.report import render
from factseek.sanitize import clean_text
from factseek.types import (
    Claim,
    ConstraintDecision,
    Document,
    FetchFailure,
    Hit,
    Passage,
    Query,
    QueryResult,
    Report,
    Summary,
    SummarySentence,
)

HOSTILE_URLS = [
    "https://x.example/<script>alert(1)</script>",
    "https://x.example/a>)[pwn](javascript:alert(1)",
    "https://x.example/a)<img src=x onerror=alert(1)>",
    'https://x.example/"onmouseover="alert(1)',
    "https://x.example/a b\\)[x](javascript:alert(2))",
    "https://x.example/%3Cscript%3E",
    "https://x.example/`code`*em*_u_~s~|t|",
    "https://x.example/\x1b[31mred\x1b[0m",
    "https://x.example/\u202eevil",
    "https://x.example/a\nb",
]
ESCAPES = [
    "\x1b]8;;https://evil.example\x07click\x1b]8;;\x07",  # OSC 8 hyperlink
    "\x1b[2J\x1b[H",  # clear screen
    "\x1b]0;pwned title\x07",  # set window title
    "\x9b31m",  # 8-bit CSI
    "bell\x07 backspace\x08 nul\x00 del\x7f c1\x85",
    "\u202eevil\u202c \u2066iso\u2069",  # bidi overrides
    "\ud800 lone",  # lone surrogate
]
TITLE = "Title " + " ".join(ESCAPES) + " <script>alert(3)</script> [x](javascript:alert(4))"


def hostile_report() -> Report:
    hits = tuple(
        Hit(url=u, title=TITLE, rank=i + 1, query="q", published=dt.date(2020, 1, 1))
        for i, u in enumerate(HOSTILE_URLS)
    )
    decisions = tuple(ConstraintDecision(url=h.url, kept=True, reason="ok") for h in hits)
    passages = tuple(
        Passage(
            url=u,
            text=TITLE,
            doc_rank=0,
            score=1.0,
            start_word=0,
            end_word=3,
            start_char=0,
            end_char=5,
            title=TITLE,
        )
        for u in HOSTILE_URLS
    )
    summaries = tuple(
        Summary(
            url=u,
            text=TITLE,
            relevant=True,
            method="llm-few-shot",
            title=TITLE,
            sentences=(SummarySentence(text=TITLE, supported=False),),
            note=TITLE,
        )
        for u in HOSTILE_URLS
    )
    return Report(
        claim=Claim(text="Buses " + ESCAPES[0], date=dt.date(2021, 1, 1), speaker=ESCAPES[1]),
        results=(
            QueryResult(
                query=Query(text="q " + ESCAPES[2], question="q?"),
                hits=hits,
                decisions=decisions,
                error=ESCAPES[4],
            ),
        ),
        documents=tuple(Document(url=u, text=TITLE, title=TITLE) for u in HOSTILE_URLS),
        failures=tuple(FetchFailure(url=u, error=TITLE) for u in HOSTILE_URLS),
        passages=passages,
        summaries=summaries,
        notes=(TITLE,),
    )


class Tags(HTMLParser):
    """Every tag and attribute name in a rendered document."""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()
        self.attrs: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.names.add(tag)
        self.attrs.update(name for name, _ in attrs)


BAD_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


@pytest.mark.parametrize("fmt", ["json", "md", "html"])
def test_no_control_characters_or_escapes_in_any_format(fmt: str) -> None:
    text = render(hostile_report(), fmt)
    assert not BAD_CHARS.search(text), repr(BAD_CHARS.search(text))
    text.encode("utf-8")  # no lone surrogate left to break a UTF-8 writer
    assert "pwned title" not in text or "\x1b" not in text


def test_markdown_renders_inert_with_raw_html_on() -> None:
    md = render(hostile_report(), "md")
    html = MarkdownIt("commonmark", {"html": True}).render(md)
    tags = Tags()
    tags.feed(html)
    assert {"p", "a", "h1", "h2"} <= tags.names
    assert not tags.names - {"p", "a", "h1", "h2", "ul", "li", "strong", "blockquote", "table",
                             "thead", "tbody", "tr", "th", "td", "em", "code"}, tags.names  # fmt: skip
    assert not [a for a in tags.attrs if a.startswith("on") or a in ("src", "style")], tags.attrs
    hrefs = re.findall(r'href="([^"]*)"', html)
    assert hrefs, "links to the pages should still be there"
    assert all(h.startswith("https://x.example/") for h in hrefs), hrefs
    assert not any("javascript" in h.lower() and "(" in h for h in hrefs)
    # one link per rendered page link, never one injected by a URL or a title
    link_texts = re.findall(r"<a [^>]*>(.*?)</a>", html)
    assert not any(t == "pwn" or t == "x" for t in link_texts), link_texts


def test_markdown_links_keep_pointing_at_the_page() -> None:
    url = "https://x.example/a>)[pwn](javascript:alert(1)"
    report = Report(
        claim=Claim(text="c"),
        summaries=(Summary(url=url, text="t", relevant=True, method="extractive", title="T"),),
    )
    html = MarkdownIt("commonmark", {"html": True}).render(render(report, "md"))
    (href,) = re.findall(r'href="([^"]*)"', html)
    assert href.startswith("https://x.example/a") and "javascript" in href  # encoded, inert
    assert "%3E%29%5Bpwn%5D%28javascript:alert%281%29" in href


def test_json_keeps_content_but_not_control_characters() -> None:
    data = json.loads(render(hostile_report(), "json"))
    assert data["documents"][0]["url"] == clean_text(HOSTILE_URLS[0])
    assert "Title" in data["documents"][0]["title"] and "\x1b" not in data["documents"][0]["title"]


def test_terminal_output_has_no_escape_sequences(monkeypatch: pytest.MonkeyPatch) -> None:
    from factseek import api
    from factseek.cli import app

    monkeypatch.setattr(api, "check", lambda *a, **k: hostile_report())
    r: Any = CliRunner().invoke(app, ["check", "a claim", "--date", "2021-01-01", "-q"])
    assert r.exit_code == 0, r.output
    assert not BAD_CHARS.search(r.stdout)


def test_error_lines_have_no_escape_sequences(monkeypatch: pytest.MonkeyPatch) -> None:
    from factseek import api
    from factseek.cli import app
    from factseek.errors import SearchError

    def fail(*a: Any, **k: Any) -> Any:
        raise SearchError("provider said: " + " ".join(ESCAPES) + "\nsecond line")

    monkeypatch.setattr(api, "check", fail)
    r: Any = CliRunner().invoke(app, ["check", "a claim", "--date", "2021-01-01", "-q"])
    assert r.exit_code == 1
    assert not BAD_CHARS.search(r.stderr.rstrip("\n"))
    assert len(r.stderr.strip().splitlines()) == 1


# ----------------------------------------------------------------------------- issue 47 item 4

PLANT = "<script>alert(1)</script><img src=x onerror=alert(2)>"
RAW_TAG = re.compile(r"<\s*/?\s*(script|img)\b", re.I)


def _crafted_reports() -> tuple[list[tuple[Any, Report]], Report]:
    """A full report read back with ``PLANT`` in one string at a time (those the loader
    accepts), and one with it in all of those at once."""
    from crafted_reports import full_report, planted, string_slots
    from factseek.errors import DataError
    from factseek.report.io import report_from_data

    base = full_report()
    taken: list[tuple[Any, Report]] = []
    for slot in string_slots(base):
        try:
            taken.append((slot, report_from_data(planted(base, slot, PLANT), "crafted")))
        except DataError:
            continue  # a field with a closed set of values (a label, a date): refused on load
    every = base
    values = [s for s, _ in taken if not s[1]]
    keys = sorted((s for s, _ in taken if s[1]), key=lambda s: -len(s[0]))
    for i, slot in enumerate(values + keys):  # keys last, deepest first: paths stay valid
        every = planted(every, slot, f"{PLANT}{i}")
    return taken, report_from_data(every, "crafted")


def test_markdown_escapes_every_string_of_a_crafted_report() -> None:
    """Each string of a report (``results[].native``, ``answers[].evidence_ids``,
    ``funnel[].stage``, ``version``... every one the loader accepts) goes through the one
    escaping function: no raw ``<script>`` or ``<img>`` survives in the Markdown, and a
    CommonMark renderer with raw HTML on makes no such tag."""
    taken, every = _crafted_reports()
    fields = {".".join(str(k) for k in s[0] if not isinstance(k, int)) for s, _ in taken}
    assert {"results.native", "answers.evidence_ids", "funnel.stage", "version"} <= fields
    assert len(taken) > 60, len(taken)
    md_it = MarkdownIt("commonmark", {"html": True})
    for slot, report in [*taken, ("all", every)]:
        md = render(report, "md")
        assert not RAW_TAG.search(md), (slot, RAW_TAG.search(md))
        tags = Tags()
        tags.feed(md_it.render(md))
        assert not tags.names & {"script", "img"}, (slot, tags.names)
        assert not [a for a in tags.attrs if a.startswith("on") or a == "src"], slot
    assert render(every, "md").count("alert(1)") >= len(taken) // 2  # shown, as text


def test_html_escapes_every_string_of_a_crafted_report() -> None:
    _, every = _crafted_reports()
    tags = Tags()
    tags.feed(render(every, "html"))
    assert not tags.names & {"script", "img"}, tags.names
    assert not [a for a in tags.attrs if a.startswith("on") or a == "src"], tags.attrs
