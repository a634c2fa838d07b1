"""Calibrated stance probabilities (stance/calibrate.py) on hand-checkable fixtures."""

from __future__ import annotations

import numpy as np
import pytest

from factseek.errors import InputError, ModelError
from factseek.metrics.calibration import expected_calibration_error, reliability
from factseek.stance.calibrate import Calibration, fit_calibration

LABELS = ["supports", "refutes", "nei"]


def test_identity_and_a_hand_computed_map() -> None:
    p = np.array([[0.7, 0.2, 0.1]])
    assert np.allclose(Calibration().apply(p), p)
    t2 = Calibration(temperature=2.0).apply(p)
    expected = np.sqrt(p) / np.sqrt(p).sum()  # softmax(log p / 2)
    assert np.allclose(t2, expected)
    biased = Calibration(bias=(0.0, np.log(2.0), 0.0)).apply(p)
    assert np.allclose(biased, np.array([[0.7, 0.4, 0.1]]) / 1.2)  # refutes counted twice


def test_ece_by_hand() -> None:
    # bin [0.9, 1.0): two readings at 0.95, one right -> |0.95 - 0.5| * 2/4
    # bin [0.6, 0.7): two readings at 0.65, both right -> |0.65 - 1| * 2/4
    conf, ok = [0.95, 0.95, 0.65, 0.65], [True, False, True, True]
    assert expected_calibration_error(conf, ok) == pytest.approx(0.45 * 0.5 + 0.35 * 0.5)
    rows = reliability(conf, ok)
    assert [(r["n"], r["accuracy"]) for r in rows] == [(2, 1.0), (2, 0.5)]
    assert reliability([1.0], [True])[0]["high"] == 1.0  # 1.0 goes to the last bin
    with pytest.raises(InputError):
        reliability([1.5], [True])


def test_fit_recovers_an_overconfident_model() -> None:
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(3000, 3)) * 1.5
    true = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    gold = [LABELS[rng.choice(3, p=row)] for row in true]
    shown = Calibration(temperature=1 / 3).apply(true)  # three times too sure
    cal = fit_calibration(shown, gold, fitted_on="test")
    assert cal.temperature == pytest.approx(3.0, rel=0.15)

    def ece(p: np.ndarray) -> float:
        idx = p.argmax(1)
        return expected_calibration_error(
            p.max(1), [LABELS[k] == g for k, g in zip(idx, gold, strict=True)]
        )

    assert ece(shown) > 0.15 and ece(cal.apply(shown)) < 0.04
    assert Calibration.from_dict(cal.to_dict()) == Calibration(
        temperature=round(cal.temperature, 6),
        bias=tuple(round(b, 6) for b in cal.bias),
        fitted_on="test",
    )


def test_bad_maps_are_refused() -> None:
    with pytest.raises(ModelError):
        Calibration(temperature=0.0)
    with pytest.raises(ModelError):
        Calibration.from_dict({"temperature": "hot"})
    with pytest.raises(InputError):
        fit_calibration(np.ones((2, 3)) / 3, ["supports"])


def test_label_ece_uses_the_label_the_thresholds_pick() -> None:
    from factseek.stance.evaluate import label_ece

    probs = np.array([[0.45, 0.10, 0.45], [0.30, 0.20, 0.50]])
    # thresholds (0.4, 0.9): the first reads supports at 0.45 (wrong), the second nei at 0.5 (right)
    got = label_ece(probs, ["nei", "nei"], {"supports": 0.4, "refutes": 0.9})
    assert got == pytest.approx((0.45 * 1 + 0.5 * 1) / 2, abs=1e-4)


def test_a_two_way_side_is_calibrated_in_its_own_two_labels() -> None:
    """WiCE's gold says supported or not: a refutes reading of an unsupported claim is right
    there, with the probability 1 - p(supports); three-way sides are read as they are."""
    from factseek.stance.evaluate import scored_confidence
    from factseek.types import StanceResult

    def r(label, s, f, n):
        return StanceResult(label=label, probs={"supports": s, "refutes": f, "nei": n}, model="t")

    results = [r("refutes", 0.1, 0.6, 0.3), r("supports", 0.7, 0.1, 0.2), r("nei", 0.2, 0.2, 0.6)]
    gold = ["nei", "nei", "supports"]  # WiCE folds "not supported" into nei
    conf, ok = scored_confidence("supported-vs-not", results, gold)
    assert conf == pytest.approx([0.9, 0.7, 0.8]) and ok == [True, False, False]
    conf, ok = scored_confidence("3way", results, gold)
    assert conf == pytest.approx([0.6, 0.7, 0.6]) and ok == [False, False, False]


def test_every_source_weighs_the_same_when_asked() -> None:
    # a big source that is always nei and a small one that is always supports, read at 50/50
    probs = np.array([[0.5, 0.0, 0.5]] * 90 + [[0.5, 0.0, 0.5]] * 10)
    gold = ["nei"] * 90 + ["supports"] * 10
    groups = ["big"] * 90 + ["small"] * 10
    pooled = fit_calibration(probs, gold)
    fair = fit_calibration(probs, gold, groups=groups)
    # pooled: supports is rare, so its bias is strongly negative; weighed: the two balance
    assert pooled.bias[0] < -1.5 and abs(fair.bias[0]) < 0.2


def test_thresholds_can_weigh_sources_the_same() -> None:
    from factseek.stance.thresholds import tune_thresholds

    probs = np.array([[0.6, 0.0, 0.4]] * 90 + [[0.6, 0.0, 0.4]] * 10)
    gold = ["nei"] * 90 + ["supports"] * 10
    groups = ["big"] * 90 + ["small"] * 10
    pooled, _ = tune_thresholds(probs, gold)
    fair, score = tune_thresholds(probs, gold, groups)
    assert pooled["supports"] > 0.6  # calling them all nei is right 90% of the time
    assert fair["supports"] <= 0.6 and score == pytest.approx(0.5)  # each source's F1: 0 and 1
