"""The few numbers the evidence verdict's rules need, and how they were measured.

A ``VerdictRules`` is a small JSON file (``format_version`` 1, ``kind``
"factseek-verdict-rules"):

- ``decide``: the mass a side of a question needs to answer it (a lone card: its calibrated
  probability times its weight); ``weak``: the mass below which the other side is ignored;
  ``genre_weight``: the weight of a card from a letter, opinion piece or blog; ``combine``: how
  a side's cards add up ("noisy-or": ``1 - prod(1 - weight x p)``; "max": the strongest alone);
  ``abstain``: per verdict label, the calibrated confidence below which the verdict abstains
  (``judge.verdict``): the precision the label must have to be given at all.
- ``calibration``: per verdict label, ``{"a": a, "b": b}`` of the logistic map
  ``P(right) = sigmoid(a * logit(strength) + b)`` from the raw strength of the evidence to the
  probability that the label is right (labels without a map keep the raw strength), and
  optionally a weight per feature of the answers (``FEATURES``, added to the sum): ``more``,
  how many more questions than one gave the label's answer ("no" for refuted, "yes" for
  supported, "conflicting" for conflicting evidence; at most 2); ``claim``, 1 when the claim's
  own question did; ``against``, 1 when some question gave the opposite answer ("yes" for
  refuted, "no" for supported); ``conflict``, 1 when some question was answered conflicting;
  ``overlap``, the largest share of the claim's words found in one card the verdict cites on its
  side (``judge.verdict.verdict_features``). A map without them reads the strength alone.
- ``precision`` and ``precision_basis``: how often each label was right, and on what
  ("AVeriTeC dev, 500 claims"); shown beside a verdict.
- ``answer_precision``: on the same claims, how often the claim's own question was answered
  rightly: ``{"yes": {"precision": p, "right": r, "n": n}, "no": ...}`` ("yes" is right when
  the claim was supported, "no" when it was refuted), and ``answer_basis``, on what; shown
  with a report's answers (``answer_words``); ``subquestion_precision``, the same over every
  answer to a subquestion, which has no gold answer of its own: "yes" is scored right when the
  claim was supported, "no" when it was refuted, as for the claim's own question.
- ``fitted_on``: how the numbers were chosen (the shipped ones: cross-validation on AVeriTeC
  train claims; ``factseek judge fit-rules``).

None of it is a weight trained on text: a handful of thresholds and two numbers per label.
``load_rules("default")`` reads the shipped file (``factseek/models/verdict/rules.json``, fitted
on the ``small`` stance model's readings; ``rules-mpnet.json`` for the ``mpnet`` one); a path
reads yours; the defaults below apply when the shipped file is absent. ``default_rules(stance)``
is what a judge given no rules uses: the shipped file of that stance model, or the one
``$FACTSEEK_VERDICT_RULES`` names ("builtin" for the numbers below, with no calibration and no
abstention).
"""

from __future__ import annotations

import functools
import json
import math
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from factseek.errors import ConfigError, InputError, ModelError

FORMAT_VERSION = 1
KIND = "factseek-verdict-rules"
LABELS = ("supported", "refuted", "conflicting-evidence", "not-enough-evidence")
ANSWERS = ("yes", "no")  # the answers of the claim's own question whose precision is measured
COMBINE = ("noisy-or", "max")
FEATURES = ("more", "claim", "against", "conflict", "overlap")  # module docstring


@dataclass(frozen=True, kw_only=True)
class VerdictRules:
    """Thresholds, calibration and measured precision of the rules verdict (module docstring)."""

    decide: float = 0.7
    weak: float = 0.5
    genre_weight: float = 0.5
    combine: str = "noisy-or"  # how a side's cards add up: "noisy-or", or "max" (the strongest)
    abstain: Mapping[str, float] = field(default_factory=dict)  # label -> level (absent: 0)
    calibration: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    precision: Mapping[str, float] = field(default_factory=dict)
    precision_basis: str = ""
    answer_precision: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    subquestion_precision: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    answer_basis: str = ""
    fitted_on: str = ""

    def __post_init__(self) -> None:
        for name in ("decide", "weak", "genre_weight"):
            v = getattr(self, name)
            if not isinstance(v, int | float) or not 0.0 <= v <= 1.0:
                raise ConfigError(f"verdict rules: {name} must be in [0, 1], got {v!r}")
        if self.combine not in COMBINE:
            raise ConfigError(f"verdict rules: combine must be one of {', '.join(COMBINE)}")
        for label, v in self.abstain.items():
            if label not in LABELS or not isinstance(v, int | float) or not 0.0 <= v <= 1.0:
                raise ConfigError(f"verdict rules: bad abstain level {label!r}: {v!r}")
        if self.weak > self.decide:
            raise ConfigError("verdict rules: weak must not exceed decide")
        for label, m in self.calibration.items():
            if label not in LABELS or not {"a", "b"} <= set(m) <= {"a", "b", *FEATURES}:
                raise ConfigError(f"verdict rules: bad calibration entry {label!r}")
        for label, p in self.precision.items():
            if label not in LABELS or not 0.0 <= p <= 1.0:
                raise ConfigError(f"verdict rules: bad precision entry {label!r}")
        for name in ("answer_precision", "subquestion_precision"):
            for answer, m in getattr(self, name).items():
                ok = answer in ANSWERS and isinstance(m, Mapping) and set(m) == {"precision", "right", "n"}  # fmt: skip
                if not ok or not 0 <= m["right"] <= m["n"] or not 0.0 <= m["precision"] <= 1.0:
                    raise ConfigError(f"verdict rules: bad {name} entry {answer!r}")

    def calibrated(self, label: str) -> bool:
        return label in self.calibration

    def calibrate(
        self, label: str, strength: float, features: Mapping[str, float] | None = None
    ) -> float:
        """P(label right) for a raw strength in [0, 1] and the answers' ``features`` (absent:
        0), the strength itself without a map."""
        m = self.calibration.get(label)
        if m is None:
            return float(strength)
        s = min(max(float(strength), 1e-4), 1 - 1e-4)
        z = m["a"] * math.log(s / (1 - s)) + m["b"]
        z += sum(m.get(f, 0.0) * float((features or {}).get(f, 0.0)) for f in FEATURES)
        return 1.0 / (1.0 + math.exp(-z))

    def to_dict(self) -> dict[str, Any]:
        return {"format_version": FORMAT_VERSION, "kind": KIND, **asdict(self)}

    def save(self, path: str | Path) -> Path:
        from factseek.files import atomic_write

        path = Path(path)
        atomic_write(path, json.dumps(self.to_dict(), indent=2) + "\n")
        return path


def _measured(precision: Mapping[str, Mapping[str, float]], subject: str = "it") -> list[str]:
    """ "answered “yes” it was supported 56% of the time (31 of 55)", and so on for "no"."""
    said = []
    for answer, what in (("yes", "supported"), ("no", "refuted")):
        m = precision.get(answer)
        if m and m["n"]:
            said.append(
                f"answered “{answer}” {subject} was {what} {100 * m['precision']:.0f}% of the time"
                f" ({int(m['right'])} of {int(m['n'])})"
            )
    return said


def answer_words(rules: VerdictRules) -> str:
    """ "where it was measured (BASIS), when the claim itself was answered “yes” it was
    supported 56% of the time (31 of 55), and when answered “no” it was refuted 85% of the time
    (67 of 79); when a subquestion was answered “yes” the claim was supported 37% of the time
    (48 of 131), ...", or "" when the rules hold no such measurement (the subquestions' part
    says they were not measured when they were not)."""
    own = _measured(rules.answer_precision)
    sub = _measured(rules.subquestion_precision, "the claim")
    if not own:
        return ""
    where = f"where it was measured ({rules.answer_basis}), " if rules.answer_basis else ""
    subs = (
        f"when a subquestion was {', and when '.join(sub)}"
        if sub
        else "the subquestions' answers were not measured"
    )
    return f"{where}when the claim itself was {', and when '.join(own)}; {subs}"


def rules_from_dict(data: Mapping[str, Any], where: str = "verdict rules") -> VerdictRules:
    if data.get("kind") != KIND or data.get("format_version") != FORMAT_VERSION:
        raise ModelError(f"{where}: not a factseek verdict rules file (version {FORMAT_VERSION})")
    keys = {k: v for k, v in data.items() if k not in ("kind", "format_version")}
    try:
        return VerdictRules(**keys)
    except TypeError as e:
        raise ModelError(f"{where}: {e}") from None


#: The shipped rules fitted on each shipped stance model's readings (``models/verdict/``); a
#: stance model not named here (a folder of your own) gets the small model's.
STANCE_RULES = {"small": "rules.json", "mpnet": "rules-mpnet.json"}


def _rules_key(stance: str) -> str:
    """The ``STANCE_RULES`` key of a stance model's name (``"default"``: the model it names)."""
    from factseek.stance import resolve_stance

    name = str(resolve_stance(stance))
    return name if name in STANCE_RULES else "small"


def default_rules_path(stance: str = "default") -> Path:
    name = STANCE_RULES[_rules_key(stance)]
    return Path(str(resources.files("factseek") / "models" / "verdict" / name))


def load_rules(name: str | Path = "default", *, stance: str = "default") -> VerdictRules:
    """The shipped rules ("default": those fitted on the readings of the shipped stance model
    ``stance``; a shipped model's name, "small" or "mpnet": those fitted on its readings; the
    built-in defaults when the file is absent) or a file."""
    shipped = str(name) == "default" or str(name) in STANCE_RULES
    model = stance if str(name) == "default" else str(name)  # whose readings they were fitted on
    path = default_rules_path(model) if shipped else Path(name)
    if shipped and not path.is_file():
        return VerdictRules()
    from factseek.files import SIDE_LIMIT, read_json

    try:
        data = read_json(path, "verdict rules file", limit=SIDE_LIMIT)
    except InputError as e:  # not found, a device, too large, not UTF-8 or not JSON
        raise ConfigError(f"cannot read verdict rules: {e}") from None
    if not isinstance(data, dict):
        raise ModelError(f"{path}: not a verdict rules file")
    return rules_from_dict(data, str(path))


BUILTIN = VerdictRules()  # the numbers above: no calibration, no abstention
ENV = "FACTSEEK_VERDICT_RULES"


def default_rules(stance: str = "default") -> VerdictRules:
    """The rules a judge uses when given none: the file named by ``$FACTSEEK_VERDICT_RULES``
    ("builtin": ``BUILTIN``; unset: the shipped file fitted on the stance model ``stance``'s
    readings, ``STANCE_RULES``), read once per name."""
    env = os.environ.get(ENV)
    return _default(env) if env else _shipped(_rules_key(stance))


@functools.lru_cache(maxsize=4)
def _shipped(stance: str) -> VerdictRules:
    return load_rules("default", stance=stance)


@functools.lru_cache(maxsize=4)
def _default(name: str) -> VerdictRules:
    return BUILTIN if name == "builtin" else load_rules(name)


__all__ = [
    "ANSWERS",
    "BUILTIN",
    "ENV",
    "LABELS",
    "STANCE_RULES",
    "VerdictRules",
    "answer_words",
    "default_rules",
    "load_rules",
    "rules_from_dict",
]
