"""The cascade reader (issue 48, item 1): a fast screen clears the pairs that take no side, the
strong reader reads the rest; cleared pairs never become cards, quoted sentences and sentences
giving the question's figure are always read strongly, without ``cascade`` mpnet reads
everything, and the report counts what each model read. Made-up pages of an invented town; stand-in readers."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import pytest

from factseek.decompose import claim_question
from factseek.errors import ConfigError
from factseek.pipeline import CheckConfig, Parts, run
from factseek.report import render
from factseek.search.base import MemorySearch
from factseek.stance import FunctionStance
from factseek.stance.cascade import CascadeStance, read_pairs
from factseek.summarize.evidence import Candidate, select_cards
from factseek.summarize.extractive import ExtractiveSummarizer
from factseek.types import Claim, Document, Question, StanceResult, to_dict


class Logged:
    """A stand-in reader that keeps every pair it was given."""

    def __init__(self, fn: Any, name: str) -> None:
        self.inner = FunctionStance(fn, name=name)
        self.name = name
        self.seen: list[tuple[str, str]] = []

    def classify(self, pairs: Sequence[tuple[str, str]]) -> list[StanceResult]:
        self.seen.extend(pairs)
        return self.inner.classify(pairs)


def nei(p: float) -> dict[str, float]:
    rest = (1.0 - p) / 2
    return {"supports": rest, "refutes": rest, "nei": p}


# ----------------------------------------------------------------------------- the rule


def test_the_screen_clears_sure_nei_pairs_and_the_strong_model_reads_the_rest() -> None:
    screen = Logged(lambda q, e: nei(0.97) if "weather" in e else nei(0.2), "fast")
    strong = Logged(lambda q, e: "supports", "strong")
    pairs = [("Q?", "The weather was mild."), ("Q?", "The council voted yes.")]
    reads = CascadeStance(screen, strong, threshold=0.9).read(pairs)
    assert strong.seen == [pairs[1]]  # the cleared pair was never read strongly
    assert screen.seen == pairs
    first, second = reads.results
    assert first.label == "nei" and first.screened and first.model == "screened:fast"
    assert not first.decides
    assert second.label == "supports" and not second.screened
    assert reads.counts() == {"fast": 2, "strong": 1, "skipped": 1}


def test_the_threshold_edge_p_nei_at_the_threshold_is_skipped_just_below_is_read() -> None:
    probs = {"at": nei(0.9), "below": nei(0.8999), "sure-but-not-nei": None}

    def fast(q: str, e: str) -> Any:
        return probs[e] if probs[e] is not None else "supports"

    strong = Logged(lambda q, e: "refutes", "strong")
    pairs = [("Q?", "at"), ("Q?", "below"), ("Q?", "sure-but-not-nei")]
    reads = CascadeStance(FunctionStance(fast, name="fast"), strong, threshold=0.9).read(pairs)
    assert strong.seen == [pairs[1], pairs[2]]
    assert [r.screened for r in reads.results] == [True, False, False]
    assert reads.skipped == 1


def test_always_flagged_pairs_are_read_strongly_whatever_the_screen_says() -> None:
    strong = Logged(lambda q, e: "supports", "strong")
    cascade = CascadeStance(FunctionStance(lambda q, e: nei(0.99), name="fast"), strong)
    pairs = [("Q?", "a"), ("Q?", "b")]
    reads = cascade.read(pairs, [True, False])
    assert strong.seen == [pairs[0]]
    assert reads.results[0].label == "supports" and reads.results[1].screened
    with pytest.raises(ValueError):
        cascade.read(pairs, [True])


def test_a_plain_model_reads_every_pair_and_a_bad_threshold_is_refused() -> None:
    plain = Logged(lambda q, e: "nei", "plain")
    reads = read_pairs(plain, [("Q?", "a"), ("Q?", "b")], [False, False])
    assert len(plain.seen) == 2 and reads.counts() == {"plain": 2, "skipped": 0}
    with pytest.raises(ConfigError):
        CascadeStance(plain, plain, threshold=0.0)


def test_a_screened_reading_is_never_a_card_not_even_by_figures_compared() -> None:
    doc = Document(url="https://a.example/x", title="x", text="Water bills rose 40 percent.")
    c = Candidate(
        question="Did water bills rise 40 percent?", question_index=0, doc=0, start=0,
        end=len(doc.text), text=doc.text, relevance=0.9,
    )  # fmt: skip
    claim = Claim(text=c.question)
    read = StanceResult(label="nei", probs=nei(0.6), model="strong")
    assert select_cards(claim, [c], [read], [doc]).cards  # the figure makes it a card
    skipped = StanceResult(label="nei", probs=nei(0.95), model="screened:fast")
    chosen = select_cards(claim, [c], [skipped], [doc])
    assert chosen.cards == () and chosen.readings[0] == skipped


# ----------------------------------------------------------------------------- in a check

CLAIM = Claim(text="The Brennock ferry service restarted in May 2026.", date=dt.date(2026, 9, 1))


def page(site: str, title: str, text: str) -> Document:
    return Document(
        url=f"https://www.{site}.example/{title.lower().replace(' ', '-')}",
        title=title,
        published=dt.date(2026, 6, 2),
        domain=f"{site}.example",
        text=text,
    )


DOCS = [
    page(
        "brennock-tide",
        "Ferry back",
        "The Brennock ferry service restarted in May 2026 after two years of repairs to the "
        "pier. Harbour master Ilse Draxl said the boats run every hour from seven until ten. "
        "The Brennock ferry service sells tickets at the pier kiosk and on board. The Brennock "
        "ferry service café serves fish soup in winter and ices in summer. Gulls nest on the old "
        "Brennock ferry service shed each spring, to the delight of visiting children. A new "
        "Brennock ferry service timetable is printed on the back of the harbour newsletter.",
    ),
    page(
        "north-coast-post",
        "Harbour notes",
        "Fishing boats crowd the Brennock harbour in the ferry off-season every single year. "
        "The ferry service of Brennock once ran to three islands before the old pier closed. "
        "Brennock residents voted on the harbour budget in March 2026 after a long debate. The "
        "harbour office keeps a log of every ferry service sailing from Brennock since 1950. "
        "Local painters sell pictures of the Brennock ferry service boats at the Sunday market.",
    ),
]


class ClaimOnly:
    name = "claim-only"

    def decompose(self, claim: Claim) -> list[Question]:
        return [claim_question(claim)]


def strong_reader(q: str, e: str) -> dict[str, float]:
    """Takes a side on everything, so a cleared pair that became a card would show."""
    return {"supports": 0.8, "refutes": 0.1, "nei": 0.1}


def screen_reader(q: str, e: str) -> dict[str, float]:
    """Clears every pair but the one that states the restart."""
    return nei(0.3) if "restarted" in e else nei(0.97)


def check(stance: Any) -> Any:
    parts = Parts(
        search=MemorySearch(DOCS),
        decomposer=ClaimOnly(),
        summarizer=ExtractiveSummarizer(),
        stance=stance,
    )
    return run(CLAIM, parts, CheckConfig())


def test_in_a_check_cleared_pairs_are_not_read_strongly_and_are_no_cards() -> None:
    strong = Logged(strong_reader, "strong")
    screen = Logged(screen_reader, "fast")
    report = check(CascadeStance(screen, strong))
    quoted = {x.text for s in report.summaries for x in s.sentences}
    assert quoted  # the summaries quote sentences: the screen clears them, they are read
    n = len(screen.seen)
    skipped = [p for p in screen.seen if p not in strong.seen]
    assert skipped and n > len(strong.seen)
    assert report.evidence
    for e in report.evidence:
        assert not e.stance.screened and (e.question, e.text) in strong.seen
    assert not any(text in quoted for _, text in skipped)  # quoted: always read strongly
    for q, text in strong.seen:
        cleared = screen_reader(q, text)["nei"] >= 0.9
        assert not cleared or any(text in x or x in text for x in quoted), text
    assert report.usage["stance_pairs"] == {"fast": n, "strong": n - len(skipped),
                                            "skipped": len(skipped)}  # fmt: skip
    assert to_dict(report)["usage"]["stance_pairs"]["skipped"] == len(skipped)
    shown = f"stance pairs read: fast {n}, strong {n - len(skipped)} ({len(skipped)} skipped"
    assert shown in render(report, "md") and shown in render(report, "html")


def test_without_the_cascade_the_strong_model_reads_every_pair() -> None:
    strong = Logged(strong_reader, "strong")
    report = check(strong)
    assert report.usage["stance_pairs"] == {"strong": len(strong.seen), "skipped": 0}
    assert "skipped by the cascade" not in render(report, "md")


def test_a_sentence_that_gives_the_questions_figure_is_always_read_strongly() -> None:
    claim = Claim(text="Brennock ferry fares rose 30 percent in 2026.", date=dt.date(2026, 9, 1))
    doc = page(
        "brennock-tide",
        "Fares",
        "Brennock ferry fares went up by 30 percent this year, the harbour office said. The "
        "Brennock ferry fares board meets monthly at the harbour office to discuss fares. "
        "Brennock ferry riders praised the new fares board for its openness in 2026.",
    )
    strong = Logged(strong_reader, "strong")
    parts = Parts(
        search=MemorySearch([doc]),
        decomposer=ClaimOnly(),
        summarizer=ExtractiveSummarizer(),
        stance=CascadeStance(FunctionStance(lambda q, e: nei(0.99), name="fast"), strong),
    )
    run(claim, parts, CheckConfig())
    assert any("30 percent" in text for _, text in strong.seen)


# ----------------------------------------------------------------------------- the default


def test_the_mpnet_reader_is_a_cascade_only_when_asked(monkeypatch) -> None:
    import factseek.stance as stance_mod
    from factseek.api import CheckOptions, _evidence_parts

    loaded: list[str] = []

    def fake_load(name: Any, **kw: Any) -> Any:
        loaded.append(str(name))
        return FunctionStance(lambda q, e: "nei", name=f"stance:{name}")

    monkeypatch.setattr(stance_mod, "load_stance", fake_load)
    names: dict[str, str] = {}
    stance, _, _ = _evidence_parts(CheckOptions(stance="mpnet", cascade=True), None, names, [])
    assert isinstance(stance, CascadeStance) and loaded == ["mpnet", "small"]
    assert stance.name == "stance:mpnet" and "stance:small screens" in names["stance_cascade"]
    for opts in (CheckOptions(stance="mpnet"), CheckOptions(stance="small", cascade=True)):
        stance, _, _ = _evidence_parts(opts, None, {}, [])
        assert not isinstance(stance, CascadeStance)


@pytest.mark.parametrize("command", ["check", "demo"])
def test_cascade_reaches_the_check_from_the_cli(monkeypatch, command) -> None:
    from typer.testing import CliRunner

    import factseek.api as api
    import factseek.demo as demo
    from factseek.cli import app

    seen: list[bool] = []

    def fake_check(claim: Any, **kw: Any) -> Any:
        seen.append(kw["cascade"])
        raise api.InputError("stop here")

    monkeypatch.setattr(api, "check", fake_check)
    monkeypatch.setattr(demo, "demo_store", lambda *a, **k: "store")
    args = ["check", "A claim.", "--store", "x", "-q"] if command == "check" else ["demo", "-q"]
    runner = CliRunner()
    for flag, want in (([], False), (["--cascade"], True)):
        r = runner.invoke(app, [*args, *flag])
        assert r.exit_code != 0 and seen[-1] is want


def test_eval_pipeline_and_serve_take_the_cascade_switch() -> None:
    from typer.testing import CliRunner

    from factseek.cli import app

    runner = CliRunner()
    for command in (["eval", "pipeline"], ["serve"]):
        assert "--cascade" in runner.invoke(app, [*command, "--help"]).output
