"""Shared fixtures for the web workbench tests: a tiny corpus, fake parts, a report with cards."""

from __future__ import annotations

import datetime as dt

from factseek.pipeline import Parts
from factseek.search.base import MemorySearch
from factseek.summarize.extractive import ExtractiveSummarizer
from factseek.types import (
    Answer,
    Claim,
    Document,
    Evidence,
    Question,
    Report,
    StanceResult,
    Verdict,
)

CLAIM = Claim(
    text="The council spent 3 million dollars on the new bridge.",
    date=dt.date(2024, 1, 10),
    speaker="Ana Ruiz",
    venue="a council meeting",
)

DOCS = [
    Document(
        url="https://ledger.example/bridge-budget",
        title="Council approves bridge budget",
        published=dt.date(2023, 5, 2),
        domain="ledger.example",
        text="The council approved 3 million dollars for the new bridge. Work starts in June.",
    ),
    Document(
        url="https://post.example/bridge-costs",
        title="Bridge costs climb",
        published=dt.date(2023, 11, 20),
        domain="post.example",
        text="The new bridge has cost the council 5 million dollars so far, records show.",
    ),
    Document(
        url="https://weather.example/rain",
        title="Rain ahead",
        published=dt.date(2023, 6, 1),
        domain="weather.example",
        text="Rain is expected over the weekend with mild temperatures.",
    ),
]


class TwoQuestions:
    name = "two"

    def decompose(self, claim: Claim) -> list[Question]:
        return [
            Question(text=claim.text, source="claim", kind="claim"),
            Question(text="Did the council spend 3 million dollars on the bridge?"),
        ]


class FixedJudge:
    name = "fixed"

    def predict(self, claim, summaries):
        return Verdict(judged=True, label="half-true", judge=self.name, scale="politifact")


def fake_parts(options: object = None) -> Parts:
    return Parts(
        search=MemorySearch(DOCS),
        decomposer=TwoQuestions(),
        summarizer=ExtractiveSummarizer(),
        judge=FixedJudge(),
        names={"search": "memory"},
    )


def carded_report() -> Report:
    """A report with the issue-11 fields filled: evidence cards, answers, a verdict."""
    q = "Did the council spend 3 million dollars on the bridge?"
    return Report(
        claim=CLAIM,
        questions=(Question(text=CLAIM.text, source="claim", kind="claim"), Question(text=q)),
        documents=tuple(DOCS[:2]),
        evidence=(
            Evidence(
                id="E1",
                url=DOCS[0].url,
                text="The council approved 3 million dollars for the new bridge.",
                start_char=0,
                end_char=58,
                question=q,
                title=DOCS[0].title,
                domain="ledger.example",
                published=DOCS[0].published,
                stance=StanceResult(
                    label="supports",
                    probs={"supports": 0.8, "refutes": 0.1, "nei": 0.1},
                    model="m",
                ),
            ),
            Evidence(
                id="E2",
                url=DOCS[1].url,
                text="The new bridge has cost the council 5 million dollars so far.",
                start_char=0,
                end_char=61,
                question=q,
                title=DOCS[1].title,
                domain="post.example",
                published=DOCS[1].published,
                stance=StanceResult(
                    label="refutes",
                    probs={"supports": 0.1, "refutes": 0.7, "nei": 0.2},
                    model="m",
                ),
            ),
        ),
        answers=(Answer(question=q, answer="no", confidence=0.7, evidence_ids=("E2",)),),
        verdict=Verdict(
            judged=True,
            label="refuted",
            judge="stance-rules",
            scale="averitec",
            confidence=0.66,
            rationale="E2 shows 5 million.",
            evidence_ids=("E1", "E2"),
        ),
    )
