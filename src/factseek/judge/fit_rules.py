"""Choosing the verdict rules' numbers by cross-validation on labelled claims.

``fit_rules(items, levels=...)`` takes labelled claims with the evidence cards a pipeline run
gave them (``RuleItem``: gold label, claim, questions, cards) and returns the ``VerdictRules``
and a ``FitReport``:

1. **Grid.** For every ``(decide, weak, genre_weight, combine)`` of ``GRID`` (weak <= decide), each
   claim's uncalibrated verdict: label and raw strength (``judge.verdict`` with no calibration
   and no abstention).
2. **Cross-validation.** The claims are cut into ``folds`` folds (by a hash of the claim text,
   so the cut does not depend on order); for each fold, a logistic map per verdict label
   (``fit_logistic``: P(right) from logit(strength) and, with ``features=True``, the features
   of ``judge.verdict.verdict_features`` of one of ``FEATURE_SETS``, chosen per label as the
   one whose maps commit to most right verdicts of that label; a feature constant over the
   label's claims gets no weight) is fitted on the other folds and gives the fold's claims
   their calibrated confidence; a claim whose confidence is below its label's ``levels``
   abstains (not-enough-evidence).
3. **Score** of a grid point: the number of its cross-validated verdicts that commit (supported,
   refuted or conflicting-evidence) and are right; where that ties (when the levels leave
   almost nothing committed, say), the number that would be right with every level at 0.5
   (verdicts more likely right than wrong). The best point wins (then: the smaller ``decide``,
   ``weak``, ``genre_weight``, and noisy-or before max).
4. The maps are fitted again on every claim at that point; the report keeps the
   cross-validated precision and share of each label, the coverage and the calibration error.

``levels`` are the precisions the caller wants each label to have when it is given; they
become the rules' abstention levels unchanged.

``fit_levels(items, rules, wanted)`` then lowers a label's abstention level as far as that
precision allows: the lowest level of ``LEVEL_GRID`` at which the label's cross-validated
verdicts (the rules' grid point and feature sets, maps refitted per fold as above) are right at
least ``wanted[label]`` of the time on at least ``MIN_PER_LABEL`` claims. A confidence level is
a bound on each verdict, a precision one on the label's verdicts together: a level of 0.6 gave
"supported" a precision well above 0.6. The rules' maps are kept.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from factseek.errors import InputError
from factseek.judge.rules import FEATURES, VerdictRules
from factseek.judge.verdict import aggregate, answer_questions, verdict_features
from factseek.metrics.calibration import expected_calibration_error
from factseek.types import Claim, Evidence, Question

COMMITTED = ("supported", "refuted", "conflicting-evidence")
DEFAULT_LEVELS: dict[str, float] = {"refuted": 0.8, "supported": 0.6, "conflicting-evidence": 0.5}
GRID: dict[str, tuple[Any, ...]] = {
    "decide": (0.5, 0.6, 0.7, 0.8, 0.9),
    "weak": (0.3, 0.4, 0.5, 0.6),
    "genre_weight": (0.25, 0.5),
    "combine": ("noisy-or", "max"),
}
LEVEL_GRID: tuple[float, ...] = tuple(round(0.3 + 0.05 * i, 2) for i in range(13))  # 0.3 .. 0.9
MIN_PER_LABEL = 20  # fewer verdicts of a label than this: a constant map (its smoothed accuracy)
#: what a label's map may read beside the strength, chosen per label by cross-validation: nothing,
#: the answers, the answers and the cited cards' overlap with the claim (judge.rules.FEATURES)
FEATURE_SETS: tuple[tuple[str, ...], ...] = (
    (),
    ("more", "claim", "against", "conflict"),
    ("more", "claim", "against", "conflict", "overlap"),
)


@dataclass(frozen=True, kw_only=True)
class RuleItem:
    """One labelled claim with what the pipeline found for it."""

    gold: str
    claim: Claim
    questions: tuple[Question, ...]
    evidence: tuple[Evidence, ...]


@dataclass(frozen=True, kw_only=True)
class FitReport:
    n: int
    folds: int
    chosen: dict[str, Any]
    score: int
    precision: dict[str, float]  # cross-validated, per committed label
    share: dict[str, float]  # share of claims given each label (cross-validated)
    coverage: float  # share of claims given a committed label
    ece: float  # calibration error of the committed verdicts' confidence
    grid: list[dict[str, Any]] = field(default_factory=list)


def fit_logistic(
    strength: Sequence[float],
    correct: Sequence[bool],
    l2: float = 1e-2,
    features: Sequence[Mapping[str, float]] | None = None,
) -> dict[str, float]:
    """``{"a", "b"}`` of ``P(correct) = sigmoid(a * logit(s) + b)`` by Newton steps on the
    L2-penalised log-likelihood (the intercept unpenalised), with a weight per entry of
    ``features`` (``judge.rules.FEATURES``) that varies over the examples; with under
    ``MIN_PER_LABEL`` examples or one outcome only, ``a = 0`` and ``b`` the logit of the
    (add-one smoothed) accuracy."""
    n = len(strength)
    k = sum(bool(c) for c in correct)
    if n < MIN_PER_LABEL or k in (0, n):
        p = (k + 1) / (n + 2)
        return {"a": 0.0, "b": round(math.log(p / (1 - p)), 6)}
    return _newton(strength, correct, l2, features or [{} for _ in strength])


def _logit(s: float) -> float:
    s = min(max(s, 1e-4), 1 - 1e-4)
    return math.log(s / (1 - s))


def _newton(
    strength: Sequence[float],
    correct: Sequence[bool],
    l2: float,
    features: Sequence[Mapping[str, float]],
) -> dict[str, float]:
    """``fit_logistic``'s Newton steps on [logit(s), the varying features, 1]."""
    names = [f for f in FEATURES if len({float(x.get(f, 0.0)) for x in features}) > 1]
    x = np.array(
        [
            [_logit(s), *(float(f.get(m, 0.0)) for m in names), 1.0]
            for s, f in zip(strength, features, strict=True)
        ]
    )
    y = np.array([1.0 if c else 0.0 for c in correct])
    w = np.zeros(x.shape[1])
    w[-1] = math.log(y.mean() / (1 - y.mean()))
    penalty = np.diag([l2] * (x.shape[1] - 1) + [0.0])
    for _ in range(50):
        p = 1 / (1 + np.exp(-(x @ w)))
        try:
            step = np.linalg.solve(
                (x * (p * (1 - p))[:, None]).T @ x + penalty, x.T @ (p - y) + penalty @ w
            )
        except np.linalg.LinAlgError:  # a flat likelihood (every strength alike, no penalty)
            break
        w -= step
        if np.abs(step).sum() < 1e-8:
            break
    return {"a": round(float(w[0]), 6), "b": round(float(w[-1]), 6)} | {
        m: round(float(v), 6) for m, v in zip(names, w[1:-1], strict=True)
    }


def _fold(item: RuleItem, folds: int) -> int:
    return int.from_bytes(hashlib.sha1(item.claim.text.encode()).digest()[:4], "big") % folds


Raw = tuple[str, float | None, dict[str, float]]  # label, raw strength, the answers' features


def raw_verdicts(items: Sequence[RuleItem], rules: VerdictRules) -> list[Raw]:
    """(label, raw strength, features) per item under ``rules`` with no calibration and no
    abstention (the features: ``judge.verdict.verdict_features``)."""
    bare = replace(rules, calibration={}, abstain={}, precision={})
    out = []
    for it in items:
        answers = answer_questions(it.questions, it.evidence, bare)
        v = aggregate(it.claim, answers, it.evidence, judge="fit", rules=bare)
        label = str(v.label)
        features = verdict_features(label, answers, it.claim.text, it.evidence)
        out.append((label, v.confidence, features))
    return out


def _calibrated(
    raw: Sequence[Raw],
    items: Sequence[RuleItem],
    train: Sequence[int],
    sets: Mapping[str, Sequence[str]],
) -> dict[str, dict[str, float]]:
    """A map per committed label, reading the features ``sets`` names for it."""
    maps = {}
    for label in COMMITTED:
        idx = [i for i in train if raw[i][0] == label and raw[i][1] is not None]
        names = sets.get(label, ())
        maps[label] = fit_logistic(
            [raw[i][1] or 0.0 for i in idx],
            [items[i].gold == label for i in idx],
            features=[{f: raw[i][2][f] for f in names} for i in idx] if names else None,
        )
    return maps


def _decide(
    verdict: Raw, maps: Mapping[str, Mapping[str, float]], levels: Mapping[str, float]
) -> tuple[str, float | None]:
    label, strength, features = verdict
    if strength is None or label not in maps:
        return "not-enough-evidence", None
    conf = VerdictRules(calibration={label: maps[label]}).calibrate(label, strength, features)
    if conf < levels.get(label, 0.0):
        return "not-enough-evidence", None
    return label, conf


def cross_validate(
    items: Sequence[RuleItem],
    raw: Sequence[Raw],
    levels: Mapping[str, float],
    folds: int,
    sets: Mapping[str, Sequence[str]] | None = None,
) -> list[tuple[str, float | None]]:
    """Each item's cross-validated (label, calibrated confidence) after abstention, each
    label's map reading the features ``sets`` names for it (none: the strength alone)."""
    which = [_fold(it, folds) for it in items]
    out: list[tuple[str, float | None]] = [("not-enough-evidence", None)] * len(items)
    for f in range(folds):
        train = [i for i in range(len(items)) if which[i] != f]
        maps = _calibrated(raw, items, train, sets or {})
        for i in range(len(items)):
            if which[i] == f:
                out[i] = _decide(raw[i], maps, levels)
    return out


def summarize(
    items: Sequence[RuleItem], pred: Sequence[tuple[str, float | None]]
) -> dict[str, Any]:
    """Precision and share per label, coverage and calibration error of committed verdicts."""
    n = len(items)
    precision, share = {}, {}
    for label in (*COMMITTED, "not-enough-evidence"):
        idx = [i for i, (p, _) in enumerate(pred) if p == label]
        share[label] = round(len(idx) / n, 4) if n else 0.0
        if idx:
            precision[label] = round(sum(items[i].gold == label for i in idx) / len(idx), 4)
    committed = [i for i, (p, c) in enumerate(pred) if p in COMMITTED and c is not None]
    ece = (
        expected_calibration_error(
            [pred[i][1] or 0.0 for i in committed], [items[i].gold == pred[i][0] for i in committed]
        )
        if committed
        else 0.0
    )
    return {
        "precision": precision,
        "share": share,
        "coverage": round(len(committed) / n, 4) if n else 0.0,
        "ece": round(float(ece), 4),
        "right": sum(items[i].gold == pred[i][0] for i in committed),
    }


def _choose_features(
    items: Sequence[RuleItem],
    raw: Sequence[Raw],
    levels: Mapping[str, float],
    folds: int,
    options: Sequence[tuple[str, ...]],
) -> tuple[dict[str, list[str]], list[tuple[str, float | None]]]:
    """Per committed label, the features (of ``options``, the first of a tie) whose maps
    commit to the most right verdicts of that label in cross-validation, and the
    cross-validated verdicts with them (a claim's verdict depends on its own label's map only)."""
    runs = [
        cross_validate(items, raw, levels, folds, dict.fromkeys(COMMITTED, option))
        for option in options
    ]
    sets: dict[str, list[str]] = {}
    pred: list[tuple[str, float | None]] = [("not-enough-evidence", None)] * len(items)
    for label in COMMITTED:
        mine = [i for i, r in enumerate(raw) if r[0] == label]
        right = [sum(run[i][0] == label == items[i].gold for i in mine) for run in runs]
        k = right.index(max(right))
        sets[label] = list(options[k])
        for i in mine:
            pred[i] = runs[k][i]
    return sets, pred


def fit_rules(
    items: Sequence[RuleItem],
    *,
    levels: Mapping[str, float] = DEFAULT_LEVELS,
    folds: int = 5,
    grid: Mapping[str, Sequence[float]] = GRID,
    fitted_on: str = "",
    features: bool = True,
) -> tuple[VerdictRules, FitReport]:
    """The rules chosen by cross-validation on ``items`` (module docstring)."""
    if len(items) < folds * 5:
        raise InputError(
            f"fitting verdict rules over {folds} folds needs at least {folds * 5} labelled claims, got {len(items)}"
        )
    rows = []
    best: tuple[Any, ...] | None = None
    combines = grid.get("combine", ("noisy-or",))
    options = FEATURE_SETS if features else FEATURE_SETS[:1]
    for decide, weak, gw, combine in itertools.product(
        grid["decide"], grid["weak"], grid["genre_weight"], combines
    ):
        if weak > decide:
            continue
        rules = VerdictRules(decide=decide, weak=weak, genre_weight=gw, combine=combine)
        raw = raw_verdicts(items, rules)
        sets, pred = _choose_features(items, raw, levels, folds, options)
        stats = summarize(items, pred)
        half = dict.fromkeys(COMMITTED, 0.5)
        even = summarize(items, cross_validate(items, raw, half, folds, sets))
        row = {"decide": decide, "weak": weak, "genre_weight": gw, "combine": combine}
        rows.append({**row, **stats, "right_at_half": even["right"], "features": sets})
        key = (-stats["right"], -even["right"], decide, weak, gw, combine != "noisy-or")
        if best is None or key < best[0]:
            best = (key, rules, raw, stats, sets)
    assert best is not None
    _, rules, raw, stats, sets = best
    maps = _calibrated(raw, items, range(len(items)), sets)
    chosen = replace(rules, calibration=maps, abstain=dict(levels), fitted_on=fitted_on)
    report = FitReport(
        n=len(items),
        folds=folds,
        chosen={
            "decide": rules.decide,
            "weak": rules.weak,
            "genre_weight": rules.genre_weight,
            "combine": rules.combine,
            "features": sets,
        },
        score=int(stats["right"]),
        precision=stats["precision"],
        share=stats["share"],
        coverage=stats["coverage"],
        ece=stats["ece"],
        grid=rows,
    )
    return chosen, report


_LEVELS_NOTE = "; abstention levels: "


@dataclass(frozen=True, kw_only=True)
class LevelRow:
    """One label at one abstention level, cross-validated."""

    label: str
    level: float
    precision: float  # of the label's verdicts (0 when none)
    n: int  # claims given the label
    share: float  # of all claims
    chosen: bool = False  # the level fit_levels chose for the label


def fit_levels(
    items: Sequence[RuleItem],
    rules: VerdictRules,
    wanted: Mapping[str, float],
    *,
    folds: int = 5,
    grid: Sequence[float] = LEVEL_GRID,
) -> tuple[VerdictRules, list[LevelRow]]:
    """``rules`` with each ``wanted`` label's abstention level lowered to the lowest of ``grid``
    whose cross-validated precision reaches ``wanted[label]`` (module docstring); a label that
    reaches it nowhere keeps its level. Returns the rules and every level tried."""
    if len(items) < folds * 5:
        raise InputError(
            f"choosing abstention levels over {folds} folds needs at least {folds * 5} labelled claims, got {len(items)}"
        )
    unknown = sorted(set(wanted) - set(COMMITTED))
    if unknown:
        raise InputError(f"no abstention level for {', '.join(unknown)}: labels are {', '.join(COMMITTED)}")  # fmt: skip
    sets = {label: [f for f in m if f not in ("a", "b")] for label, m in rules.calibration.items()}
    raw = raw_verdicts(items, rules)
    levels, rows = dict(rules.abstain), []
    for label, target in wanted.items():
        found = None
        for level in sorted(grid):
            stats = summarize(items, cross_validate(items, raw, {label: level}, folds, sets))
            n = round(stats["share"][label] * len(items))
            p = stats["precision"].get(label, 0.0)
            chosen = found is None and n >= MIN_PER_LABEL and p >= target
            found = level if chosen else found
            rows.append(LevelRow(label=label, level=level, precision=p, n=n, share=stats["share"][label], chosen=chosen))  # fmt: skip
        if found is not None:
            levels[label] = found
    note = ", ".join(f"{label} {p:g}" for label, p in wanted.items())
    before = rules.fitted_on.split(_LEVELS_NOTE)[0]  # an earlier choice of levels is replaced
    fitted = f"{before}{_LEVELS_NOTE}the lowest with cross-validated precision at least {note} over {len(items)} claims"  # fmt: skip
    return replace(rules, abstain=levels, fitted_on=fitted), rows


__all__ = [
    "DEFAULT_LEVELS",
    "FEATURE_SETS",
    "GRID",
    "LEVEL_GRID",
    "FitReport",
    "LevelRow",
    "RuleItem",
    "cross_validate",
    "fit_levels",
    "fit_logistic",
    "fit_rules",
    "raw_verdicts",
    "summarize",
]
