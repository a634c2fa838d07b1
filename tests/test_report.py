"""Report rendering: complete JSON, escaped Markdown and HTML, atomic writes."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from factseek.report import render, render_html, render_markdown, write_report
from factseek.types import (
    Claim,
    ConstraintDecision,
    Document,
    FunnelRow,
    Hit,
    Passage,
    Query,
    QueryResult,
    Report,
    Summary,
    SummarySentence,
    Verdict,
)

EVIL = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def evil_report(verdict: Verdict | None = None) -> Report:
    url = "https://evil.example/p?a=1&b=<2>"
    hit = Hit(url=url, title=EVIL, published=dt.date(2023, 1, 1), rank=1, query="q")
    bad_link = Hit(url="javascript:alert(1)", title="click me", rank=2)
    return Report(
        claim=Claim(text=f"Claim {EVIL}", date=dt.date(2024, 1, 1), speaker=EVIL),
        results=(
            QueryResult(
                query=Query(text="q", question="Is it q?"),
                hits=(hit, bad_link),
                decisions=(
                    ConstraintDecision(url=hit.url, kept=True, reason="ok"),
                    ConstraintDecision(url=bad_link.url, kept=False, reason="excluded-site:x"),
                ),
            ),
        ),
        documents=(Document(url=url, text=EVIL * 3, title=EVIL),),
        passages=(
            Passage(
                url=url,
                text=EVIL,
                doc_rank=0,
                score=1.5,
                start_word=0,
                end_word=3,
                start_char=0,
                end_char=10,
                title=EVIL,
            ),
        ),
        summaries=(
            Summary(
                url=url,
                text=EVIL,
                relevant=True,
                method="extractive",
                title=EVIL,
                sentences=(SummarySentence(text=EVIL, start_char=0, end_char=5, supported=False),),
            ),
        ),
        verdict=verdict or Verdict.not_judged(),
        funnel=(
            FunnelRow(stage="search hits", hits=2),
            FunnelRow(stage="documents", documents=1, words=3),
        ),
        removed={"excluded-site": 1},
        notes=(EVIL,),
    )


def test_html_escapes_everything_from_pages():
    page = render_html(evil_report())
    assert "<script>" not in page and "<img" not in page
    assert "&lt;script&gt;" in page
    assert 'href="javascript:' not in page
    assert "unsupported by the document" in page
    assert "Not judged" in page
    assert "http://" not in page.replace(
        "https://evil.example", ""
    )  # nothing loaded from elsewhere


def test_markdown_neutralises_markup_and_says_not_judged():
    md = render_markdown(evil_report())
    assert "<script>" not in md
    assert "**not judged**" in md
    assert "](<javascript:" not in md
    assert "excluded site: 1" in md  # plain words, not the reason code


def test_judged_verdict_is_shown():
    v = Verdict(
        judged=True, label="mostly-true", judge="classifier:minilm", scores={"mostly-true": 0.6}
    )
    assert "mostly-true" in render_html(evil_report(v))
    assert "**mostly-true** by classifier:minilm" in render_markdown(evil_report(v))


def test_json_is_complete():
    data = json.loads(render(evil_report(), "json"))
    assert data["claim"]["speaker"] == EVIL
    assert data["results"][0]["decisions"][1]["reason"] == "excluded-site:x"


def test_write_report_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "r.md"
    path.write_text("old")

    def fail_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr("factseek.files.os.replace", fail_replace)  # the shared atomic write
    with pytest.raises(OSError):
        write_report(evil_report(), path, "md")
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.md"]  # no temp file left behind
    monkeypatch.undo()
    write_report(evil_report(), tmp_path / "r.html", "html")
    assert (tmp_path / "r.html").read_text().startswith("<!doctype html>")
