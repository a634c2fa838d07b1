"""experiments/probe_crossencoder_judge.py: its data checks and inputs (the probe itself needs AVeriTeC
and two runs, and trains for a quarter of an hour)."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "experiments" / "probe_crossencoder_judge.py"


def test_missing_data_is_skipped_not_an_error(tmp_path):
    args = ["--data", str(tmp_path), "--train-run", str(tmp_path), "--dev-run", str(tmp_path)]
    r = subprocess.run(
        [sys.executable, str(SCRIPT), *args, "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0 and r.stdout.startswith("skipped: needs"), r.stderr
    assert not (tmp_path / "out").exists()


def test_inputs_are_each_claim_alone_and_with_its_gold_answers(tmp_path):
    spec = importlib.util.spec_from_file_location("probe_xjudge", SCRIPT)
    probe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(probe)
    claims = [
        {
            "claim": "The budget grew 40 percent.",
            "label": "Refuted",
            "claim_date": "01-05-2024",
            "questions": [
                {"question": "By how much?", "answers": [{"answer": "About 18 percent."}]}
            ],
        },
        {"claim": "Buses run on hydrogen.", "label": "Not Enough Evidence", "questions": []},
    ]
    data = tmp_path / "dev.json"
    data.write_text(json.dumps(claims), encoding="utf-8")
    rows, labels = probe.inputs(data, tmp_path / "no-run")  # a run with no reports: no retrieved
    assert [(r["claim"], r["kind"], r["label"]) for r in rows] == [
        ("The budget grew 40 percent.", "claim-only", "refuted"),
        ("The budget grew 40 percent.", "gold", "refuted"),
        ("Buses run on hydrogen.", "claim-only", "not-enough-evidence"),
    ]
    assert rows[0]["texts"] == [] and any("18 percent" in t for t in rows[1]["texts"])
    assert rows[0]["group"] == rows[1]["group"] != rows[2]["group"]
    assert set(labels.labels) >= {"refuted", "not-enough-evidence"}
