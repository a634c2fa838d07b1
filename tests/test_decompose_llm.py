"""LLMDecomposer mechanics with FunctionLLM: prompt, sampling rounds, parsing, filters, dedup."""

from __future__ import annotations

import datetime as dt

import pytest

from factseek.decompose import Decomposer
from factseek.decompose.llm import (
    DEFAULT_PROMPT,
    LLMDecomposer,
    claim_input,
    clean_question,
    parse_questions,
)
from factseek.errors import LLMError
from factseek.llm import FunctionLLM, GenParams
from factseek.types import Claim

CLAIM = Claim(
    text="The river town of Elmsby doubled its bus fleet in 2023.",
    speaker="Mayor Ann Roe",
    venue="stated on March 1, 2024 in a newsletter:",
)


def test_parse_strips_numbering_quotes_and_drops_non_yes_no() -> None:
    text = (
        "Here are the questions:\n"
        '1. "Did Elmsby double its bus fleet?"\n'
        "2) What year did the fleet grow?\n"
        "- Was the expansion funded by the state?\n"
        "* How many buses does Elmsby have?\n"
        "Q3: does the town own the buses?\n"
        "Is it? Did buses run in 2023? Why?\n"
        "Elmsby has buses.\n"
        "Is?\n"
    )
    assert parse_questions(text) == [
        "Did Elmsby double its bus fleet?",
        "Was the expansion funded by the state?",
        "Does the town own the buses?",
        "Did buses run in 2023?",
    ]


def test_clean_question_bounds_length() -> None:
    assert clean_question("Is " + "very " * 100 + "long?") is None
    assert clean_question("Who paid for it?") is None


def test_claim_input_formats_speaker_and_venue() -> None:
    assert claim_input(CLAIM) == (
        'Mayor Ann Roe stated on March 1, 2024 in a newsletter: "The river town of Elmsby '
        'doubled its bus fleet in 2023."'
    )
    c = Claim(text="x y z", speaker="A", venue="in a tweet", date=dt.date(2020, 5, 4))
    assert claim_input(c) == 'A stated on May 4, 2020 in a tweet: "x y z"'


def test_samples_rounds_until_n_unique() -> None:
    seen: list[GenParams] = []
    prompts: list[list[dict[str, str]]] = []

    def fn(messages: list[dict[str, str]], params: GenParams) -> str:
        seen.append(params)
        prompts.append(messages)
        r = params.seed
        return (
            f"1. Did Elmsby buy bus {r}a?\n2. Did Elmsby buy bus {r}b?\n3. Did Elmsby buy bus 0a?"
        )

    dec = LLMDecomposer(FunctionLLM(fn), n=5, rounds=5, temperature=0.9)
    assert isinstance(dec, Decomposer)
    qs = dec.decompose(CLAIM)
    assert qs[0].source == "claim" and qs[0].text == CLAIM.text
    assert [q.text for q in qs[1:]] == [
        "Did Elmsby buy bus 0a?",
        "Did Elmsby buy bus 0b?",
        "Did Elmsby buy bus 1a?",
        "Did Elmsby buy bus 1b?",
        "Did Elmsby buy bus 2a?",
    ]
    assert all(q.source == "llm" for q in qs[1:])
    assert [p.seed for p in seen] == [0, 1, 2]  # stopped once 5 unique were found
    assert all(p.temperature == 0.9 for p in seen)
    msgs = prompts[0]
    assert msgs[0]["role"] == "system" and len(msgs) == 2 + 2 * len(DEFAULT_PROMPT.demos)
    assert len(DEFAULT_PROMPT.demos) == 4
    assert "Mayor Ann Roe" in msgs[-1]["content"]


def test_stops_after_rounds_and_dedups() -> None:
    calls: list[int] = []

    def fn(messages: list[dict[str, str]], params: GenParams) -> str:
        calls.append(1)
        return "Did Elmsby double its fleet?\nDid Elmsby double its fleet?"

    qs = LLMDecomposer(FunctionLLM(fn), n=10, rounds=3).decompose(CLAIM)
    assert [q.text for q in qs] == [CLAIM.text, "Did Elmsby double its fleet?"]
    assert len(calls) == 3


def test_greedy_stops_when_nothing_new() -> None:
    calls: list[int] = []

    def fn(messages: list[dict[str, str]], params: GenParams) -> str:
        calls.append(1)
        return "Did Elmsby double its fleet?"

    LLMDecomposer(FunctionLLM(fn), rounds=5, temperature=0.0).decompose(CLAIM)
    assert len(calls) == 2


def test_garbage_is_retried_then_reported() -> None:
    llm = FunctionLLM(lambda m, p: "What? Who knows.")
    with pytest.raises(LLMError, match="decomposition"):
        LLMDecomposer(llm, rounds=2).decompose(CLAIM)
    assert llm.usage.retries == 2


def test_later_round_failure_keeps_earlier_questions() -> None:
    def fn(messages: list[dict[str, str]], params: GenParams) -> str:
        return "Did Elmsby double its fleet?" if params.seed == 0 else ""

    qs = LLMDecomposer(FunctionLLM(fn), rounds=3, temperature=0.5).decompose(CLAIM)
    assert [q.text for q in qs[1:]] == ["Did Elmsby double its fleet?"]


def test_claim_text_is_not_repeated_as_a_question() -> None:
    c = Claim(text="Is Elmsby on a river?")
    qs = LLMDecomposer(
        FunctionLLM(lambda m, p: "Is Elmsby on a river?\nIs Elmsby big?"), rounds=1
    ).decompose(c)
    assert [q.text for q in qs] == ["Is Elmsby on a river?", "Is Elmsby big?"]
