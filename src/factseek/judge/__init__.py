"""Veracity judges: ``Judge.predict(claim, summaries) -> Verdict`` and, reading evidence cards,
``EvidenceJudge.judge(claim, questions, evidence, answers) -> Verdict``.

With no judge configured, the pipeline reports ``Verdict.not_judged()``: never a made-up label.
``load_judge(path)`` opens a trained classifier folder (see ``judge.classifier``);
``judge.verdict.StanceRules`` is the default evidence judge (rules over stance, no training).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from factseek.types import Answer, Claim, Evidence, Passage, Question, Summary, Verdict


@runtime_checkable
class Judge(Protocol):
    name: str

    def predict(self, claim: Claim, summaries: Sequence[Summary]) -> Verdict: ...


@runtime_checkable
class EvidenceJudge(Protocol):
    """A judge that reads evidence cards (with their stance) and the subquestions' answers."""

    name: str
    scale: str  # the label set of its verdicts, e.g. "averitec"

    def judge(
        self,
        claim: Claim,
        questions: Sequence[Question],
        evidence: Sequence[Evidence],
        answers: Sequence[Answer] | None = None,
        passages: Sequence[Passage] = (),
    ) -> Verdict: ...


def load_judge(path: str | Path) -> Judge | EvidenceJudge:
    """A trained judge from its folder (config.json + weights): a classifier reading summaries,
    or an evidence judge (``judge.evidence_model``), told apart by the config's ``kind``."""
    from factseek.errors import FactseekError
    from factseek.files import SIDE_LIMIT, read_json
    from factseek.judge.classifier import ClassifierJudge

    try:
        kind = read_json(Path(path) / "config.json", "model config", limit=SIDE_LIMIT).get("kind")
    except (FactseekError, AttributeError):
        kind = None  # the classifier's loader says what is wrong with the folder
    if kind == "factseek-evidence-judge":
        from factseek.judge.evidence_model import EvidenceModelJudge

        return EvidenceModelJudge.load(path)
    return ClassifierJudge.load(path)
