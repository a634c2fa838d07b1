"""Edit actions pinned on hand-written sentences (spaCy small model + bundled WordNet 3.0)."""

from __future__ import annotations

import numpy as np
import pytest

from factseek.rewrite.environment import wordnet
from factseek.rewrite.environment.actions import (
    KINDS,
    Action,
    ActionKind,
    InvalidAction,
    action_from_index,
    action_index,
    action_mask,
    apply,
    expand,
    render,
    tag,
    tag_many,
    valid_actions,
)

R, S, A, P = ActionKind.REMOVE, ActionKind.SWAP, ActionKind.ADD, ActionKind.PRESENT


@pytest.fixture(autouse=True, scope="module")
def _private_cache(tmp_path_factory: pytest.TempPathFactory):
    mp = pytest.MonkeyPatch()
    mp.setenv("FACTSEEK_CACHE", str(tmp_path_factory.mktemp("cache")))
    wordnet.load.cache_clear()
    yield
    mp.undo()


def kinds_at(tq, i: int) -> set[ActionKind]:
    return {a.kind for a in valid_actions(tq) if a.position == i}


def test_permissions_follow_part_of_speech():
    tq = tag("The mayor signed a new law quickly")
    words = [t.text for t in tq.tokens]
    assert words == ["The", "mayor", "signed", "a", "new", "law", "quickly"]
    assert kinds_at(tq, 0) == {R}  # stop word
    assert kinds_at(tq, 1) == {R, S, A}  # noun
    assert kinds_at(tq, 2) == {R, S, A, P}  # verb
    assert kinds_at(tq, 4) == {R, S, A}  # adjective
    assert kinds_at(tq, 6) == {R, S, A}  # adverb


def test_proper_nouns_numbers_punctuation_and_auxiliaries_are_remove_only():
    tq = tag("Obama was born in Kenya in 1961.")
    for i, tok in enumerate(tq.tokens):
        if tok.text in {"Obama", "was", "in", "Kenya", "1961", "."}:
            assert kinds_at(tq, i) == {R}, tok.text
    born = [t.text for t in tq.tokens].index("born")
    assert P not in kinds_at(tq, born)  # has an auxiliary


def test_each_action_on_a_sentence():
    tq = tag("The mayor signed a new law banning plastic bags")
    assert render(tq, Action(kind=R, position=1)) == "The signed a new law banning plastic bags"
    assert (
        render(tq, Action(kind=P, position=2)) == "The mayor signs a new law banning plastic bags"
    )
    assert (
        render(tq, Action(kind=S, position=4))
        == "The mayor signed a fresh law banning plastic bags"
    )
    assert render(tq, Action(kind=A, position=4)) == (
        "The mayor signed a new fresh law banning plastic bags"
    )
    # the synonym is inflected like the token (plural noun, past-tense verb)
    assert tq.tokens[8].synonym is not None and tq.tokens[8].synonym.endswith("s")
    assert tq.tokens[2].synonym == "subscribed"


def test_present_uses_the_subject_number():
    tq = tag("Doctors warned that vaccines caused autism")
    i = [t.text for t in tq.tokens].index("warned")
    j = [t.text for t in tq.tokens].index("caused")
    assert tq.tokens[i].present == "warn"
    assert tq.tokens[j].present == "cause"
    tq = tag("The senator voted against it")
    assert tq.tokens[2].present == "votes"


def test_remove_keeps_spacing_and_single_token_cannot_be_removed():
    tq = tag("Vaccines cause autism, doctors say")
    comma = [t.text for t in tq.tokens].index(",")
    assert render(tq, Action(kind=R, position=comma)) == "Vaccines cause autism doctors say"
    assert valid_actions(tag("autism")) == [a for a in valid_actions(tag("autism")) if a.kind != R]


def test_whitespace_is_normalised():
    assert tag("  Global\n warming   stopped ").text == "Global warming stopped"


def test_deterministic_and_cached():
    a = [render(tq, x) for tq in [tag("Sea levels rose 8 inches")] for x in valid_actions(tq)]
    b = [render(tq, x) for tq in [tag("Sea levels rose 8 inches")] for x in valid_actions(tq)]
    assert a == b
    assert tag_many(["x y", "x y"])[0] is tag("x y")


def test_invalid_actions_raise_only_when_applied():
    tq = tag("The mayor signed")
    bad = Action(kind=P, position=0)
    assert bad not in valid_actions(tq)
    assert not action_mask(tq, 4)[KINDS.index(P), 0]
    with pytest.raises(InvalidAction):
        render(tq, bad)
    with pytest.raises(ValueError):
        apply(tq, Action(kind=R, position=99))


def test_mask_matches_valid_actions_and_flat_ids():
    tq = tag("Greenland ice sheet is melting quickly and sea levels rose")
    mask = action_mask(tq, 32)
    assert mask.shape == (len(KINDS), 32)
    assert mask.sum() == len(valid_actions(tq))
    flat = np.flatnonzero(mask.ravel())
    assert [action_from_index(i, 32) for i in flat] == sorted(
        valid_actions(tq), key=lambda a: action_index(a, 32)
    )
    assert action_mask(tq, 3).sum() == sum(a.position < 3 for a in valid_actions(tq))


def test_action_forms():
    a = Action(kind=S, position=3)
    assert str(a) == "swap@3"
    assert Action.parse("swap@3") == a
    assert Action.from_json(a.to_json()) == a
    assert a.to_json() == ["swap", 3]


def test_apply_retags_and_expand_dedups():
    tq = tag("Global warming stopped in 1998")
    new = apply(tq, Action(kind=P, position=2))
    assert new.text == "Global warming stops in 1998"
    texts = [t for _, t in expand(tq)]
    assert len(texts) == len(set(texts)) and tq.text not in texts


def test_crlf_files_are_normalised(tmp_path, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    for name in wordnet.FILES:
        (src / name).write_bytes(b"line one\r\nline two\r\n")
    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path / "cache"))
    out = wordnet.normalised_dir(src)
    assert (out / "data.noun").read_bytes() == b"line one\nline two\n"
    assert wordnet.normalised_dir(src) == out  # reused, not rebuilt
