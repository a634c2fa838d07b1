"""A report made with a rewriter shows the rewritten queries and what each found that the
question as written did not (JSON, Markdown, HTML)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import test_pipeline as fx
from factseek.constraints.hits import Constraints
from factseek.pipeline import run
from factseek.report import render
from factseek.search.base import constrained_search
from factseek.types import Query, Report, from_json, to_json

QUESTION = "Did the bridge cost 3 million?"
CLAIM_TEXT = " ".join(fx.CLAIM.text.split())
REWRITE = "Was rain expected over the weekend?"  # finds the weather page, loses the bridge ones
WHY = "the best of 9 edits (remove@2) is predicted to change AP@50 by +0.010, not above the threshold +0.080"  # fmt: skip


@dataclass(frozen=True)
class Result:
    text: str
    trace: tuple[str, ...]
    why: str
    stopped: str


class FixedRewriter:
    """Rewrites the one subquestion, leaves the claim as written and says why."""

    def rewrite(self, queries):
        return [
            Result(REWRITE, ("swap@1", "remove@4"), "made 2 edits, this model's budget", "budget")
            if q == QUESTION
            else Result(q, (), WHY, "threshold")
            for q in queries
        ]


def kept(query: str) -> list[str]:
    c = Constraints(before=fx.CLAIM.date)
    r = constrained_search(fx.MemorySearch(fx.DOCS), Query(text=query, question=query), 10, c)
    return [h.url for h, d in zip(r.hits, r.decisions, strict=True) if d.kept]


def test_reports_show_rewrites_and_what_they_found() -> None:
    report = run(fx.CLAIM, fx.parts(rewriter=FixedRewriter()))
    by_question = {r.query.question: r for r in report.results}
    rewritten, plain = by_question[QUESTION], by_question[CLAIM_TEXT]
    mine, theirs = kept(REWRITE), kept(QUESTION)
    assert rewritten.query.text == REWRITE
    assert list(rewritten.new_urls) == [u for u in mine if u not in theirs] != []
    assert list(rewritten.lost_urls) == [u for u in theirs if u not in mine] != []
    assert plain.new_urls == plain.lost_urls == () and plain.query.note == WHY
    assert report.usage["search_requests"] == len(report.results) + 1  # + the question as written

    doc = json.loads(render(report, "json"))
    res = {r["query"]["question"]: r for r in doc["results"]}
    assert res[QUESTION]["new_urls"] == list(rewritten.new_urls)
    assert res[QUESTION]["lost_urls"] == list(rewritten.lost_urls)
    assert res[CLAIM_TEXT]["query"]["note"] == WHY
    assert from_json(Report, to_json(report)) == report  # the new fields round-trip

    md = render(report, "md")
    assert "rewritten to “Was rain expected over the weekend?” (swap@1, remove@4)" in md
    assert "the rewrite found 1 page the question as written did not: [Weather]" in md
    assert f"and lost {len(rewritten.lost_urls)} the question as written found" in md
    assert "rewriter: left as written (the best of 9 edits (remove@2)" in md

    page = render(report, "html")
    assert "the rewrite found 1 page the question as written did not: <a href=\"https://weather.example/d\"" in page  # fmt: skip
    assert "rewriter: left as written (the best of 9 edits" in page


def test_no_rewriter_no_comparison() -> None:
    report = run(fx.CLAIM, fx.parts())
    assert all(r.new_urls == r.lost_urls == () and not r.query.note for r in report.results)
    assert report.usage["search_requests"] == len(report.results)
    assert "rewrite found" not in render(report, "md")


def test_a_rewrite_that_finds_nothing_new_says_so() -> None:
    class Same(FixedRewriter):
        def rewrite(self, queries):
            return [Result(q + "?" if q == QUESTION else q, ("add@0",), "", "budget") for q in queries]  # fmt: skip

    report = run(fx.CLAIM, fx.parts(rewriter=Same()))
    r = next(r for r in report.results if r.query.question == QUESTION)
    assert r.new_urls == () and r.lost_urls == ()
    assert "the rewrite found no page the question as written did not" in render(report, "md")
