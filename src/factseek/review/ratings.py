"""The organisation's rating scale: the labels a reviewer gives, and their schema.org 1-5 values.

A published ClaimReview carries the reviewer's label on the organisation's own scale
(``reviewRating.alternateName``) and that label's place on schema.org's 1-5 scale
(``ratingValue``, 1 = false, 5 = true; ``None``: no place on a truth scale, such as "not enough
evidence"). ``RatingScale`` holds the labels in the order a reviewer picks from; each label may
name the machine labels it stands for (``"averitec:refuted"``, ``"politifact:false"``), which is
how approving a machine verdict finds its rating and how a reviewer's label becomes training
data. A machine label belongs to at most one organisation label.

``load_ratings(path)`` reads a JSON file (docs/web-app.md shows the format)::

    {"format_version": 1, "name": "desk", "title": "Check Desk ratings",
     "labels": [{"label": "false", "name": "False", "rating": 1,
                 "machine": ["averitec:refuted", "politifact:false", "politifact:pants-fire"]},
                ...]}

``DEFAULT_RATINGS`` is the scale used without a file: the PolitiFact and AVeriTeC labels as they
are (pants-fire and false 1, barely-true 2, half-true 3, mostly-true 4, true 5; refuted 1,
conflicting-evidence 3, supported 5, not-enough-evidence no value).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factseek.errors import ConfigError, InputError
from factseek.files import SIDE_LIMIT, read_json
from factseek.labels import AVERITEC, POLITIFACT

FORMAT_VERSION = 1
BEST, WORST = 5, 1  # schema.org's rating range used in every ClaimReview
MACHINE_SCALES = {"politifact": POLITIFACT, "averitec": AVERITEC}
MAX_LABELS = 40
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")

#: A machine label's colour class (the review page, History, the HTML report).
LABEL_TONE: dict[str, str] = {
    "true": "good",
    "mostly-true": "good",
    "half-true": "mixed",
    "barely-true": "bad",
    "false": "bad",
    "pants-fire": "worst",
    "supported": "good",
    "refuted": "bad",
    "conflicting-evidence": "mixed",
    "not-enough-evidence": "none",
}


def value_tone(value: int | None) -> str:
    """The colour class of a 1-5 rating: 1-2 bad, 3 mixed, 4-5 good, none without a value."""
    if value is None:
        return "none"
    return "bad" if value <= 2 else "mixed" if value == 3 else "good"


@dataclass(frozen=True, kw_only=True)
class Rating:
    """One label of an organisation's scale."""

    label: str  # the id stored with a reviewer's decision: lower case, digits, hyphens
    name: str  # the words published (ClaimReview ``alternateName``)
    value: int | None  # schema.org ratingValue, 1 (false) to 5 (true); None: not on the scale
    machine: tuple[str, ...] = ()  # machine labels it stands for: "averitec:refuted", ...
    group: str = ""  # a heading for the reviewer's menu ("" = none)

    @property
    def tone(self) -> str:
        return value_tone(self.value)


@dataclass(frozen=True, kw_only=True)
class RatingScale:
    """An organisation's labels in menu order (see the module docstring)."""

    name: str
    labels: tuple[Rating, ...]
    title: str = ""

    def get(self, label: str) -> Rating:
        """The label by id; InputError listing the choices."""
        for r in self.labels:
            if r.label == label:
                return r
        raise InputError(
            f"unknown {self.name} label {label!r}; choose one of: "
            + ", ".join(r.label for r in self.labels)
        )

    def for_machine(self, scale: str, label: str) -> Rating | None:
        """The organisation's label that stands for a machine label (None when none does)."""
        key = f"{scale}:{label}"
        return next((r for r in self.labels if key in r.machine), None)

    def resolve(self, scale: str, label: str) -> Rating | None:
        """A decision's label on this scale: its own when ``scale`` is this scale's name, else
        through the machine mapping (None when this scale has no label for it)."""
        if scale == self.name:
            return next((r for r in self.labels if r.label == label), None)
        return self.for_machine(scale, label)

    def groups(self) -> list[tuple[str, list[Rating]]]:
        """The labels under their group headings, in order (for the reviewer's menu)."""
        out: list[tuple[str, list[Rating]]] = []
        for r in self.labels:
            if not out or out[-1][0] != r.group:
                out.append((r.group, []))
            out[-1][1].append(r)
        return out


_WORDS = {
    "pants-fire": "Pants on Fire",
    "false": "False",
    "barely-true": "Mostly False",
    "half-true": "Half True",
    "mostly-true": "Mostly True",
    "true": "True",
    "supported": "Supported",
    "refuted": "Refuted",
    "conflicting-evidence": "Conflicting evidence",
    "not-enough-evidence": "Not enough evidence",
}
_DEFAULT_VALUES: dict[str, int | None] = {
    "true": 5,
    "mostly-true": 4,
    "half-true": 3,
    "barely-true": 2,
    "false": 1,
    "pants-fire": 1,
    "supported": 5,
    "refuted": 1,
    "conflicting-evidence": 3,
    "not-enough-evidence": None,
}

#: The scale without a configuration file: each machine label rated as itself.
DEFAULT_RATINGS = RatingScale(
    name="factseek",
    title="factseek's default scale (PolitiFact and AVeriTeC labels)",
    labels=tuple(
        Rating(
            label=label,
            name=_WORDS[label],
            value=_DEFAULT_VALUES[label],
            machine=(f"{scale}:{label}",),
            group=group,
        )
        for scale, group, labels in (
            ("politifact", "PolitiFact", tuple(reversed(POLITIFACT.labels))),
            ("averitec", "AVeriTeC", AVERITEC.labels),
        )
        for label in labels
    ),
)


def label_words(label: str) -> str:
    """A machine label in words ("barely-true" -> "Mostly False"); other labels as they are."""
    return _WORDS.get(label, label)


def ratings_from_dict(data: Any, source: str = "ratings") -> RatingScale:
    """A scale from the JSON format (module docstring); ConfigError names what is wrong."""

    def bad(what: str) -> ConfigError:
        return ConfigError(f"{source}: {what}")

    if not isinstance(data, Mapping):
        raise bad("expected a JSON object")
    if data.get("format_version") != FORMAT_VERSION:
        raise bad(f"format_version must be {FORMAT_VERSION}")
    name = data.get("name")
    if not isinstance(name, str) or not _NAME.match(name) or name in MACHINE_SCALES:
        raise bad("name must be 1-40 lower-case letters, digits or hyphens (not a machine scale)")
    items = data.get("labels")
    if not isinstance(items, list) or not 0 < len(items) <= MAX_LABELS:
        raise bad(f"labels must be a list of 1 to {MAX_LABELS} objects")
    labels: list[Rating] = []
    seen_machine: dict[str, str] = {}
    for i, item in enumerate(items, 1):
        if not isinstance(item, Mapping):
            raise bad(f"label {i} is not an object")
        label, words, value = item.get("label"), item.get("name"), item.get("rating")
        if not isinstance(label, str) or not _NAME.match(label):
            raise bad(f"label {i}: 'label' must be lower-case letters, digits or hyphens")
        if any(r.label == label for r in labels):
            raise bad(f"label {label!r} appears twice")
        if not isinstance(words, str) or not words.strip() or len(words) > 80:
            raise bad(f"label {label!r}: 'name' must be 1-80 characters")
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or not WORST <= value <= BEST
        ):
            raise bad(f"label {label!r}: 'rating' must be an integer {WORST}-{BEST} or null")
        machine = item.get("machine", [])
        if not isinstance(machine, list) or not all(isinstance(m, str) for m in machine):
            raise bad(f"label {label!r}: 'machine' must be a list of strings")
        for m in machine:
            scale, _, mlabel = m.partition(":")
            if scale not in MACHINE_SCALES or mlabel not in MACHINE_SCALES[scale]:
                raise bad(
                    f"label {label!r}: unknown machine label {m!r} (write SCALE:LABEL with a"
                    f" scale of {', '.join(MACHINE_SCALES)})"
                )
            if m in seen_machine:
                raise bad(f"machine label {m!r} belongs to both {seen_machine[m]!r} and {label!r}")
            seen_machine[m] = label
        group = item.get("group", "")
        if not isinstance(group, str) or len(group) > 80:
            raise bad(f"label {label!r}: 'group' must be a short string")
        labels.append(
            Rating(
                label=label,
                name=" ".join(words.split()),
                value=value,
                machine=tuple(machine),
                group=group,
            )
        )
    title = data.get("title", "")
    if not isinstance(title, str):
        raise bad("title must be a string")
    return RatingScale(name=name, labels=tuple(labels), title=" ".join(title.split())[:200])


def load_ratings(path: str | Path | None) -> RatingScale:
    """The scale in a JSON file (``None``: ``DEFAULT_RATINGS``); ConfigError names the file."""
    if path is None:
        return DEFAULT_RATINGS
    path = Path(path).expanduser()
    try:
        data = read_json(path, "rating scale", limit=SIDE_LIMIT)
    except InputError as e:  # not found, a device, too large, not UTF-8 or not JSON
        raise ConfigError(str(e)) from None
    return ratings_from_dict(data, str(path))
