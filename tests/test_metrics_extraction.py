from __future__ import annotations

import datetime as dt

import pytest

from factseek.metrics.extraction import date_outcome, outcome_rates, token_prf, tokens


def test_tokens() -> None:
    assert tokens("The Council's 4 votes.") == ["the", "council", "s", "4", "votes"]
    assert tokens("市議会は、可決。") == ["市", "議", "会", "は", "可", "決"]
    assert tokens("Tokyo市 voted") == ["tokyo", "市", "voted"]


def test_token_prf_by_hand() -> None:
    # predicted a a b c (4 tokens), gold a b b d e (5 tokens): overlap a, b = 2
    p, r, f = token_prf("a a b c", "a b b d e")
    assert p == pytest.approx(2 / 4) and r == pytest.approx(2 / 5)
    assert f == pytest.approx(2 * 0.5 * 0.4 / 0.9)
    assert token_prf("", "") == (1.0, 1.0, 1.0)
    assert token_prf("", "a") == (0.0, 0.0, 0.0)
    assert token_prf("a", "") == (0.0, 0.0, 0.0)


def test_date_outcomes() -> None:
    d = dt.date(2020, 3, 15)
    assert date_outcome(d, d) == "exact"
    assert date_outcome(dt.date(2020, 3, 14), d) == "early"
    assert date_outcome(dt.date(2021, 1, 1), d) == "late"
    assert date_outcome(None, d) == "none"
    rates = outcome_rates(["exact", "exact", "early", "none"])
    assert rates == {"exact": 0.5, "early": 0.25, "late": 0.0, "none": 0.25}
    with pytest.raises(ValueError):
        outcome_rates([])
