import datetime as dt
import json

import pytest

from factseek.datasets.claims import (
    dedup,
    load_averitec,
    load_claimdecomp,
    load_claims,
    load_fever,
    load_liar,
    load_liar_plus,
    normalize_claim_text,
    sniff_format,
    with_ids,
)
from factseek.errors import DataError


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


CD_ROW = {
    "example_id": 42,
    "label": "half-true",
    "claim": "The city spent 3 million dollars on the bridge.",
    "person": "Jane Doe",
    "venue": "stated on April 7, 2020 in a press briefing:",
    "justification": ["First paragraph.", "Second paragraph."],
    "annotations": [
        {"questions": ["Did the city spend money?", "Was it 3 million?"], "answers": ["yes", "no"]},
        {"questions": ["Was it 3 million?", "Is it a bridge?"], "answers": ["no", "yes"]},
    ],
}


def test_claimdecomp_record(tmp_path):
    (x,) = load_claimdecomp(_jsonl(tmp_path / "dev.jsonl", [CD_ROW]))
    assert x.claim.text == CD_ROW["claim"]
    assert x.claim.date == dt.date(2020, 4, 7)
    assert x.claim.venue == "a press briefing"
    assert x.claim.speaker == "Jane Doe"
    assert x.claim.id == "42"
    assert x.label == "half-true"
    assert x.justification == "First paragraph.\nSecond paragraph."
    assert x.questions == ("Did the city spend money?", "Was it 3 million?", "Is it a bridge?")
    assert x.question_sets[1] == ("Was it 3 million?", "Is it a bridge?")


def test_claimdecomp_chat_form_has_no_label(tmp_path):
    row = {
        "messages": [
            {"role": "system", "content": "Ask questions."},
            {
                "role": "user",
                "content": 'Jane Doe stated on May 1, 2019 in a tweet:\n"Taxes doubled."',
            },
            {"role": "assistant", "content": "Did taxes double?, Were taxes raised?"},
        ]
    }
    (x,) = load_claimdecomp(_jsonl(tmp_path / "train.jsonl", [row]))
    assert x.label is None
    assert x.claim.text == "Taxes doubled."
    assert x.claim.date == dt.date(2019, 5, 1)
    assert x.claim.venue == "a tweet"
    assert x.questions == ("Did taxes double?", "Were taxes raised?")


def _liar_line(id_, label, text, counts, context="a speech"):
    cols = [f"{id_}.json", label, text, "economy", "jane-doe", "Mayor", "Ohio", "democrat"]
    return "\t".join([*cols, *map(str, counts), context]) + "\n"


def test_liar_credit_history_excludes_the_current_statement(tmp_path):
    p = tmp_path / "train.tsv"
    # columns: barely-true, false, half-true, mostly-true, pants-fire
    p.write_text(
        _liar_line(1, "false", "Taxes doubled.", [2, 3, 0, 1, 0])
        + _liar_line(2, "true", "Crime fell.", [2, 3, 0, 1, 0])
        + _liar_line(3, "half-true", "Jobs grew.", [0, 0, 0, 0, 0]),
        encoding="utf-8",
    )
    a, b, c = load_liar(p)
    assert a.label == "false" and a.meta["credit_false"] == "2"  # 3 minus this statement
    assert a.meta["credit_barely-true"] == "2"
    assert b.meta["credit_false"] == "3"  # "true" has no column: nothing to subtract
    assert c.meta["credit_half-true"] == "0" and c.meta["credit_inconsistent"] == "1"
    assert a.claim.speaker == "Jane Doe" and a.claim.venue == "a speech" and a.claim.id == "1"
    assert sniff_format(p) == "liar"


def test_liar_malformed_line_names_file_and_line(tmp_path):
    p = tmp_path / "bad.tsv"
    p.write_text(
        _liar_line(1, "false", "Ok.", [0] * 5) + "2.json\tfalse\tshort row\n", encoding="utf-8"
    )
    with pytest.raises(DataError, match=r"bad\.tsv:2: expected 14"):
        load_liar(p)
    p.write_text(_liar_line(1, "supported", "Ok.", [0] * 5), encoding="utf-8")
    with pytest.raises(DataError, match=r"bad\.tsv:1: 'supported' is not a politifact label"):
        load_liar(p)


def test_malformed_json_line(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text(json.dumps(CD_ROW) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"x\.jsonl:2: not valid JSON"):
        load_claimdecomp(p)
    _jsonl(p, [{**CD_ROW, "claim": "  "}])
    with pytest.raises(DataError, match=r"x\.jsonl:1: empty claim"):
        load_claimdecomp(p)


def test_liar_plus_and_fever_and_averitec(tmp_path):
    lp = _jsonl(
        tmp_path / "val2.jsonl",
        [
            {
                "id": 0,
                "json_file_id": "7.json",
                "label": "pants-fire",
                "claim": "Moon is cheese.",
                "originator": "joe-bloggs",
                "topics": ["space"],
                "justification": "It is rock.\n",
            }
        ],
    )
    (x,) = load_liar_plus(lp)
    assert (x.label, x.claim.id, x.claim.speaker, x.justification) == (
        "pants-fire",
        "7",
        "Joe Bloggs",
        "It is rock.",
    )
    assert sniff_format(lp) == "liar-plus"

    fv = _jsonl(
        tmp_path / "fever.jsonl",
        [
            {
                "id": "'5'",
                "claim": "'Paris is in France .'",
                "gold_label": "'SUPPORTS'",
                "evidence": "'Paris is the capital of France .'",
            }
        ],
    )
    (y,) = load_fever(fv)
    assert (y.claim.id, y.claim.text, y.label) == ("5", "Paris is in France .", "supports")
    assert y.justification == "Paris is the capital of France ."
    assert sniff_format(fv) == "fever"

    av = tmp_path / "dev.json"
    av.write_text(
        json.dumps(
            [
                {
                    "claim": "A said B.",
                    "claim_date": "31-10-2020",
                    "speaker": None,
                    "label": "Conflicting Evidence/Cherrypicking",
                    "justification": "Mixed.",
                    "questions": [{"question": "Did A say B?", "answers": []}],
                }
            ]
        )
    )
    (z,) = load_averitec(av)
    assert z.claim.date == dt.date(2020, 10, 31) and z.label == "conflicting-evidence"
    assert z.questions == ("Did A say B?",)
    assert [r.label for r in load_claims(av)] == ["conflicting-evidence"]


def test_dedup_reports_overlap_and_repeats():
    from factseek.datasets.claims import LabeledClaim
    from factseek.types import Claim

    def lc(text, id_):
        return LabeledClaim(claim=Claim(text=text, id=id_), label="true")

    train = [
        lc("Taxes doubled.", "1"),
        lc("“Taxes  DOUBLED”", "2"),
        lc("Crime fell!", "3"),
        lc("Jobs grew.", "4"),
    ]
    kept, rep = dedup(train, [lc("crime fell", "e1")])
    assert [x.claim.id for x in kept] == ["1", "4"]
    assert (rep.kept, rep.overlap, rep.repeated) == (2, 1, 1)
    assert set(rep.removed_ids) == {"2", "3"}
    assert normalize_claim_text("“Taxes  DOUBLED”") == "taxes doubled"
    ids = [x.claim.id for x in with_ids([lc("a", "x"), lc("b", "x"), lc("c", None)])]
    assert ids == ["x", "x#2", "row-2"]
