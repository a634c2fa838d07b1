import pytest

from factseek.errors import InputError
from factseek.labels import AVERITEC, FEVER, LABEL_SETS, POLITIFACT, PolitiFact, label_set


def test_politifact_is_an_ordinal_scale():
    assert POLITIFACT.labels == (
        "pants-fire",
        "false",
        "barely-true",
        "half-true",
        "mostly-true",
        "true",
    )
    assert POLITIFACT.ordinal
    assert PolitiFact.TRUE > PolitiFact.MOSTLY_TRUE > PolitiFact.PANTS_FIRE
    assert PolitiFact.from_name("barely-true") is PolitiFact.BARELY_TRUE
    assert [p.name_ for p in PolitiFact] == list(POLITIFACT.labels)
    assert POLITIFACT.index("half-true") == 3


@pytest.mark.parametrize(
    ("raw", "label"),
    [
        ("pants-fire", "pants-fire"),
        ("Pants on Fire!", "pants-fire"),
        ("TRUE", "true"),
        ("Mostly False", "barely-true"),
    ],
)
def test_parse_accepts_the_spellings_of_its_set(raw, label):
    assert POLITIFACT.parse(raw) == label


def test_no_silent_mapping_between_sets():
    with pytest.raises(InputError, match="not a averitec label"):
        AVERITEC.parse("true")
    with pytest.raises(InputError, match="not a politifact label"):
        POLITIFACT.parse("Supported")
    with pytest.raises(InputError):
        FEVER.parse("Refuted")
    assert AVERITEC.parse("Conflicting Evidence/Cherrypicking") == "conflicting-evidence"
    assert FEVER.parse("NOT ENOUGH INFO") == "not-enough-info"
    assert not AVERITEC.ordinal and not FEVER.ordinal


def test_registry_lookup_lists_names():
    assert label_set("fever") is FEVER
    with pytest.raises(InputError, match="politifact, averitec, fever"):
        label_set("snopes")
    assert set(LABEL_SETS) == {"politifact", "averitec", "fever"}
    with pytest.raises(InputError):
        POLITIFACT.index("mostly-false")
