"""Stance pairs from tiny copies of each data layout: labels, NEI pairs, splits, leakage, forms."""

import json
import math
from dataclasses import replace

import pytest

from factseek.errors import DataError, InputError
from factseek.stance.data import (
    DEFAULT_SOURCES,
    SOURCES,
    Source,
    StancePair,
    balance_nei,
    bm25_nearest,
    build_pairs,
    climate_pairs,
    fever_pairs,
    fever_train_pairs,
    fmt_pairs,
    parse_sources,
    per_source,
    subsample,
    with_form,
)
from factseek.stance.questions import invert
from factseek.stance.realworld import averitec_pairs
from factseek.text import tokenize


def _jsonl(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _plain_bm25(query, docs, k1=1.2, b=0.75):
    toks = [tokenize(d) for d in docs]
    avg = sum(map(len, toks)) / len(toks)
    scores = []
    for t in toks:
        s = 0.0
        for term in set(tokenize(query)):
            df = sum(term in u for u in toks)
            if df == 0:
                continue
            tf = t.count(term)
            idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
            s += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(t) / avg))
        scores.append(s)
    return scores


def test_bm25_nearest_matches_a_plain_bm25_and_honours_exclusions():
    docs = [
        "the bridge opened in 1932 over the river",
        "the river flooded the town in 1932",
        "a new bridge design won an award",
        "taxes rose in the town",
        "the mayor opened a school",
    ]
    queries = ["when did the bridge open", "town flooded by river", "nothing in common here xyz"]
    got = bm25_nearest(queries, docs, [set(), {1}, set()])
    for q, g, excl in zip(queries[:2], got[:2], [set(), {1}], strict=True):
        scores = _plain_bm25(q, docs)
        best = max((i for i in range(len(docs)) if i not in excl), key=lambda i: (scores[i], -i))
        assert g == best
    assert got[2] is None  # no shared term: no NEI pair rather than a random one


def _fever(root):
    claims = [
        {"id": f"c{i}", "claim": text, "label": label, "evidence": ev}
        for i, (text, label, ev) in enumerate(
            [
                ("The bridge opened in 1932.", "SUPPORTS", ["e1"]),
                ("The bridge opened in 1950.", "REFUTES", ["e1"]),
                ("The river flooded the town.", "SUPPORTS", ["e2"]),
                ("The mayor opened a school.", "SUPPORTS", ["e3", "e4"]),
                ("Taxes fell in the town.", "REFUTES", ["e5"]),
                ("The school has no students.", "REFUTES", ["e4"]),
                ("Nobody knows.", "NOT ENOUGH INFO", ["e5"]),
                ("Annotators disagreed.", "REFUTES/SUPPORTS", ["e6"]),
            ]
        )
    ]
    evidence = [
        {"id": "e1", "text": "The bridge opened in 1932 over the river."},
        {"id": "e2", "text": "The river flooded the town in 1932."},
        {"id": "e3", "text": "The mayor opened a new school."},
        {"id": "e4", "text": "The school has 300 students."},
        {"id": "e5", "text": "Taxes rose in the town."},
        {"id": "e6", "text": "Something else entirely."},
    ]
    _jsonl(root / "fever_dev" / "claims.jsonl", claims)
    _jsonl(root / "fever_dev" / "evidence.jsonl", evidence)


def test_fever_pairs_labels_nei_and_sides(tmp_path):
    _fever(tmp_path)
    sides = fever_pairs(tmp_path / "fever_dev")
    pairs = [p for split in sides.values() for p in split]
    gold = {(p.question, p.evidence): p.label for p in pairs if p.label != "nei"}
    assert (
        gold[("The bridge opened in 1932.", "The bridge opened in 1932 over the river.")]
        == "supports"
    )
    assert (
        gold[("The bridge opened in 1950.", "The bridge opened in 1932 over the river.")]
        == "refutes"
    )
    assert ("The mayor opened a school.", "The school has 300 students.") in gold
    assert not any(p.question in ("Nobody knows.", "Annotators disagreed.") for p in pairs)
    # no evidence text on two sides; an NEI pair never uses its own group's evidence
    where = {}
    for split, ps in sides.items():
        for p in ps:
            assert where.setdefault(p.evidence, split) == split
    own = {}
    for p in pairs:
        if p.label != "nei":
            own.setdefault(p.group, set()).add(p.evidence)
    for p in pairs:
        if p.label == "nei":
            assert p.evidence not in own.get(p.group, set())


def test_fever_train_pairs_gold_sentences_and_nei_claims(tmp_path, monkeypatch):
    import factseek.stance.data as sd

    _fever(tmp_path)  # fever_dev/ beside it: its sentences stay out of pre-training
    claims = [
        ("t1", "The tower is 300 metres tall.", "SUPPORTS", ["f1"]),
        ("t2", "The tower is 50 metres tall.", "REFUTES", ["f1"]),
        ("t3", "The tower was painted red in 1990.", "NOT ENOUGH INFO", []),
        ("t4", "The canal links two seas.", "SUPPORTS", ["f2", "f3", "f4"]),
        ("t5", "The bridge opened in 1932.", "SUPPORTS", ["f5"]),
    ]
    _jsonl(
        tmp_path / "fever_train" / "claims.jsonl",
        [{"id": i, "claim": c, "label": lab, "evidence": ev} for i, c, lab, ev in claims],
    )
    texts = {
        "f1": "The tower is 300 metres tall and made of iron.",
        "f2": "The canal links the two seas.",
        "f3": "The canal opened in 1869.",
        "f4": "Ships pass the canal every day.",
        "f5": "The bridge opened in 1932 over the river.",  # also FEVER dev evidence
        "f6": "The tower stands in the park of the city.",
    }
    _jsonl(tmp_path / "fever_train" / "evidence.jsonl", [{"id": k, "text": v} for k, v in texts.items()])  # fmt: skip
    monkeypatch.setattr(sd, "FEVER_TRAIN_SIDES", (0.0, 0.0))  # every claim on the train side
    pairs = fever_train_pairs(tmp_path / "fever_train")["train"]
    got = {(p.question, p.evidence): p.label for p in pairs}
    assert got[(claims[0][1], texts["f1"])] == "supports"
    assert got[(claims[1][1], texts["f1"])] == "refutes"
    assert got[(claims[2][1], texts["f6"])] == "nei"  # an NEI claim with its BM25-best sentence
    # a SUPPORTS / REFUTES claim gets its gold sentences only: FEVER leaves many evidence
    # sentences unmarked, so its nearest other sentence is no "nei"
    assert {p.label for p in pairs if p.question == claims[0][1]} == {"supports"}
    canal = [p for p in pairs if p.question == claims[3][1] and p.label == "supports"]
    assert len(canal) == sd.FEVER_TRAIN_GOLD_PER_CLAIM
    assert not any(texts["f5"] == p.evidence for p in pairs)  # FEVER dev's sentence is left out
    assert {p.source for p in pairs} == {"fever-train"}
    # pre-training only: the shipped model's sources do not include it
    assert "fever-train" in SOURCES and "fever-train" not in DEFAULT_SOURCES
    monkeypatch.setattr(sd, "FEVER_TRAIN_SIDES", (0.5, 0.3))
    sides = fever_train_pairs(tmp_path / "fever_train")
    where = {p.group: split for split, ps in sides.items() for p in ps}
    assert all(where[p.group] == split for split, ps in sides.items() for p in ps)


def test_fmt_pairs_gold_and_most_overlapping_retrieved(tmp_path):
    row = {
        "id": "x1",
        "text": "Filming of Gandhi was delayed by unrest.",
        "label": "SUPPORTS",
        "gold_evidence": [{"text": "Unrest delayed the filming of Gandhi."}],
        "retrieved_evidence": [
            {"text": "Unrest delayed the filming of Gandhi."},
            {"text": "It rained."},
            {"text": "Gandhi premiered in Delhi."},
            {"text": "The filming of Gandhi used 300,000 extras."},
        ],
    }
    _jsonl(tmp_path / "fool_me_twice" / "dev.jsonl", [row])
    pairs = [p for ps in fmt_pairs(tmp_path / "fool_me_twice").values() for p in ps]
    assert [(p.evidence, p.label) for p in pairs] == [
        ("Unrest delayed the filming of Gandhi.", "supports"),
        ("The filming of Gandhi used 300,000 extras.", "nei"),
        ("Gandhi premiered in Delhi.", "nei"),
    ]
    _jsonl(tmp_path / "bad" / "dev.jsonl", [{"id": "y", "label": "MAYBE", "text": "t"}])
    with pytest.raises(DataError, match=r"dev\.jsonl:1"):
        fmt_pairs(tmp_path / "bad")


def test_climate_and_averitec_pairs(tmp_path):
    _jsonl(
        tmp_path / "climate_fever" / "climate-fever.jsonl",
        [
            {
                "claim_id": "7",
                "claim": "CO2 warms the planet.",
                "evidences": [
                    {
                        "evidence_id": "a:1",
                        "evidence_label": "SUPPORTS",
                        "evidence": "CO2 traps heat.",
                    },
                    {
                        "evidence_id": "a:2",
                        "evidence_label": "NOT_ENOUGH_INFO",
                        "evidence": "Bees.",
                    },
                    {
                        "evidence_id": "a:3",
                        "evidence_label": "REFUTES",
                        "evidence": "CO2 cools it.",
                    },
                ],
            }
        ],
    )
    pairs = [p for ps in climate_pairs(tmp_path / "climate_fever").values() for p in ps]
    assert [p.label for p in pairs] == ["supports", "nei", "refutes"]
    assert {p.group for p in pairs} == {"climate-7"}
    (tmp_path / "averitec").mkdir()
    (tmp_path / "averitec" / "train.json").write_text(
        json.dumps(
            [
                {
                    "claim": "The bus fleet doubled.",
                    "label": "Refuted",
                    "questions": [
                        {
                            "question": "Did the fleet double?",
                            "answers": [
                                {
                                    "answer": "No",
                                    "answer_type": "Boolean",
                                    "boolean_explanation": "It grew 10%.",
                                }
                            ],
                        },
                        {
                            "question": "How many buses?",
                            "answers": [{"answer": "110", "answer_type": "Extractive"}],
                        },
                    ],
                },
                {"claim": "Both.", "label": "Conflicting Evidence/Cherrypicking", "questions": []},
            ]
        )
    )
    pairs = [p for ps in averitec_pairs(tmp_path / "averitec").values() for p in ps]
    assert (pairs[0].question, pairs[0].evidence, pairs[0].label, pairs[0].form) == (
        "Did the fleet double?",
        "It grew 10%.",  # the annotator's explanation, without the "No" that gives it away
        "refutes",
        "question",
    )
    assert pairs[1].question == "The bus fleet doubled." and pairs[1].label == "refutes"
    assert "How many buses? 110." in pairs[1].evidence
    assert len(pairs) == 2  # the conflicting claim is left out
    assert not SOURCES["averitec"].shareable and SOURCES["fever"].shareable


def test_sources_registry_errors_list_the_choices(tmp_path):
    with pytest.raises(InputError) as e:
        parse_sources("fever,wiki")
    for name in SOURCES:
        assert name in str(e.value)
    assert parse_sources("fmt, fever,fmt") == ("fmt", "fever")
    with pytest.raises(DataError, match="fever_dev"):
        build_pairs(tmp_path, ["fever"])


def test_build_pairs_drops_training_evidence_seen_on_the_evaluation_sides(tmp_path, monkeypatch):
    def pair(e, g):
        return StancePair(question="q", evidence=e, label="supports", source="fake", group=g)

    def load(_):
        return {
            "train": [
                pair("shared with test", "a"),
                pair("shared with validation", "b"),
                pair("only train", "c"),
            ],
            "validation": [pair("shared with validation", "d"), pair("shared with test", "e")],
            "test": [pair("shared with test", "f")],
        }

    monkeypatch.setitem(SOURCES, "fake", Source(folder="fake", shareable=True, load=load, about=""))
    (tmp_path / "fake").mkdir()
    out = build_pairs(tmp_path, ["fake"])
    assert [p.evidence for p in out["train"]] == ["only train"]
    assert [p.evidence for p in out["validation"]] == ["shared with validation"]
    assert [p.evidence for p in out["test"]] == ["shared with test"]


def test_question_forms_keep_labels():
    pairs = [
        StancePair(question=q, evidence="e", label=lab, source="s", group=str(i))
        for i, (q, lab) in enumerate(
            [
                ("The tower is 300 m tall.", "supports"),
                ("Danny Brown released an album in 2011.", "refutes"),
            ]
        )
    ]
    asked = with_form(pairs, "question")
    assert [p.question for p in asked] == [
        "Is the tower 300 m tall?",
        "Did Danny Brown release an album in 2011?",
    ]
    assert [p.label for p in asked] == ["supports", "refutes"]
    assert {p.form for p in asked} == {"question"}
    assert with_form(pairs, "statement") == pairs
    mixed = with_form(pairs * 50, "mixed", question_share=0.0)
    assert all(p.form == "statement" for p in mixed)
    with pytest.raises(InputError):
        with_form(pairs, "shout")  # type: ignore[arg-type]


def test_inversion_rules():
    assert invert("The tower is 300 m tall.") == "Is the tower 300 m tall?"
    assert invert("Sea levels rose 20 cm.") == "Is it true that Sea levels rose 20 cm?"
    assert invert("") == ""


def test_subsample_is_seeded_and_keeps_order():
    pairs = [
        StancePair(question=str(i), evidence=str(i), label="nei", source="s", group=str(i))
        for i in range(50)
    ]
    a = subsample(pairs, 10)
    assert a == subsample(pairs, 10) and len(a) == 10
    assert [int(p.question) for p in a] == sorted(int(p.question) for p in a)
    assert subsample(pairs, None) == pairs
    # per source: at most n of each, in the order the sources are named
    other = [replace(p, source="t", question=f"t{p.question}") for p in pairs[:5]]
    mixed = per_source([*other, *pairs], ["s", "t", "absent"], 3)
    assert [p.source for p in mixed] == ["s"] * 3 + ["t"] * 3
    assert mixed[:3] == subsample(pairs, 3) and mixed[3:] == subsample(other, 3)


def test_balance_nei_keeps_every_stance_pair_and_caps_nei():
    def pair(i, label):
        return StancePair(question=f"q{i}", evidence=f"e{i}", label=label, source="t", group=str(i))

    pairs = [pair(i, "supports") for i in range(3)] + [pair(i, "refutes") for i in range(3, 5)]
    pairs += [pair(i, "nei") for i in range(5, 15)]
    kept = balance_nei(pairs, seed=1)
    assert [p for p in kept if p.label != "nei"] == pairs[:5]
    nei = [p for p in kept if p.label == "nei"]
    assert len(nei) == 3 and nei == [p for p in pairs if p in nei]  # order kept
    assert kept == balance_nei(pairs, seed=1)
    assert balance_nei(pairs[:5]) == pairs[:5]  # no nei: nothing to cap


def test_extra_pairs_read_feedback_rows_and_refuse_bad_ones(tmp_path):
    from factseek.errors import DataError
    from factseek.stance.data import add_extra, extra_pairs

    good = tmp_path / "ok.jsonl"
    good.write_text(
        '{"question": "Did it rain?", "evidence": "It rained all day.", "label": "supports"}\n'
        '{"claim": "Tea is cold.", "evidence": "The tea was hot.", "label": "REFUTES"}\n'
        '{"question": "Is it new?", "evidence": "held out text", "label": "nei"}\n'
    )
    pairs = extra_pairs(good)
    assert [(p.label, p.form) for p in pairs] == [
        ("supports", "question"),
        ("refutes", "statement"),
        ("nei", "question"),
    ]
    held = {"train": [], "validation": [pairs[2]], "test": []}
    assert [p.label for p in add_extra(held, pairs)["train"]] == ["supports", "refutes"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "Q?", "evidence": "E", "label": "maybe"}\n')
    with pytest.raises(DataError, match=r"bad.jsonl:1.*unknown stance label"):
        extra_pairs(bad)
    bad.write_text('{"question": "Q?", "label": "nei"}\n')
    with pytest.raises(DataError, match="needs a question"):
        extra_pairs(bad)
