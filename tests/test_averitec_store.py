"""experiments/averitec_store.py on a hand-made two-claim AVeriTeC file: records and counts."""

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "experiments" / "averitec_store.py"


def test_answers_become_pages_and_unsourced_ones_are_counted(tmp_path):
    claims = [
        {
            "claim": "A",
            "label": "Refuted",
            "questions": [
                {
                    "question": "Q1",
                    "answers": [
                        {"answer": "No, it was 18 percent.", "source_url": "https://a.example/1"},
                        {"answer": "No answer could be found.", "source_url": ""},
                    ],
                }
            ],
        },
        {
            "claim": "B",
            "label": "Not Enough Evidence",
            "questions": [
                {"question": "Q2", "answers": [{"answer": "Unclear.", "source_url": "ftp://x"}]}
            ],
        },
    ]
    (tmp_path / "averitec").mkdir()
    (tmp_path / "averitec" / "dev.json").write_text(json.dumps(claims), encoding="utf-8")
    out = tmp_path / "corpus.jsonl"
    r = subprocess.run(
        [sys.executable, str(SCRIPT), "--data", str(tmp_path), "--split", "dev", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert records == [
        {"url": "https://a.example/1", "title": "", "text": "No, it was 18 percent."}
    ]
    counts = json.loads(r.stderr.strip().splitlines()[-1])
    assert (counts["answers"], counts["no_url"], counts["documents"]) == (3, 2, 1)
    assert counts["by_label"] == {
        "Refuted": {"answers": 2, "no_url": 1, "none": 1},
        "Not Enough Evidence": {"answers": 1, "no_url": 1, "none": 0},
    }
