"""AP@k, recall@k, RR on hand-computed rankings."""

from __future__ import annotations

import pytest

from factseek.errors import ConfigError, InputError
from factseek.metrics.retrieval import (
    average_precision,
    best_possible,
    parse_metric,
    recall_at_k,
    reciprocal_rank,
)


def test_average_precision_by_hand():
    # relevant at ranks 1 and 3: (1/1 + 2/3) / 2
    assert average_precision(["a", "x", "b"], {"a", "b"}, 10) == pytest.approx(5 / 6)
    # only b inside the cut-off: (1/2) / min(2, 2)
    assert average_precision(["x", "b", "a"], {"a", "b"}, 2) == pytest.approx(0.25)
    # more relevant than k: a perfect top-k is 1
    assert average_precision(["a", "b"], {"a", "b", "c"}, 2) == 1.0
    assert average_precision(["x", "y"], {"a"}, 10) == 0.0


def test_duplicates_count_once():
    assert average_precision(["a", "a", "b"], {"a", "b"}, 2) == 1.0
    assert recall_at_k(["a", "a", "b"], {"a", "b"}, 2) == 1.0


def test_recall_and_reciprocal_rank():
    assert recall_at_k(["a", "x", "b"], {"a", "b", "c", "d"}, 2) == 0.25
    assert recall_at_k(["a", "x", "b"], {"a", "b", "c", "d"}, 3) == 0.5
    assert reciprocal_rank(["x", "y", "a"], {"a"}, 10) == pytest.approx(1 / 3)
    assert reciprocal_rank(["x", "y", "a"], {"a"}, 2) == 0.0


def test_undefined_metrics_raise():
    with pytest.raises(InputError):
        average_precision(["a"], set(), 10)
    with pytest.raises(InputError):
        recall_at_k(["a"], {"a"}, 0)


def test_parse_and_best_possible():
    assert parse_metric("ap@50") == ("ap", 50)
    assert parse_metric("RR") == ("rr", 50)
    assert parse_metric("recall@5") == ("recall", 5)
    for bad in ("map@10", "ap@x", "ap@0"):
        with pytest.raises(ConfigError):
            parse_metric(bad)
    assert best_possible("recall", 4, 2) == 0.5
    assert best_possible("ap", 4, 2) == 1.0
