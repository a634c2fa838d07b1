"""Relevance before stance, FNC-1's reader, and subquestions merged (issue 50, items 1 and 4).
Made-up texts only."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from factseek.datasets.fnc1 import AS_READING, load_fnc1, sample, side
from factseek.decompose import merge_same
from factseek.errors import DataError
from factseek.summarize.relevance import RelevanceModel
from factseek.types import Question

PAGES = [
    "The Harlow county library received a state grant of $2 million for its new wing.",
    "Harlow county buses will run later on Fridays, the transit office said.",
    "A tax forum in Harlow county drew 40 residents on Tuesday evening.",
    "The library wing opens next spring, the county said.",
]


def test_relevance_prefers_the_page_about_the_claim() -> None:
    model = RelevanceModel.fit(PAGES)
    claim = "Did the Harlow county library get a $2 million state grant?"
    on, off = model.score(claim, PAGES[0]), model.score(claim, PAGES[1])
    assert on > off
    assert on >= model.gate > off  # same county, another subject
    assert model.score("the of and", PAGES[0]) == 0.0  # no content words: nothing to match


def test_relevance_weighs_rare_terms_more() -> None:
    model = RelevanceModel.fit(PAGES)
    claim = "Harlow county library grant"
    # "county" and "harlow" are in most pages; "library" and "grant" in few
    assert model.idf("harlo") < model.idf("grant")
    assert model.score(claim, "A library grant was approved.") > model.score(
        claim, "Harlow county news."
    )


def _write_fnc1(folder: Path) -> None:
    folder.mkdir()
    with (folder / "train_bodies.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["Body ID", "articleBody"])
        for i in range(40):
            w.writerow([str(i), f"Body {i}: the mayor of Harlow opened bridge number {i}."])
    with (folder / "train_stances.csv").open("w", newline="", encoding="utf-8-sig") as f:
        w = csv.writer(f)
        w.writerow(["Headline", "Body ID", "Stance"])
        stances = ["agree", "disagree", "discuss", "unrelated"]
        for i in range(40):
            w.writerow([f"Mayor opens bridge {i}", str(i), stances[i % 4]])


def test_fnc1_reader_splits_by_body(tmp_path: Path) -> None:
    _write_fnc1(tmp_path / "fnc1")
    every = load_fnc1(tmp_path / "fnc1")
    assert len(every) == 40 and every[0].headline == "Mayor opens bridge 0"  # BOM read
    sides = {s: load_fnc1(tmp_path / "fnc1", s) for s in ("train", "dev", "test")}
    assert sum(len(v) for v in sides.values()) == 40
    for s, pairs in sides.items():
        assert all(side(p.body_id) == s for p in pairs)
    assert [p.reading for p in every[:4]] == ["supports", "refutes", "nei", "nei"]
    assert [p.related for p in every[:4]] == [True, True, True, False]
    assert set(AS_READING) == {"agree", "disagree", "discuss", "unrelated"}
    two = sample(every, 2, seed=1)
    assert len(two) == 8 and sorted(p.stance for p in two).count("disagree") == 2
    assert sample(every, 2, seed=1) == two


def test_fnc1_reader_names_a_bad_row(tmp_path: Path) -> None:
    _write_fnc1(tmp_path / "fnc1")
    path = tmp_path / "fnc1" / "train_stances.csv"
    path.write_text(path.read_text(encoding="utf-8-sig") + "Another,999,agree\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"train_stances.csv:42: body 999"):
        load_fnc1(tmp_path / "fnc1")
    with pytest.raises(DataError, match="not found"):
        load_fnc1(tmp_path / "nowhere")


def _q(text: str, source: str = "rules") -> Question:
    return Question(text=text, source=source)  # type: ignore[arg-type]


def test_near_identical_subquestions_merge_into_the_more_specific() -> None:
    qs = [
        _q("The jobless rate fell to 3.1 percent in June.", "claim"),
        _q("Did the jobless rate fall to 3.1 percent?"),
        _q("Did the jobless rate fall to 3.1 percent in June?"),
        _q("Did the jobless rate fall to 3.6 percent?"),
        _q("Did the state report the jobless rate?"),
    ]
    got = [q.text for q in merge_same(qs)]
    assert got == [
        "The jobless rate fell to 3.1 percent in June.",
        "Did the jobless rate fall to 3.1 percent in June?",  # the place of the first
        "Did the jobless rate fall to 3.6 percent?",  # another figure: another question
        "Did the state report the jobless rate?",
    ]


def test_user_questions_and_the_claim_are_never_merged_away() -> None:
    qs = [
        _q("Did the council approve the budget?", "user"),
        _q("Did the council approve the budget in May?", "user"),
    ]
    assert merge_same(qs) == qs
    qs = [
        _q("The council approved the budget.", "claim"),
        _q("Did the council approve the budget?"),
    ]
    assert merge_same(qs) == qs


# ----------------------------------------------------------------------------- figures compared

JOBLESS = "Did unemployment in Dorran County fall to 4.2 percent in March 2024?"


def test_the_question_s_figure_for_its_thing_and_time_agrees() -> None:
    from factseek.summarize.compare import compare

    said = "Dorran County's unemployment rate was 4.2 percent in March, down from 4.6 percent in February."
    got = compare(JOBLESS, said)
    assert got is not None and got.result == "agrees"
    # restated later: the March figure is still there
    later = (
        "Unemployment in Dorran County rose to 4.4 percent in April, up from 4.2 percent in March."
    )
    assert compare(JOBLESS, later).result == "agrees"  # type: ignore[union-attr]


def test_another_figure_for_the_same_thing_and_time_disagrees() -> None:
    from factseek.summarize.compare import compare

    got = compare(JOBLESS, "Unemployment in Dorran County was 4.9 percent in March.")
    assert got is not None and got.result == "disagrees" and "4.9 percent" in got.note
    denied = compare(
        "Did the ferry terminal cost $7 million?",
        "Audits show the ferry terminal cost $9 million, not $7 million, in the end.",
    )
    assert denied is not None and denied.result == "disagrees"


def test_figures_of_other_times_things_or_bounds_decide_nothing() -> None:
    from factseek.summarize.compare import compare

    other_time = compare(JOBLESS, "Unemployment in Dorran County rose to 4.6 percent in February.")
    assert other_time is not None and other_time.result == "other-time"
    assert (
        compare(JOBLESS, "Unemployment in Dorran County was below 5 percent.") is None
    )  # undated other value
    assert (
        compare(JOBLESS, "The Dorran County sales tax rose 4.2 percent in March.") is None
    )  # not about it
    assert (
        compare(
            "Did the ferry terminal cost $7 million?",
            "The ferry terminal cost more than $7 million.",
        )
        is None
    )


def test_figures_compared_overrule_the_reader_on_the_card() -> None:
    from factseek.summarize.evidence import EvidenceConfig, evidence_candidates, select_evidence
    from factseek.types import Claim, Document, StanceResult

    doc = Document(
        url="https://labor.example/march",
        text="Dorran County's unemployment rate was 4.2 percent in March, down from 4.6 percent in February.",
    )
    claim = Claim(text="Unemployment in Dorran County fell to 4.2 percent in March 2024.")
    q = Question(text=JOBLESS)
    cands = evidence_candidates(claim, [q], [doc])
    assert cands
    misread = [
        StanceResult(label="refutes", probs={"supports": 0.1, "refutes": 0.8, "nei": 0.1})
    ] * len(cands)
    [card] = select_evidence(claim, cands[:1], misread[:1], [doc])
    assert card.stance is not None and card.stance.label == "supports"
    assert card.stance.model == "figures" and "figures compared" in card.figures
    assert "the reader said refutes 0.80" in card.figures
    [kept] = select_evidence(claim, cands[:1], misread[:1], [doc], EvidenceConfig(compare=False))
    assert kept.stance is not None and kept.stance.label == "refutes"


def test_a_disagreeing_figure_only_adds_a_note() -> None:
    from factseek.summarize.compare import figure_reading
    from factseek.types import StanceResult

    reading = StanceResult(label="supports", probs={"supports": 0.7, "refutes": 0.2, "nei": 0.1})
    kept, note = figure_reading(
        JOBLESS, "Unemployment in Dorran County was 4.9 percent in March.", reading
    )
    assert kept is reading  # right about as often as not on the gold pairs: it does not overrule
    assert note.startswith("figures compared: states 4.9 percent") and "the reading stands" in note
    dated, note = figure_reading(
        JOBLESS, "Dorran County's unemployment rate was 4.2 percent in March.", None
    )
    assert dated is not None and dated.label == "supports" and dated.confidence == 0.88


def test_an_off_topic_refutation_takes_no_side_when_asked() -> None:
    from factseek.summarize.evidence import EvidenceConfig, evidence_candidates, select_evidence
    from factseek.summarize.relevance import off_topic_reading, subject_terms
    from factseek.types import Claim, Document, StanceResult

    claim = Claim(text="The state grant for the new Harlow library was $4 million.")
    assert {"grant", "libra"} <= subject_terms(claim.text)
    bus = "The Harlow council voted on Tuesday to buy three buses for the transit system."
    refutes = StanceResult(label="refutes", probs={"supports": 0.1, "refutes": 0.7, "nei": 0.2})
    kept, note = off_topic_reading(claim.text, bus, refutes)
    assert kept is not None and kept.label == "nei" and "not about the question" in note
    on_topic = "The state library board gave Harlow a grant for its library."
    assert off_topic_reading(claim.text, on_topic, refutes) == (refutes, "")
    docs = [Document(url="https://a.example/bus", text=bus)]
    q = Question(text=claim.text, source="claim")
    cands = evidence_candidates(claim, [q], docs, EvidenceConfig(min_relevance=0.01))
    assert cands
    readings = [refutes] * len(cands)
    assert select_evidence(claim, cands, readings, docs)  # off by default: the card stays
    on = EvidenceConfig(min_relevance=0.01, off_topic=True)
    [aside] = select_evidence(claim, cands, readings, docs, on)  # shown, taking no side
    assert aside.stance is not None and aside.stance.label == "nei"
    assert "not about the question" in aside.figures


def test_fnc1_pairs_read_the_headline_against_the_bodys_first_sentence(tmp_path: Path) -> None:
    from factseek.stance.data import SOURCES, build_pairs

    _write_fnc1(tmp_path / "fnc1")
    source = SOURCES["fnc1"]
    assert not source.shareable and not source.default  # an experiment's source only
    sides = build_pairs(tmp_path, ["fnc1"])
    pairs = [p for v in sides.values() for p in v]
    assert 0 < len(pairs) <= 40 and {p.source for p in pairs} == {"fnc1"}
    by_body = {p.group: p for p in pairs}
    for p in load_fnc1(tmp_path / "fnc1"):
        got = by_body.get(f"fnc1-{p.body_id}")
        if got is not None:
            assert got.question == p.headline and got.label == p.reading
            assert got.evidence == p.body  # a short body is one unit, read whole
    train = {p.group for p in sides["train"]}
    assert all(side(g.removeprefix("fnc1-")) == "train" for g in train)
