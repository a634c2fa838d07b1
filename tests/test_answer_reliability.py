"""How often the claim's own answer held (issue 24): measured by `eval pipeline`, recorded in a
rules file by `judge rules-precision`, and said beside every report's answers."""

from __future__ import annotations

import pytest

from factseek.errors import ConfigError
from factseek.judge.rules import VerdictRules, answer_words, rules_from_dict
from factseek.report.html import render_html
from factseek.report.markdown import render_markdown
from factseek.types import Answer, Claim, Question, Report

MEASURED = {
    "yes": {"precision": 0.5636, "right": 31, "n": 55},
    "no": {"precision": 0.8481, "right": 67, "n": 79},
}


def test_the_rules_carry_and_say_it() -> None:
    rules = VerdictRules(answer_precision=MEASURED, answer_basis="AVeriTeC dev, 500 claims")
    assert rules_from_dict(rules.to_dict()) == rules
    said = answer_words(rules)
    assert said.startswith("where it was measured (AVeriTeC dev, 500 claims), when the claim")
    assert "answered “yes” it was supported 56% of the time (31 of 55)" in said
    assert "answered “no” it was refuted 85% of the time (67 of 79)" in said
    assert said.endswith("the subquestions' answers were not measured")
    subs = {"yes": {"precision": 0.3664, "right": 48, "n": 131}}
    both = VerdictRules(answer_precision=MEASURED, subquestion_precision=subs)
    assert rules_from_dict(both.to_dict()) == both
    assert answer_words(both).endswith(
        "; when a subquestion was answered “yes” the claim was supported 37% of the time (48 of 131)"
    )
    assert answer_words(VerdictRules()) == ""  # nothing measured: nothing said
    assert answer_words(VerdictRules(subquestion_precision=subs)) == ""  # the claim's first
    only_no = VerdictRules(answer_precision={"no": MEASURED["no"]})
    assert "yes" not in answer_words(only_no) and answer_words(only_no).startswith("when")


@pytest.mark.parametrize(
    "bad",
    [
        {"maybe": {"precision": 0.5, "right": 1, "n": 2}},
        {"yes": {"precision": 0.5, "right": 3, "n": 2}},
        {"yes": {"precision": 1.5, "right": 1, "n": 2}},
        {"yes": {"precision": 0.5}},
    ],
)
def test_bad_entries_are_refused(bad) -> None:
    with pytest.raises(ConfigError, match="answer_precision"):
        VerdictRules(answer_precision=bad)
    with pytest.raises(ConfigError, match="subquestion_precision"):
        VerdictRules(subquestion_precision=bad)


def test_subquestions_are_scored_by_the_claims_label() -> None:
    from factseek.datasets.labeled import LabeledClaim
    from factseek.runs.evaluate import claim_answers, subquestion_answers

    def case(cid: str, label: str, own: str, subs: list[str]) -> tuple[LabeledClaim, Report]:
        claim = Claim(text=f"Claim {cid}.", id=cid)
        mine = Question(text=claim.text, source="claim", kind="claim")
        questions = (mine, *(Question(text=f"Part {k} of {cid}?") for k in range(len(subs))))
        answers = tuple(
            Answer(question=q.text, answer=a)  # type: ignore[arg-type]
            for q, a in zip(questions, [own, *subs], strict=True)
        )
        return LabeledClaim(claim=claim, label=label), Report(
            claim=claim, questions=questions, answers=answers
        )

    cases = [
        case("a", "supported", "yes", ["yes", "no", "unknown"]),  # sub: yes right, no wrong
        case("b", "refuted", "no", ["no", "no"]),  # both right
        case("c", "conflicting-evidence", "yes", ["yes"]),  # right only for its own label
        case("d", "refuted", "unknown", ["yes"]),  # the claim's own: not counted
    ]
    rows, reports = [r for r, _ in cases], {r.claim.id: rep for r, rep in cases}
    assert subquestion_answers(rows, reports) == {
        "yes": {"precision": round(1 / 3, 4), "right": 1, "n": 3},
        "no": {"precision": 0.6667, "right": 2, "n": 3},
    }
    assert claim_answers(rows, reports) == {
        "yes": {"precision": 0.5, "right": 1, "n": 2},
        "no": {"precision": 1.0, "right": 1, "n": 1},
    }


def _report(said: str, answer: str = "no") -> Report:
    claim = Claim(text="The plant cost $62 million.")
    return Report(
        claim=claim,
        questions=(Question(text=claim.text, source="claim", kind="claim"),),
        answers=(Answer(question=claim.text, answer=answer, confidence=0.8),),  # type: ignore[arg-type]
        config={"answer_reliability": said} if said else {},
    )


def test_every_report_view_says_it_with_the_answers() -> None:
    said = answer_words(VerdictRules(answer_precision=MEASURED, answer_basis="dev <b>"))
    md = render_markdown(_report(said))
    line = md.index("How far to trust an answer: where it was measured (dev &lt;b&gt;)")
    assert md.index("| question | answer |") < line < md.index("## Evidence cards")
    html = render_html(_report(said))
    assert "id='answer-reliability'" in html and "dev &lt;b&gt;" in html and "<b>)" not in html
    assert "How far to trust an answer" not in render_markdown(_report(""))
    # no yes or no among the answers: nothing it would vouch for
    assert "How far to trust an answer" not in render_markdown(_report(said, "unknown"))


def test_a_check_carries_its_rules_measurement(tmp_path, monkeypatch) -> None:
    from factseek.api import CheckOptions, _evidence_parts
    from factseek.judge.rules import ENV

    path = VerdictRules(answer_precision=MEASURED, answer_basis="here").save(tmp_path / "r.json")
    monkeypatch.setenv(ENV, str(path))
    names: dict[str, str] = {}
    _evidence_parts(CheckOptions(stance="small"), None, names, [])
    assert names["answer_reliability"] == answer_words(VerdictRules(answer_precision=MEASURED, answer_basis="here"))  # fmt: skip
    monkeypatch.setenv(ENV, "builtin")
    names = {}
    _evidence_parts(CheckOptions(stance="small"), None, names, [])
    assert "answer_reliability" not in names
