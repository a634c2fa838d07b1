"""The reviewer decides: corrections recompute answers and the verdict with the report's own
rules, a decision needs a named reviewer, ClaimReview only for reviewed verdicts, the
organisation's rating scale, reruns carry corrections forward, History and exports show it."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace

import pytest

from factseek.errors import ConfigError, InputError
from factseek.judge.verdict import StanceRules, answer_questions
from factseek.report import render
from factseek.review.apply import carry_forward, listing, review_state, reviewed
from factseek.review.claimreview import automated_verdict, claim_review, refusal
from factseek.review.export import export
from factseek.review.feedback import FeedbackLog
from factseek.review.history import History
from factseek.review.ratings import DEFAULT_RATINGS, label_words, load_ratings, ratings_from_dict
from factseek.types import (
    Answer,
    Claim,
    Document,
    Evidence,
    Question,
    Report,
    StanceResult,
    Verdict,
    from_json,
)
from factseek.web.views import review

CLAIM = Claim(text="The ferry cost 9 million euros and sailed in May.")
Q = (
    Question(text=CLAIM.text, source="claim", kind="claim"),
    Question(text="Did the ferry cost 9 million euros?"),
    Question(text="Did the ferry sail in May?"),
)


def card(n: int, q: int, label: str, p: float = 0.85, *, url: str = "", text: str = "") -> Evidence:
    rest = (1 - p) / 2
    probs = {x: (p if x == label else rest) for x in ("supports", "refutes", "nei")}
    return Evidence(
        id=f"E{n}",
        url=url or f"https://site{n}.example/a",
        text=text or f"quoted sentence {n}",
        start_char=0,
        end_char=20,
        question=Q[q].text,
        domain=f"site{n}.example",
        stance=StanceResult(label=label, probs=probs, model="hand"),  # type: ignore[arg-type]
    )


def rules_report(cards: list[Evidence], *, judge: str = "stance-rules:hand") -> Report:
    """A report as the pipeline makes it with the default evidence judge."""
    answers = answer_questions(Q, cards)
    verdict = StanceRules("hand").judge(CLAIM, Q, cards, answers)
    if judge != verdict.judge:
        verdict = replace(verdict, judge=judge)
    docs = tuple(Document(url=e.url, text=e.text, title=f"Page {e.id}") for e in cards)
    return Report(
        claim=CLAIM,
        questions=Q,
        documents=docs,
        evidence=tuple(cards),
        answers=tuple(answers),
        verdict=verdict,
    )


@pytest.fixture
def log(tmp_path):
    return FeedbackLog(tmp_path / "h.sqlite")


# ----------------------------------------------------------------------------- recomputation


def test_a_corrected_stance_recomputes_the_answer_and_the_verdict_by_the_rules(log) -> None:
    cards = [card(1, 1, "refutes", 0.85), card(2, 2, "supports", 0.8)]
    report = rules_report(cards)
    assert report.answers[1].answer == "no" and report.verdict.label == "refuted"
    untouched = replace(report.answers[2], rationale="as the pipeline said it")
    report = replace(report, answers=(*report.answers[:2], untouched))
    log.add(1, "stance", {"label": "supports"}, user="maria", target="E1")
    out = reviewed(report, log.for_run(1))
    # the same rules, called on the corrected cards, are the reference
    fixed = [replace(cards[0], stance=out.evidence[0].stance), cards[1]]
    answers = [report.answers[0], answer_questions([Q[1]], fixed)[0], untouched]
    want = StanceRules("hand").judge(CLAIM, Q, fixed, answers)
    assert out.answers[1].answer == "yes" and out.answers[1].evidence_ids == ("E1",)
    assert "E1 (site1.example, set by maria)" in out.answers[1].rationale  # not "1.00"
    assert out.verdict == want and out.verdict.label == "supported"
    assert out.review.status == "machine" and out.review.machine == report.verdict
    assert [(a.question, a.answer) for a in out.review.machine_answers] == [(Q[1].text, "no")]
    assert any("the rules give supported" in n and "said refuted" in n for n in out.notes)
    # the question the correction did not touch keeps the pipeline's answer
    assert out.answers[2] == untouched
    # a confidence that rests on a reviewer's stance (1.0 by construction) is not shown
    md = render(out, "md")
    assert "**supported** (averitec scale) by stance-rules:hand" in md
    assert "| **yes (after corrections; the machine said no 0.85)** |  | E1 |" in md
    assert review(report, log.for_run(1)).verdict.confidence.startswith("No confidence shown")
    # an irrelevant mark on the only card of a question leaves it without evidence
    log.add(1, "relevance", {"relevant": False}, user="maria", target="E1")
    out = reviewed(report, log.for_run(1))
    assert out.answers[1].answer == "unknown" and out.answers[1].evidence_ids == ()
    assert "E1" not in out.verdict.evidence_ids and [e.id for e in out.evidence] == ["E2"]
    assert from_json(Report, render(out, "json")) == out  # still a complete report


def test_a_verdict_from_another_judge_is_not_rerun_but_flagged(log) -> None:
    report = rules_report([card(1, 1, "refutes")], judge="my-trained-judge")
    log.add(1, "stance", {"label": "supports"}, user="maria", target="E1")
    out = reviewed(report, log.for_run(1))
    assert out.answers[1].answer == "yes"  # answers follow the rules
    assert out.verdict.label == "refuted"  # the trained judge is not rerun ...
    assert any("predates the corrections" in n for n in out.notes)  # ... and it says so


def test_decisions_approve_set_stale_and_who(log) -> None:
    report = rules_report([card(1, 1, "refutes", 0.85)])
    assert refusal(reviewed(report, []).review).startswith("no reviewer has approved")
    log.add(1, "approve", {"label": "refuted", "scale": "averitec", "judge": "j"}, user="maria")
    out = reviewed(report, log.for_run(1))
    assert out.review.status == "approved" and out.review.reviewer == "maria"
    assert (out.review.rating, out.review.rating_name) == (1, "Refuted")
    assert out.verdict == report.verdict and refusal(out.review) == ""
    assert listing(out).status == "approved" and listing(out).words == "Refuted"
    # a later correction changes the machine's verdict: the approval no longer holds
    log.add(1, "stance", {"label": "supports"}, user="ana", target="E1")
    out = reviewed(report, log.for_run(1))
    assert out.review.status == "stale" and out.verdict.label == "not-enough-evidence"
    assert "changed after maria approved it" in refusal(out.review)
    with pytest.raises(InputError, match="changed after maria approved"):
        claim_review(out)
    # setting the verdict replaces the machine's
    log.add(1, "verdict", {"label": "half-true", "scale": "factseek", "note": "both"}, user="li")
    state = review_state(report, log.for_run(1))
    out = state.report
    assert out.review.status == "set" and out.verdict.judge == "user:li"
    assert out.verdict.label == "half-true" and out.review.rating == 3
    assert state.machine_now.label == "not-enough-evidence"  # what the rules say now
    assert claim_review(out)["reviewRating"]["alternateName"] == "Half True"
    # a decision by no one in particular is never published
    log.add(1, "verdict", {"label": "false", "scale": "factseek"}, user="")
    assert "no named reviewer" in refusal(reviewed(report, log.for_run(1)).review)


def test_citations_are_the_cards_the_review_keeps(log) -> None:
    cards = [card(1, 1, "refutes"), card(2, 2, "nei"), card(3, 2, "nei")]
    report = rules_report(cards)
    assert report.verdict.evidence_ids == ("E1",)
    log.add(1, "relevance", {"relevant": True}, user="maria", target="E3")
    log.add(1, "approve", {"label": "refuted", "scale": "averitec", "judge": "j"}, user="maria")
    out = reviewed(report, log.for_run(1))
    assert out.review.citations == ("E1", "E3")  # E2: neither cited by the verdict nor kept
    urls = [c["url"] for c in claim_review(out)["citation"]]
    assert urls == ["https://site1.example/a", "https://site3.example/a"]
    log.add(1, "relevance", {"relevant": False}, user="maria", target="E3")
    assert reviewed(report, log.for_run(1)).review.citations == ("E1",)


def test_automated_verdict_is_marked_and_is_the_machines(log) -> None:
    report = rules_report([card(1, 1, "refutes", 0.85)])
    log.add(1, "verdict", {"label": "true", "scale": "factseek"}, user="maria")
    data = automated_verdict(reviewed(report, log.for_run(1)))
    assert data["automated"] is True and data["reviewed"] is False
    assert "not reviewed by a person" in data["notice"] and "@type" not in data
    assert data["verdict"]["label"] == "refuted" and data["evidence"][0]["id"] == "E1"


# ----------------------------------------------------------------------------- rating scale

DESK = {
    "format_version": 1,
    "name": "desk",
    "title": "Desk ratings",
    "labels": [
        {"label": "false", "name": "False", "rating": 1,
         "machine": ["averitec:refuted", "politifact:false", "politifact:pants-fire"]},
        {"label": "misleading", "name": "Misleading", "rating": 2,
         "machine": ["politifact:barely-true", "averitec:conflicting-evidence"]},
        {"label": "true", "name": "True", "rating": 5, "machine": ["averitec:supported"]},
        {"label": "unproven", "name": "Unproven", "rating": None},
    ],
}  # fmt: skip


def test_a_rating_scale_from_a_file(tmp_path, log) -> None:
    path = tmp_path / "desk.json"
    path.write_text(json.dumps(DESK))
    desk = load_ratings(path)
    assert [r.label for r in desk.labels] == ["false", "misleading", "true", "unproven"]
    assert desk.for_machine("averitec", "refuted").name == "False"
    assert desk.for_machine("averitec", "not-enough-evidence") is None
    assert desk.get("unproven").tone == "none" and desk.get("false").tone == "bad"
    assert load_ratings(None) is DEFAULT_RATINGS
    report = rules_report([card(1, 1, "refutes")])
    mine = FeedbackLog(log.path, ratings=desk)
    mine.add(1, "approve", {"label": "refuted", "scale": "averitec", "judge": "j"}, user="maria")
    out = reviewed(report, mine.for_run(1), desk)
    assert (out.review.label, out.review.scale, out.review.rating) == ("false", "desk", 1)
    assert claim_review(out)["reviewRating"]["alternateName"] == "False"
    mine.add(1, "verdict", {"label": "unproven", "scale": "desk"}, user="maria")
    out = reviewed(report, mine.for_run(1), desk)
    assert claim_review(out)["reviewRating"] == {"@type": "Rating", "alternateName": "Unproven"}
    with pytest.raises(InputError, match="unknown desk label 'meh'"):
        mine.add(1, "verdict", {"label": "meh", "scale": "desk"}, user="maria")
    # a verdict set on a machine scale the desk has no label for cannot be published
    mine.add(1, "verdict", {"label": "mostly-true", "scale": "politifact"}, user="maria")
    out = reviewed(report, mine.for_run(1), desk)
    assert "no place on the organisation's rating scale" in refusal(out.review)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"format_version": 2}, "format_version must be 1"),
        ({"name": "politifact"}, "name must be"),
        ({"labels": []}, "labels must be a list"),
        ({"labels": [{"label": "x", "name": "X", "rating": 6}]}, "integer 1-5 or null"),
        ({"labels": [{"label": "x", "name": "X", "rating": 1, "machine": ["averitec:nope"]}]},
         "unknown machine label 'averitec:nope'"),
        ({"labels": [{"label": "x", "name": "X", "rating": 1, "machine": ["averitec:refuted"]},
                     {"label": "y", "name": "Y", "rating": 2, "machine": ["averitec:refuted"]}]},
         "belongs to both 'x' and 'y'"),
        ({"labels": [{"label": "x", "name": "X", "rating": 1}] * 2}, "appears twice"),
    ],
)  # fmt: skip
def test_a_bad_rating_scale_says_what_is_wrong(change, message) -> None:
    with pytest.raises(ConfigError, match=message):
        ratings_from_dict({**DESK, **change}, "desk.json")


def test_missing_rating_scale_file(tmp_path) -> None:
    with pytest.raises(ConfigError, match="rating scale not found"):
        load_ratings(tmp_path / "nope.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ConfigError, match=r"bad\.json: not valid JSON"):
        load_ratings(tmp_path / "bad.json")


# ----------------------------------------------------------------------------- reruns


def test_carry_forward_matches_url_and_quote_not_card_ids(log) -> None:
    a = card(1, 1, "refutes", url="https://a.example/x", text="It cost 12 million.")
    b = card(2, 1, "supports", url="https://b.example/y", text="The bill was 9 million.")
    c = card(3, 2, "nei", url="https://c.example/z", text="Sailing began in June.")
    d = card(4, 2, "nei", url="https://d.example/w", text="Crew hired in April.")
    old = rules_report([a, b, c, d])
    log.add(7, "relevance", {"relevant": False}, user="maria", target="E1")
    log.add(7, "stance", {"label": "refutes"}, user="maria", target="E2")
    log.add(7, "stance", {"label": "refutes"}, user="ana", target="E3")
    log.add(7, "stance", {"label": "supports"}, user="ana", target="E4")
    log.add(7, "verdict", {"label": "false", "scale": "factseek"}, user="maria")
    # the rerun finds B first, A under another question, D under another question, not C;
    # whitespace in a quote does not matter
    new = rules_report(
        [
            replace(b, id="E1", text="The bill  was\n9 million."),
            replace(a, id="E2"),
            replace(d, id="E3", question=Q[1].text),
            replace(a, id="E4", question=Q[2].text),  # the same quote for another question
        ]
    )
    plan = carry_forward(old, log.for_run(7), new, from_run=7)
    assert [(x.kind, x.source.target, x.target) for x in plan.carried] == [
        ("relevance", "E1", "E2"),  # the irrelevant mark follows page, quote and question
        ("stance", "E2", "E1"),
    ]
    assert plan.carried[1].value == {"label": "refutes", "carried_from": {"run": 7, "card": "E2"}}
    why = {(n.source.kind, n.card): n.why for n in plan.not_carried}
    assert "do not quote it any more" in why[("stance", "E3")]
    assert "another question" in why[("stance", "E4")]  # stance depends on the question
    assert "decided on each run's own evidence" in why[("verdict", "")]
    record = plan.record()
    assert record["from_run"] == 7 and len(record["not_carried"]) == 3
    # stored as corrections of the rerun, they flow through the review like any other
    for x in plan.carried:
        log.add(8, x.kind, x.value, user=x.source.user, target=x.target)
    log.add(8, "carry", record, user="maria")
    out = reviewed(new, log.for_run(8))
    assert [e.id for e in out.evidence] == ["E1", "E3", "E4"]
    assert (
        out.evidence[0].stance.label == "refutes" and out.evidence[0].stance.model == "user:maria"
    )
    assert "carried forward from #7: E2 stance set to refutes by maria (now E1)" in out.notes
    assert any(n.startswith("no longer applies (from #7): E3 stance set to refutes by ana: this run's") for n in out.notes)  # fmt: skip


# ----------------------------------------------------------------------------- storage, views


def test_history_files_from_before_reviews_are_upgraded(tmp_path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:  # the first schema, without review_json
        conn.executescript(
            "CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, created TEXT NOT NULL,"
            " user TEXT NOT NULL DEFAULT '', claim TEXT NOT NULL, claim_json TEXT NOT NULL,"
            " options_json TEXT NOT NULL DEFAULT '{}', status TEXT NOT NULL, report_json TEXT,"
            " label TEXT, error TEXT NOT NULL DEFAULT '', parent_id INTEGER, seconds REAL);"
        )
    history = History(path)
    rid = history.create(CLAIM, user="maria")
    report = rules_report([card(1, 1, "refutes")])
    history.finish(rid, report)
    (row,) = history.list()
    assert row.review is None and row.shown_label == "refuted"
    log = FeedbackLog(path)
    log.add(rid, "verdict", {"label": "true", "scale": "factseek"}, user="maria")
    history.set_review(rid, listing(reviewed(report, log.for_run(rid))))
    (row,) = History(path).list("ferry")  # opening twice is fine; search shows it too
    assert row.label == "refuted" and row.shown_label == "true"
    assert (row.review.status, row.review.reviewer, row.review.words) == ("set", "maria", "True")


def test_review_view_tells_conflicting_from_no_evidence_and_shows_precision(log) -> None:
    cards = [card(1, 1, "supports", 0.7), card(2, 1, "refutes", 0.6)]
    report = rules_report(cards)
    conflicting = Answer(question=Q[1].text, answer="conflicting", evidence_ids=("E1", "E2"))
    report = replace(
        report,
        answers=(report.answers[0], conflicting, report.answers[2]),
        verdict=replace(report.verdict, precision=0.71, precision_basis="AVeriTeC dev, 500 claims"),
    )
    view = review(report, [])
    kinds = {s.title: (s.answer_class, s.answer_words) for s in view.sections}
    assert kinds[Q[1].text] == ("conflicting", "Conflicting evidence")
    assert kinds[Q[2].text] == ("unknown", "No evidence")
    assert view.verdict.confidence == (
        f"When factseek says {label_words(report.verdict.label)} it was right 71% of the time"
        " (AVeriTeC dev, 500 claims)"
    )
    md, html = render(reviewed(report, []), "md"), render(reviewed(report, []), "html")
    assert "**conflicting evidence**" in md and "**no evidence**" in md
    assert "it was right 71% of the time (AVeriTeC dev, 500 claims)" in md
    assert "class='a-conflicting'" in html and "class='a-unknown'" in html
    assert "Automated verdict, not reviewed by a person." in md


def test_an_abstained_verdict_shows_the_best_card_on_each_side() -> None:
    cards = [card(1, 1, "supports", 0.6), card(2, 2, "refutes", 0.55), card(3, 2, "refutes", 0.7)]
    report = rules_report(cards)
    report = replace(
        report,
        verdict=Verdict(judged=True, label="not-enough-evidence", scale="averitec",
                        judge="stance-rules:hand", abstained=True, confidence=0.3),
    )  # fmt: skip
    v = review(report, []).verdict
    assert v.abstained and v.words == "Not enough evidence to decide"
    assert v.best_for.id == "E1" and v.best_against.id == "E3"
    assert str(report.verdict) == "not-enough-evidence (abstained, confidence 0.30)"
    md = render(report, "md")
    assert "not enough evidence to decide (strongest for: E1 (site1.example, 0.60);" in md
    assert "against: E3 (site3.example, 0.70))" in md
    # a surer card from a letter to the editor is named after one that counts fully
    letter = replace(card(4, 1, "supports", 0.9), genre="letter")
    report = replace(report, evidence=(*report.evidence, letter))
    assert review(report, []).verdict.best_for.id == "E1"
    assert "strongest for: E1 (site1.example, 0.60)" in render(report, "md")
    alone = replace(report, evidence=(letter, *report.evidence[1:]))
    assert "strongest for: E4 (site4.example, letter, 0.90)" in render(alone, "md")
    # so is a surer one whose figure is said of another thing (it never counts as support)
    other = replace(card(5, 1, "supports", 0.95), figure_of_other=True, figures="its 9 million")
    report = replace(report, evidence=(*report.evidence, other))
    assert review(report, []).verdict.best_for.id == "E1"
    assert "strongest for: E1 (site1.example, 0.60)" in render(report, "md")


def test_a_reviewers_stance_counts_where_the_machine_found_the_figure_said_of_another_thing(
    log,
) -> None:
    note = "its 9 million euros is said of the hull, not of the ferry; not counted as support"
    other = replace(card(1, 1, "supports", 0.9), figure_of_other=True, figures=note)
    report = rules_report([other])
    assert report.answers[1].answer == "unknown"  # the machine does not count it
    log.add(1, "stance", {"label": "supports"}, user="maria", target="E1")
    out = reviewed(report, log.for_run(1))
    assert out.answers[1].answer == "yes" and out.answers[1].evidence_ids == ("E1",)
    (e,) = out.evidence
    assert not e.figure_of_other and e.figures == note.removesuffix("; not counted as support")
    assert any("said of another thing, no longer keeps it from counting" in n for n in out.notes)


def test_verdict_prints_one_readable_line() -> None:
    assert (
        str(Verdict(judged=True, label="refuted", confidence=0.85)) == "refuted (confidence 0.85)"
    )
    assert str(Verdict(judged=True, label="false")) == "false"
    assert str(Verdict.not_judged("no evidence stance")) == "not judged: no evidence stance"
    assert repr(Verdict.not_judged()).startswith("Verdict(judged=False, label=None")


# ----------------------------------------------------------------------------- feedback export


def test_feedback_export_takes_reviewed_verdicts_only(tmp_path) -> None:
    db = tmp_path / "h.sqlite"
    path = tmp_path / "desk.json"
    path.write_text(json.dumps(DESK))
    desk = load_ratings(path)
    history, log = History(db), FeedbackLog(db, ratings=desk)
    report = rules_report([card(1, 1, "refutes", 0.85), card(2, 2, "supports", 0.8)])
    ids = []
    for _ in range(4):
        ids.append(history.create(CLAIM, user="maria"))
        history.finish(ids[-1], report)
    a, b, c, d = ids
    log.add(a, "approve", {"label": "refuted", "scale": "averitec", "judge": "j"}, user="maria")
    log.add(b, "verdict", {"label": "false", "scale": "desk", "note": "12M"}, user="ana")
    log.add(c, "approve", {"label": "refuted", "scale": "averitec", "judge": "j"}, user="li")
    log.add(c, "stance", {"label": "supports"}, user="li", target="E1")  # approval now stale
    log.add(d, "stance", {"label": "nei"}, user="li", target="E2")
    log.add(d, "stance", {"label": "nei"}, user="li", target="E1")
    log.add(d + 0, "stance", {"label": "refutes", "carried_from": {"run": a, "card": "E1"}},
            user="maria", target="E1")  # fmt: skip
    counts = export(history, log, tmp_path / "out", ratings=desk, organisation="Desk")
    out = tmp_path / "out"
    crs = [json.loads(x) for x in (out / "claimreview.jsonl").read_text().splitlines()]
    assert [(x["run_id"], x["reviewRating"]["alternateName"]) for x in crs] == [
        (a, "False"), (b, "False")
    ]  # fmt: skip
    assert all(x["author"] == {"@type": "Organization", "name": "Desk"} for x in crs)
    machine = [json.loads(x) for x in (out / "machine_verdicts.jsonl").read_text().splitlines()]
    assert len(machine) == 4 and all(m["automated"] is True for m in machine)
    averitec = json.loads((out / "verdicts_averitec.json").read_text())
    assert [x["label"] for x in averitec] == ["Refuted", "Refuted"]  # a approved, b's "false"
    politifact = (out / "verdicts.jsonl").read_text().splitlines()
    assert len(politifact) == 0  # "false" stands for two PolitiFact labels: ambiguous there
    stance = [json.loads(x) for x in (out / "stance.jsonl").read_text().splitlines()]
    assert sorted((x["run_id"], x["card"]) for x in stance) == [(c, "E1"), (d, "E2")]
    assert counts.claimreviews == 2 and counts.machine == 4
    assert counts.skipped == {"approval outdated": 1}


def test_cli_help_everywhere_and_feedback_export_lists_its_files() -> None:
    import typer
    from typer.testing import CliRunner

    from factseek.cli import app

    runner = CliRunner()
    root = typer.main.get_command(app)

    def walk(cmd, path: list[str]):
        yield path
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                yield from walk(sub, [*path, name])

    paths = list(walk(root, []))
    assert len(paths) > 20
    for path in paths:
        short = runner.invoke(app, [*path, "-h"])
        assert short.exit_code == 0 and "Usage:" in short.output, (path, short.output)
    res = runner.invoke(app, ["feedback", "export", "--help"])
    flat = " ".join(res.output.split())
    for name in ("verdicts.jsonl", "verdicts_averitec.json", "claimreview.jsonl",
                 "machine_verdicts.jsonl", "stance.jsonl", "decompose.jsonl"):  # fmt: skip
        assert name in flat, name
