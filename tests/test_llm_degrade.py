"""The LLM stages inside the pipeline: they run end to end, and a broken model degrades the run."""

from __future__ import annotations

import datetime as dt

from factseek.decompose import claim_question
from factseek.decompose.llm import LLMDecomposer
from factseek.judge.llm_scorer import LLMScorer, fit_thresholds
from factseek.llm import FunctionLLM, GenParams
from factseek.pipeline import Parts, run
from factseek.search.base import MemorySearch
from factseek.summarize.llm import LLMSummarizer
from factseek.types import Claim, Document, Question, Summary

LABELS = ["pants-fire", "false", "barely-true", "half-true", "mostly-true", "true"]
DOCS = [
    Document(
        url="https://ledger.example/a",
        title="Bridge budget",
        published=dt.date(2023, 1, 5),
        text="The council said the new bridge will cost 3 million dollars to build next year.",
    ),
    Document(
        url="https://weather.example/d",
        title="Weather",
        published=dt.date(2023, 3, 1),
        text="Rain is expected over the weekend with mild temperatures near the bridge.",
    ),
]
CLAIM = Claim(text="The bridge cost 3 million dollars.", date=dt.date(2024, 1, 1))


class ClaimOnly:
    name = "offline"

    def decompose(self, claim: Claim) -> list[Question]:
        return [claim_question(claim)]

    def summarize(self, claim, questions, passages):
        return [
            Summary(url=p.url, text=p.text, relevant=True, method="extractive") for p in passages
        ]


def model(messages: list[dict[str, str]], params: GenParams) -> str:
    system = messages[0]["content"]
    if "yes/no questions" in system:
        return "1. Did the bridge cost 3 million dollars?\n2. Who built it?"
    if "summarize documents" in system:
        document = messages[-1]["content"].split("Document:", 1)[1]
        if "3 million" in document:
            return "The council said the new bridge will cost 3 million dollars."
        return "The document is not relevant to checking the claim."
    return "The council's figure matches.\nScore: 80"


def parts(llm: FunctionLLM) -> Parts:
    offline = ClaimOnly()
    return Parts(
        search=MemorySearch(DOCS),
        decomposer=LLMDecomposer(llm, rounds=1),
        summarizer=LLMSummarizer(llm, mode="few-shot"),
        fallback_decomposer=offline,
        fallback_summarizer=offline,
        judge=LLMScorer(llm, fit_thresholds(LABELS)),
        usage=lambda: dict(llm.usage),
    )


def test_llm_stages_end_to_end() -> None:
    llm = FunctionLLM(model)
    report = run(CLAIM, parts(llm))
    assert [q.source for q in report.questions] == ["claim", "llm"]
    assert [s.method for s in report.summaries] == ["llm-few-shot"] * len(report.summaries)
    relevant = [s for s in report.summaries if s.relevant]
    assert relevant and all(x.supported for s in relevant for x in s.sentences)
    assert report.verdict.judged and report.verdict.label == "mostly-true"
    assert report.usage["requests"] == llm.usage.requests > 0
    assert not report.notes


def test_broken_model_degrades_with_notes() -> None:
    llm = FunctionLLM(lambda m, p: "")
    report = run(CLAIM, parts(llm))
    assert [q.source for q in report.questions] == ["claim"]
    assert all(s.method == "extractive" for s in report.summaries)
    assert not report.verdict.judged
    notes = " | ".join(report.notes)
    assert "decomposition by llm failed" in notes and "summaries by llm-few-shot failed" in notes
    assert "judge llm-scorer failed" in notes and "after 3 attempts" in notes
