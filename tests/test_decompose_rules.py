"""RuleDecomposer: yes/no subquestions from a spaCy parse, pinned on made-up claims."""

from __future__ import annotations

import re

import pytest

from factseek.decompose import Decomposer
from factseek.decompose.rules import DEFAULT_RULES, RuleDecomposer, RulesConfig
from factseek.types import MAX_CLAIM_CHARS, Claim, Question

DEMO = (
    "Mayor Delia Fairhurst said the Northside water plant would cost $31 million, but it ended "
    "up costing taxpayers $62 million and water bills have risen 40 percent since it opened."
)

# (claim text, speaker, questions that must be among the output, as (kind, text))
CASES: list[tuple[str, str | None, list[tuple[str, str]]]] = [
    (
        DEMO,
        "Tom Brannigan",
        [
            (
                "attribution",
                "Did Mayor Delia Fairhurst say that the Northside water plant would cost $31 million?",
            ),
            ("predicate", "Did the Northside water plant end up costing taxpayers $62 million?"),
            (
                "predicate",
                "Have water bills risen 40 percent since the Northside water plant opened?",
            ),
            ("number", "Have water bills risen 40 percent?"),
        ],
    ),
    (
        "The governor cut school funding by 12 percent and raised taxes on the middle class.",
        None,
        [
            ("predicate", "Did the governor cut school funding by 12 percent?"),
            ("predicate", "Did the governor raise taxes on the middle class?"),
        ],
    ),
    (
        "Unemployment in Dunmore is low because everyone there has two jobs.",
        None,
        [
            ("predicate", "Is unemployment in Dunmore low because everyone there has two jobs?"),
            ("predicate", "Does everyone there have two jobs?"),
        ],
    ),
    (
        "Crime went up 20% in Port Avalon last year.",
        None,
        [
            ("predicate", "Did crime go up 20% in Port Avalon last year?"),
            ("number", "Did crime go up 20% in Port Avalon?"),
        ],
    ),
    (
        "I have created 3 million jobs since I took office.",
        "Gov. Ann Example",
        [("number", "Has Gov. Ann Example created 3 million jobs?")],
    ),
    (
        "Voted against the farm bill twice.",
        "Sen. Bob Placeholder",
        [("predicate", "Did Sen. Bob Placeholder vote against the farm bill twice?")],
    ),
    (
        "According to the county, the bridge will cost $4.2 billion.",
        None,
        [
            ("attribution", "Did the county say that the bridge will cost $4.2 billion?"),
            ("predicate", "Will the bridge cost $4.2 billion?"),
        ],
    ),
    (
        "The Kessel Bridge, which opened in May, carries 40,000 cars a day.",
        None,
        [
            ("predicate", "Did the Kessel Bridge open in May?"),
            ("predicate", "Does the Kessel Bridge carry 40,000 cars a day?"),
        ],
    ),
    (
        "There are more than 2 million uninsured children in Westmark.",
        None,
        [("predicate", "Are there more than 2 million uninsured children in Westmark?")],
    ),
    (
        "Our city doesn't have a single electric bus, and the council can't afford one.",
        None,
        [
            ("predicate", "Does our city not have a single electric bus?"),
            ("predicate", "Can the council not afford one?"),
        ],
    ),
    (
        "The mayor's office said that 300 officers were hired in 2022.",
        None,
        [
            ("attribution", "Did the mayor's office say that 300 officers were hired in 2022?"),
            ("predicate", "Were 300 officers hired in 2022?"),
            ("number", "Were 300 officers hired?"),
        ],
    ),
    (
        "Senator Ruth Calloway's tax plan doubled the child tax credit, and it cost the state "
        "$800 million.",
        None,
        [
            ("predicate", "Did Senator Ruth Calloway's tax plan double the child tax credit?"),
            ("predicate", "Did Senator Ruth Calloway's tax plan cost the state $800 million?"),
        ],
    ),
    (
        "The CEO of Burgerco got paid $21.8 million in 2017.",
        None,
        [
            ("predicate", "Did the CEO of Burgerco get paid $21.8 million in 2017?"),
            ("number", "Did the CEO of Burgerco get paid $21.8 million?"),
        ],
    ),
    (
        "Says Joe Example voted to raise taxes 12 times.",
        "Jane Doe",
        [("predicate", "Did Joe Example vote to raise taxes 12 times?")],
    ),
]

ODD = [
    "",
    "Hello",
    "12345 678",
    "?!?",
    "🔥🔥🔥 taxes are up 50% 🔥",
    "Le maire a dit que l'usine coûterait 31 millions d'euros et que les factures augmenteraient.",
    "水处理厂花费了六千二百万美元",
    "tabs\tand\x00control\x07chars said the plant cost $5 million",
    "The plant cost $1 million and " + "the bridge cost $2 million and " * 400 + "that is all.",
]

YES_NO = re.compile(
    r"^(Is|Are|Was|Were|Am|Do|Does|Did|Has|Have|Had|Can|Could|Will|Would|Shall|Should|May|"
    r"Might|Must) "
)


@pytest.fixture(scope="module")
def rules() -> RuleDecomposer:
    return RuleDecomposer()


@pytest.fixture(scope="module")
def outputs(rules: RuleDecomposer) -> list[list[Question]]:
    return rules.decompose_many([Claim(text=t, speaker=s) for t, s, _ in CASES])


def test_is_a_decomposer(rules: RuleDecomposer) -> None:
    assert isinstance(rules, Decomposer)
    assert rules.name == "rules"


@pytest.mark.parametrize("case", range(len(CASES)))
def test_key_questions_present(outputs: list[list[Question]], case: int) -> None:
    got = {(q.kind, q.text) for q in outputs[case]}
    for expected in CASES[case][2]:
        assert expected in got, f"{expected} not in {sorted(got)}"


def test_claim_first_then_yes_no_questions(outputs: list[list[Question]]) -> None:
    for (text, _, _), questions in zip(CASES, outputs, strict=True):
        first, *rest = questions
        assert first == Question(text=" ".join(text.split()), source="claim", kind="claim")
        assert rest, text
        for q in rest:
            assert q.source == "rules"
            assert q.kind in {"predicate", "number", "attribution"}
            assert q.text.endswith("?") and q.text.count("?") == 1
            assert q.text[0].isupper()
            assert YES_NO.match(q.text) or q.text.startswith("Is it true that "), q.text
            assert len(q.text.split()) <= DEFAULT_RULES.max_words


def test_no_duplicates_and_repeated_sentences_collapse(rules: RuleDecomposer) -> None:
    questions = rules.decompose(Claim(text="Taxes rose 5 percent. Taxes rose 5 percent."))
    texts = [q.text for q in questions]
    assert texts == ["Taxes rose 5 percent. Taxes rose 5 percent.", "Did taxes rise 5 percent?"]


def test_speaker_replaces_first_person_but_is_not_asked_about(rules: RuleDecomposer) -> None:
    claim = Claim(text="My opponent wants to close the Harlow Street clinic.", speaker="Jo Example")
    texts = [q.text for q in rules.decompose(claim)]
    assert "Does Jo Example's opponent want to close the Harlow Street clinic?" in texts
    assert not any(t.startswith("Did Jo Example say") for t in texts)


@pytest.mark.parametrize("quote", ["'{}'", '"{}"', "“{}”"])
def test_quotes_keep_their_owner(rules: RuleDecomposer, quote: str) -> None:
    """The speaker is never substituted into quoted text attributed to someone else (issue 11)."""
    words = quote.format("not one bus route will be cut on my watch.")
    text = f"Councilmember Dale Whitcomb promised that {words}"
    texts = [q.text for q in rules.decompose(Claim(text=text, speaker="Gwen Tallis"))]
    assert not any("Gwen Tallis" in t for t in texts), texts
    assert "Will not one bus route be cut on Councilmember Dale Whitcomb's watch?" in texts


def test_unattributed_quote_and_own_quote_belong_to_the_speaker(rules: RuleDecomposer) -> None:
    own = rules.decompose(Claim(text='"My plan cut taxes by 40 percent."', speaker="Jo Example"))
    assert "Did Jo Example's plan cut taxes by 40 percent?" in [q.text for q in own]
    said = rules.decompose(Claim(text='I said that "my plan cut taxes."', speaker="Jo Example"))
    assert "Did Jo Example's plan cut taxes?" in [q.text for q in said]


@pytest.mark.parametrize(
    "text", ["It opened in 2019.", "Let's move the election to two months later."]
)
def test_no_question_without_a_searchable_subject(rules: RuleDecomposer, text: str) -> None:
    assert [q.text for q in rules.decompose(Claim(text=text, speaker="Jo Example"))] == [text]


def test_reported_forecast_is_asked_only_as_attribution(outputs: list[list[Question]]) -> None:
    assert not any(q.text.startswith("Would the Northside") for q in outputs[0])


@pytest.mark.parametrize("text", ODD)
def test_odd_input_does_not_crash(rules: RuleDecomposer, text: str) -> None:
    questions = rules.decompose(Claim(text=text))
    assert len(questions) <= DEFAULT_RULES.max_questions
    if text:
        assert questions[0].kind == "claim"
    for q in questions[1:]:
        assert q.text.endswith("?") and q.text[0].isupper()
        assert len(q.text.split()) <= DEFAULT_RULES.max_words
        assert "🔥" not in q.text and "\x00" not in q.text


def test_non_english_gives_only_the_claim(rules: RuleDecomposer) -> None:
    for text in ODD[5:7]:
        assert [q.kind for q in rules.decompose(Claim(text=text))] == ["claim"]


def test_long_claim_is_bounded(rules: RuleDecomposer) -> None:
    questions = rules.decompose(Claim(text=ODD[-1]))
    assert len(ODD[-1]) > MAX_CLAIM_CHARS
    assert 1 < len(questions) <= DEFAULT_RULES.max_questions


def test_config_limits(outputs: list[list[Question]]) -> None:
    small = RuleDecomposer(RulesConfig(max_questions=2, max_words=8))
    questions = small.decompose(Claim(text=DEMO))
    assert len(questions) == 2
    assert len(questions[1].text.split()) <= 8


def test_deterministic_and_batch_equals_single(
    rules: RuleDecomposer, outputs: list[list[Question]]
) -> None:
    for (text, speaker, _), batch in zip(CASES, outputs, strict=True):
        assert rules.decompose(Claim(text=text, speaker=speaker)) == batch


def test_spacy_is_loaded_once(rules: RuleDecomposer) -> None:
    assert RuleDecomposer().nlp is rules.nlp
