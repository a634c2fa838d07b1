"""Shared fixtures for the web workbench tests: a tiny corpus, fake parts, a report with cards,
and a test client of the app with a stored report and the forms' CSRF token."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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


def off_topic_report() -> Report:
    """A stance-rules verdict whose cited cards include an off-topic one (E2, about violent
    crime): what a reviewer must not be made to cite. E3 and E4 take no side for the machine."""
    from factseek.judge.verdict import StanceRules, answer_questions

    claim = Claim(
        text="Burglaries in Caldmere fell by a third last year.", date=dt.date(2024, 3, 1)
    )
    questions = (
        Question(text=claim.text, source="claim", kind="claim"),
        Question(text="Did burglaries in Caldmere fall by a third?"),
    )
    said = [
        ("supports", 0.9, "Burglaries fell 33 percent in Caldmere, police said."),
        ("supports", 0.85, "Violent crime was up slightly across the region."),
        ("nei", 0.6, "The police annual report lists 412 burglaries, down from 618."),
        ("nei", 0.5, "Caldmere's council discussed the burglary figures in March."),
    ]
    cards = []
    for n, (label, p, text) in enumerate(said, 1):
        rest = (1 - p) / 2
        cards.append(
            Evidence(
                id=f"E{n}",
                url=f"https://site{n}.example/story",
                text=text,
                start_char=0,
                end_char=len(text),
                question=questions[1].text,
                title=f"Story {n}",
                domain=f"site{n}.example",
                published=dt.date(2024, 1, 10 + n),
                stance=StanceResult(
                    label=label,  # type: ignore[arg-type]
                    probs={x: (p if x == label else rest) for x in ("supports", "refutes", "nei")},
                    model="hand",
                ),
            )
        )
    answers = answer_questions(questions, cards)
    verdict = StanceRules("hand").judge(claim, questions, cards, answers)
    docs = tuple(
        Document(url=e.url, text=e.text, title=e.title, domain=e.domain, published=e.published)
        for e in cards
    )
    return Report(
        claim=claim,
        questions=questions,
        documents=docs,
        evidence=tuple(cards),
        answers=tuple(answers),
        verdict=verdict,
    )


BASE = "http://127.0.0.1:8321"


@contextmanager
def web_client(tmp_path: Path, user: str) -> Iterator[object]:
    """A ``TestClient`` of the app (history in ``tmp_path``, default reviewer ``user``, fake
    parts), its first page already fetched; the runner is closed after."""
    from fastapi.testclient import TestClient

    from factseek.review.history import History
    from factseek.web.app import WebSettings, create_app
    from factseek.web.jobs import Runner

    settings = WebSettings(db=tmp_path / "h.sqlite", store=tmp_path, user=user)
    runner = Runner(History(settings.db), workers=1, build=fake_parts)
    app = create_app(settings, runner=runner)
    try:
        with TestClient(app, base_url=BASE) as c:
            c.get("/")
            yield c
    finally:
        runner.close()


def stored_run(c, report: Report, user: str) -> str:
    """The path of a finished run of ``report`` stored in the client's history by ``user``."""
    history = c.app.state.history
    rid = history.create(report.claim, user=user)
    history.finish(rid, report)
    return f"/runs/{rid}"


def csrf_token(c, path: str = "/") -> str:
    """The CSRF token of the forms on ``path``."""
    return re.search(r'name="csrf_token" value="([^"]+)"', c.get(path).text).group(1)
