"""Generated contrast pairs (stance/contrast.py), each rule on a tiny fixture, and the
real-world stance sources on tiny files written here (stance/realworld.py)."""

from __future__ import annotations

import json

import pytest

from factseek.stance.contrast import (
    RULES,
    change_date,
    change_duration,
    change_number,
    contrast_pairs,
    drop_clause,
    opposite,
    report_frame,
    reported,
)
from factseek.stance.data import StancePair, parse_oversample, repeat_sources


def test_number_rule_changes_a_number_the_evidence_states() -> None:
    claim = "The city hired 12 firefighters and 3 medics."
    evidence = "The city added 12 firefighters last year."
    new = change_number(claim, evidence)
    assert new is not None and "12" not in new and "3 medics" in new
    assert change_number("Hired 40 people.", "No figure here.") is None
    assert change_number("It happened in 2019.", "It happened in 2019.") is None  # a year
    assert change_number("COVID-19 spread.", "COVID-19 spread.") is None  # glued to a word
    big = change_number("It cost $1,200 overall.", "The cost was $1,200.")
    assert big is not None and "," in big and "1,200" not in big


def test_date_rule_moves_a_year_or_a_month() -> None:
    new = change_date("The library opened in 1998.", "It first opened in 1998.")
    assert new is not None and "1998" not in new and new.startswith("The library opened in 19")
    new = change_date("The treaty was signed in March.", "They signed in March in Geneva.")
    assert new is not None and "March" not in new
    assert change_date("It opened in 1998.", "It opened long ago.") is None


def test_duration_rule_changes_the_unit() -> None:
    new = change_duration("The road was closed for 14 months.", "It reopened after 14 months.")
    assert new is not None and "14 " in new and "months" not in new and new.endswith("s.")
    assert change_duration("It took 3 days.", "Nothing about time.") is None


def test_drop_clause_removes_the_deciding_details() -> None:
    evidence = "The plant opened in 2022, and residents on the hill later reported low water pressure during the first hot summer."
    rest = drop_clause("The plant opened in 2022.", evidence, [])
    assert rest is not None and "2022" not in rest and rest.startswith("And residents")
    assert (
        drop_clause("The plant opened in 2022.", "It opened in 2022.", []) is None
    )  # nothing left


def test_reported_rule_quotes_an_unverified_source() -> None:
    out = reported("Bills rose 40 percent.", "Bills rose 40 percent since the plant opened.")
    assert out is not None and out.endswith('"Bills rose 40 percent since the plant opened."')
    assert any(
        out.startswith(r)
        for r in ("A viral", "An anonymous", "A reader", "A campaign", "A forwarded")
    )
    assert reported("x", "One. Two sentences here.") is None


def test_report_frame_makes_the_evidence_someones_belief() -> None:
    out = report_frame("Bills rose.", "Bills rose 40 percent since the plant opened.")
    assert out is not None and out.endswith("that bills rose 40 percent since the plant opened.")
    assert report_frame("x", "NASA said the launch worked.").endswith(
        "that NASA said the launch worked."
    )  # type: ignore[union-attr]
    assert report_frame("x", "One. Two sentences here.") is None


@pytest.mark.parametrize(
    ("claim", "evidence", "want"),
    [
        (
            "Water bills rose 40 percent.",
            "Bills rose about 40 percent.",
            "Water bills fell 40 percent.",
        ),
        ("The bridge reopened in May.", "The bridge reopened Monday.", "The bridge closed in May."),
        ("The court upheld the ban.", "The court upheld it.", "The court overturned the ban."),
        (
            "Rents are higher than in 2019.",
            "Rents are higher now.",
            "Rents are lower than in 2019.",
        ),
        ("It was approved by voters.", "Voters approved it.", "It was rejected by voters."),
        ("Cannabis is legal there.", "Cannabis became legal.", "Cannabis is illegal there."),
        # the evidence does not state the word, or states its opposite too: nothing to flip
        ("Water bills rose 40 percent.", "Bills went up.", None),
        ("Prices rose and fell.", "Prices rose, then fell.", None),
        # a negated word is left alone; a verb particle is no adverb
        ("The council did not approve it.", "The council approved it.", None),
        ("They set up a fund.", "They set up a fund in May.", None),
    ],
)
def test_antonym_rule_flips_a_word_the_evidence_states(
    claim: str, evidence: str, want: str | None
) -> None:
    pytest.importorskip("lemminflect")
    from factseek.ml.nlp import load_spacy

    assert opposite(load_spacy()(claim), evidence) == want


def test_contrast_pairs_labels_sources_and_groups() -> None:
    pytest.importorskip("spacy")
    pairs = [
        StancePair(
            question="The bridge opened in 1932 after 4 years of work.",
            evidence="The bridge opened in 1932 after 4 years of work, the city said.",
            label="supports",
            source="fever",
            group="g1",
        ),
        StancePair(
            question="Paris is in France.",
            evidence="Paris is the capital of France.",
            label="refutes",
            source="fever",
            group="g2",
        ),
    ]
    made = contrast_pairs(pairs)
    assert made and all(p.group == "g1" for p in made)  # only the supporting pair is edited
    by_rule = {p.source.split(":", 1)[1]: p for p in made}
    assert by_rule["number"].label == "refutes" and "4 years" not in by_rule["number"].question
    assert by_rule["date"].label == "refutes" and "1932" not in by_rule["date"].question
    assert by_rule["duration"].label == "refutes"
    assert by_rule["negation"].label == "refutes" and " not " in by_rule["negation"].question
    assert by_rule["reported"].label == "nei" and by_rule["reported"].question == pairs[0].question
    assert set(by_rule) <= set(RULES)
    again = contrast_pairs(pairs)
    assert again == made  # deterministic
    assert len(contrast_pairs(pairs, max_per_rule=0)) == 0


def test_oversampling() -> None:
    p = StancePair(question="q", evidence="e", label="nei", source="wice", group="g")
    q = StancePair(question="q2", evidence="e2", label="nei", source="fever", group="h")
    out = repeat_sources([p, q], parse_oversample("wice=3"))
    assert [x.group for x in out] == ["g", "g#1", "g#2", "h"]
    from factseek.errors import InputError

    with pytest.raises(InputError):
        parse_oversample("nowhere=2")
    with pytest.raises(InputError):
        parse_oversample("wice=0")


# ----------------------------------------------------------------------------- real-world sources


def _jsonl(path, rows) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_checkcovid_loader(tmp_path) -> None:
    from factseek.stance.realworld import checkcovid_pairs

    _jsonl(
        tmp_path / "corpus.jsonl",
        [{"cord_id": "a", "abstract": ["S0 intro.", "S1 result in 30 min."]}],
    )
    row = {
        "claim": "Test works in 30 minutes.",
        "cord_id": "a",
        "label": "SUPPORT",
        "evidence_set": [{"sent_index": 1}],
    }
    _jsonl(tmp_path / "train.jsonl", [row])
    _jsonl(
        tmp_path / "dev.jsonl", [{**row, "label": "REFUTE", "claim": "Test works in 3 seconds."}]
    )
    out = checkcovid_pairs(tmp_path)
    [test] = out["test"]
    assert (test.label, test.evidence, test.source) == (
        "refutes",
        "S1 result in 30 min.",
        "checkcovid",
    )
    assert len(out["train"]) + len(out["validation"]) == 1


def test_wice_loader_scores_supported_vs_not(tmp_path) -> None:
    from factseek.stance.realworld import wice_pairs

    article = [
        "(meta data) TITLE: A page",
        "Alpha was born in 1950.",
        "Beta likes tea.",
        "Alpha lives in Oslo.",
    ]
    dev = [
        {
            "claim": "Alpha was born in 1950.",
            "label": "supported",
            "supporting_sentences": [[1]],
            "evidence": article,
        },
        {
            "claim": "Alpha lives in Rome.",
            "label": "not_supported",
            "supporting_sentences": [[]],
            "evidence": article,
        },
        {
            "claim": "Alpha was born in 1950 in Oslo and likes tea.",
            "label": "partially_supported",
            "supporting_sentences": [[1]],
            "evidence": article,
        },
    ]
    _jsonl(tmp_path / "dev.jsonl", dev)
    _jsonl(tmp_path / "partial_train.jsonl", [{**dev[2], "meta": {"id": "train1-1"}}])
    out = wice_pairs(tmp_path)
    assert [(p.label, p.evidence) for p in out["test"]] == [
        ("supports", "Alpha was born in 1950."),
        ("nei", "Alpha was born in 1950. Alpha lives in Oslo."),  # BM25's two nearest sentences
    ]
    assert [p.label for p in out["train"] + out["validation"]] == ["nei"]  # partial: nei


def test_averitec_boolean_answers_hide_the_yes_or_no(tmp_path) -> None:
    from factseek.stance.realworld import averitec_dev_pairs

    claim = {
        "claim": "X",
        "label": "Refuted",
        "questions": [
            {
                "question": "Did X happen?",
                "answers": [
                    {
                        "answer": "No",
                        "answer_type": "Boolean",
                        "boolean_explanation": "It did not happen.",
                    }
                ],
            },
            {"question": "Who said X?", "answers": [{"answer": "Y", "answer_type": "Extractive"}]},
        ],
    }
    (tmp_path / "dev.json").write_text(json.dumps([claim]), encoding="utf-8")
    [pair] = averitec_dev_pairs(tmp_path)["test"]
    assert (pair.question, pair.evidence, pair.label) == (
        "Did X happen?",
        "It did not happen.",
        "refutes",
    )


def test_untokenize() -> None:
    from factseek.stance.realworld import untokenize

    assert (
        untokenize("Telemundo -LRB- TV -RRB- is a network , owned by NBC .")
        == "Telemundo (TV) is a network, owned by NBC."
    )


def test_scoring_of_two_way_sides() -> None:
    from factseek.stance.evaluate import score_pairs

    m = score_pairs(
        "supported-vs-not", ["supports", "nei", "nei"], ["supports", "refutes", "supports"]
    )
    assert m.accuracy == pytest.approx(2 / 3)  # refutes counts as "not supported"
    m = score_pairs("supports-vs-refutes", ["supports", "refutes"], ["nei", "refutes"])
    assert m.accuracy == 0.5 and m.macro_f1 == pytest.approx((0 + 1) / 2)  # nei: a miss


def test_wice_supported_part_of_a_partial_claim() -> None:
    pytest.importorskip("spacy")
    from factseek.stance.realworld import _supported_part

    row = {
        "claim_tokens": [
            "He",
            "was",
            "born",
            "at",
            "11",
            "Essex",
            "Quay",
            "in",
            "Dublin",
            ",",
            "Ireland",
            ".",
        ],
        "non_supported_spans": [False] * 3 + [True] * 4 + [False] * 5,
    }
    assert _supported_part(row) == "He was born in Dublin, Ireland."
    broken = {
        "claim_tokens": ["Kravitz", "died", "on", "February", "24", "."],
        "non_supported_spans": [False, False, False, True, True, False],
    }
    assert _supported_part(broken) is None  # "Kravitz died on." is not a sentence


def test_antonym_rule_flips_a_preposition_quietly(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("lemminflect")
    from factseek.ml.nlp import load_spacy

    doc = load_spacy()("The vote came after the storm.")
    assert opposite(doc, "It came after the storm.") == "The vote came before the storm."
    assert capsys.readouterr().out == ""  # lemminflect is not asked to inflect a preposition
