"""experiments/prepare_fever_dev.py: the official FEVER release -> the fever_dev/ layout, on a fixture."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from factseek.datasets.fever import load_fever_dev

SCRIPT = Path(__file__).resolve().parents[1] / "experiments" / "prepare_fever_dev.py"


def load_script():
    spec = importlib.util.spec_from_file_location("prepare_fever_dev", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_official_files_become_the_fever_dev_layout(tmp_path):
    claims = jsonl(
        tmp_path / "shared_task_dev.jsonl",
        [
            {
                "id": 1,
                "label": "SUPPORTS",
                "claim": "Mars is a planet.",
                "evidence": [
                    [[10, 20, "Mars", 0]],
                    [[11, 21, "Mars", 0], [11, 22, "Planet", 2]],  # a two-sentence set
                    [[12, 23, "Mars", 0]],  # the same set again
                ],
            },
            {
                "id": 2,
                "label": "NOT ENOUGH INFO",
                "claim": "Mars smells.",
                "evidence": [[[1, None, None, None]]],
            },
            {
                "id": 3,
                "label": "REFUTES",
                "claim": "Mars is a moon.",
                "evidence": [[[13, 24, "Mars", 0]], [[14, 25, "Gone", 1]]],
            },
            {
                "id": 4,
                "label": "REFUTES",
                "claim": "Pluto is big.",
                "evidence": [[[15, 26, "Gone", 0]]],
            },
        ],
    )
    wiki = tmp_path / "wiki-pages"
    wiki.mkdir()
    jsonl(
        wiki / "wiki-001.jsonl",
        [
            {
                "id": "Mars",
                "text": "",
                "lines": "0\tMars is the fourth planet .\tSun\n1\tIt is red .",
            }
        ],
    )
    jsonl(
        wiki / "wiki-002.jsonl",
        [{"id": "Planet", "text": "", "lines": "0\tA body .\n1\t\n2\tPlanets orbit stars ."}],
    )
    counts = load_script().prepare(claims, wiki, tmp_path / "fever_dev")
    assert counts == {
        "claims in": 4,
        "not enough info": 1,
        "evidence sets missing text": 2,  # claim 3's "Gone" set and claim 4's
        "claims without evidence text": 1,  # claim 4
        "claims out": 2,
        "evidence texts": 2,
    }
    data = load_fever_dev(tmp_path / "fever_dev")
    assert [(c.id, c.label) for c in data.claims] == [
        ("fever-dev-1", "SUPPORTS"),
        ("fever-dev-3", "REFUTES"),
    ]
    lines = [
        json.loads(x) for x in (tmp_path / "fever_dev" / "evidence.jsonl").read_text().splitlines()
    ]
    assert [x["text"] for x in lines] == [
        "Mars is the fourth planet .",
        "Mars is the fourth planet . Planets orbit stars .",
    ]
    assert data.claims[0].evidence == tuple(x["id"] for x in lines)
    assert data.claims[1].evidence == (lines[0]["id"],)  # shared evidence keeps one id
    assert dict(data.evidence) == {x["id"]: x["text"] for x in lines}
