"""Per-label precision, risk-coverage and calibration error of verdicts, by hand."""

from __future__ import annotations

import pytest

from factseek.errors import InputError
from factseek.metrics.selective import label_precision, risk_coverage, selective_ece

GOLD = ["refuted", "refuted", "supported", "refuted", "not-enough-evidence"]
PRED = ["refuted", "refuted", "refuted", "supported", "not-enough-evidence"]
CONF = [0.9, 0.8, 0.7, 0.6, None]


def test_label_precision_by_hand() -> None:
    p = label_precision(GOLD, PRED)
    assert list(p) == ["refuted", "supported", "not-enough-evidence"]  # most frequent first
    assert p["refuted"] == {"precision": round(2 / 3, 4), "n": 3, "share": 0.6}
    assert p["supported"] == {"precision": 0.0, "n": 1, "share": 0.2}
    assert p["not-enough-evidence"] == {"precision": 1.0, "n": 1, "share": 0.2}


def test_risk_coverage_most_confident_first() -> None:
    rc = risk_coverage(GOLD, PRED, CONF, points=(0.2, 0.4, 0.6, 0.8, 1.0))
    assert rc["max_coverage"] == 0.8  # four of five verdicts carry a confidence
    assert rc["rows"] == [
        {"coverage": 0.2, "n": 1, "accuracy": 1.0},
        {"coverage": 0.4, "n": 2, "accuracy": 1.0},
        {"coverage": 0.6, "n": 3, "accuracy": round(2 / 3, 4)},
        {"coverage": 0.8, "n": 4, "accuracy": 0.5},
    ]  # 100% is beyond what the confident verdicts reach: not reported


def test_selective_ece_by_hand() -> None:
    # ten bins: 0.9 right, 0.8 right, 0.7 wrong, 0.6 wrong, each alone in its bin
    expected = (abs(0.9 - 1) + abs(0.8 - 1) + abs(0.7 - 0) + abs(0.6 - 0)) / 4
    assert selective_ece(GOLD, PRED, CONF) == pytest.approx(expected, abs=1e-4)
    assert selective_ece(GOLD, PRED, [None] * 5) is None


def test_bad_input() -> None:
    with pytest.raises(InputError):
        label_precision(["refuted"], [])
    with pytest.raises(InputError):
        risk_coverage([], [], [])
