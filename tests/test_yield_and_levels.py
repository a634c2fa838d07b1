"""A reading off the question's subject, or of another time's figures, yields to a stronger
reading of the other side that is on it; abstention levels chosen by a wanted precision."""

from __future__ import annotations

import pytest

from factseek.errors import InputError
from factseek.judge.fit_rules import RuleItem, fit_levels, fit_rules
from factseek.summarize.compare import reread, yielding
from factseek.summarize.evidence import EvidenceConfig, evidence_candidates, select_cards
from factseek.types import Claim, Document, Evidence, Question, StanceResult

GRANT = "The state grant for the new Harlow library was $4 million."
GRANT_SENTENCE = "The state library board awarded Harlow $4 million for its new library."
BUS_BRIEF = "The Harlow council voted to buy three buses, half paid by a federal grant."
JOBLESS = "Did unemployment in Dorran County fall to 4.2 percent in March 2024?"
MARCH = "Dorran County's unemployment rate was 4.2 percent in March, down from 4.6 percent."
FEBRUARY = (
    "Unemployment in Dorran County rose to 4.6 percent in February from 4.4 percent in January."
)


def reading(label: str, p: float) -> StanceResult:
    rest = (1 - p) / 2
    probs = {x: (p if x == label else rest) for x in ("supports", "refutes", "nei")}
    return StanceResult(label=label, probs=probs, model="hand")  # type: ignore[arg-type]


def test_an_off_topic_refutation_yields_to_a_stronger_support_on_the_subject() -> None:
    pairs = [(GRANT, GRANT_SENTENCE), (GRANT, BUS_BRIEF)]
    out, notes = yielding(pairs, [reading("supports", 0.88), reading("refutes", 0.65)])
    assert out[0] is not None and out[0].label == "supports"
    assert out[1] is not None and out[1].label == "nei"
    assert "not about the question (only grant of its subject words" in notes[1]
    assert "the reader said refutes 0.65" in notes[1] and "supports at 0.88" in notes[1]
    assert 0 not in notes


def test_an_off_topic_reading_stands_alone_or_against_a_weaker_one() -> None:
    alone, notes = yielding([(GRANT, BUS_BRIEF)], [reading("refutes", 0.65)])
    assert alone[0] is not None and alone[0].label == "refutes" and not notes
    pairs = [(GRANT, GRANT_SENTENCE), (GRANT, BUS_BRIEF)]
    weaker, notes = yielding(pairs, [reading("supports", 0.6), reading("refutes", 0.7)])
    assert weaker[1] is not None and weaker[1].label == "refutes" and not notes
    # a letter's reading (not eligible: it does not count fully) is none to yield to
    strong = [reading("supports", 0.88), reading("refutes", 0.65)]
    letter, notes = yielding(pairs, strong, eligible=[False, True])
    assert letter[1] is not None and letter[1].label == "refutes" and not notes
    # on the subject both: a real conflict, nothing yields
    both = [(GRANT, GRANT_SENTENCE), (GRANT, "The state library grant for Harlow was cut.")]
    kept, notes = yielding(both, [reading("supports", 0.88), reading("refutes", 0.7)])
    assert [r.label for r in kept if r] == ["supports", "refutes"] and not notes


def test_another_times_figures_yield_to_the_questions_own() -> None:
    readings = [reading("refutes", 0.8), reading("refutes", 0.82)]
    out, notes, aside = reread([(JOBLESS, MARCH), (JOBLESS, FEBRUARY)], readings)
    assert out[0] is not None and out[0].label == "supports"  # figures compared, dated
    assert out[1] is not None and out[1].label == "nei" and aside == {1}
    assert "its figures are of other times" in notes[1] and "February" in notes[1]
    _, _, none = reread([(JOBLESS, MARCH), (JOBLESS, FEBRUARY)], readings, yields=False)
    assert none == set()


def test_a_yielding_reading_stays_a_card_that_takes_no_side_with_its_reason() -> None:
    claim = Claim(text=GRANT)
    docs = [
        Document(url="https://a.example/grant", text=GRANT_SENTENCE),
        Document(url="https://b.example/bus", text=BUS_BRIEF),
    ]
    q = Question(text=GRANT, source="claim")
    cands = evidence_candidates(claim, [q], docs, EvidenceConfig(min_relevance=0.01))
    assert {c.doc for c in cands} == {0, 1}
    readings = [
        reading("supports", 0.88) if c.doc == 0 else reading("refutes", 0.65) for c in cands
    ]
    cards = select_cards(claim, cands, readings, docs, EvidenceConfig(min_relevance=0.01)).cards
    by_doc = {card.url: card for card in cards}
    assert by_doc["https://a.example/grant"].stance.label == "supports"  # type: ignore[union-attr]
    bus = by_doc["https://b.example/bus"]
    assert bus.stance is not None and bus.stance.label == "nei"
    assert "so it takes no side" in bus.figures
    assert cards[0].url == "https://a.example/grant"  # a card that counts ranks first
    off = EvidenceConfig(min_relevance=0.01, yielding=False)
    kept = select_cards(claim, cands, readings, docs, off).cards
    assert {c.stance.label for c in kept if c.stance} == {"supports", "refutes"}


def refutation_items(n: int = 120) -> list[RuleItem]:
    """Strong refutations always right, weak ones right a third of the time."""
    items = []
    for i in range(n):
        claim = Claim(text=f"claim {i}")
        strong = i % 2 == 0
        gold = "refuted" if (strong or i % 3 == 0) else "supported"
        card = Evidence(
            id="E1",
            url=f"https://s{i}.example",
            text="t",
            start_char=0,
            end_char=1,
            question=claim.text,
            domain=f"s{i}.example",
            stance=reading("refutes", 0.95 if strong else 0.72),
        )
        q = (Question(text=claim.text, source="claim", kind="claim"),)
        items.append(RuleItem(gold=gold, claim=claim, questions=q, evidence=(card,)))
    return items


def test_fit_levels_lowers_a_level_as_far_as_the_wanted_precision_allows() -> None:
    items = refutation_items()
    grid = {"decide": (0.7,), "weak": (0.5,), "genre_weight": (0.5,)}
    rules, _ = fit_rules(items, levels={"refuted": 0.9}, grid=grid, features=False)
    # every refutation together is right 2/3 of the time: wanting 0.6, the lowest level does
    loose, rows = fit_levels(items, rules, {"refuted": 0.6})
    assert loose.abstain["refuted"] == 0.3 and loose.calibration == rules.calibration
    assert rows[0].precision == pytest.approx(80 / 120, abs=0.01) and rows[0].n == 120
    # wanting 0.9, only a level above the weak ones' calibrated probability (about 1/3)
    strict, rows = fit_levels(items, rules, {"refuted": 0.9})
    level = strict.abstain["refuted"]
    assert 0.3 < level < 0.9
    chosen = next(r for r in rows if r.level == level)
    assert chosen.precision == 1.0 and chosen.n == 60 and chosen.chosen
    assert [r.level for r in rows if r.chosen] == [level]
    assert all(r.precision < 0.9 for r in rows if r.level < level)
    assert "cross-validated precision at least refuted 0.9" in strict.fitted_on
    again = fit_levels(items, strict, {"refuted": 0.6})[0].fitted_on
    assert again.count("abstention levels") == 1 and "at least refuted 0.6" in again
    # wanted nowhere (more than right every time is impossible here): the level stays
    assert fit_levels(items[1::2], rules, {"refuted": 0.99})[0].abstain["refuted"] == 0.9
    with pytest.raises(InputError, match="no abstention level for not-enough-evidence"):
        fit_levels(items, rules, {"not-enough-evidence": 0.5})
