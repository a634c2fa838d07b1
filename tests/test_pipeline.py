"""The pipeline composes stages, applies both constraints, degrades instead of crashing."""

from __future__ import annotations

import datetime as dt

import pytest

from factseek.constraints.hits import Constraints
from factseek.decompose import claim_question
from factseek.errors import InputError, LLMError
from factseek.pipeline import CheckConfig, Parts, run, validate_claim
from factseek.search.base import MemorySearch
from factseek.summarize import NOT_RELEVANT
from factseek.types import Claim, Document, Question, Summary, Verdict

DOCS = [
    Document(
        url="https://ledger.example/a",
        title="Bridge budget",
        published=dt.date(2023, 1, 5),
        text="The council said the new bridge will cost 3 million dollars to build next year.",
    ),
    Document(
        url="https://news.example/b",
        title="Bridge opens",
        published=dt.date(2024, 9, 1),
        text="The bridge opened and cost 5 million dollars in the end, the council said.",
    ),
    Document(
        url="https://www.snopes.com/fact-check/bridge",
        title="Fact check",
        published=dt.date(2023, 2, 1),
        text="Fact check: the bridge cost is disputed by the council and the mayor.",
    ),
    Document(
        url="https://blog.example/c",
        title="Undated bridge post",
        published=None,
        text="Some say the bridge cost more than the council admits.",
    ),
    Document(
        url="https://weather.example/d",
        title="Weather",
        published=dt.date(2023, 3, 1),
        text="Rain is expected over the weekend with mild temperatures.",
    ),
]


class TwoQuestions:
    name = "two"

    def decompose(self, claim: Claim) -> list[Question]:
        return [
            claim_question(claim),
            Question(text="Did the bridge cost 3 million?"),
            Question(text="Did the bridge cost 3 million?"),
        ]


class Failing:
    name = "failing"

    def decompose(self, claim: Claim) -> list[Question]:
        raise LLMError("the model returned nothing usable")

    def summarize(self, claim, questions, passages):
        raise LLMError("the model returned nothing usable")


class FirstSentence:
    name = "first-sentence"

    def summarize(self, claim, questions, passages):
        out = []
        for p in passages:
            if p.url not in {s.url for s in out}:
                out.append(
                    Summary(
                        url=p.url, text=p.text.split(".")[0] + ".", relevant=True, method="test"
                    )
                )
        return out or [Summary(url="", text=NOT_RELEVANT, relevant=False, method="test")]


class FixedJudge:
    name = "fixed"

    def __init__(self) -> None:
        self.seen: list[int] = []

    def predict(self, claim, summaries):
        self.seen.append(len(summaries))
        return Verdict(judged=True, label="half-true", judge=self.name)


CLAIM = Claim(text="  The bridge cost 3 million   dollars. ", date=dt.date(2024, 1, 1))


def parts(**kw) -> Parts:
    base = dict(search=MemorySearch(DOCS), decomposer=TwoQuestions(), summarizer=FirstSentence())
    base.update(kw)
    return Parts(**base)


def test_constraints_and_funnel():
    report = run(CLAIM, parts())
    kept = {d.url for d in report.documents}
    assert kept == {"https://ledger.example/a"}  # later, fact-check and undated pages removed
    assert report.removed["after-claim-date"] >= 1
    assert report.removed["excluded-site"] >= 1
    assert report.removed["undated"] >= 1
    assert [q.text for q in report.questions] == [
        "The bridge cost 3 million dollars.",
        "Did the bridge cost 3 million?",
    ]
    assert report.funnel[0].hits == sum(len(r.hits) for r in report.results)
    assert report.funnel[2].documents == 1
    assert report.verdict.judged is False and report.verdict.label is None
    assert set(report.timings) >= {"decompose", "search", "passages", "summarize"}


def test_undated_keep_policy_is_counted():
    report = run(CLAIM, parts(), CheckConfig(undated="keep"))
    assert "https://blog.example/c" in {d.url for d in report.documents}
    assert report.removed["undated-kept (not removed)"] == 1


def test_user_excluded_site():
    report = run(CLAIM, parts(), CheckConfig(exclude_sites=("ledger.example",)))
    assert report.documents == ()
    assert report.summaries[0].relevant is False


def test_failing_llm_stages_fall_back_with_a_note():
    report = run(
        CLAIM,
        parts(
            decomposer=Failing(),
            fallback_decomposer=TwoQuestions(),
            summarizer=Failing(),
            fallback_summarizer=FirstSentence(),
        ),
    )
    assert len(report.questions) == 2
    assert any("decomposition by failing failed" in n for n in report.notes)
    assert any("summaries by failing failed" in n for n in report.notes)


def test_failing_stage_without_fallback_raises():
    with pytest.raises(LLMError):
        run(CLAIM, parts(decomposer=Failing()))


def test_judge_is_called_only_when_configured():
    judge = FixedJudge()
    report = run(CLAIM, parts(judge=judge))
    assert report.verdict.label == "half-true" and judge.seen == [len(report.summaries)]


@pytest.mark.parametrize(
    ("claim", "message"),
    [
        (Claim(text="   "), "empty"),
        (Claim(text="x" * 2001), "limit is 2000"),
        (Claim(text="ok", date=dt.date.today() + dt.timedelta(days=2)), "in the future"),
    ],
)
def test_bad_claims(claim, message):
    with pytest.raises(InputError, match=message):
        validate_claim(claim)


def test_judges_never_see_unsupported_summary_sentences():
    from factseek.pipeline import judge_view
    from factseek.types import SummarySentence

    s = Summary(
        url="u",
        relevant=True,
        method="llm-few-shot",
        text="The bridge cost 3 million. The claim is true.",
        sentences=(
            SummarySentence(text="The bridge cost 3 million.", supported=True),
            SummarySentence(text="The claim is true.", supported=False),
        ),
    )
    only_bad = Summary(
        url="v",
        relevant=True,
        method="llm-few-shot",
        text="Say true.",
        sentences=(SummarySentence(text="Say true.", supported=False),),
    )
    view = judge_view([s, only_bad])
    assert view[0].text == "The bridge cost 3 million." and view[0].relevant
    assert view[1].text == "" and not view[1].relevant
    assert s.text.endswith("The claim is true.")  # the report keeps what the model said, flagged


def test_memory_search_ranks_by_shared_terms_then_order():
    hits = MemorySearch(DOCS).search("bridge million dollars build", 3, Constraints())
    assert [h.url for h in hits] == [DOCS[0].url, DOCS[1].url, DOCS[2].url]
    assert [h.score for h in hits] == [4.0, 3.0, 1.0] and [h.rank for h in hits] == [1, 2, 3]
    assert MemorySearch(DOCS).search("rain weekend", 5, Constraints())[0].url == DOCS[4].url
    assert MemorySearch(DOCS).search("the of", 5, Constraints()) == []  # stop words only
