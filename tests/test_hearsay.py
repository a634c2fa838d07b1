"""Hearsay is not confirmation (``summarize.hearsay``): a supporting reading of a sentence that
passes the claim on as hearsay takes no side, stays a card and says why; made-up sentences."""

from __future__ import annotations

from dataclasses import replace

from factseek.summarize.compare import FIGURES, figure_reading, reread
from factseek.summarize.evidence import EvidenceConfig, evidence_candidates, select_cards
from factseek.summarize.hearsay import hearsay, hearsay_reading
from factseek.types import Claim, Document, Question, StanceResult

CLAIM = "The Brindle Hall pool closed for repairs in June."
RUMOUR = "The Brindle Hall pool has reportedly closed for repairs, a parent said on Monday."
FOUND = "The Brindle Hall pool closed for repairs on June 3, the parks office said."


def reading(label: str, p: float, model: str = "hand") -> StanceResult:
    rest = (1 - p) / 2
    probs = {x: (p if x == label else rest) for x in ("supports", "refutes", "nei")}
    return StanceResult(label=label, probs=probs, model=model)  # type: ignore[arg-type]


def test_the_words_that_mark_hearsay() -> None:
    assert hearsay(RUMOUR) == "reportedly"
    assert hearsay("Rumours that the pool will close spread on Monday.") == "Rumours"
    assert hearsay("The club claims that the pool closed.") == "claims that"
    assert hearsay("The pool is said to have closed.") == "is said to"
    assert hearsay(FOUND) == ""
    # citing a source is not hearsay; nor is a claim that is being checked ("claim" alone)
    assert hearsay("According to the parks office, the pool closed in June.") == ""
    assert hearsay("The claim about the pool is false.") == ""


def test_a_supporting_reading_of_hearsay_takes_no_side_with_a_note() -> None:
    out, note = hearsay_reading(CLAIM, RUMOUR, reading("supports", 0.82))
    assert out is not None and out.label == "nei" and out.probs["supports"] == 0.82
    assert note == (
        'it passes the claim on as hearsay ("reportedly"); the reader said supports 0.82, '
        "so it takes no side"
    )
    # what stands: a refutation, a sentence that is no hearsay, a hedged question, a reading
    # a reviewer set
    for question, text, r in [
        (CLAIM, RUMOUR, reading("refutes", 0.8)),
        (CLAIM, FOUND, reading("supports", 0.9)),
        ("Did the pool reportedly close in June?", RUMOUR, reading("supports", 0.8)),
        (CLAIM, RUMOUR, reading("supports", 0.88, model="user:ana")),
    ]:
        kept, note = hearsay_reading(question, text, r)
        assert kept is r and note == ""


def test_figures_compared_never_agree_on_hearsay() -> None:
    question = "Did the Brindle Hall pool repairs cost $3 million in June 2023?"
    found = "The Brindle Hall pool repairs cost $3 million in June 2023, the parks office said."
    rumour = "The Brindle Hall pool repairs reportedly cost $3 million in June 2023."
    agreed, note = figure_reading(question, found, reading("nei", 0.7))
    assert agreed is not None and agreed.model == FIGURES and "supports" in note
    out, notes, _ = reread([(question, rumour)], [reading("supports", 0.8)], hearsay=True)
    assert out[0] is not None and out[0].label == "nei" and out[0].model != FIGURES
    assert "hearsay" in notes[0]


def test_reread_sets_hearsay_aside_only_when_asked() -> None:
    pairs = [(CLAIM, FOUND), (CLAIM, RUMOUR)]
    readings = [reading("supports", 0.9), reading("supports", 0.8)]
    out, notes, aside = reread(pairs, readings, hearsay=True)
    assert [r.label for r in out if r] == ["supports", "nei"] and aside == {1}
    assert "hearsay" in notes[1]
    out, notes, aside = reread(pairs, readings)
    assert [r.label for r in out if r] == ["supports", "supports"] and not aside


def test_the_hearsay_card_stays_a_card_after_the_ones_that_count() -> None:
    claim = Claim(text=CLAIM)
    docs = [
        Document(url="https://forum.example/pool", text=RUMOUR),
        Document(url="https://parks.example/pool", text=FOUND),
    ]
    q = Question(text=CLAIM, source="claim")
    cfg = EvidenceConfig(min_relevance=0.01)
    assert cfg.hearsay  # on by default
    cands = evidence_candidates(claim, [q], docs, cfg)
    readings = [reading("supports", 0.85 if c.doc == 0 else 0.8) for c in cands]
    cards = select_cards(claim, cands, readings, docs, cfg).cards
    assert cards[0].url == "https://parks.example/pool"  # the card that counts ranks first
    rumour = next(c for c in cards if c.url == "https://forum.example/pool")
    assert rumour.stance is not None and rumour.stance.label == "nei"
    assert "hearsay" in rumour.figures
    off = select_cards(claim, cands, readings, docs, replace(cfg, hearsay=False)).cards
    assert {c.stance.label for c in off if c.stance} == {"supports"}


def test_a_set_aside_card_says_so_and_is_no_figure_to_compare() -> None:
    from factseek.judge.verdict import FIGURES_FLAG, named
    from factseek.types import Evidence

    _, note = hearsay_reading(CLAIM, RUMOUR, reading("supports", 0.82))
    card = Evidence(id="E2", url="https://forum.example/pool", text=RUMOUR, start_char=0,
                    end_char=len(RUMOUR), question=CLAIM, stance=reading("nei", 0.6),
                    figures=note)  # fmt: skip
    assert card.set_aside and not card.compare_figures
    assert card.figures_heading == "set aside" and FIGURES_FLAG not in named(card, "supports")
    figure = replace(card, figures="this says 18 percent; the question, 40 percent")
    assert figure.compare_figures and figure.figures_heading == "compare the figures"
    assert FIGURES_FLAG in named(figure, "supports")
