from __future__ import annotations

import datetime as dt
import random
from collections import defaultdict

from factseek.pages.datepolicy import WEIGHTS, choose, credible, votes
from factseek.types import DateEvidence

D = dt.date


def E(source: str, day: dt.date, rule: str = "") -> DateEvidence:
    return DateEvidence(source=source, date=day, rule=rule)


def test_no_evidence() -> None:
    c = choose(())
    assert c.date is None and c.source == "" and c.rule == "no date on the page"


def test_one_vote_per_family() -> None:
    ev = (
        E("meta:date", D(2019, 1, 1)),
        E("meta:article:published_time", D(2019, 5, 5)),
        E("meta:og:published_time", D(2019, 1, 1)),
    )
    kept, _ = votes(ev)
    assert [v.evidence.source for v in kept] == ["meta:article:published_time"]
    c = choose(ev)
    assert c.date == D(2019, 5, 5) and c.rule == "only source: meta:article:published_time"


def test_agreement_outvotes_the_top_ranked_source() -> None:
    ev = (
        E("json-ld", D(2015, 5, 7)),
        E("meta:article:published_time", D(2018, 5, 10)),
        E("url", D(2018, 5, 10)),
    )
    c = choose(ev)
    assert c.date == D(2018, 5, 10) and c.source == "meta:article:published_time"
    assert c.rule == "majority: meta:article:published_time, url outweigh json-ld 2015-05-07"


def test_tie_goes_to_the_later_date() -> None:
    c = choose((E("json-ld", D(2020, 1, 1)), E("url", D(2020, 1, 5))))
    assert c.date == D(2020, 1, 5) and c.rule.startswith("tie, the later date (safe side)")


def test_weights() -> None:
    # htmldate's estimate breaks a tie but does not beat a structured source alone
    assert choose((E("json-ld", D(2020, 1, 1)), E("htmldate", D(2020, 1, 5)))).date == D(2020, 1, 1)
    ev = (E("json-ld", D(2020, 1, 1)), E("url", D(2020, 1, 5)), E("htmldate", D(2020, 1, 1)))
    assert choose(ev).date == D(2020, 1, 1)
    # visible text and htmldate together outweigh one structured source
    ev = (E("json-ld", D(2020, 1, 1)), E("text", D(2020, 1, 5)), E("htmldate", D(2020, 1, 5)))
    assert choose(ev).date == D(2020, 1, 5)
    # an ambiguous reading weighs little
    ev = (
        E("meta:date", D(2020, 6, 5), "ambiguous day/month order: ..."),
        E("htmldate", D(2020, 5, 6)),
    )
    assert choose(ev).date == D(2020, 5, 6)


def test_upper_bounds() -> None:
    ev = (E("last-modified", D(2022, 1, 1)), E("meta:article:modified_time", D(2021, 1, 1)))
    c = choose(ev)
    assert c.date == D(2021, 1, 1) and c.rule.startswith("upper bound")
    # modification dates never vote, even when later than the publication date
    assert choose((*ev, E("url", D(2021, 6, 1)))).date == D(2021, 6, 1)
    # a date after the archive snapshot is impossible
    ev = (E("json-ld", D(2020, 5, 1)), E("archive", D(2020, 2, 1)), E("url", D(2020, 1, 20)))
    c = choose(ev)
    assert c.date == D(2020, 1, 20)
    assert "set aside: json-ld 2020-05-01 is after the archive snapshot" in c.rule
    assert choose((E("json-ld", D(2020, 5, 1)), E("archive", D(2020, 2, 1)))).date == D(2020, 2, 1)


def test_credible() -> None:
    ev = (
        E("json-ld", D(2020, 1, 1)),
        E("text", D(2020, 1, 2)),
        E("htmldate", D(2020, 1, 3)),
        E("meta:date", D(2020, 1, 4), "ambiguous day/month order: ..."),
        E("last-modified", D(2020, 1, 5)),
    )
    assert [e.source for e in credible(ev)] == ["json-ld", "text"]


def _reference(evidence: list[DateEvidence]) -> dt.date | None:
    """The agreement rule written out plainly (no ambiguity, no bounds)."""
    best: dict[str, DateEvidence] = {}
    for e in evidence:
        best.setdefault(e.source, e)
    total: dict[dt.date, float] = defaultdict(float)
    for e in best.values():
        total[e.date] += WEIGHTS[e.source]
    if not total:
        return None
    top = max(total.values())
    return max(d for d, w in total.items() if abs(w - top) < 1e-9)


def test_matches_a_plain_reference_on_random_pages() -> None:
    rng = random.Random(13)
    families = ["json-ld", "microdata", "url", "text", "htmldate"]
    days = [D(2020, 1, 1) + dt.timedelta(days=i) for i in range(4)]
    for _ in range(500):
        ev = [E(f, rng.choice(days)) for f in rng.sample(families, rng.randint(0, 5))]
        assert choose(ev).date == _reference(ev)
