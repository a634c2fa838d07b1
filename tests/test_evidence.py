"""Evidence cards that test the claim: stance-ranked selection, independence, no-evidence state."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from factseek.errors import ConfigError
from factseek.stance import FunctionStance
from factseek.summarize.evidence import (
    EvidenceConfig,
    evidence_candidates,
    match_terms,
    select_evidence,
)
from factseek.text import stem, tokenize
from factseek.types import Claim, Document, Question

CLAIM = Claim(
    text="The transit budget has grown 40 percent since 2019.",
    speaker="Gwen Tallis",
    date=dt.date(2024, 5, 1),
)
QUESTIONS = [
    Question(text=CLAIM.text, source="claim", kind="claim"),
    Question(text="Has the transit budget grown 40 percent since 2019?"),
    Question(text="Does the city run hydrogen buses on the transit routes?"),
]
AD = Document(
    url="https://www.tallisforcouncil.example/transit",
    title="Gwen Tallis on transit",
    published=dt.date(2024, 3, 1),
    text="The transit budget has grown 40 percent since 2019 and riders deserve to know it.",
)
PREVIEW = Document(
    url="https://www.metrodaily.example/debate-preview",
    title="Debate preview",
    published=dt.date(2024, 4, 2),
    text=(
        "Tallis said at a forum that the transit budget has grown 40 percent since 2019. "
        "The debate starts at 7 p.m. at the main library on Elm Street, and doors open at six. "
        "Both candidates have agreed to take questions from the audience, and the forum will be "
        "streamed on the city's website for residents who cannot attend in person. "
        "City figures show the transit budget went from $412M in 2019 to $488M this year, "
        "about 18 percent."
    ),
)
WIRE = Document(
    url="https://www.wire.example/transit-figures",
    title="Transit figures",
    published=dt.date(2024, 4, 1),
    text="Council records: the transit budget went from $412M in 2019 to $488M, about 18 percent.",
)
COPY = Document(
    url="https://www.othertown.example/transit-figures",
    title="Transit figures",
    published=dt.date(2024, 4, 3),
    text="Council records show the transit budget went from $412M in 2019 to $488M, about 18 percent.",
)
DOCS = [AD, PREVIEW, WIRE, COPY]


def numbers_stance(question: str, evidence: str) -> dict[str, float]:
    """A stand-in model: the same percentage supports, a different one refutes, else nothing."""
    q = set(re.findall(r"(\d+) percent", question))
    e = set(re.findall(r"(\d+) percent", evidence))
    if q and q & e:
        return {"supports": 0.9, "refutes": 0.05, "nei": 0.05}
    if q and e:
        return {"supports": 0.05, "refutes": 0.85, "nei": 0.1}
    return {"supports": 0.1, "refutes": 0.1, "nei": 0.8}


STANCE = FunctionStance(numbers_stance, name="numbers")


def cards_for(docs, cfg=EvidenceConfig(), stance=STANCE):
    cands = evidence_candidates(CLAIM, QUESTIONS, docs, cfg)
    stances = stance.classify([(c.question, c.text) for c in cands]) if stance else None
    return cands, select_evidence(CLAIM, cands, stances, docs, cfg)


def test_selection_keeps_the_deciding_passage_a_lexical_ranker_drops() -> None:
    cfg = EvidenceConfig(cards=1)
    # Lexical only: the sentence repeating the claim's words wins for the claim.
    _, lexical = cards_for([PREVIEW], cfg, stance=None)
    first = next(e for e in lexical if e.question == CLAIM.text)
    assert first.text.startswith("Tallis said") and first.stance is None
    # With stance: the sentence with the actual figures wins, and it refutes.
    _, cards = cards_for([PREVIEW], cfg)
    first = next(e for e in cards if e.question == CLAIM.text)
    assert first.text.startswith("City figures show")
    assert first.stance is not None and first.stance.label == "refutes"
    assert (first.start_char, first.end_char) == (
        PREVIEW.text.index("City figures"),
        len(PREVIEW.text),
    )


def test_every_question_gets_its_own_cards_or_none() -> None:
    _, cards = cards_for(DOCS)
    by_q = {q.text: [e for e in cards if e.question == q.text] for q in QUESTIONS}
    assert by_q[QUESTIONS[0].text] and by_q[QUESTIONS[1].text]
    assert by_q[QUESTIONS[2].text] == []  # no sentence takes a stance on hydrogen buses
    assert [e.id for e in cards] == [f"E{i}" for i in range(1, len(cards) + 1)]
    assert all(e.stance is not None and e.stance.label != "nei" for e in cards)
    assert all(len([e for e in cards if e.question == q.text]) <= 3 for q in QUESTIONS)


def test_claimants_own_words_and_syndicated_copies_are_not_independent() -> None:
    _, cards = cards_for(DOCS, EvidenceConfig(cards=6))
    claim_cards = [e for e in cards if e.question == CLAIM.text]
    by_url = {e.url: e for e in claim_cards}
    assert not by_url[AD.url].independent and "own site" in by_url[AD.url].note
    said = next(e for e in claim_cards if e.text.startswith("Tallis said"))
    assert not said.independent and "claimant" in said.note
    assert by_url[WIRE.url].independent  # the original, published first
    copy = by_url[COPY.url]
    assert not copy.independent and by_url[WIRE.url].id in copy.note
    # Independent cards come before the claimant's, whatever their strength.
    flags = [e.independent for e in claim_cards]
    assert flags == sorted(flags, reverse=True)


def test_short_documents_are_one_unit_and_candidates_are_bounded() -> None:
    short = Document(url="https://a.example/x", text="No. Not on the list.")
    cands = evidence_candidates(
        CLAIM, [Question(text="Is it on the list?")], [short], EvidenceConfig()
    )
    assert [(c.start, c.end, c.text) for c in cands] == [(0, 20, "No. Not on the list.")]
    many = [
        Document(url=f"https://n{i}.example/", text=f"The transit budget grew {i} percent.")
        for i in range(30)
    ]
    cands = evidence_candidates(CLAIM, QUESTIONS, many, EvidenceConfig(candidates=4, typed=0))
    assert max(sum(c.question_index == i for c in cands) for i in range(3)) == 4
    # a question that asks for a figure reads up to `typed` more units that state one
    cands = evidence_candidates(CLAIM, QUESTIONS, many, EvidenceConfig(candidates=4, typed=2))
    assert max(sum(c.question_index == i for c in cands) for i in range(3)) == 6
    top = evidence_candidates(CLAIM, QUESTIONS, many, EvidenceConfig(top_docs=2))
    assert {c.doc for c in top} <= {0, 1}


def test_candidates_rank_by_relevance_then_document_order() -> None:
    docs = [
        Document(
            url="https://a.example/", text="Transit budget news since 2019, with more to come."
        ),
        Document(
            url="https://b.example/", text="Transit budget news since 2019, with more to say."
        ),
    ]
    cands = evidence_candidates(CLAIM, QUESTIONS[:1], docs)
    assert [c.doc for c in cands] == [0, 1]
    assert cands[0].relevance == cands[1].relevance > 0


def test_terms_are_stems_and_quantity_slots() -> None:
    percent, million = "#" + stem("percent"), "#" + stem("million")
    # Stems: plural and verb forms match.
    assert {"bill", "ris"} <= match_terms("Bills are rising") & match_terms("the bill rises")
    # A number followed by a word is a slot: a question keeps the slot, not the number.
    q = match_terms("Have water bills risen 40 percent since 2019?", question=True)
    assert percent in q and "40" not in q and "2019" in q  # a year is no quantity
    unit = match_terms("The bill rose from $48.20 to $56.90, or 18% in all.")
    assert percent in unit and "18" in unit  # "%" is "percent"; a unit keeps its numbers
    assert million in match_terms("It cost $44.5 million.", question=True)
    # A number glued to a word is a name, not a quantity; "40 of them" has no quantity word.
    assert not any(
        t.startswith("#") for t in match_terms("COVID-19 cases, 40 of them", question=True)
    )
    # The peers: stems without slots, and the words alone.
    assert "40" in match_terms("risen 40 percent", "stems", question=True)
    assert match_terms("Bills risen 40 percent", "words") == {"bills", "risen", "40", "percent"}


def test_quantity_matching_is_linear_on_hostile_numbers() -> None:
    import time

    for text in ("1" * 50_000 + "!", "1." * 25_000 + "!", "$1," * 16_000 + "x"):
        start = time.perf_counter()
        match_terms(text, question=True)
        assert time.perf_counter() - start < 1.0


def test_stems_and_quantity_slots_bring_the_actual_figure_that_words_miss() -> None:
    question = Question(text="Have water bills risen 40 percent?")
    texts = [
        "My water bills have gone up 40 percent, I tell you.",  # repeats the claim
        "Water bills are due on the first of the month, the water office says.",  # the setting
        "The water office is open on weekdays.",
        "The typical household bill rose from $48.20 to $56.90, about 18 percent.",  # the figure
    ]
    docs = [Document(url=f"https://d{i}.example/", text=t) for i, t in enumerate(texts)]

    def ranked(terms: str) -> list[tuple[int, float]]:
        cfg = EvidenceConfig(terms=terms, typed=0)
        cands = evidence_candidates(CLAIM, [question], docs, cfg)
        return [(texts.index(c.text), c.relevance) for c in cands]

    assert [i for i, _ in ranked("words")] == [0, 1]  # "bill" is not "bills": no figure
    assert [i for i, _ in ranked("stems")] == [0, 3, 1]
    # The slot matches "18 percent" to "40 percent": the figure gains what the number gave
    # the restatement, and now clearly outranks the setting.
    slots = dict(ranked("quantities"))
    assert [i for i, _ in ranked("quantities")] == [0, 3, 1]
    assert slots[3] > dict(ranked("stems"))[3] + 0.1 and slots[3] > slots[1] + 0.1


def test_bad_config_is_one_clear_error() -> None:
    with pytest.raises(ConfigError, match="cards"):
        EvidenceConfig(cards=5, candidates=2)
    with pytest.raises(ConfigError, match="top_docs"):
        EvidenceConfig(top_docs=0)
    with pytest.raises(ConfigError, match="terms"):
        EvidenceConfig(terms="lemmas")
    with pytest.raises(ConfigError, match="terms"):
        match_terms("Bills rose", "lemmas")


def test_originally_published_lines_and_short_originals_are_copies() -> None:
    from factseek.summarize.evidence import syndication_source

    original = Document(
        url="https://www.courier.example/figures",
        title="Figures",
        published=dt.date(2024, 4, 1),
        text=(
            "The transit budget went from $412M in 2019 to $488M, about 18 percent, records show."
            " The council will vote on next year's budget in June."
        ),
    )
    # a longer page that carries the short original's sentence among its own: its card is that
    # sentence, which lies inside the original's page (a whole-page card it is not close to)
    filler = " ".join(
        f"Item {i} of the council agenda was about parks and roads." for i in range(8)
    )
    reprint = Document(
        url="https://www.gazette.example/figures",
        title="Figures",
        published=dt.date(2024, 4, 4),
        text=f"{filler} {original.text.split(' The council')[0]} Members meet on Tuesday.",
    )
    credited = Document(
        url="https://www.weekly.example/figures",
        title="Budget figures",
        published=dt.date(2024, 4, 5),
        text="The transit budget grew about 18 percent. This story was originally published by the Courier.",
    )
    assert syndication_source(credited) == "Courier"
    assert syndication_source(original) == ""
    _, cards = cards_for([original, reprint, credited], EvidenceConfig(cards=6))
    by_url = {e.url: e for e in cards if e.question == CLAIM.text}
    assert by_url[original.url].independent
    assert not by_url[reprint.url].independent and "near-copy" in by_url[reprint.url].note
    assert not by_url[credited.url].independent
    assert "originally published by Courier" in by_url[credited.url].note


def test_a_page_on_the_same_story_is_not_a_copy_but_an_edited_reprint_is() -> None:
    # The demo's case: a blog explains the figures first; a later report quotes the finance
    # director with most of the blog's words for one sentence, in other words and order.
    blog = Document(
        url="https://observer.example/p/plant-costs",
        title="What the plant really costs",
        published=dt.date(2024, 2, 14),
        text=(
            "Answer three: about 40 percent more. Add the interest the town will pay through 2041 "
            "on every dollar of its debt, and the transit budget has grown more than anyone says."
        ),
    )
    report = Document(
        url="https://www.tribune.example/budget-hearing",
        title="Finance director lays out the math",
        published=dt.date(2024, 4, 18),
        text=(
            "If you add every dollar of interest we will pay through 2041, the transit budget "
            "has grown about 40 percent."
        ),
    )
    # A reprint of the report with two words changed keeps most of its word triples.
    reprint = Document(
        url="https://www.weekly.example/hearing",
        title="Hearing",
        published=dt.date(2024, 4, 20),
        text=report.text.replace("every", "each").replace("about", "nearly"),
    )
    # A short page that says one phrase of an earlier, longer card is no copy of it.
    brief = Document(
        url="https://radio.example/brief",
        title="Brief",
        published=dt.date(2024, 4, 25),
        text="The transit budget has grown 40 percent.",
    )
    _, cards = cards_for([blog, report, reprint, brief], EvidenceConfig(cards=6))
    by_url = {e.url: e for e in cards if e.question == CLAIM.text}
    assert by_url[report.url].independent, by_url[report.url].note
    assert not by_url[reprint.url].independent
    assert by_url[report.url].id in by_url[reprint.url].note
    assert by_url[brief.url].independent, by_url[brief.url].note


def test_the_shares_the_copy_rule_is_set_by() -> None:
    """The figures in ``_mark_copies``'s docstring and docs/verdicts.md (rule 5)."""
    import json

    from factseek.demo import demo_dir
    from factseek.summarize.evidence import _share, _triples

    docs = [json.loads(line) for line in (demo_dir() / "docs.jsonl").open(encoding="utf-8")]
    blog = next(d for d in docs if d["url"].endswith("/what-the-northside-plant-really-costs"))
    said = (
        "\"If you add every dollar of interest we will pay through 2041, it's about $61.8 million."
    )
    opening = " ".join(blog["text"].split()[:300])
    words = set(tokenize(said))
    assert round(len(words & set(tokenize(opening))) / len(words), 2) == 0.80
    assert _share(_triples(said), _triples(opening)) == 2 / 16
    phrase = _triples("The transit budget has grown 40 percent since 2019 and riders deserve to know it.")  # fmt: skip
    quoted = _triples("Tallis said at a forum that the transit budget has grown 40 percent since 2019.")  # fmt: skip
    assert round(_share(quoted, phrase), 2) == 0.54


def test_questions_in_a_page_are_not_evidence() -> None:
    page = Document(
        url="https://www.metrodaily.example/transit-faq",
        text=(
            "Has the transit budget grown 40 percent since 2019? "
            "The transit budget went from $412M in 2019 to $488M this year, about 18 percent. "
            'Residents keep asking "has the transit budget really grown 40 percent?" '
            "Riders filled the council chamber to ask about the transit budget and fares. "
            "The council will publish the full transit budget for 2025 in June, its clerk said."
        ),
    )
    cands = evidence_candidates(CLAIM, QUESTIONS, [page], EvidenceConfig())
    texts = {c.text for c in cands}
    assert texts and all(len(t) < len(page.text) / 2 for t in texts)  # sentences, not the page
    assert not any(t.rstrip('"').endswith("?") for t in texts)
    assert any("about 18 percent" in t for t in texts)
    # a short page is one unit, whole, question or not (a post that asks and answers)
    post = Document(url="https://a.example/p", text="Did the budget grow 40 percent? No.")
    cands = evidence_candidates(CLAIM, QUESTIONS, [post], EvidenceConfig())
    assert {c.text for c in cands} == {"Did the budget grow 40 percent? No."}
