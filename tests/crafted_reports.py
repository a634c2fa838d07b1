"""A report with every field filled (for tests that plant hostile text in each string of it).

``full_report()`` is the report as JSON data; ``string_slots(data)`` lists where a string sits in
it (a value, or a key of a mapping); ``planted(data, slot, text)`` is a copy with that string
replaced. The renderers' tests plant ``<script>`` in one slot at a time and in all at once."""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

from factseek.types import (
    Answer,
    Claim,
    ConstraintDecision,
    DateEvidence,
    Document,
    Evidence,
    FetchFailure,
    FunnelRow,
    Hit,
    Passage,
    Query,
    QueryResult,
    Question,
    Report,
    ReviewRecord,
    StanceResult,
    Summary,
    SummarySentence,
    Verdict,
    to_dict,
)

URL = "https://a.example/1"
Slot = tuple[tuple[Any, ...], bool]  # (path, whether the string is the last step's key)


def full_report() -> dict[str, Any]:
    q = "Did buses double?"
    verdict = Verdict(
        judged=True,
        label="supported",
        judge="stance",
        scale="averitec",
        confidence=0.8,
        scores={"supported": 0.8},
        explanation="because",
        rationale="r",
        evidence_ids=("E1",),
        precision=0.7,
        precision_basis="dev",
    )
    answer = Answer(question=q, answer="yes", confidence=0.9, evidence_ids=("E1",), method="m")
    return to_dict(
        Report(
            claim=Claim(
                text="Buses doubled.", date=dt.date(2020, 1, 1), speaker="s", venue="v", id="c1"
            ),
            questions=(Question(text=q, kind="claim"),),
            results=(
                QueryResult(
                    query=Query(text="buses doubled", question=q, trace=("drop",), note="n"),
                    hits=(Hit(url=URL, title="t", snippet="s", rank=1, query="q", backend="b"),),
                    decisions=(ConstraintDecision(url=URL, kept=False, reason="excluded-site:x"),),
                    native=("date",),
                    emulated=("domain",),
                    error="e",
                    new_urls=(URL,),
                    lost_urls=(URL,),
                ),
            ),
            documents=(
                Document(
                    url=URL,
                    text="Buses doubled in 2019.",
                    title="t",
                    published=dt.date(2019, 1, 1),
                    domain="a.example",
                    id="d1",
                    date_evidence=(
                        DateEvidence(source="json-ld", date=dt.date(2019, 1, 1), raw="x", rule="y"),
                    ),
                    meta={
                        "date_source": "json-ld",
                        "date_rule": "r",
                        "date_warning": "w",
                        "modified_rule": "m",
                        "date_confidence": "low",
                    },
                    modified=dt.date(2019, 2, 1),
                ),
            ),
            failures=(FetchFailure(url=URL, error="HTTP 404"),),
            passages=(
                Passage(
                    url=URL,
                    text="Buses doubled",
                    doc_rank=0,
                    score=1.0,
                    start_word=0,
                    end_word=2,
                    start_char=0,
                    end_char=13,
                    title="t",
                ),
            ),
            summaries=(
                Summary(
                    url=URL,
                    text="Buses doubled.",
                    relevant=True,
                    method="extractive",
                    title="t",
                    sentences=(SummarySentence(text="Buses doubled.", start_char=0, end_char=13),),
                    note="n",
                ),
            ),
            evidence=(
                Evidence(
                    id="E1",
                    url=URL,
                    text="Buses doubled",
                    start_char=0,
                    end_char=13,
                    question=q,
                    title="t",
                    domain="a.example",
                    stance=StanceResult(
                        label="supports",
                        probs={"supports": 0.9, "refutes": 0.05, "nei": 0.05},
                        model="m",
                    ),
                    independent=False,
                    note="n",
                    genre="opinion",
                    figures="f",
                ),
            ),
            answers=(answer,),
            verdict=verdict,
            funnel=(FunnelRow(stage="search", hits=1, documents=1, words=4),),
            removed={"undated": 1},
            timings={"search": 0.1},
            config={"stance_reliability": "sr", "answer_reliability": "ar"},
            notes=("a note",),
            usage={"calls": "1"},
            version="1.0",
            review=ReviewRecord(
                status="set",
                reviewer="rev",
                at="2020-01-02T03:04:05",
                label="refuted",
                scale="averitec",
                rating=1,
                rating_name="False",
                note="n",
                machine=verdict,
                machine_answers=(answer,),
                citations=("E1",),
            ),
        )
    )


#: The report's free mappings (their keys are data; other objects' keys are field names).
MAPPINGS = frozenset({"meta", "config", "usage", "removed", "timings", "probs", "scores"})


def string_slots(data: Any, path: tuple[Any, ...] = ()) -> list[Slot]:
    """Every place a string sits in ``data``: values, and keys of the free mappings."""
    out: list[Slot] = []
    if isinstance(data, str):
        out.append((path, False))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += string_slots(v, (*path, i))
    elif isinstance(data, dict):
        for k, v in data.items():
            if path and path[-1] in MAPPINGS:
                out.append(((*path, k), True))
            out += string_slots(v, (*path, k))
    return out


def planted(data: Any, slot: Slot, text: str) -> Any:
    """A copy of ``data`` with the string at ``slot`` replaced by ``text`` (a URL-valued string
    keeps an ``https://`` start, so it stays a link)."""
    path, is_key = slot
    out = copy.deepcopy(data)
    parent = out
    for k in path[:-1]:
        parent = parent[k]
    last = path[-1]
    if is_key:
        parent[text] = parent.pop(last)
    else:
        old = parent[last]
        parent[last] = "https://x.example/" + text if old.startswith("https://") else text
    return out
