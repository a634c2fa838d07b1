"""Readable reports: plain words, titles cut at a word, no doubled quotes; `factseek render`;
``Report.render``/``save``/``load``."""

from __future__ import annotations

import datetime as dt
import json
import os
import stat

import pytest
from typer.testing import CliRunner

from factseek.cli import app
from factseek.errors import DataError, InputError
from factseek.report import (
    clip_text,
    filter_words,
    format_for_path,
    read_report,
    reason_words,
    render,
    render_html,
    render_markdown,
)
from factseek.types import (
    Claim,
    ConstraintDecision,
    Document,
    Hit,
    Query,
    QueryResult,
    Report,
    Summary,
    SummarySentence,
)

runner = CliRunner()

LONG_TITLE = "Northside water plant opens, ending era of boil-water notices in the town"
QUOTED = '"We are not going to hand families water we would not drink," the mayor said.'


def report() -> Report:
    url = "https://ledger.example/plant"
    hits = (
        Hit(url=url, title=LONG_TITLE, published=dt.date(2022, 5, 17), rank=1, query="q"),
        Hit(url="https://www.snopes.com/x", title="Fact check", rank=2, query="q"),
        Hit(url="https://late.example/x", title="Later", published=dt.date(2024, 1, 1), rank=3),
    )
    return Report(
        claim=Claim(text="The plant cost $62 million.", date=dt.date(2023, 10, 5), id="c1"),
        results=(
            QueryResult(
                query=Query(text="Did the plant cost $62 million?", question="Did it cost?"),
                hits=hits,
                decisions=(
                    ConstraintDecision(url=url, kept=True, reason="ok"),
                    ConstraintDecision(
                        url=hits[1].url, kept=False, reason="excluded-site:snopes.com"
                    ),
                    ConstraintDecision(url=hits[2].url, kept=False, reason="after-claim-date"),
                ),
                native=("date",),
                emulated=("domain",),
            ),
        ),
        documents=(Document(url=url, text=QUOTED, title=LONG_TITLE),),
        summaries=(
            Summary(
                url=url,
                text=QUOTED,
                relevant=True,
                method="extractive",
                title=LONG_TITLE,
                sentences=(
                    SummarySentence(text=QUOTED, start_char=0, end_char=len(QUOTED)),
                    SummarySentence(text="The plant opened in May.", start_char=0, end_char=5),
                ),
            ),
        ),
        removed={"after-claim-date": 1, "excluded-site": 1},
        timings={"search": 0.5, "summarize": 0.25},
    )


def test_clip_cuts_at_a_word_with_an_ellipsis():
    assert clip_text("short title", 60) == "short title"
    cut = clip_text(LONG_TITLE, 40)
    assert cut == "Northside water plant opens, ending era…"
    assert len(cut) <= 40 and LONG_TITLE.startswith(cut[:-1])
    assert clip_text("x" * 100, 10) == "x" * 9 + "…"  # one long word: cut inside it


def test_plain_words_instead_of_codes():
    assert reason_words("after-claim-date") == "published after the claim's day"
    assert reason_words("claim-day") == "published on the claim's day"
    assert reason_words("modified-after-claim") == "modified on or after the claim's day"
    assert reason_words("page:modified-after-claim") == (
        "modified on or after the claim's day (by the page's own dates)"
    )
    assert reason_words("excluded-site:snopes.com") == "excluded site (snopes.com)"
    assert reason_words("excluded-marker:fact-check") == 'URL contains "fact-check"'
    assert reason_words("excluded-marker") == "URL marks a fact-check"  # the coarse count key
    assert reason_words("something-new") == "something-new"
    assert filter_words(("date", "domain"), ()) == (
        "publication date and excluded sites filtered by the search engine itself"
    )
    assert filter_words((), ()) == ""


@pytest.mark.parametrize("renderer", [render_markdown, render_html])
def test_readable_formats_speak_plainly(renderer):
    text = renderer(report())
    for jargon in ("native", "emulated", "after-claim-date", "excluded-site"):
        assert jargon not in text
    assert "publication date filtered by the search engine itself" in text
    assert "excluded sites filtered by factseek after the search" in text
    assert "published after the claim" in text and "excluded site (snopes.com)" in text


def test_markdown_titles_are_cut_at_a_word_and_quotes_are_not_doubled():
    md = render_markdown(report())
    row = next(
        line for line in md.splitlines() if "ledger.example/plant" in line and "| 1 |" in line
    )
    assert "[Northside water plant opens, ending era of boil-water…](" in row  # at a word
    assert '“"We are' not in md and '."”' not in md
    assert "“The plant opened in May.”" in md  # a plain sentence still gets quotes
    page = render_html(report())
    assert "“&quot;We are" not in page and "&quot;We are not going" in page


def test_report_render_save_load_round_trip(tmp_path):
    r = report()
    assert r.render("md") == render(r, "md")
    r.save(tmp_path / "r.json")
    r.save(tmp_path / "r.page", "html")
    assert Report.load(tmp_path / "r.json") == r
    assert (tmp_path / "r.page").read_text().startswith("<!doctype html>")
    assert stat.S_IMODE((tmp_path / "r.json").stat().st_mode) == 0o666 & ~_umask()
    with pytest.raises(InputError, match="cannot tell the report format"):
        r.save(tmp_path / "r.txt")
    with pytest.raises(InputError, match="unknown report format 'pdf'"):
        r.render("pdf")
    assert format_for_path("A.HTML").value == "html"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_read_report_errors_name_the_file(tmp_path):
    with pytest.raises(InputError, match="report not found"):
        read_report(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(DataError, match=r"bad\.json: not a JSON report"):
        read_report(bad)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"id": "c1", "line": 1}))
    with pytest.raises(DataError, match=r"other\.json: not a factseek report"):
        read_report(other)
    # each hit needs its constraint decision: the renderers pair them
    data = json.loads(render(report(), "json"))
    assert data["results"][0]["hits"]
    data["results"][0]["decisions"] = []
    short = tmp_path / "short.json"
    short.write_text(json.dumps(data))
    with pytest.raises(DataError, match=r"short\.json: .*results\[0\]: \d+ hits but 0 decisions"):
        read_report(short)


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_render_command(tmp_path, fmt):
    report().save(tmp_path / "r.json")
    out = tmp_path / f"r.{fmt}"
    r = runner.invoke(app, ["render", str(tmp_path / "r.json"), "--format", fmt, "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert out.read_text() == render(report(), fmt)
    r = runner.invoke(app, ["render", str(tmp_path / "r.json"), "-f", fmt])
    assert r.exit_code == 0 and r.stdout == render(report(), fmt)


def test_render_command_bad_input_is_one_line(tmp_path):
    (tmp_path / "x.json").write_text("[1]")
    for path in (tmp_path / "x.json", tmp_path / "missing.json"):
        r = runner.invoke(app, ["render", str(path)])
        assert r.exit_code == 2 and r.stderr.startswith("error: ")
        assert "Traceback" not in r.output and len(r.stderr.splitlines()) == 1
