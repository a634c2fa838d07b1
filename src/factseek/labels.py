"""Veracity label sets: PolitiFact's 6-way ordinal scale, AVeriTeC's 4 labels, FEVER's 3.

A label travels through factseek as its canonical name (a string, ``Verdict.label``); a
``LabelSet`` knows its names, their order, whether that order is ordinal, and the exact
spellings data files use for each name. ``parse`` accepts only those spellings: there is no
silent mapping between sets ("true" is not an AVeriTeC label, "Supported" is not a PolitiFact one).

>>> POLITIFACT.parse("Pants on Fire!")
'pants-fire'
>>> POLITIFACT.index("half-true"), PolitiFact.HALF_TRUE.name_
(3, 'half-true')
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from factseek.errors import InputError


def _key(raw: str) -> str:
    """Spelling-insensitive key: lower case, runs of non-letters/digits collapsed to one space."""
    return re.sub(r"[^0-9a-z]+", " ", raw.lower()).strip()


@dataclass(frozen=True, kw_only=True)
class LabelSet:
    """An ordered set of label names. ``ordinal=True``: the order is a scale (soft accuracy, MAE)."""

    name: str
    labels: tuple[str, ...]
    ordinal: bool
    aliases: Mapping[str, str] = field(default_factory=dict)  # data-file spelling -> label

    def __post_init__(self) -> None:
        if len(set(self.labels)) != len(self.labels):
            raise ValueError(f"label set {self.name!r} repeats a label")
        unknown = set(self.aliases.values()) - set(self.labels)
        if unknown:
            raise ValueError(f"label set {self.name!r}: aliases point to unknown {sorted(unknown)}")

    def __len__(self) -> int:
        return len(self.labels)

    def __contains__(self, label: object) -> bool:
        return label in self.labels

    def index(self, label: str) -> int:
        """Position of a canonical label name (its ordinal value on an ordinal scale)."""
        try:
            return self.labels.index(label)
        except ValueError:
            raise InputError(
                f"{label!r} is not a {self.name} label (one of: {', '.join(self.labels)})"
            ) from None

    def parse(self, raw: str) -> str:
        """The canonical name for a data file's spelling of a label of this set."""
        lookup = {_key(x): x for x in self.labels}
        lookup.update({_key(a): x for a, x in self.aliases.items()})
        label = lookup.get(_key(raw))
        if label is None:
            raise InputError(
                f"{raw!r} is not a {self.name} label (one of: {', '.join(self.labels)})"
            )
        return label


class PolitiFact(enum.IntEnum):
    """PolitiFact's Truth-O-Meter as an ordinal enum: ``PolitiFact.TRUE > PolitiFact.FALSE``."""

    PANTS_FIRE = 0
    FALSE = 1
    BARELY_TRUE = 2
    HALF_TRUE = 3
    MOSTLY_TRUE = 4
    TRUE = 5

    @property
    def name_(self) -> str:
        """The canonical label name, e.g. ``"barely-true"``."""
        return self.name.lower().replace("_", "-")

    @classmethod
    def from_name(cls, label: str) -> PolitiFact:
        return cls(POLITIFACT.index(label))


POLITIFACT = LabelSet(
    name="politifact",
    labels=tuple(x.name_ for x in PolitiFact),
    ordinal=True,
    aliases={
        "pants on fire": "pants-fire",
        "pants on fire!": "pants-fire",
        "mostly false": "barely-true",  # PolitiFact renamed "barely true" to "mostly false" in 2011
    },
)

AVERITEC = LabelSet(
    name="averitec",
    labels=("supported", "refuted", "not-enough-evidence", "conflicting-evidence"),
    ordinal=False,
    aliases={"conflicting evidence/cherrypicking": "conflicting-evidence"},
)

FEVER = LabelSet(
    name="fever",
    labels=("supports", "refutes", "not-enough-info"),
    ordinal=False,
    aliases={"nei": "not-enough-info"},  # stance files (factseek feedback export) write "nei"
)

#: Every label set by name.
LABEL_SETS: dict[str, LabelSet] = {s.name: s for s in (POLITIFACT, AVERITEC, FEVER)}


def label_set(name: str) -> LabelSet:
    """A label set by name; the error lists the registered names."""
    try:
        return LABEL_SETS[name]
    except KeyError:
        raise InputError(f"unknown label set {name!r} (one of: {', '.join(LABEL_SETS)})") from None
