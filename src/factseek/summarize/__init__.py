"""Claim-focused summaries of kept documents.

``Summarizer`` is the protocol: one ``Summary`` per document that has passages, in document
rank order. ``extractive.ExtractiveSummarizer`` (offline, verbatim quotes) is the default;
``llm.LLMSummarizer`` does the paper's zero-/few-shot summaries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from factseek.types import Claim, Passage, Question, Summary

NOT_RELEVANT = "The document is not relevant to checking the claim."


@runtime_checkable
class Summarizer(Protocol):
    name: str

    def summarize(
        self, claim: Claim, questions: Sequence[Question], passages: Sequence[Passage]
    ) -> list[Summary]: ...
