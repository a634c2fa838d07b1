"""History, corrections, the reviewed report, ClaimReview and the feedback export round trip."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from factseek.datasets.claims import data_format, load_claimdecomp, load_claims
from factseek.datasets.retrieval import load_retrieval
from factseek.errors import InputError
from factseek.pipeline import run
from factseek.report import render
from factseek.review.apply import cards, reviewed
from factseek.review.claimreview import claim_review
from factseek.review.export import decompose_example, export
from factseek.review.feedback import FeedbackLog, in_force
from factseek.review.history import History
from factseek.types import Question, Report, from_json
from web_fixtures import CLAIM, DOCS, carded_report, fake_parts


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "h.sqlite"
    return History(path), FeedbackLog(path)


def test_history_create_finish_list_search_delete(db) -> None:
    history, log = db
    a = history.create(CLAIM, options={"search": "local"}, user="ana")
    b = history.create(CLAIM.__class__(text="Rain 100% likely, said 50_50 Bob"), user="bob")
    assert history.get(a).status == "running" and history.get(a).report is None
    report = carded_report()
    history.finish(a, report, seconds=0.5)
    history.fail(b, "search failed: boom\nsecond line")
    got = history.get(a)
    assert got.status == "done" and got.report == report and got.options == {"search": "local"}
    assert history.get(b).error == "search failed: boom"
    assert [r.id for r in history.list()] == [b, a]  # newest first
    assert [r.id for r in history.list("bridge")] == [a]
    assert [r.id for r in history.list("ana ruiz")] == [a]  # the speaker is searched too
    assert [r.id for r in history.list("100%")] == [b]  # LIKE wildcards are literal
    assert [r.id for r in history.list("1_0")] == []  # would match "100" as a wildcard
    assert history.list()[1].label == "refuted"
    log.add(a, "relevance", {"relevant": False}, user="ana", target="E1")
    assert history.delete(a) and not history.delete(a)
    assert log.for_run(a) == []  # its corrections went with it
    with pytest.raises(InputError, match="no check #"):
        history.get(a)


def test_corrections_validate_and_latest_wins(db) -> None:
    _, log = db
    with pytest.raises(InputError, match="unknown stance"):
        log.add(1, "stance", {"label": "maybe"}, user="x", target="E1")
    with pytest.raises(InputError, match="unknown politifact label"):
        log.add(1, "verdict", {"scale": "politifact", "label": "refuted"}, user="x")
    with pytest.raises(InputError, match="unknown correction"):
        log.add(1, "delete-everything", {}, user="x")
    log.add(1, "stance", {"label": "refutes"}, user="ana", target="E1")
    last = log.add(1, "stance", {"label": "nei"}, user="  bob\n smith ", target="E1")
    assert last.user == "bob smith" and last.created.endswith("+00:00")
    force = in_force(log.for_run(1))
    assert force[("stance", "E1")].value == {"label": "nei"}
    assert len(log.for_run(1)) == 2  # the earlier one stays on record


def test_reviewed_report_applies_corrections_and_stays_a_report(db) -> None:
    _, log = db
    report = carded_report()
    log.add(1, "relevance", {"relevant": False}, user="ana", target="E2")
    log.add(1, "stance", {"label": "refutes"}, user="ana", target="E1")
    log.add(
        1, "verdict", {"scale": "politifact", "label": "false", "note": "5M, not 3M"}, user="bo"
    )
    corr = log.for_run(1)
    view = {c.id: c for c in cards(report, corr)}
    assert not view["E2"].relevant and view["E2"].relevance_by == "ana"
    assert view["E1"].stance.label == "refutes" and view["E1"].stance_by == "ana"
    out = reviewed(report, corr)
    assert [e.id for e in out.evidence] == ["E1"]
    # the question is answered again by the rules: E2 is gone, E1 now refutes (set by ana)
    assert out.answers[0].answer == "no" and out.answers[0].evidence_ids == ("E1",)
    assert out.verdict.label == "false" and out.verdict.judge == "user:bo"
    assert out.verdict.scale == "factseek" and out.verdict.evidence_ids == ("E1",)
    assert out.review.status == "set" and out.review.reviewer == "bo"
    assert out.review.rating == 1 and out.review.rating_name == "False"
    assert out.review.machine == report.verdict
    assert any("the pipeline said refuted (confidence 0.66)" in n for n in out.notes)
    assert from_json(Report, render(out, "json")) == out  # still a complete, valid report
    assert "user:bo" in render(out, "md") and "5M, not 3M" in render(out, "html")


def test_summaries_become_cards_when_a_report_has_no_evidence(db) -> None:
    _, log = db
    report = run(CLAIM, fake_parts())
    assert report.summaries and not report.evidence
    view = cards(report)
    assert [c.id for c in view] == [f"S{i}" for i in range(1, len(report.summaries) + 1)]
    first = next(c for c in view if c.relevant)
    assert first.domain and first.published and first.quotes[0].start_char is not None
    log.add(1, "relevance", {"relevant": False}, user="ana", target=first.id)
    out = reviewed(report, log.for_run(1))
    assert out.summaries[int(first.id[1:]) - 1].relevant is False
    assert any(first.id in n and "marked irrelevant by ana" in n for n in out.notes)


def test_run_with_user_questions_skips_decomposition() -> None:
    edited = [Question(text="Did the bridge cost 5 million dollars?", source="user", kind="user")]
    report = run(CLAIM, fake_parts(), questions=edited + edited)
    assert report.questions == tuple(edited)  # deduplicated, recorded as the user's
    assert [r.query.text for r in report.results] == [edited[0].text]
    assert any("edited by the user" in n for n in report.notes)
    with pytest.raises(InputError, match="no questions"):
        run(CLAIM, fake_parts(), questions=[Question(text="  ", source="user")])


def test_claim_review_fields(db) -> None:
    _, log = db
    log.add(1, "approve", {"label": "refuted", "scale": "averitec", "judge": "x"}, user="ana")
    report = reviewed(carded_report(), log.for_run(1))
    data = claim_review(
        report, organisation="Check Desk", url="https://desk.example/r/1",
        published=dt.date(2024, 2, 1),
    )  # fmt: skip
    assert data["@context"] == "https://schema.org" and data["@type"] == "ClaimReview"
    assert data["claimReviewed"] == CLAIM.text and data["datePublished"] == "2024-02-01"
    assert data["author"] == {"@type": "Organization", "name": "Check Desk"}
    item = data["itemReviewed"]
    assert item["@type"] == "Claim" and item["datePublished"] == "2024-01-10"
    assert item["author"] == {"@type": "Person", "name": "Ana Ruiz"}
    assert item["appearance"][0]["name"] == "a council meeting"
    assert data["reviewRating"] == {
        "@type": "Rating", "alternateName": "Refuted", "ratingValue": 1, "bestRating": 5,
        "worstRating": 1,
    }  # fmt: skip
    assert [c["url"] for c in data["citation"]] == [DOCS[0].url, DOCS[1].url]
    assert data["url"] == "https://desk.example/r/1"
    log.add(1, "verdict", {"label": "not-enough-evidence", "scale": "factseek"}, user="ana")
    nee = reviewed(carded_report(), log.for_run(1))
    assert claim_review(nee)["reviewRating"] == {
        "@type": "Rating", "alternateName": "Not enough evidence"
    }  # fmt: skip
    assert claim_review(nee)["author"] == {"@type": "Person", "name": "ana"}
    with pytest.raises(InputError, match="http"):
        claim_review(report, url="javascript:alert(1)")
    with pytest.raises(InputError, match="no reviewer has approved or set"):
        claim_review(reviewed(Report(claim=CLAIM), []))
    with pytest.raises(InputError, match="no reviewer has approved or set"):
        claim_review(carded_report())  # a report that never went through review


def test_default_rating_scale_maps_both_machine_scales_to_one_to_five() -> None:
    from factseek.review.ratings import DEFAULT_RATINGS

    pf = ("pants-fire", "false", "barely-true", "half-true", "mostly-true", "true")
    assert [DEFAULT_RATINGS.for_machine("politifact", x).value for x in pf] == [1, 1, 2, 3, 4, 5]
    av = ("refuted", "conflicting-evidence", "supported", "not-enough-evidence")
    assert [DEFAULT_RATINGS.for_machine("averitec", x).value for x in av] == [1, 3, 5, None]
    assert DEFAULT_RATINGS.get("barely-true").name == "Mostly False"


def test_feedback_export_round_trips_into_the_training_loaders(db, tmp_path) -> None:
    history, log = db
    # run 1: the pipeline's summary cards; the fact-checker edits the questions and judges cards
    report = run(CLAIM, fake_parts())
    r1 = history.create(CLAIM, user="ana")
    history.finish(r1, report)
    edited = ["Did the bridge cost 5 million dollars", "Who paid for the bridge?"]
    log.add(
        r1, "questions", {"before": [], "after": [CLAIM.text, *edited], "rerun_id": 2}, user="ana"
    )
    ids = [c.id for c in cards(report)]
    log.add(r1, "relevance", {"relevant": True}, user="ana", target=ids[0])
    log.add(r1, "relevance", {"relevant": False}, user="ana", target=ids[-1])
    log.add(r1, "verdict", {"scale": "politifact", "label": "false", "note": "5M"}, user="ana")
    # run 2: evidence cards with stance; one stance corrected, an AVeriTeC verdict override
    r2 = history.create(CLAIM, user="bo")
    history.finish(r2, carded_report())
    log.add(r2, "stance", {"label": "refutes"}, user="bo", target="E1")
    log.add(r2, "verdict", {"scale": "averitec", "label": "refuted"}, user="bo")

    out = tmp_path / "feedback"
    counts = export(history, log, out)
    assert counts.runs == 2 and counts.decompose == 1 and counts.verdicts == 1
    assert counts.averitec == 1 and counts.skipped == {}

    # decomposition examples: ClaimDecomp chat format, the claim itself left out
    (ex,) = load_claimdecomp(out / "decompose.jsonl")
    assert ex.claim.text == CLAIM.text and ex.claim.speaker == "Ana Ruiz"
    assert ex.claim.date == CLAIM.date and ex.claim.venue == "a council meeting"
    assert ex.questions == ("Did the bridge cost 5 million dollars?", "Who paid for the bridge?")
    assert data_format("auto", out / "decompose.jsonl").name == "claimdecomp"

    # stance pairs: question, evidence, label; readable by the FEVER loader (judge train)
    rows = [json.loads(x) for x in (out / "stance.jsonl").read_text().splitlines()]
    assert {(r["card"], r["label"]) for r in rows} == {(ids[-1], "nei"), ("E1", "refutes")}
    assert all(r["question"] and r["evidence"] and r["user"] for r in rows)
    loaded = load_claims(out / "stance.jsonl")  # format sniffed as fever
    assert sorted(x.label for x in loaded) == ["not-enough-info", "refutes"]
    assert {x.justification for x in loaded} == {r["evidence"] for r in rows}
    from factseek.stance.data import extra_pairs  # and by stance training (`--extra`)

    pairs = extra_pairs(out / "stance.jsonl")
    assert sorted(p.label for p in pairs) == ["nei", "refutes"]
    assert {p.evidence for p in pairs} == {r["evidence"] for r in rows}

    # accepted queries for the rewriter: the jsonl retrieval format with its corpus
    data = load_retrieval(out / "rewrite_queries.jsonl", out / "rewrite_corpus.jsonl", "jsonl")
    by_query = {c.text: c.relevant for c in data.claims}
    assert by_query[report.results[0].query.text] == (cards(report)[0].url,)
    assert DOCS[0].url in by_query["Did the council spend 3 million dollars on the bridge?"]
    assert {d.id for d in data.corpus} >= {c.url for c in cards(report)}
    assert data.dropped == {} or sum(data.dropped.values()) == 0

    # verdict overrides on the PolitiFact scale: ClaimDecomp's labelled format
    (v,) = load_claimdecomp(out / "verdicts.jsonl")
    assert v.label == "false" and v.justification == "5M" and v.claim.date == CLAIM.date
    # and on the AVeriTeC scale: AVeriTeC's own JSON array
    from factseek.datasets.claims import load_averitec

    (a,) = load_averitec(out / "verdicts_averitec.json")
    assert a.label == "refuted" and a.claim.text == CLAIM.text and a.claim.date == CLAIM.date
    assert data_format("auto", out / "verdicts_averitec.json").name == "averitec"


def test_decompose_example_without_date_or_speaker() -> None:
    ex = decompose_example(CLAIM.__class__(text="Taxes rose."), ["Did taxes rise"])
    assert ex["messages"][0]["content"] == "Unknown\n“Taxes rose.”"
    assert ex["messages"][1]["content"] == "Did taxes rise?"


def test_feedback_export_cli(tmp_path) -> None:
    from typer.testing import CliRunner

    from factseek.cli import app

    db = tmp_path / "h.sqlite"
    history, log = History(db), FeedbackLog(db)
    rid = history.create(CLAIM, user="ana")
    history.finish(rid, carded_report())
    log.add(rid, "stance", {"label": "supports"}, user="ana", target="E2")
    res = CliRunner().invoke(
        app, ["feedback", "export", "--db", str(db), "--out", str(tmp_path / "o")]
    )
    assert res.exit_code == 0, res.output
    assert "1 stance pairs" in res.output
    assert (tmp_path / "o" / "stance.jsonl").read_text().count("\n") == 1
    missing = CliRunner().invoke(
        app,
        ["feedback", "export", "--db", str(tmp_path / "no.sqlite"), "--out", str(tmp_path / "p")],
    )
    assert missing.exit_code == 2 and "no history database" in missing.output
