"""How many gold subquestions does a decomposer recover? (ClaimDecomp ``annotations``.)

A gold question counts as recalled when some generated question (the claim itself excluded)
has embedding cosine >= ``threshold`` with it (MiniLM by default). ``DEFAULT_MATCH_THRESHOLD``
was calibrated on made-up question pairs (``python experiments/eval_decompose.py``): paraphrases
scored 0.80-0.97, same-topic different questions 0.41-0.82 (90% below 0.79), unrelated ones
below 0.38; 0.79 gave the best balanced accuracy. Recall is also reported at a sweep of
thresholds, and precision is the share of generated questions that match some gold question.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from factseek.ml.encode import Encoder

DEFAULT_MATCH_THRESHOLD = 0.79
SWEEP: tuple[float, ...] = (0.6, 0.7, 0.79, 0.85, 0.9)


@dataclass(frozen=True, kw_only=True)
class ClaimMatch:
    """Best cosine of each gold question to any generated one, and vice versa."""

    gold_best: tuple[float, ...]
    generated_best: tuple[float, ...]


@dataclass(frozen=True, kw_only=True)
class DecompScore:
    claims: int  # claims with at least one gold question
    gold: int
    generated: int
    threshold: float
    recall: float  # macro: mean over claims of the share of gold questions recalled
    recall_micro: float  # share of all gold questions recalled
    precision: float  # share of generated questions matching some gold question (micro)
    sweep: tuple[tuple[float, float], ...]  # (threshold, macro recall)

    def line(self, name: str) -> str:
        sweep = " ".join(f"{t:.2f}:{r:.3f}" for t, r in self.sweep)
        return (
            f"{name}: claims={self.claims} gold={self.gold} generated={self.generated} "
            f"({self.generated / max(self.claims, 1):.1f}/claim) recall@{self.threshold:.2f}="
            f"{self.recall:.3f} micro={self.recall_micro:.3f} precision={self.precision:.3f} "
            f"sweep[{sweep}]"
        )


def match(
    generated: Sequence[str], gold: Sequence[str], vectors: Mapping[str, np.ndarray]
) -> ClaimMatch:
    """Best cosines between one claim's gold and generated questions (``vectors``: text -> row)."""
    if not gold:
        return ClaimMatch(gold_best=(), generated_best=tuple(0.0 for _ in generated))
    if not generated:
        return ClaimMatch(gold_best=tuple(0.0 for _ in gold), generated_best=())
    g = np.stack([vectors[t] for t in gold])
    h = np.stack([vectors[t] for t in generated])
    sims = g @ h.T  # (n_gold, n_generated)
    return ClaimMatch(
        gold_best=tuple(float(x) for x in sims.max(axis=1)),
        generated_best=tuple(float(x) for x in sims.max(axis=0)),
    )


def score(
    matches: Sequence[ClaimMatch],
    threshold: float = DEFAULT_MATCH_THRESHOLD,
    sweep: Sequence[float] = SWEEP,
) -> DecompScore:
    """Aggregate per-claim matches; claims without gold questions are skipped."""
    ms = [m for m in matches if m.gold_best]

    def macro(t: float) -> float:
        if not ms:
            return float("nan")
        return float(np.mean([np.mean(np.asarray(m.gold_best) >= t) for m in ms]))

    gold = np.concatenate([np.asarray(m.gold_best) for m in ms]) if ms else np.zeros(0)
    gen = [x for m in ms for x in m.generated_best]
    return DecompScore(
        claims=len(ms),
        gold=int(gold.size),
        generated=len(gen),
        threshold=threshold,
        recall=macro(threshold),
        recall_micro=float(np.mean(gold >= threshold)) if gold.size else float("nan"),
        precision=float(np.mean(np.asarray(gen) >= threshold)) if gen else float("nan"),
        sweep=tuple((t, macro(t)) for t in sweep),
    )


def evaluate(
    pairs: Sequence[tuple[Sequence[str], Sequence[str]]],
    encoder: Encoder,
    *,
    threshold: float = DEFAULT_MATCH_THRESHOLD,
) -> DecompScore:
    """``pairs`` of (generated questions, gold questions) per claim -> aggregate scores.

    Every distinct question is encoded once, in one batch.
    """
    texts = sorted({t for generated, gold in pairs for t in (*generated, *gold)})
    vecs = encoder.encode(texts) if texts else np.zeros((0, 0), dtype=np.float32)
    vectors = dict(zip(texts, vecs, strict=True))
    return score([match(generated, gold, vectors) for generated, gold in pairs], threshold)
