import numpy as np
import pytest

from factseek.errors import InputError
from factseek.labels import FEVER, POLITIFACT
from factseek.metrics.veracity import (
    accuracy,
    confusion_matrix,
    macro_f1,
    mae,
    majority_baseline,
    paired_test,
    plot_confusion,
    soft_accuracy,
    veracity_metrics,
)

GOLD = ["true", "false", "half-true", "pants-fire"]
PRED = ["true", "pants-fire", "true", "pants-fire"]  # distances 0, 1, 2, 0


def test_four_metrics_by_hand():
    assert accuracy(GOLD, PRED, POLITIFACT) == 0.5
    assert soft_accuracy(GOLD, PRED, POLITIFACT) == 0.75
    assert mae(GOLD, PRED, POLITIFACT) == 0.75
    # F1: true 2/3, false 0, half-true 0, pants-fire 2/3 (absent labels are not averaged)
    assert macro_f1(GOLD, PRED, POLITIFACT) == pytest.approx(1 / 3)
    m = veracity_metrics(GOLD, PRED, POLITIFACT)
    assert (m.n, m.accuracy, m.soft_accuracy, m.mae) == (4, 0.5, 0.75, 0.75)


def test_nominal_sets_have_no_ordinal_metrics():
    m = veracity_metrics(["supports", "refutes"], ["supports", "supports"], FEVER)
    assert m.accuracy == 0.5 and m.soft_accuracy is None and m.mae is None
    assert m.macro_f1 == pytest.approx((2 / 3 + 0) / 2)
    with pytest.raises(InputError, match="ordinal"):
        mae(["supports"], ["refutes"], FEVER)


def test_bad_input_raises_instead_of_scoring_zero():
    with pytest.raises(InputError, match="no examples"):
        accuracy([], [], POLITIFACT)
    with pytest.raises(InputError, match="2 gold labels but 1"):
        accuracy(["true", "false"], ["true"], POLITIFACT)
    with pytest.raises(InputError, match="not a politifact label"):
        accuracy(["true"], ["supports"], POLITIFACT)


def test_confusion_matrix_and_plot(tmp_path):
    cm = confusion_matrix(GOLD, PRED, POLITIFACT)
    expected = np.zeros((6, 6), dtype=np.int64)
    expected[5, 5] = expected[1, 0] = expected[3, 5] = expected[0, 0] = 1
    np.testing.assert_array_equal(cm, expected)
    out = plot_confusion(cm, POLITIFACT, tmp_path / "cm.png", title="t")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert list(tmp_path.iterdir()) == [out]


def test_majority_baseline_breaks_ties_by_label_order():
    assert majority_baseline(["true", "false", "true", "false"], 2, POLITIFACT) == [
        "false",
        "false",
    ]


def test_paired_test_identical_systems_are_not_different():
    t = paired_test(GOLD, PRED, PRED, POLITIFACT, metric="mae", resamples=200)
    assert t.delta == 0 and t.p_value == 1.0


@pytest.mark.parametrize("method", ["permutation", "bootstrap"])
def test_paired_test_detects_a_clear_difference(method):
    gold = ["true", "false"] * 15
    good = list(gold)
    bad = ["pants-fire"] * 30
    t = paired_test(gold, good, bad, POLITIFACT, metric="accuracy", method=method, resamples=500)
    assert t.a == 1.0 and t.b == 0.0 and t.delta == 1.0
    assert t.p_value < 0.01
    assert t.ci_low > 0.5
    one_diff = paired_test(gold, good, [*gold[:-1], "half-true"], POLITIFACT, resamples=500)
    assert one_diff.p_value > 0.5  # one example of thirty: no evidence
