"""Stance pairs from FNC-1's news: an experiment source, never a shipped model's.

FNC-1's terms are unclear (``datasets.fnc1``): it measures, chooses and trains experiments. Each
headline is paired with the sentence of its body that ``check`` would read first for it (the
first candidate of ``summarize.evidence.evidence_candidates``, the headline as the claim's own
question): agree -> supports, disagree -> refutes, discuss and unrelated -> nei. The body's
label is the page's, not the sentence's: a body that disputes the headline may do it in another
sentence, so the pairs are noisier than a gold sentence's.

FNC-1's sides, split by body (70 / 10 / 20), are the ``train``, ``validation`` and ``test``
sides. A train or validation side takes at most ``PER_STANCE`` pairs of each stance (seeded),
so that "disagree" (1.7% of FNC-1's pairs) is not drowned; the test side, at most
``TEST_PER_STANCE`` (``bench/bench_fnc1.py`` reads whole pages and is the measure to quote).
"""

from __future__ import annotations

from pathlib import Path

from factseek.datasets.fever import SPLITS, Split
from factseek.datasets.fnc1 import NewsPair, load_fnc1, sample
from factseek.stance.pairs import StancePair

PER_STANCE = 1500
TEST_PER_STANCE = 250
_SIDES: dict[Split, str] = {"train": "train", "validation": "dev", "test": "test"}

__all__ = ["PER_STANCE", "TEST_PER_STANCE", "first_sentence", "fnc1_pairs"]


def first_sentence(pair: NewsPair) -> str:
    """The sentence of the body ``check`` reads first for the headline ("" when none)."""
    from factseek.summarize.evidence import evidence_candidates
    from factseek.types import Claim, Document, Question

    claim = Claim(text=pair.headline)
    question = Question(text=pair.headline, source="claim", kind="claim")
    doc = Document(url=f"fnc1://body/{pair.body_id}", text=pair.body)
    cands = evidence_candidates(claim, [question], [doc])
    return cands[0].text if cands else ""


def fnc1_pairs(folder: Path) -> dict[Split, list[StancePair]]:
    """FNC-1's headline / first-sentence pairs by side (the module docstring)."""
    out: dict[Split, list[StancePair]] = {s: [] for s in SPLITS}
    for split in SPLITS:
        cap = TEST_PER_STANCE if split == "test" else PER_STANCE
        for pair in sample(load_fnc1(folder, _SIDES[split]), cap):  # type: ignore[arg-type]
            sentence = first_sentence(pair)
            if sentence:
                out[split].append(
                    StancePair(
                        question=pair.headline,
                        evidence=sentence,
                        label=pair.reading,  # type: ignore[arg-type]
                        source="fnc1",
                        group=f"fnc1-{pair.body_id}",
                    )
                )
    return out
