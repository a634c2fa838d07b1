import json

import pytest

from factseek.datasets.claims import LabeledClaim
from factseek.errors import DataError, InputError
from factseek.judge.inputs import build_examples, load_report_summaries, summaries_segment
from factseek.types import Claim, Report, Summary, to_dict, to_json


def _summary(text, relevant=True):
    return Summary(url="http://x", text=text, relevant=relevant, method="extractive")


def _row(text, id_=None, justification=""):
    return LabeledClaim(
        claim=Claim(text=text, speaker="Jane Doe", venue="a tweet", id=id_),
        label="true",
        justification=justification,
    )


def test_summaries_segment_keeps_relevant_ones_in_order():
    s = [_summary("First  one."), _summary("Not relevant.", relevant=False), _summary("Second.")]
    assert summaries_segment(s) == "First one. Second."


def test_reports_match_by_id_then_text(tmp_path):
    (tmp_path / "a.json").write_text(
        to_json(Report(claim=Claim(text="Taxes doubled.", id="7"), summaries=(_summary("by id"),)))
    )
    lines = [to_dict(Report(claim=Claim(text="“Crime FELL”"), summaries=(_summary("by text"),)))]
    (tmp_path / "b.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    idx = load_report_summaries([tmp_path])
    rows = [_row("Other text", "7"), _row("crime fell"), _row("Unknown claim", "9")]
    examples, missing = build_examples(rows, "summaries", idx)
    assert [e.second for e in examples] == ["by id", "by text", ""]
    assert missing == 1
    assert examples[0].first == "Jane Doe a tweet Other text"


def test_modes_and_errors(tmp_path):
    ex, missing = build_examples(
        [_row("A.", justification="Because."), _row("B.")], "justification"
    )
    assert [e.second for e in ex] == ["Because.", ""] and missing == 1
    ex, _ = build_examples([_row("A.", justification="Because.")], "claim")
    assert ex[0].second == ""
    with pytest.raises(InputError, match="needs factseek reports"):
        build_examples([_row("A.")], "summaries")
    with pytest.raises(InputError, match="unknown judge mode"):
        build_examples([_row("A.")], "vibes")  # type: ignore[arg-type]
    (tmp_path / "bad.jsonl").write_text('{"claim": {"text": "x"}}\n{"nope": 1}\n')
    with pytest.raises(DataError, match=r"bad\.jsonl:2: not a factseek report"):
        load_report_summaries([tmp_path / "bad.jsonl"])
    with pytest.raises(InputError, match="not found"):
        load_report_summaries([tmp_path / "missing"])
