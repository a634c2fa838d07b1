"""FNC-1 (Fake News Challenge, stage 1): news headlines against article bodies.

The folder holds the challenge's two CSV files (docs/data.md):

- ``train_stances.csv``: ``Headline``, ``Body ID``, ``Stance`` (agree / disagree / discuss /
  unrelated);
- ``train_bodies.csv``: ``Body ID``, ``articleBody``.

A headline is a claim and a body a page: ``agree`` -> supports, ``disagree`` -> refutes,
``discuss`` (the body reports it without taking a side) and ``unrelated`` (the body is about
something else) -> neither. ``unrelated`` is also FNC-1's relevance label: every other stance
means the body is about the headline.

The challenge keeps its test side aside, so factseek splits the train file itself, **by body**
(a body's pairs are all on one side, so no article is seen in tuning and in evaluation): a hash
of the body id gives ``train`` (70%), ``dev`` (10%) or ``test`` (20%). ``load_fnc1(folder,
split)`` returns the pairs of one side; ``sample`` takes at most ``n`` pairs of each stance,
seeded, so that the rare ``disagree`` (1.7% of pairs) is measured on enough pairs.

Its terms are unclear (no licence stated; derived from the Emergent data): measure and choose
with it, train experiments on it, never ship default weights trained on it.
"""

from __future__ import annotations

import csv
import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from factseek.datasets.guard import loader
from factseek.errors import DataError

Split = Literal["train", "dev", "test"]
SPLITS: tuple[Split, ...] = ("train", "dev", "test")
STANCES = ("agree", "disagree", "discuss", "unrelated")
#: FNC-1 stance -> the stance reader's three labels.
AS_READING = {"agree": "supports", "disagree": "refutes", "discuss": "nei", "unrelated": "nei"}
MAX_BODY = 50_000  # characters kept of one article body


@dataclass(frozen=True, kw_only=True)
class NewsPair:
    """One FNC-1 headline / body pair."""

    headline: str
    body_id: str
    body: str
    stance: str  # agree / disagree / discuss / unrelated

    @property
    def reading(self) -> str:
        """The stance reader's label this pair should get: supports / refutes / nei."""
        return AS_READING[self.stance]

    @property
    def related(self) -> bool:
        return self.stance != "unrelated"


def side(body_id: str, seed: int = 0) -> Split:
    """The split a body belongs to (70 / 10 / 20 by a hash of its id)."""
    h = int(hashlib.sha1(f"{seed}:{body_id}".encode()).hexdigest()[:8], 16) % 100
    return "train" if h < 70 else "dev" if h < 80 else "test"


def _rows(path: Path, need: Sequence[str]) -> list[dict[str, str]]:
    if not path.is_file():
        raise DataError(f"{path}: not found (an FNC-1 folder holds {path.name})")
    with path.open(encoding="utf-8-sig", newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in need if c not in (reader.fieldnames or [])]
        if missing:
            raise DataError(f"{path}: no column {missing[0]!r} (FNC-1 columns: {', '.join(need)})")
        return list(reader)


@loader
def load_fnc1(folder: str | Path, split: Split | None = None, *, seed: int = 0) -> list[NewsPair]:
    """The pairs of one side (all of them with ``split=None``), in file order."""
    folder = Path(folder)
    bodies = {
        r["Body ID"].strip(): r["articleBody"][:MAX_BODY]
        for r in _rows(folder / "train_bodies.csv", ("Body ID", "articleBody"))
    }
    out = []
    for n, r in enumerate(_rows(folder / "train_stances.csv", ("Headline", "Body ID", "Stance"))):
        bid, stance = r["Body ID"].strip(), r["Stance"].strip().lower()
        if stance not in STANCES:
            raise DataError(f"train_stances.csv:{n + 2}: stance {stance!r} is not one of {STANCES}")
        if bid not in bodies:
            raise DataError(f"train_stances.csv:{n + 2}: body {bid} is not in train_bodies.csv")
        if split is None or side(bid, seed) == split:
            out.append(
                NewsPair(
                    headline=r["Headline"].strip(), body_id=bid, body=bodies[bid], stance=stance
                )
            )
    return out


def sample(pairs: Sequence[NewsPair], n: int | None, seed: int = 0) -> list[NewsPair]:
    """At most ``n`` pairs of each stance (all with ``n=None``), seeded, in their file order."""
    if n is None:
        return list(pairs)
    by: dict[str, list[int]] = {}
    for i, p in enumerate(pairs):
        by.setdefault(p.stance, []).append(i)
    rng = random.Random(seed)
    keep = sorted(i for idx in by.values() for i in rng.sample(idx, min(n, len(idx))))
    return [pairs[i] for i in keep]
