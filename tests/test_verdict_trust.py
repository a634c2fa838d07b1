"""Verdicts a fact-checker can trust (issue 24): deciding sentences become cards, one weak
misread does not flip a supported claim, letters and opinion never confirm alone, the verdict
abstains below its calibrated level, and the rules' numbers are fitted by cross-validation."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from factseek.errors import ConfigError
from factseek.judge.fit_rules import RuleItem, fit_logistic, fit_rules, raw_verdicts
from factseek.judge.rules import VerdictRules, load_rules, rules_from_dict
from factseek.judge.verdict import aggregate, answer_questions, question_masses
from factseek.summarize.asks import answer_types
from factseek.summarize.evidence import evidence_candidates, select_evidence
from factseek.summarize.genre import genre
from factseek.types import Claim, Document, Evidence, Question, StanceResult
from test_yield_and_levels import refutation_items

CLAIM = Claim(text="The plant cost $62 million and opened in 2022.")
Q = [
    Question(text=CLAIM.text, source="claim", kind="claim"),
    Question(text="Did the plant cost $62 million?"),
    Question(text="Did the plant open in 2022?"),
]
RULES = VerdictRules()


def card(n: int, q: int, label: str, p: float, *, site: str = "", genre: str = "") -> Evidence:
    rest = (1 - p) / 2
    probs = {x: (p if x == label else rest) for x in ("supports", "refutes", "nei")}
    return Evidence(
        id=f"E{n}",
        url=f"https://{site or f'site{n}.example'}/a{n}",
        text=f"sentence {n}",
        start_char=0,
        end_char=10,
        question=Q[q].text,
        domain=site or f"site{n}.example",
        stance=StanceResult(label=label, probs=probs, model="hand"),  # type: ignore[arg-type]
        genre=genre,
    )


def verdict(cards: list[Evidence], rules: VerdictRules = RULES):
    answers = answer_questions(Q, cards, rules)
    return answers, aggregate(CLAIM, answers, cards, judge="rules", rules=rules)


# ----------------------------------------------------------------------------- aggregation


def test_one_weak_misread_does_not_flip_a_well_supported_claim() -> None:
    strong = [
        card(1, 1, "supports", 0.9),
        card(2, 2, "supports", 0.85),
        card(3, 0, "supports", 0.8),
    ]
    weak_misread = card(4, 1, "refutes", 0.4)  # below rules.weak (0.5)
    answers, v = verdict([*strong, weak_misread])
    assert [a.answer for a in answers] == ["yes", "yes", "yes"]
    assert v.label == "supported"
    # the same card read strongly is a conflict, not silence
    answers, v = verdict([*strong, replace(weak_misread, stance=card(4, 1, "refutes", 0.8).stance)])
    assert answers[1].answer == "conflicting" and v.label == "conflicting-evidence"


def test_a_lone_card_decides_only_above_the_level() -> None:
    answers, v = verdict([card(1, 1, "refutes", 0.65)])  # 0.65 < decide 0.7
    assert answers[1].answer == "unknown" and answers[1].rationale.startswith("too weak")
    assert v.label == "not-enough-evidence" and "E1" in v.rationale
    answers, v = verdict([card(1, 1, "refutes", 0.75)])
    assert answers[1].answer == "no" and v.label == "refuted"


def test_two_weak_cards_from_different_sites_add_up_one_site_does_not() -> None:
    two_sites = [card(1, 1, "supports", 0.5), card(2, 1, "supports", 0.5)]
    assert question_masses(two_sites, RULES)[0] == pytest.approx(0.75)
    same_site = [
        card(1, 1, "supports", 0.5, site="a.example"),
        card(2, 1, "supports", 0.5, site="a.example"),
    ]
    assert question_masses(same_site, RULES)[0] == pytest.approx(0.5)
    # with combine="max" weak cards never add up: the strongest decides alone
    assert question_masses(two_sites, VerdictRules(combine="max"))[0] == pytest.approx(0.5)


def test_no_evidence_and_conflicting_are_different_answers() -> None:
    answers, _ = verdict([card(1, 1, "supports", 0.9), card(2, 1, "refutes", 0.9)])
    assert answers[1].answer == "conflicting"
    assert answers[2].answer == "unknown" and answers[2].rationale == "no evidence found"


def test_letters_and_opinion_never_support_alone() -> None:
    letter = card(1, 1, "supports", 0.99, genre="letter")
    answers, v = verdict([letter])
    assert answers[1].answer == "unknown" and "letters" in answers[1].rationale
    assert v.label == "not-enough-evidence"
    with_news = [letter, card(2, 1, "supports", 0.6)]  # 0.6 alone is too weak; with the letter
    answers, _ = verdict(with_news)
    assert answers[1].answer == "yes"  # 1 - (1 - .495)(1 - .6) = 0.80


def test_abstains_below_the_calibrated_level_and_shows_both_sides() -> None:
    rules = VerdictRules(
        calibration={"refuted": {"a": 1.0, "b": -1.0}},  # P(right) = sigmoid(logit(s) - 1)
        abstain={"refuted": 0.8},
        precision={"refuted": 0.83},
        precision_basis="a hand-made test",
    )
    cards = [card(1, 1, "refutes", 0.9), card(2, 2, "supports", 0.6)]
    _, v = verdict(cards, rules)
    p = 1 / (1 + math.exp(-(math.log(0.9 / 0.1) - 1)))  # 0.768 < 0.8
    assert v.abstained and v.label == "not-enough-evidence" and v.confidence is None
    assert (
        f"{p:.2f}" in v.rationale and "refutes E1" in v.rationale and "supports E2" in v.rationale
    )
    _, v = verdict([card(1, 1, "refutes", 0.97)], rules)
    assert not v.abstained and v.label == "refuted"
    assert v.confidence == pytest.approx(1 / (1 + math.exp(-(math.log(0.97 / 0.03) - 1))), abs=1e-4)
    assert (v.precision, v.precision_basis) == (0.83, "a hand-made test")
    # just under the level: as many digits as it takes not to read as the level itself
    near = VerdictRules(calibration=rules.calibration, abstain={"refuted": round(p + 0.002, 4)})
    _, v = verdict(cards, near)
    assert v.abstained and f"probability {p:.3f}, below the {p + 0.002:.2f}" in v.rationale


def test_rules_files_round_trip_and_bad_ones_are_refused(tmp_path) -> None:
    rules = VerdictRules(decide=0.8, weak=0.4, abstain={"refuted": 0.8})
    assert load_rules(rules.save(tmp_path / "r.json")) == rules
    with pytest.raises(ConfigError):
        VerdictRules(decide=0.4, weak=0.6)
    with pytest.raises(ConfigError):
        VerdictRules(abstain={"maybe": 0.5})
    from factseek.errors import ModelError

    with pytest.raises(ModelError):
        rules_from_dict({"kind": "something-else"})


# ----------------------------------------------------------------------------- fitting


def test_fit_logistic_recovers_a_known_map() -> None:
    import random

    rng = random.Random(0)
    s = [rng.uniform(0.05, 0.95) for _ in range(4000)]
    truth = {"a": 2.0, "b": -0.5}
    y = [rng.random() < 1 / (1 + math.exp(-(2 * math.log(x / (1 - x)) - 0.5))) for x in s]
    got = fit_logistic(s, y, l2=0.0)
    assert got["a"] == pytest.approx(truth["a"], abs=0.2)
    assert got["b"] == pytest.approx(truth["b"], abs=0.15)
    assert fit_logistic([0.9] * 5, [True] * 5) == {"a": 0.0, "b": round(math.log(6 / 1), 6)}


def test_fit_rules_by_cross_validation() -> None:
    items = refutation_items()
    rules, report = fit_rules(
        items,
        levels={"refuted": 0.8},
        grid={"decide": (0.7, 0.9), "weak": (0.5,), "genre_weight": (0.5,)},
    )
    # decide 0.9 keeps only the strong (always right) refutations; 0.7 also the weak ones,
    # right a third of the time: calibration sends those below 0.8 and they abstain.
    assert report.precision["refuted"] == 1.0 and report.coverage == pytest.approx(0.5)
    assert rules.abstain == {"refuted": 0.8} and "refuted" in rules.calibration
    raw = raw_verdicts(items[:2], rules)
    assert raw[0][:2] == ("refuted", 0.95)


# ----------------------------------------------------------------------------- cards


FILLER = " ".join(f"Item {i}, a ${i + 1} million road repair, was routine." for i in range(6))
DOCS = [
    Document(
        url="https://ledger.example/news/plant-cost",
        title="Plant cost",
        text=(
            "The water plant cost debate took most of the council meeting on Tuesday. "
            "Members said the water plant cost questions would come back next month. "
            "With interest, the final cost came to $61.8 million. "
            f"The weather was fine and the meeting ended early. {FILLER}"
        ),
    ),
    Document(
        url="https://ledger.example/opinion/letters-water",
        title="Letters: water bills",
        text="To the editor: my bill went up and the plant cost $62 million, I am sure of it.",
    ),
]


def test_answer_types() -> None:
    assert answer_types("Did the plant cost $62 million?") == {"number"}
    assert answer_types("When did the plant open?") == {"date"}
    assert answer_types("Who built the plant?") == {"actor"}
    assert answer_types("Is the sky blue?") == frozenset()


def test_a_deciding_sentence_with_few_shared_words_becomes_a_candidate() -> None:
    from factseek.summarize.evidence import EvidenceConfig

    q = [Question(text="Did the water plant cost $62 million?")]
    cfg = EvidenceConfig(candidates=2, cards=1, typed=0, quoted=0, figures=0)
    texts = [c.text for c in evidence_candidates(CLAIM, q, DOCS[:1], cfg)]
    assert not any("61.8" in t for t in texts)  # two more relevant sentences take the places
    texts = [c.text for c in evidence_candidates(CLAIM, q, DOCS[:1], replace(cfg, typed=2))]
    assert any("61.8" in t for t in texts)  # it states the figure asked for: a candidate


def test_a_sentence_stating_the_questions_own_figure_becomes_a_candidate() -> None:
    from factseek.summarize.evidence import EvidenceConfig
    from factseek.summarize.figures import figures, same_figure

    assert figures("about $61.8 million, 5,000 gallons, 40% in 2019") == [
        (61.8, "#milli"),
        (5000.0, "#gallo"),
        (40.0, "#perce"),
    ]
    assert same_figure(figures("$62 million"), figures("about $61.8 million"))
    assert not same_figure(figures("$62 million"), figures("$44.5 million"))
    assert not same_figure(figures("62 percent"), figures("62 million"))
    doc = Document(
        url="https://ledger.example/news/plant-budget",
        title="Plant budget",
        text=(
            "The plant cost debate took most of the council meeting on Tuesday. "
            "Members said the plant cost questions would come back next month. "
            "Construction came in at $44.5 million, the finance director said. "
            "If you add every dollar of interest through 2041, it is about $61.8 million. "
            f"{FILLER}"
        ),
    )
    q = [Question(text="Did the plant end up costing taxpayers $62 million?")]
    cfg = EvidenceConfig(candidates=2, cards=1, typed=2, quoted=0, figures=0)
    texts = [c.text for c in evidence_candidates(CLAIM, q, [doc], cfg)]
    assert not any("61.8" in t for t in texts)  # it shares no word with the question, only a unit
    texts = [c.text for c in evidence_candidates(CLAIM, q, [doc], replace(cfg, figures=1))]
    assert sum("61.8" in t for t in texts) == 1 and not any("44.5" in t for t in texts)
    elsewhere = replace(doc, text=doc.text.replace("plant cost", "school"))  # another subject
    one = replace(cfg, candidates=1, figures=1)
    assert [c.text[:12] for c in evidence_candidates(CLAIM, q, [doc], one)] == ["The plant co", "If you add e"]  # fmt: skip
    texts = [c.text for c in evidence_candidates(CLAIM, q, [elsewhere], one)]
    assert len(texts) == 1 and "44.5" in texts[0]  # first of a tie; the page shares no rarer word


def test_a_summary_quoted_sentence_becomes_a_candidate() -> None:
    from factseek.summarize.evidence import EvidenceConfig

    q = [Question(text="Did the water plant cost $62 million?")]
    cfg = EvidenceConfig(candidates=1, cards=1, typed=0, quoted=0)
    text = DOCS[0].text
    start = text.index("The weather")
    quoted = [(0, start, len(text))]
    assert not any("weather" in c.text for c in evidence_candidates(CLAIM, q, DOCS, cfg, quoted))
    q2 = [Question(text="Was the plant meeting weather fine?")]
    got = evidence_candidates(CLAIM, q2, DOCS, replace(cfg, candidates=1, quoted=2), quoted)
    assert sum("weather" in c.text for c in got) == 1  # quoted and relevant: read once


def test_an_abstentions_best_card_is_one_that_counts_fully() -> None:
    from factseek.judge.verdict import named, strongest

    letter = card(1, 1, "supports", 0.89, genre="letter")
    news = card(2, 1, "supports", 0.7)
    own = replace(card(3, 1, "supports", 0.95), independent=False, note="the claimant's own")
    assert strongest([letter, news, own], "supports") is news  # counts fully, though less sure
    assert strongest([letter, own], "supports") is own  # the most probable of the rest
    assert strongest([news], "refutes") is None
    assert named(letter, "supports") == "E1 (site1.example, letter, 0.89)"
    assert named(own, "supports") == "E3 (site3.example, not independent, 0.95)"
    assert named(news, "supports") == "E2 (site2.example, 0.70)"
    abstaining = replace(RULES, abstain={"supported": 0.99})
    louder = replace(letter, stance=card(1, 1, "supports", 0.95).stance)  # surer than E4
    _, v = verdict([louder, news, card(4, 2, "supports", 0.9)], abstaining)
    assert v.abstained and v.explanation.endswith("best cards: supports E4 (site4.example, 0.90)")


def test_genre_of_pages() -> None:
    assert genre(DOCS[1]) == "letter"
    assert genre(DOCS[0]) == ""
    assert genre(Document(url="https://x.example/opinion/2023/a", text="t")) == "opinion"
    assert genre(Document(url="https://x.example/a", title="Opinion: why", text="t")) == "opinion"
    assert genre(Document(url="https://someone.substack.com/p/a", text="t")) == "blog"
    assert (
        genre(Document(url="https://x.example/a", title="Guest post: my bill", text="t")) == "blog"
    )


def test_cards_carry_their_pages_genre() -> None:
    from factseek.summarize.evidence import Candidate

    cands = [
        Candidate(
            question=Q[1].text,
            question_index=1,
            doc=1,
            start=0,
            end=20,
            text=DOCS[1].text[:20],
            relevance=0.9,
        ),
        Candidate(
            question=Q[1].text,
            question_index=1,
            doc=0,
            start=0,
            end=20,
            text=DOCS[0].text[:20],
            relevance=0.5,
        ),
    ]
    s = StanceResult(
        label="supports", probs={"supports": 0.9, "refutes": 0.05, "nei": 0.05}, model="x"
    )
    cards = select_evidence(CLAIM, cands, [s, s], DOCS)
    assert [(c.url, c.genre) for c in cards] == [(DOCS[0].url, ""), (DOCS[1].url, "letter")]


def test_a_card_whose_figure_differs_from_the_questions_says_so() -> None:
    """The note compares figures of one unit (a currency mark counts), says nothing when one
    matches within 5%, and shows in the reports and on the review page."""
    from factseek.report import render_html, render_markdown
    from factseek.review.apply import cards as review_cards
    from factseek.summarize.evidence import Candidate
    from factseek.summarize.figures import figure_note

    q = "Have water bills risen 40 percent?"
    assert figure_note(q, "The typical bill rose 18% in two years.") == (
        "this says 18%; the question, 40 percent"
    )
    assert figure_note(q, "The service charge went up 40 percent.") == ""  # the same figure
    assert figure_note(q, "Bills went up 40 percent.", "supports") == ""
    assert figure_note(q, "Bills did not go up 40 percent.", "refutes") == (
        "this repeats the question's 40 percent, yet reads as refuting"
    )
    assert figure_note(q, "Bills went up in 2022 and 2023.") == ""  # no figure of its unit
    cost = "Did the plant cost $62 million?"
    assert figure_note(cost, "About $61.8 million, with interest.") == ""  # within 5%
    assert figure_note(cost, "It treats 6 million gallons a day.") == ""  # not dollars
    assert figure_note(cost, "The $44.5 million plant treats 6 million gallons.") == (
        "this says $44.5 million; the question, $62 million"
    )
    doc = Document(url="https://ledger.example/a", text="The $44.5 million plant opened.")
    cand = Candidate(
        question=Q[1].text, question_index=1, doc=0, start=0, end=31, text=doc.text, relevance=1
    )
    s = StanceResult(label="refutes", probs={"supports": 0.1, "refutes": 0.8, "nei": 0.1})
    (got,) = select_evidence(CLAIM, [cand], [s], [doc])
    assert got.figures == "this says $44.5 million; the question, $62 million"
    from factseek.types import Report

    report = Report(claim=CLAIM, questions=tuple(Q), evidence=(got,))
    assert "compare the figures: this says $44.5 million; the question, $62 million" in (
        render_markdown(report).replace("\\$", "$")
    )
    assert "compare the figures: this says $44.5 million" in render_html(report)
    assert review_cards(report)[0].figures == got.figures
    # a verdict or an answer that cites it says so where it names it
    answers, v = verdict([replace(card(1, 1, "refutes", 0.9), figures=got.figures)])
    assert "refuted by E1 (site1.example, 0.90; compare its figures)" in answers[1].rationale
    assert "; compare its figures" in v.rationale


def test_each_shipped_stance_model_has_its_own_rules(monkeypatch) -> None:
    """`check --stance mpnet` judges with the rules fitted on that model's readings; a stance
    folder of your own gets the default model's; $FACTSEEK_VERDICT_RULES still wins."""
    from factseek.judge.rules import ENV, STANCE_RULES, default_rules, load_rules
    from factseek.stance import SHIPPED

    assert set(STANCE_RULES) == set(SHIPPED)
    mpnet = load_rules("default", stance="mpnet")
    assert mpnet != load_rules("default")
    assert "mpnet" in mpnet.precision_basis and "train" in mpnet.fitted_on
    assert mpnet.calibration and mpnet.abstain
    monkeypatch.delenv(ENV)
    assert default_rules("mpnet") == mpnet
    assert default_rules("some/folder") == default_rules() == load_rules("default")
    monkeypatch.setenv(ENV, "builtin")
    assert default_rules("mpnet") == VerdictRules()


def test_a_check_with_the_mpnet_stance_model_judges_with_its_rules(monkeypatch) -> None:
    from factseek import api
    from factseek.judge.rules import ENV, load_rules
    from factseek.stance import FunctionStance

    monkeypatch.delenv(ENV)
    import factseek.stance as stance_pkg

    fake = FunctionStance(lambda q, e: "nei", name="stance:mpnet")
    monkeypatch.setattr(stance_pkg, "load_stance", lambda name, engine=None, readings=None: fake)
    for name, stance in (("mpnet", "mpnet"), ("default", "default")):
        _, judge, _ = api._evidence_parts(api.CheckOptions(stance=name), None, {}, [])
        assert judge.rules == load_rules("default", stance=stance)


def test_the_shipped_rules_load_and_abstain_below_their_levels(monkeypatch) -> None:
    from factseek.judge.rules import ENV, default_rules, load_rules

    shipped = load_rules("default")
    assert shipped.calibration and shipped.abstain and shipped.precision_basis
    assert "cross-validation" in shipped.fitted_on and "train" in shipped.fitted_on
    for label, level in shipped.abstain.items():
        assert 0 < level <= 1 and label in shipped.calibration
    monkeypatch.setenv(ENV, "default")
    assert default_rules() == shipped
    monkeypatch.setenv(ENV, "builtin")
    assert default_rules() == VerdictRules()
    # a verdict whose calibrated probability is under its label's level abstains
    cards = [card(1, 1, "refutes", 0.99)]
    _, v = verdict(cards, shipped)
    p = shipped.calibrate("refuted", 0.99)
    assert v.abstained == (p < shipped.abstain["refuted"])


def test_a_sentence_giving_the_questions_figure_is_a_card_though_it_takes_no_side() -> None:
    """Rule 5's figure cards: a candidate read nei that gives the question's own figure is
    shown after the question's deciding cards (one that counts fully first), never counts
    toward an answer, and the answer points to it."""
    from factseek.report import render_html, render_markdown
    from factseek.report.common import badge
    from factseek.summarize.evidence import Candidate, EvidenceConfig
    from factseek.summarize.figures import figure_note, gives_figure
    from factseek.types import Report

    cost = "Did the plant cost $62 million?"
    assert figure_note(cost, "About $61.8 million, with interest.", "nei") == (
        "this gives $61.8 million, the question's $62 million, and takes no side"
    )
    assert gives_figure(cost, "About $61.8 million, with interest.")
    assert not gives_figure(cost, "The $44.5 million plant opened.")  # another figure
    assert not gives_figure(cost, "It treats 62 million gallons a day.")  # not dollars
    texts = [
        "If you add every dollar of interest, it is about $61.8 million.",  # the deciding one
        "The $44.5 million plant opened in May.",  # another figure of its unit: not shown
        "The plant opened in May after two years of work.",  # no figure: never a figure card
        "Blog math: about $61.8 million in all.",  # its figure, but a blog
    ]
    docs = [Document(url=f"https://news{i}.example/a", text=t) for i, t in enumerate(texts[:3])]
    docs.append(Document(url="https://someone.blogspot.com/2023/plant", text=texts[3]))
    cands = [
        Candidate(question=cost, question_index=1, doc=i, start=0, end=len(t), text=t, relevance=r)
        for i, (t, r) in enumerate(zip(texts, (0.2, 0.9, 0.9, 0.9), strict=True))
    ]
    nei = StanceResult(label="nei", probs={"supports": 0.3, "refutes": 0.2, "nei": 0.5})
    got = select_evidence(CLAIM, cands, [nei] * 4, docs, EvidenceConfig(figure_cards=2))
    assert [e.text for e in got] == [texts[0], texts[3]]  # counting fully first
    assert got[0].figures == "this gives $61.8 million, the question's $62 million, and takes no side"  # fmt: skip
    assert got[1].genre == "blog"
    three = select_evidence(CLAIM, cands, [nei] * 4, docs, EvidenceConfig(figure_cards=3))
    assert [e.text for e in three] == [texts[0], texts[3]]  # never another figure
    assert select_evidence(CLAIM, cands, [nei] * 4, docs, EvidenceConfig(figure_cards=0)) == []
    # a deciding card comes first and decides alone; the figure card never counts
    sure = StanceResult(label="refutes", probs={"supports": 0.05, "refutes": 0.9, "nei": 0.05})
    mixed = select_evidence(CLAIM, cands, [nei, sure, nei, nei], docs, EvidenceConfig(figure_cards=1))  # fmt: skip
    assert [e.text for e in mixed] == [texts[1], texts[0]]
    assert question_masses(mixed) == question_masses(mixed[:1])
    # with only figure cards the answer is unknown, says no card takes a side, and cites them
    answers = answer_questions(Q, got, RULES)
    assert answers[1].answer == "unknown" and answers[1].evidence_ids == ("E1", "E2")
    assert answers[1].rationale == "no card takes a side; figures to compare: E1, E2"
    assert answers[2].rationale == "no evidence found"
    # a weak card: the answer names the best one and the figure card
    weak = StanceResult(label="supports", probs={"supports": 0.4, "refutes": 0.1, "nei": 0.5})
    answers = answer_questions(Q, select_evidence(CLAIM, cands, [nei, weak, nei, nei], docs), RULES)  # fmt: skip
    assert answers[1].rationale.startswith("too weak to decide (best support E1 (news1.example, 0.40")  # fmt: skip
    assert answers[1].rationale.endswith("; figures to compare: E2, E3")
    assert answers[1].evidence_ids == ("E1", "E2", "E3")
    # reports show it as taking no side, with its figures
    report = Report(claim=CLAIM, questions=tuple(Q), evidence=tuple(got))
    assert badge(got[0]) == "TAKES NO SIDE"
    md = render_markdown(report).replace("\\$", "$")
    assert "`TAKES NO SIDE`" in md and "this gives $61.8 million, the question's $62 million" in md
    assert ">TAKES NO SIDE</span>" in render_html(report)


def test_figure_candidates_come_one_per_page_the_claimants_own_words_last() -> None:
    from factseek.summarize.evidence import EvidenceConfig

    claim = Claim(text="The plant cost $62 million.", speaker="Tom Brannigan")
    q = [Question(text="Did the plant end up costing taxpayers $62 million?")]
    mine = Document(
        url="https://www.brannigan4mayor.example/water",
        text="The plant cost debate: taxpayers will pay about $62 million, bonds and all.",
    )
    blog = Document(
        url="https://observer.example/p/plant",
        text="The plant cost, answer three: about $61.8 million. Round it: $62 million, they say.",
    )
    news = Document(
        url="https://tribune.example/hearing",
        text="The plant cost hearing: with every dollar of interest, it is about $61.8 million.",
    )
    cfg = EvidenceConfig(
        candidates=1, cards=1, typed=0, quoted=0, figures=2, min_relevance=0.9, short_doc=0
    )
    texts = [c.text for c in evidence_candidates(claim, q, [mine, blog, news], cfg)]
    assert len(texts) == 2 and not any("brannigan" in t.lower() or "Round it" in t for t in texts)
    assert any("answer three" in t for t in texts) and any("hearing" in t for t in texts)


def test_the_verdicts_calibration_reads_the_answers_too() -> None:
    """A refuted verdict that two questions (one the claim's own) answer no is surer than one a
    single subquestion answers no, at the same strength; weights come from cross-validation,
    and a feature that never varies gets none."""
    from factseek.judge.verdict import verdict_features
    from factseek.types import Answer

    def answer(q: int, label: str) -> Answer:
        return Answer(question=Q[q].text, answer=label, confidence=0.9)  # type: ignore[arg-type]

    both = [answer(0, "no"), answer(1, "no"), answer(2, "yes")]
    names = ("more", "claim", "against", "conflict", "overlap")  # overlap 0: no cards given
    got = verdict_features("refuted", both, CLAIM.text)
    assert [got[k] for k in names] == [1.0, 1.0, 1.0, 0.0, 0.0]
    one = [answer(0, "unknown"), answer(1, "no"), answer(2, "conflicting")]
    got = verdict_features("refuted", one, CLAIM.text)
    assert [got[k] for k in names] == [0.0, 0.0, 0.0, 1.0, 0.0] and set(got) == set(names)
    # overlap: the share of the claim's content words in the card its answers cite on its side
    said = replace(card(1, 1, "refutes", 0.9), text="The plant did not cost $62 million.")
    other = replace(card(2, 1, "supports", 0.9), text="The plant cost $62 million and opened in 2022.")  # fmt: skip
    cited = [replace(answer(1, "no"), evidence_ids=("E1", "E2"))]
    got = verdict_features("refuted", cited, CLAIM.text, [said, other])["overlap"]
    assert got == pytest.approx(4 / 6, abs=1e-4)  # plant, cost, 62, million of six; E2 supports
    rules = VerdictRules(calibration={"refuted": {"a": 0.0, "b": 0.0, "more": 1.0, "claim": 2.0}})
    assert rules.calibrate("refuted", 0.9) == 0.5  # no features: the map's b alone
    assert rules.calibrate("refuted", 0.9, {"more": 1.0, "claim": 1.0}) == pytest.approx(
        1 / (1 + math.exp(-3.0))
    )
    assert rules_from_dict(rules.to_dict()) == rules
    with pytest.raises(ConfigError, match="calibration"):
        VerdictRules(calibration={"refuted": {"a": 0.0, "b": 0.0, "size": 1.0}})
    # in the verdict: two "no" answers, one the claim's, beat one at the same strength
    cards = [card(1, 0, "refutes", 0.9), card(2, 1, "refutes", 0.9)]
    _, two = verdict(cards, replace(rules, abstain={"refuted": 0.8}))
    _, single = verdict(cards[1:], replace(rules, abstain={"refuted": 0.8}))
    assert two.label == "refuted"
    assert two.confidence == pytest.approx(1 / (1 + math.exp(-3.0)), abs=1e-4)
    assert single.abstained and single.label == "not-enough-evidence"


def _refuting(i: int, n: int, q: Question, p: float) -> Evidence:
    stance = StanceResult(label="refutes", probs={"supports": 0.02, "refutes": p, "nei": 0.98 - p})
    site = f"s{i}-{n}.example"
    return Evidence(
        id=f"E{n}",
        url=f"https://{site}",
        text="t",
        start_char=0,
        end_char=1,
        question=q.text,
        domain=site,
        stance=stance,
    )


def test_fit_rules_weighs_the_answers_where_they_tell_right_from_wrong() -> None:
    """Synthetic claims whose refutation is right when two questions say no and a coin when one
    does, at the same card strength: the strength-only map cannot tell them apart; the map with
    features can, so cross-validation commits to more right verdicts."""
    import random

    rng = random.Random(1)
    items = []
    for i in range(200):
        claim = Claim(text=f"claim {i}")
        qs = (
            Question(text=claim.text, source="claim", kind="claim"),
            Question(text=f"sub {i}?"),
        )
        two = i % 2 == 0
        gold = "refuted" if two or rng.random() < 0.5 else "supported"
        p = 0.8 + 0.15 * rng.random()  # the same spread of strengths either way

        cards = (
            (_refuting(i, 1, qs[0], p), _refuting(i, 2, qs[1], p))
            if two
            else (_refuting(i, 1, qs[1], p),)
        )
        items.append(RuleItem(gold=gold, claim=claim, questions=qs, evidence=cards))
    grid = {"decide": (0.7,), "weak": (0.5,), "genre_weight": (0.5,)}
    plain, plain_report = fit_rules(items, levels={"refuted": 0.8}, grid=grid, features=False)
    rules, report = fit_rules(items, levels={"refuted": 0.8}, grid=grid)
    assert set(plain.calibration["refuted"]) == {"a", "b"}
    weights = rules.calibration["refuted"]
    assert weights["more"] > 0 or weights["claim"] > 0  # the two move together here
    assert "against" not in weights and "conflict" not in weights  # never vary: no weight
    assert report.score > plain_report.score and report.precision["refuted"] == 1.0
    assert report.chosen["features"]["refuted"] and plain_report.chosen["features"]["refuted"] == []
