"""Veracity judges: ``Judge.predict(claim, summaries) -> Verdict``.

With no judge configured, the pipeline reports ``Verdict.not_judged()``: never a made-up label.
``load_judge(path)`` opens a trained classifier folder (see ``judge.classifier``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from factseek.types import Claim, Summary, Verdict


@runtime_checkable
class Judge(Protocol):
    name: str

    def predict(self, claim: Claim, summaries: Sequence[Summary]) -> Verdict: ...


def load_judge(path: str | Path) -> Judge:
    """A trained judge from its folder (config.json + weights)."""
    from factseek.judge.classifier import ClassifierJudge

    return ClassifierJudge.load(path)
