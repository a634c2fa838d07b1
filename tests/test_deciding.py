"""The deciding sentence of each page becomes a card (issue 50, item 2): a later outcome is not
crowded out by earlier plans, a short brief's quoted sentence makes the brief a candidate, and
the summary never quotes a deciding sentence that is not a card. Made-up pages of an invented
town; a stand-in stance reader."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

from factseek.decompose import claim_question
from factseek.pipeline import CheckConfig, Parts, quotes_as_cards, run
from factseek.search.base import MemorySearch
from factseek.stance import FunctionStance
from factseek.summarize.deciding import states_plan, superseded, uncarded_quotes
from factseek.summarize.evidence import EvidenceConfig, evidence_candidates, select_evidence
from factseek.summarize.extractive import ExtractiveSummarizer
from factseek.types import (
    Claim,
    Document,
    Evidence,
    Question,
    StanceResult,
    Summary,
    SummarySentence,
)

CLAIM = Claim(
    text="The Quillan Falls aquatic center opened on September 14, 2026.",
    date=dt.date(2026, 10, 1),
)
QUESTION = Question(text=CLAIM.text, source="claim", kind="claim")


def page(site: str, day: str, title: str, text: str) -> Document:
    return Document(
        url=f"https://www.{site}.example/{day}/{title.lower().replace(' ', '-')}",
        title=title,
        published=dt.date.fromisoformat(day),
        domain=f"{site}.example",
        text=text,
    )


PLANS = [
    page(
        "quillan-herald",
        "2026-04-21",
        "Aquatic center sets a date",
        "The new Quillan Falls aquatic center will open September 14, city officials said "
        "Tuesday. Crews finished pouring the deck around the lap pool last week.",
    ),
    page(
        "ostby-record",
        "2026-06-03",
        "Pool on schedule",
        "Parks director Moira Vance said the Quillan Falls aquatic center is expected to open "
        "September 14 as planned. Lifeguard hiring begins in July.",
    ),
    page(
        "quillan-weekly",
        "2026-08-19",
        "Passes on sale",
        "Season passes for the Quillan Falls aquatic center, which will open September 14, go on "
        "sale Monday at city hall. Children under five swim free.",
    ),
]
OUTCOME = page(  # a short brief, one paragraph, published after every plan
    "ostby-record",
    "2026-09-15",
    "Aquatic center opens",
    "The Quillan Falls aquatic center opened on Monday, September 14, as about 300 residents "
    "lined up for the first swim. Mayor Hal Brandt cut the ribbon at the lap pool, and the "
    "swim team gave a short show in the diving well. Admission is free through the end of the "
    "month, and lessons start in October.",
)
OTHER = page(
    "quillan-herald",
    "2026-08-11",
    "Library hours",
    "The Quillan Falls library board voted Monday to stay open until 9 p.m. on weekdays. "
    "The board also approved a new reading room for children.",
)


def reader(question: str, evidence: str) -> dict[str, float]:
    """A stand-in stance reader that takes a plan for a contradiction, surely, and the outcome
    for support, less surely (as the shipped readers do with tense)."""
    low = evidence.lower()
    if "will open" in low or "expected to open" in low:
        return {"supports": 0.05, "refutes": 0.9, "nei": 0.05}
    if "opened" in low:
        return {"supports": 0.6, "refutes": 0.1, "nei": 0.3}
    return {"supports": 0.05, "refutes": 0.05, "nei": 0.9}


STANCE = FunctionStance(reader, name="tense")


class ClaimOnly:
    name = "claim-only"

    def decompose(self, claim: Claim) -> list[Question]:
        return [claim_question(claim)]


def test_a_later_outcome_is_a_card_though_earlier_plans_read_more_surely() -> None:
    docs = [*PLANS, OUTCOME]  # three plans would fill the three cards by their scores
    cands = evidence_candidates(CLAIM, [QUESTION], docs)
    cards = select_evidence(
        CLAIM, cands, STANCE.classify([(c.question, c.text) for c in cands]), docs
    )
    assert len(cards) == 3  # no summary quotes any of them: the cap holds
    assert cards[0].url == OUTCOME.url and cards[0].stance.label == "supports"
    assert [e.url for e in cards[1:]] == [PLANS[0].url, PLANS[1].url]  # then by score


def test_plans_are_superseded_only_by_a_later_page_that_states_their_word_otherwise() -> None:
    q = QUESTION.text
    planned, stated = states_plan(PLANS[0].text, q)
    assert planned == {"open"} and "open" not in stated
    assert "open" in states_plan(OUTCOME.text, q)[1]
    assert states_plan(PLANS[1].text, q)[0] == {"open"}  # "is expected to open"
    assert states_plan(OTHER.text, q)[0] == set()  # "voted ... to stay open" is no plan of it
    docs = [*PLANS, OUTCOME, OTHER]
    rows = [(i, d.text) for i, d in enumerate(docs)]
    assert superseded(q, rows, docs) == [True, True, True, False, False]
    # a later page that does not say it opened, or an undated one, supersedes nothing
    assert superseded(q, [rows[0], rows[4]], docs) == [False, False]
    undated = [*PLANS[:1], replace(OUTCOME, published=None)]
    assert superseded(q, [(0, PLANS[0].text), (1, OUTCOME.text)], undated) == [False, False]


def test_a_short_briefs_quoted_sentence_makes_the_brief_a_candidate() -> None:
    cfg = EvidenceConfig(candidates=1, cards=1, typed=0, figures=0)
    docs = [*PLANS, OUTCOME]
    start = OUTCOME.text.index("The Quillan")
    end = OUTCOME.text.index("swim.") + len("swim.")  # one sentence: under half of the brief
    got = evidence_candidates(CLAIM, [QUESTION], docs, cfg, [(3, start, end)])
    brief = [c for c in got if c.doc == 3]
    assert len(brief) == 1 and brief[0].text == OUTCOME.text.strip()  # the whole brief
    assert brief[0].quoted  # quoted for this question: a card when it takes a side


def test_a_quoted_page_beyond_top_docs_is_read() -> None:
    cfg = EvidenceConfig(top_docs=1)
    docs = [*PLANS, OUTCOME]
    got = evidence_candidates(CLAIM, [QUESTION], docs, cfg, [(3, 0, len(OUTCOME.text))])
    assert {c.doc for c in got} == {0, 3}  # the first page, and the page a summary quotes


def test_each_summarised_pages_best_unit_for_a_question_is_a_candidate() -> None:
    long_page = page(
        "ostby-record",
        "2026-09-16",
        "A long week in Quillan Falls",
        "The Quillan Falls library board voted to stay open late on weekdays this fall. "
        "Mayor Hal Brandt said the budget talks would resume in October after the break. "
        "Swimmers filled the lanes of the new aquatic center on its opening day in Quillan Falls. "
        "The county fair drew a record crowd, and the rain held off for the parade on Saturday. "
        "Road crews will repave Main Street in the spring, the public works office said Friday.",
    )
    first = page(  # the most relevant sentence for q2 is another page's
        "quillan-weekly",
        "2026-09-17",
        "Opening day",
        "Swimmers used the new aquatic center on its opening day, and used it again the next.",
    )
    docs = [first, *PLANS[:2], long_page]
    q2 = Question(text="Did swimmers use the new aquatic center on its opening day?")
    cfg = EvidenceConfig(candidates=1, cards=1, typed=0, figures=0)
    quoted = long_page.text.index("Mayor Hal")  # the summary quotes another sentence of it
    span = (3, quoted, long_page.text.index("break.") + len("break."))
    assert evidence_candidates(CLAIM, [q2], docs, cfg)[0].doc == 0
    got = evidence_candidates(CLAIM, [QUESTION, q2], docs, cfg, [span])
    for_q2 = [c.text for c in got if c.question == q2.text and c.doc == 3]
    assert any(t.startswith("Swimmers filled") for t in for_q2)


def test_the_summary_and_the_cards_agree_in_a_checked_claim() -> None:
    parts = Parts(
        search=MemorySearch([*PLANS, OUTCOME, OTHER]),
        decomposer=ClaimOnly(),
        summarizer=ExtractiveSummarizer(),
        stance=STANCE,
    )
    report = run(CLAIM, parts, CheckConfig())
    quoted = [x for s in report.summaries for x in s.sentences]
    assert any(x.text.startswith("The Quillan Falls aquatic center opened") for x in quoted)
    outcome = [e for e in report.evidence if e.url == OUTCOME.url]
    assert outcome and outcome[0].stance.label == "supports"
    # every quoted sentence that the reader takes a side on lies in a card of the same page
    for s in report.summaries:
        for x in s.sentences:
            if reader(QUESTION.text, x.text)["nei"] < 0.5:
                assert any(
                    e.url == s.url and e.start_char <= x.start_char and x.end_char <= e.end_char
                    for e in report.evidence
                ), x.text
    assert not any("left out" in n for n in report.notes)


def test_a_quoted_deciding_sentence_that_is_no_card_is_left_out_of_the_summary() -> None:
    docs = [OUTCOME, PLANS[0]]
    first = OUTCOME.text.index("swim.") + len("swim.")
    said = SummarySentence(text=OUTCOME.text[:first], start_char=0, end_char=first)
    plan_end = PLANS[0].text.index("Tuesday.") + len("Tuesday.")
    plan = SummarySentence(text=PLANS[0].text[:plan_end], start_char=0, end_char=plan_end)
    summaries = [
        Summary(url=OUTCOME.url, text=said.text, relevant=True, method="t", sentences=(said,)),
        Summary(url=PLANS[0].url, text=plan.text, relevant=True, method="t", sentences=(plan,)),
    ]
    reading = StanceResult(label="supports", probs={"supports": 0.6, "refutes": 0.1, "nei": 0.3})
    nei = StanceResult(label="nei", probs={"supports": 0.1, "refutes": 0.1, "nei": 0.8})
    read = [
        (QUESTION.text, 0, 0, len(OUTCOME.text), reading),
        (QUESTION.text, 1, 0, plan_end, nei),  # takes no side: need not be a card
    ]
    card = Evidence(
        id="E1", url=OUTCOME.url, text=OUTCOME.text, start_char=0, end_char=len(OUTCOME.text),
        question=QUESTION.text, stance=reading,
    )  # fmt: skip
    assert uncarded_quotes(summaries, docs, read, [card]) == []
    other_question = replace(card, question="Did the pool open?")
    assert uncarded_quotes(summaries, docs, read, [other_question]) == [(0, 0, QUESTION.text)]
    notes: list[str] = []
    kept = quotes_as_cards(summaries, [(0, 0, QUESTION.text)], notes)
    assert kept[0].sentences == () and not kept[0].relevant and kept[1] == summaries[1]
    assert len(notes) == 1 and "is not one of its cards" in notes[0]


def test_a_later_report_is_no_syndicated_copy_of_the_plan_it_repeats_the_words_of() -> None:
    words = (
        "The Quillan Falls aquatic center, an $18 million pool paid for by the bond voters "
        "approved in 2024, {} September 14 with a lap pool, a diving well and a splash pad for "
        "small children."
    )
    plan = page("quillan-herald", "2026-04-21", "Pool date", words.format("will open"))
    told = page("ostby-record", "2026-09-15", "Pool opens", words.format("opened"))
    again = words.format("will open").replace("small", "young")  # a copy, one word changed
    copy = page("quillan-weekly", "2026-04-23", "Pool date set", again)
    docs = [plan, told, copy]
    cands = evidence_candidates(CLAIM, [QUESTION], docs)
    cards = select_evidence(
        CLAIM, cands, STANCE.classify([(c.question, c.text) for c in cands]), docs
    )
    by_url = {e.url: e for e in cards}
    assert by_url[told.url].independent and by_url[told.url].stance.label == "supports"
    assert not by_url[copy.url].independent and "near-copy" in by_url[copy.url].note
