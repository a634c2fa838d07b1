"""A cascade reader: a fast stance model screens every pair, a strong one reads the rest.

``CascadeStance(screen, strong, threshold=THRESHOLD)`` is a ``StanceModel``. Its
``read(pairs, always)`` (``classify`` is ``read`` with nothing forced):

1. the **screen** (the ``small`` model, about 6 ms a pair) reads every pair;
2. a pair is **skipped** when the screen's label is ``nei`` with calibrated ``p(nei) >=
   threshold`` and ``always`` does not name it: its reading is the screen's, marked as screened
   (``StanceResult.model`` ``"screened:<screen>"``, ``StanceResult.screened``), and it takes no
   side, so it is never a card (``summarize.evidence`` leaves screened readings out of the
   cards, of figure cards and of figures compared);
3. the **strong** model (``mpnet``) reads every other pair, ``always`` ones included (the
   pipeline forces the sentences the summaries quote and the ones that give the question's
   figure: they can be cards whatever a reader says).

``THRESHOLD`` was chosen on AVeriTeC *train* claims' candidate pairs (never dev,
``experiments/cascade_threshold.py``): at 0.7 the cascade skipped 18% of the pairs, 6% of the
skipped ones were read by the strong model as taking a side, and 1 verdict of 300 changed. The
small model is a weak screen for mpnet: lower thresholds skip more and change more verdicts, so
the cascade is not the default (``CheckOptions.cascade``, ``--cascade``; docs/stance.md,
"Speed"). ``read_pairs(model, pairs, always)`` reads with any ``StanceModel`` and says how many
pairs each model read (``Reads``), which the pipeline puts in the report
(``usage["stance_pairs"]``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from factseek.errors import ConfigError
from factseek.stance import StanceModel
from factseek.types import SCREENED, StanceResult

__all__ = ["THRESHOLD", "CascadeStance", "Reads", "read_pairs"]

Pair = tuple[str, str]

#: A pair the screen reads as ``nei`` at least this surely is not read by the strong model.
THRESHOLD = 0.7


@dataclass(frozen=True)
class Reads:
    """Readings of pairs, in order, and how many pairs each model read (by its name) and how
    many the cascade skipped (read by the screen alone)."""

    results: tuple[StanceResult, ...]
    read: Mapping[str, int] = field(default_factory=dict)
    skipped: int = 0

    def counts(self) -> dict[str, int]:
        """What a report keeps: ``{model name: pairs read, ..., "skipped": n}``."""
        return {**self.read, "skipped": self.skipped}


class CascadeStance:
    """A ``StanceModel`` that reads with ``strong`` only the pairs ``screen`` does not clear
    (module docstring). Its name and config are the strong model's: its cards and verdicts
    are the strong model's, on the pairs that could make a card."""

    def __init__(
        self, screen: StanceModel, strong: StanceModel, *, threshold: float = THRESHOLD
    ) -> None:
        if not 0.0 < threshold <= 1.0:
            raise ConfigError(f"cascade threshold must be in (0, 1], got {threshold}")
        self.screen = screen
        self.strong = strong
        self.threshold = threshold
        self.name: str = strong.name

    @property
    def config(self) -> dict[str, Any]:
        return dict(getattr(self.strong, "config", {}) or {})

    def describe(self) -> str:
        """One line for a report's configuration."""
        return (
            f"{self.screen.name} screens every pair; those it reads as nei at p >= "
            f"{self.threshold:g} are not read by {self.strong.name} (docs/stance.md, Speed)"
        )

    def clears(self, reading: StanceResult) -> bool:
        """Whether the screen's ``reading`` lets the strong model skip its pair."""
        return reading.label == "nei" and float(reading.probs.get("nei", 0.0)) >= self.threshold

    def read(self, pairs: Sequence[Pair], always: Sequence[bool] = ()) -> Reads:
        """Every pair's reading; ``always[i]`` true: pair ``i`` is read by the strong model
        whatever the screen says (``always`` empty: none is forced)."""
        if always and len(always) != len(pairs):
            raise ValueError(f"{len(pairs)} pairs but {len(always)} always flags")
        if not pairs:
            return Reads((), {self.screen.name: 0, self.strong.name: 0}, 0)
        screened = self.screen.classify(pairs)
        forced = list(always) or [False] * len(pairs)
        strong = [i for i, r in enumerate(screened) if forced[i] or not self.clears(r)]
        results: list[StanceResult] = [
            StanceResult(label="nei", probs=dict(r.probs), model=f"{SCREENED}{r.model}")
            for r in screened
        ]
        if strong:
            for i, r in zip(strong, self.strong.classify([pairs[i] for i in strong]), strict=True):
                results[i] = r
        read = {self.screen.name: len(pairs), self.strong.name: len(strong)}
        return Reads(tuple(results), read, len(pairs) - len(strong))

    def classify(self, pairs: Sequence[Pair]) -> list[StanceResult]:
        return list(self.read(pairs).results)


def read_pairs(model: StanceModel, pairs: Sequence[Pair], always: Sequence[bool] = ()) -> Reads:
    """``model``'s readings of ``pairs`` and what read them: a ``CascadeStance`` reads as its
    rule says (``always``: pairs the strong model must read), any other ``StanceModel`` reads
    every pair."""
    if isinstance(model, CascadeStance):
        return model.read(pairs, always)
    return Reads(tuple(model.classify(pairs)), {model.name: len(pairs)}, 0)
