"""Publication and modification dates on tiny pages written here, and the temporal constraint's
decision for each under both date bases (issue: the modification-date leak).

Each page case gives the expected publication date, modification date, confidence, and the
decision for one claim day under ``--date-basis modified`` (the default) and ``published``
(the paper)."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from factseek.constraints.hits import PAGE_REMOVED, Constraints
from factseek.constraints.temporal import (
    TemporalConfig,
    constraint_date,
    post_fetch_check,
    stored_check,
)
from factseek.pages.extract import extract_html
from factseek.types import Document, Hit, from_json, to_json

D = dt.date
BODY = " ".join(
    f"The harbour board met again and sentence {i} reports what its members said about the"
    " new ferry timetable for the island routes."
    for i in range(10)
)


def page(head: str = "", article: str = "", after: str = "") -> str:
    return (
        f'<html lang="en"><head><title>Ferry timetable changes</title>{head}</head><body>'
        f"<article><h1>Ferry timetable changes</h1>{article}<p>{BODY}</p></article>{after}"
        "</body></html>"
    )


def jsonld(**fields: str) -> str:
    data = {"@context": "https://schema.org", "@type": "NewsArticle", **fields}
    return f'<script type="application/ld+json">{json.dumps(data)}</script>'


def meta(prop: str, content: str) -> str:
    return f'<meta property="{prop}" content="{content}">'


@dataclass(frozen=True)
class Case:
    html: str
    published: dt.date | None
    modified: dt.date | None
    claim: dt.date  # the claim's day for the decisions below
    modified_basis: str  # decision reason under --date-basis modified ("ok" = kept)
    published_basis: str  # decision reason under --date-basis published
    guess: bool = False  # the publication date is only a guess (low-confidence)


CASES = {
    "json-ld dateModified": Case(
        page(
            jsonld(
                datePublished="2019-06-17T09:00:00+02:00", dateModified="2020-06-04T11:00:00+02:00"
            )
        ),
        published=D(2019, 6, 17),
        modified=D(2020, 6, 4),
        claim=D(2020, 1, 10),
        modified_basis="modified-after-claim",
        published_basis="ok",
    ),
    "article:modified_time": Case(
        page(
            meta("article:published_time", "2016-05-02T08:00:00-04:00")
            + meta("article:modified_time", "2019-11-20T16:30:00-05:00")
        ),
        published=D(2016, 5, 2),
        modified=D(2019, 11, 20),
        claim=D(2018, 1, 1),
        modified_basis="modified-after-claim",
        published_basis="ok",
    ),
    "an Updated line": Case(
        page(
            meta("article:published_time", "2020-03-02T10:00:00+00:00")
            + meta("og:published_time", "2020-03-02T10:00:00+00:00"),
            article='<p class="byline">Published March 2, 2020</p>'
            '<p class="updated">Updated April 9, 2020</p>',
        ),
        published=D(2020, 3, 2),
        modified=D(2020, 4, 9),
        claim=D(2020, 3, 20),
        modified_basis="modified-after-claim",
        published_basis="ok",
    ),
    "modified earlier than published": Case(
        page(
            jsonld(
                datePublished="2020-10-26T04:00:00-05:00", dateModified="2020-10-23T14:17:00-05:00"
            )
        ),
        published=D(2020, 10, 26),
        modified=None,  # a draft saved before publication: ignored, and the rule says so
        claim=D(2020, 11, 1),
        modified_basis="ok",
        published_basis="ok",
    ),
    "a date only a script prints": Case(
        page(after='<script>showDate("2019/01/01 10:04:00")</script>'),
        published=D(2019, 1, 1),  # htmldate's heuristic search reads it: a guess
        modified=None,
        claim=D(2020, 3, 1),
        modified_basis="ok",  # kept and flagged (--guessed flag, the default)
        published_basis="ok",
        guess=True,
    ),
    "sidebar's date": Case(
        page(
            after='<div class="sidebar"><h3>Next meeting</h3>'
            '<p>Harbour board: <span class="date">March 3, 2015</span></p></div>'
        ),
        published=D(2015, 3, 3),  # htmldate's markup search takes the sidebar's date
        modified=None,
        claim=D(2020, 1, 1),
        modified_basis="ok",
        published_basis="ok",
        guess=True,
    ),
}
URL = "https://harbour.example/news/ferry-timetable"


@pytest.fixture(scope="module")
def docs() -> dict[str, Document]:
    return {name: extract_html(case.html, URL) for name, case in CASES.items()}


def decide(doc: Document, claim: dt.date, **config: str) -> tuple[str, tuple[str, ...]]:
    d, notes = post_fetch_check(
        Hit(url=URL), doc, Constraints(before=claim), config=TemporalConfig(**config)
    )
    assert d.kept == (d.reason == "ok")
    return d.reason, notes


@pytest.mark.parametrize("name", list(CASES))
def test_dates_and_decisions_under_both_bases(docs: dict[str, Document], name: str) -> None:
    case, doc = CASES[name], docs[name]
    assert (doc.published, doc.modified) == (case.published, case.modified)
    assert (doc.meta.get("date_confidence") == "low") == case.guess
    reason, notes = decide(doc, case.claim)  # the defaults: basis modified, guessed flag
    assert reason == case.modified_basis
    assert decide(doc, case.claim, date_basis="published")[0] == case.published_basis
    if case.modified is not None:
        assert constraint_date(doc) == case.modified
        assert constraint_date(doc, "published") == case.published
        assert any(f"modified {case.modified.isoformat()}" in n for n in notes)
        # a claim after the last modification: kept under both bases
        later = case.modified + dt.timedelta(days=1)
        assert decide(doc, later)[0] == decide(doc, later, date_basis="published")[0] == "ok"
        # on the modification's own day: not before the claim either
        assert decide(doc, case.modified)[0] == "modified-after-claim"
    if case.guess:
        assert any("only a guess" in n and "guessed policy: flag" in n for n in notes)
        for basis in ("modified", "published"):
            assert decide(doc, case.claim, date_basis=basis, guessed="drop")[0] == "guessed-date"
            kept, quiet = decide(doc, case.claim, date_basis=basis, guessed="keep")
            assert kept == "ok" and not any("guess" in n for n in quiet)
    # the publication date itself after the claim: removed under both bases
    assert case.published is not None
    for basis in ("modified", "published"):
        assert decide(doc, case.published, date_basis=basis)[0] == "claim-day"
        before = case.published - dt.timedelta(days=1)
        assert decide(doc, before, date_basis=basis)[0] == "after-claim-date"


def test_ignored_modifications_are_named(docs: dict[str, Document]) -> None:
    doc = docs["modified earlier than published"]
    assert "earlier than the publication date 2020-10-26" in doc.meta["modified_rule"]
    absurd = extract_html(
        page(
            jsonld(datePublished="2020-05-01", dateModified="2999-01-01")
            + meta("article:modified_time", "1993-05-01T10:00:00Z")
        ),
        URL,
    )
    assert absurd.published == D(2020, 5, 1) and absurd.modified is None
    rule = absurd.meta["modified_rule"]
    assert "json-ld:dateModified 2999-01-01 is in the future" in rule
    assert "meta:article:modified_time 1993-05-01 is before 1995" in rule


def test_the_latest_stated_modification_counts(docs: dict[str, Document]) -> None:
    doc = extract_html(
        page(
            jsonld(datePublished="2020-01-05", dateModified="2020-02-01")
            + meta("article:modified_time", "2020-03-01T10:00:00+01:00"),
        ),
        URL,
    )
    assert doc.modified == D(2020, 3, 1)
    assert doc.meta["modified_source"] == "meta:article:modified_time"
    # the HTTP Last-Modified header is the server's, not the page's: a note, not a removal
    served = extract_html(
        page(jsonld(datePublished="2020-01-05")),
        URL,
        headers={"Last-Modified": "Tue, 01 Dec 2026 10:00:00 GMT"},
    )
    assert served.modified is None
    reason, notes = decide(served, D(2020, 6, 1))
    assert reason == "ok" and any("possible leakage" in n and "last-modified" in n for n in notes)


def test_document_json_round_trip_keeps_modified_and_reads_old_records(
    docs: dict[str, Document],
) -> None:
    doc = docs["json-ld dateModified"]
    assert from_json(Document, to_json(doc)) == doc
    old = json.loads(to_json(doc))
    del old["modified"]  # a report or bundle written before the field existed
    assert from_json(Document, json.dumps(old)).modified is None


def test_pipeline_lists_modified_after_claim_in_the_funnel(docs: dict[str, Document]) -> None:
    from factseek.api import check_config
    from factseek.pipeline import Parts, run
    from factseek.report import render
    from factseek.search.base import FunctionSearch
    from factseek.summarize.extractive import ExtractiveSummarizer
    from factseek.types import Claim, Question

    doc = docs["json-ld dateModified"]

    class OneQuestion:
        name = "one"

        def decompose(self, claim: Claim) -> list[Question]:
            return [Question(text="Did the ferry timetable change?")]

    class Fetch:
        def fetch(self, urls: list[str]) -> tuple[list[Document], list]:
            return [doc for u in urls if u == URL], []

    parts = Parts(
        search=FunctionSearch(lambda q, k: [Hit(url=URL)]),
        decomposer=OneQuestion(),
        summarizer=ExtractiveSummarizer(),
        fetcher=Fetch(),
    )
    claim = Claim(text="The ferry timetable changed.", date=D(2020, 1, 10))
    report = run(claim, parts, check_config())
    assert report.documents == () and report.removed == {"page:modified-after-claim": 1}
    stages = {f.stage: f.documents for f in report.funnel}
    assert stages["pages read"] == 1 and stages[f"{PAGE_REMOVED}modified-after-claim"] == 1
    md = render(report, "md")
    assert "removed by the page's own dates: modified on or after the claim's day | " in md
    assert "modified on or after the claim's day (by the page's own dates): 1" in md
    assert report.config["temporal"]["date_basis"] == "modified"
    paper = run(claim, parts, check_config(date_basis="published"))
    assert [d.url for d in paper.documents] == [URL]
    assert any("possible leakage" in n and "modified on or after" in n for n in paper.notes)


def _store(tmp_path: Path) -> Path:
    from factseek.store import build_store

    records = [
        {
            "url": "https://harbour.example/a",
            "title": "Ferry timetable",
            "text": "The ferry timetable changed for the island routes in spring.",
            "published": "2019-06-17",
            "modified": "2020-06-04",
        },
        {
            "url": "https://harbour.example/b",
            "title": "Ferry fares",
            "text": "The ferry timetable and fares were set by the harbour board.",
            "published": "2019-05-01",
        },
    ]
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    build_store([src], tmp_path / "store", progress=False)
    return tmp_path / "store"


def test_store_keeps_modified_and_the_basis_applies_to_its_documents(tmp_path: Path) -> None:
    from factseek.api import check

    store = _store(tmp_path)
    from factseek.store import Store

    opened = Store.open(store)
    docs = {d.url: d for d in opened.documents()}
    assert docs["https://harbour.example/a"].modified == D(2020, 6, 4)
    assert docs["https://harbour.example/b"].modified is None
    assert "modified" not in opened.record(1)  # no key when unknown: as stores were before
    claim = "The ferry timetable changed."
    safe = check(claim, date="2020-01-10", store=store, stance="none")
    assert [d.url for d in safe.documents] == ["https://harbour.example/b"]
    assert safe.removed["page:modified-after-claim"] == 1
    paper = check(claim, date="2020-01-10", store=store, stance="none", date_basis="published")
    assert sorted(d.url for d in paper.documents) == sorted(docs)
    d, _ = stored_check(docs["https://harbour.example/a"], Constraints(before=D(2020, 7, 1)))
    assert d.kept


def test_cli_options_reach_the_report(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from factseek.cli import app

    store = _store(tmp_path)
    args = ["check", "The ferry timetable changed.", "--date", "2020-01-10"]
    args += ["--store", str(store), "--stance", "none", "--format", "json", "-q"]
    r = CliRunner().invoke(app, [*args, "--date-basis", "published", "--guessed", "drop"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["config"]["temporal"] == {
        "on_conflict": "after",
        "date_basis": "published",
        "guessed": "drop",
    }
    assert len(report["documents"]) == 2
    bad = CliRunner().invoke(app, [*args, "--date-basis", "latest"])
    assert bad.exit_code == 2
    claims = tmp_path / "claims.jsonl"
    claims.write_text(
        json.dumps({"id": "c1", "claim": "The ferry timetable changed.", "date": "2020-01-10"})
        + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "batch"
    batch = ["batch", str(claims), "--out", str(out), "--store", str(store), "--stance", "none"]
    r = CliRunner().invoke(app, [*batch, "--date-basis", "published", "-q"])
    assert r.exit_code == 0, r.output
    batch_report = json.loads((out / "reports" / "c1.json").read_text(encoding="utf-8"))
    assert batch_report["config"]["temporal"]["date_basis"] == "published"


def test_api_refuses_unknown_policies() -> None:
    from factseek.api import check_config
    from factseek.errors import ConfigError

    with pytest.raises(
        ConfigError, match="date basis 'latest'; choose one of: modified, published"
    ):
        check_config(date_basis="latest")
    with pytest.raises(ConfigError, match="guessed-date policy 'maybe'"):
        check_config(guessed="maybe")


def test_a_page_from_the_claims_day_is_removed_in_plain_words(tmp_path: Path) -> None:
    from factseek.api import check
    from factseek.store import build_store

    src = tmp_path / "docs.jsonl"
    records = [
        {"url": "https://harbour.example/same-day", "title": "Ferry timetable", "published": "2020-01-10",
         "text": "The ferry timetable changed for the island routes, the board said."},
        {"url": "https://harbour.example/before", "title": "Ferry board", "published": "2020-01-09",
         "text": "The ferry timetable will change for the island routes, the board said."},
    ]  # fmt: skip
    src.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    build_store([src], tmp_path / "store", progress=False)
    report = check(
        "The ferry timetable changed.", date="2020-01-10", store=tmp_path / "store", stance="none"
    )
    assert [d.url for d in report.documents] == ["https://harbour.example/before"]
    reasons = {d.url: d.reason for r in report.results for d in r.decisions if not d.kept}
    assert reasons == {"https://harbour.example/same-day": "claim-day"}
    md = report.render("md")
    assert "removed: published on the claim's day" in md and "published after" not in md
