"""A reviewer's correction of a card applies wherever the same sentence answers the same question
(issue 50, item 4): copies on other pages and under a question ``merge_same`` would merge reach it,
the same sentence under another question and another sentence do not, a copy corrected by itself
keeps its own reading, the recomputed verdict uses the copies, the page, the notes and the export
say where a correction reached, and a rerun still carries it."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from factseek.judge.verdict import StanceRules, answer_questions
from factseek.review.apply import cards, carry_forward, review_state, reviewed, user_stance
from factseek.review.copies import copies, sentence_key
from factseek.review.export import export
from factseek.review.feedback import FeedbackLog
from factseek.review.history import History
from factseek.types import Claim, Document, Evidence, Question, Report, StanceResult
from factseek.web.views import review
from web_fixtures import csrf_token, stored_run, web_client

CLAIM = Claim(text="The Tarrow library reopened in March after a 2 million pound refit.")
Q = (
    Question(text=CLAIM.text, source="claim", kind="claim"),
    Question(text="Did the Tarrow library reopen in March?"),
    Question(text="Did the refit of the Tarrow library cost 2 million pounds?"),
    Question(text="Did the Tarrow library reopen in March 2025?"),  # merge_same: the same as Q[1]
)
SAID = "The library reopened on March 3 \u2014 \u201ca great day,\u201d the mayor said."
COPY = 'the library  reopened on March 3 - "a great day," the Mayor said'  # a syndicated copy
OTHER = "Work on the library's roof ran late into April."


def card(n: int, q: int, label: str, p: float, text: str, site: str = "") -> Evidence:
    rest = (1 - p) / 2
    probs = {x: (p if x == label else rest) for x in ("supports", "refutes", "nei")}
    site = site or f"site{n}"
    return Evidence(
        id=f"E{n}",
        url=f"https://{site}.example/library",
        text=text,
        start_char=0,
        end_char=len(text),
        question=Q[q].text,
        domain=f"{site}.example",
        stance=StanceResult(label=label, probs=probs, model="hand"),  # type: ignore[arg-type]
    )


def checked(evidence: list[Evidence] | None = None) -> Report:
    """A stance-rules report whose reader misread the mayor's sentence as refuting the reopening
    on every copy: E1 and E2 (two pages) and E5 (a question merge_same would merge); E3 is the
    same sentence for the refit's cost, E4 another sentence, both taking no side."""
    evidence = evidence or [
        card(1, 1, "refutes", 0.9, SAID, "gazette"),
        card(2, 1, "refutes", 0.88, COPY, "wire"),
        card(3, 2, "nei", 0.7, SAID, "gazette"),
        card(4, 1, "nei", 0.6, OTHER, "post"),
        card(5, 3, "refutes", 0.86, SAID, "herald"),
    ]
    answers = answer_questions(Q, evidence)
    verdict = StanceRules("hand").judge(CLAIM, Q, evidence, answers)
    docs = tuple(Document(url=e.url, text=e.text, title=f"Page {e.id}") for e in evidence)
    return Report(
        claim=CLAIM,
        questions=Q,
        documents=docs,
        evidence=tuple(evidence),
        answers=tuple(answers),
        verdict=verdict,
    )


@pytest.fixture
def log(tmp_path):
    return FeedbackLog(tmp_path / "h.sqlite")


def stances(report: Report, corrections) -> dict[str, tuple[str, str]]:
    """Card id -> (stance label, who set it)."""
    return {c.id: (c.stance.label, c.stance_by) for c in cards(report, corrections)}


def test_the_same_sentence_is_folded_and_copies_are_per_question() -> None:
    assert sentence_key(SAID) == sentence_key(COPY) != sentence_key(OTHER)
    assert copies(checked()) == {"E1": ("E2", "E5"), "E2": ("E1", "E5"), "E5": ("E1", "E2")}


def test_a_stance_reaches_the_same_sentence_for_the_same_question_only(log) -> None:
    report = checked()
    log.add(1, "stance", {"label": "supports"}, user="maria", target="E1")
    got = stances(report, log.for_run(1))
    assert (
        got["E1"] == got["E2"] == got["E5"] == ("supports", "maria")
    )  # two pages, merged question
    assert got["E3"] == ("nei", "")  # the same sentence for another question
    assert got["E4"] == ("nei", "")  # another sentence
    by_id = {c.id: c for c in cards(report, log.for_run(1))}
    assert by_id["E1"].applied_to == ("E2", "E5") and by_id["E1"].stance_from == ""
    assert by_id["E2"].stance_from == "E1" and by_id["E3"].stance_from == ""
    notes = reviewed(report, log.for_run(1)).notes
    assert "E1 stance set to supports by maria: also applied to E2, E5: same sentence, same question" in notes  # fmt: skip
    assert any(n.startswith("stance of E2 set to supports by maria") and "(E1's correction" in n for n in notes)  # fmt: skip


def test_an_irrelevant_mark_reaches_the_copies_and_they_leave_the_evidence(log) -> None:
    log.add(1, "relevance", {"relevant": False}, user="ana", target="E2")
    out = reviewed(checked(), log.for_run(1))
    assert [e.id for e in out.evidence] == ["E3", "E4"]
    assert "E2 marked irrelevant by ana: also applied to E1, E5: same sentence, same question" in out.notes  # fmt: skip


def test_a_later_correction_of_a_copy_is_its_own(log) -> None:
    report = checked()
    log.add(1, "stance", {"label": "supports"}, user="maria", target="E1")
    log.add(1, "stance", {"label": "nei"}, user="ana", target="E2")  # this page reads otherwise
    got = stances(report, log.for_run(1))
    assert got["E2"] == ("nei", "ana") and got["E1"] == got["E5"] == ("supports", "maria")
    # correcting the first card again does not undo the copy's own reading
    log.add(1, "stance", {"label": "refutes"}, user="maria", target="E1")
    got = stances(report, log.for_run(1))
    assert got["E2"] == ("nei", "ana") and got["E1"] == got["E5"] == ("refutes", "maria")
    assert {c.id: c.applied_to for c in cards(report, log.for_run(1))}["E1"] == ("E5",)


def test_the_recomputed_verdict_uses_the_copies(log) -> None:
    report = checked()
    assert report.verdict.label == "refuted"
    log.add(1, "stance", {"label": "nei"}, user="maria", target="E1")
    state = review_state(report, log.for_run(1))
    fixed = [
        replace(e, stance=user_stance("nei", "maria")) if e.id in ("E1", "E2", "E5") else e
        for e in report.evidence
    ]
    want = StanceRules("hand").judge(CLAIM, Q, fixed, answer_questions(Q, fixed))
    assert state.machine_now == want
    assert want.label == "not-enough-evidence"  # no copy is left to refute the reopening
    # what the rules said when the correction reached E1 alone
    one = [replace(e, stance=user_stance("nei", "maria")) if e.id == "E1" else e for e in report.evidence]  # fmt: skip
    assert StanceRules("hand").judge(CLAIM, Q, one, answer_questions(Q, one)).label == "refuted"
    reopened = {a.question: a for a in state.report.answers}[Q[1].text]
    assert not {"E2", "E5"} & set(reopened.evidence_ids)


def test_a_rerun_carries_a_correction_to_the_sentence_for_the_same_question(log) -> None:
    old = checked()
    log.add(7, "stance", {"label": "supports"}, user="maria", target="E1")
    # the rerun lost the first page; the sentence stands on the wire's page and for the cost
    new = checked([replace(old.evidence[1], id="E1"), replace(old.evidence[2], id="E2")])
    plan = carry_forward(old, log.for_run(7), new, from_run=7)
    assert [(x.source.target, x.target) for x in plan.carried] == [("E1", "E1")]


def test_the_review_page_and_the_export_say_where_a_correction_reached(tmp_path) -> None:
    with web_client(tmp_path, "maria") as c:
        path = stored_run(c, checked(), "maria")
        token = csrf_token(c, path)
        r = c.post(
            f"{path}/cards/E1",
            data={"action": "stance", "label": "supports", "csrf_token": token},
            follow_redirects=True,
        )
        assert r.status_code == 200
        page = r.text
        # a verdict the reviewer sets rests on the copies too, and the History row says so
        c.post(f"{path}/verdict", data={"csrf_token": token, "label": "factseek:true"})
        row = c.get("/history").text.split("<tbody>")[1]
        assert "set by maria" in row and "rests on E1, E2, E5<" in row
    assert "Also applied to" in page and "same sentence, same question" in page
    assert '<a href="#card-E2">E2</a>, <a href="#card-E5">E5</a>' in page
    assert "Corrected on" in page and '<a href="#card-E1">E1</a>: same sentence' in page
    view = review(checked(), FeedbackLog(tmp_path / "h.sqlite").for_run(1))
    assert list(view.reached.values()) == [("E2", "E5")]
    out = tmp_path / "feedback"
    export(History(tmp_path / "h.sqlite"), FeedbackLog(tmp_path / "h.sqlite"), out)
    rows = [json.loads(x) for x in (out / "stance.jsonl").read_text().splitlines()]
    assert [(r["card"], r["label"], r["applied_to"]) for r in rows] == [
        ("E1", "supports", ["E2", "E5"])  # one judgement, one training example
    ]


@pytest.mark.parametrize(
    "other",
    [
        Question(text="Did the Tarrow library reopen in March 2025?"),  # adds a year: merged
        Question(text="Did the Tarrow library reopen in May?"),  # another month: apart
        Question(text="Did the Tarrow library reopen in March 2025?", source="user"),  # fixed
    ],
)
def test_same_question_is_what_merge_same_merges(other: Question) -> None:
    from factseek.decompose import merge_same, same_question

    assert same_question(Q[1], other) == (len(merge_same([Q[1], other])) == 1)
    assert same_question(Q[1], Question(text=" Did the Tarrow library  reopen in March?"))
