"""How often a stance model's readings held on real-world evidence: pooled from `stance eval`'s
confusion matrices, recorded in a model folder, shown above the cards of every report view."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factseek.cli import app
from factseek.errors import InputError, ModelError
from factseek.report import render_html, render_markdown
from factseek.stance import default_model_path
from factseek.stance.reliability import (
    Reliability,
    from_results,
    of_model,
    record,
    words,
)
from factseek.types import Claim, Evidence, Report, StanceResult

# rows gold, columns predicted: supports, refutes, nei (as `stance eval` writes them)
RESULTS = {
    # WiCE is scored supported vs not: no refutes readings, nei holds "not supported"
    "wice/statement": {"confusion": [[6, 0, 4], [0, 0, 0], [2, 0, 5]]},
    "checkcovid/statement": {"confusion": [[5, 1, 1], [2, 3, 1], [1, 2, 4]]},
    "averitec-dev/statement": {"confusion": [[4, 1, 2], [3, 2, 5], [0, 0, 0]]},
    "checkcovid/question": {"confusion": [[9, 9, 9], [9, 9, 9], [9, 9, 9]]},  # not pooled
    "fever/statement": {"confusion": [[9, 0, 0], [0, 9, 0], [0, 0, 9]]},  # not real-world
}


def test_readings_are_pooled_per_predicted_label() -> None:
    rel = from_results(RESULTS)
    # supports: right 6 + 5 + 4 of read (6+0+2) + (5+2+1) + (4+3+0) = 8 + 8 + 7
    assert rel.counts["supports"] == (15, 23)
    # refutes: right 0 + 3 + 2 of read 0 + (1+3+2) + (1+2+0)
    assert rel.counts["refutes"] == (5, 9)
    assert rel.sources == ("wice", "checkcovid", "averitec-dev")
    assert rel.precision("supports") == pytest.approx(15 / 23)
    assert words(rel) == (
        "on real-world evidence it never trained on (WiCE, Check-COVID, AVeriTeC dev), "
        "a “supports” reading was right 65% of the time (15 of 23) "
        "and a “refutes” reading 56% (5 of 9)"
    )
    only_wice = from_results({"wice/statement": RESULTS["wice/statement"]})
    assert only_wice.counts["refutes"] == (0, 0) and "refutes" not in words(only_wice)


def test_no_real_world_side_is_a_clear_error() -> None:
    with pytest.raises(InputError, match="--sources wice,checkcovid,averitec-dev"):
        from_results({"fever/statement": RESULTS["fever/statement"]})


def test_recorded_in_a_model_folder_and_read_back(tmp_path: Path) -> None:
    shipped = json.loads((default_model_path() / "config.json").read_text())
    shipped.pop("reliability", None)
    cfg = {**shipped, "name": "mine", "thresholds": {}}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    (tmp_path / "adapter.safetensors").write_bytes(b"")
    rel = from_results(RESULTS)
    record(tmp_path, rel)
    saved = json.loads((tmp_path / "config.json").read_text())
    assert saved["name"] == "mine" and saved["thresholds"] == {}  # the rest is kept
    assert of_model(saved) == rel and of_model(cfg) is None
    other = tmp_path / "other"
    other.mkdir()
    (other / "config.json").write_text(json.dumps({"kind": "factseek-judge"}))
    with pytest.raises(ModelError, match="not a factseek stance model"):
        record(other, rel)
    with pytest.raises(InputError, match="bad stance reliability"):
        Reliability.from_dict({"counts": {"supports": [1]}, "sources": [], "split": "test"})


def _report(said: str, *, stance: bool = True) -> Report:
    card = Evidence(
        id="E1",
        url="https://ledger.example/plant",
        text="The plant cost $44.5 million.",
        start_char=0,
        end_char=29,
        question="Did the plant cost $62 million?",
        stance=StanceResult(label="refutes", probs={"supports": 0.1, "refutes": 0.7, "nei": 0.2})
        if stance
        else None,
    )
    return Report(
        claim=Claim(text="The plant cost $62 million."),
        evidence=(card,),
        config={"stance": "stance:small", "stance_reliability": said} if said else {},
    )


def test_every_report_view_says_it_above_the_cards() -> None:
    said = words(from_results(RESULTS))
    md = render_markdown(_report(said))
    cards = md.index("## Evidence cards")
    line = md.index("How far to trust a card's stance: on real-world evidence")
    assert cards < line < md.index("E1")
    html = render_html(_report(said + " <b>"))
    assert "id='stance-reliability'" in html and "&lt;b&gt;" in html and "<b>" not in html
    # a model that measured none, or cards without a stance: nothing said
    assert "How far to trust" not in render_markdown(_report(""))
    assert "How far to trust" not in render_markdown(_report(said, stance=False))


def test_the_shipped_model_carries_its_real_world_reliability() -> None:
    cfg = json.loads((default_model_path() / "config.json").read_text())
    rel = of_model(cfg)
    assert rel is not None and rel.sources == ("wice", "checkcovid", "averitec-dev")
    for label in ("supports", "refutes"):
        right, read = rel.counts[label]
        assert 0 < right <= read


def test_eval_writes_only_into_the_model_it_scored(tmp_path: Path) -> None:
    r = CliRunner().invoke(
        app,
        [
            "stance",
            "eval",
            "default",
            "--data",
            str(tmp_path),
            "--reliability-to",
            str(tmp_path),
        ],
    )
    assert r.exit_code == 2, r.output
    assert "--reliability-to must be the folder of the model evaluated" in r.output
