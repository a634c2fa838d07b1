"""`factseek index` through typer's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from factseek.cli import app

runner = CliRunner()

RECORDS = [
    {
        "url": "https://a.example/1",
        "title": "Bridge",
        "text": "The bridge cost three million.",
        "published": "2020-01-02",
    },
    {
        "url": "https://www.snopes.com/fact-check/bridge",
        "text": "Bridge cost claim rated false.",
        "published": "2020-01-03",
    },
    {"url": "https://b.example/2", "text": "School budget rises.", "published": ""},
]


def jsonl(path: Path, records: list[dict], extra: str = "") -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + extra, encoding="utf-8")
    return path


def test_build_info_add_search(tmp_path: Path) -> None:
    store = tmp_path / "store"
    r = runner.invoke(
        app,
        [
            "index",
            "build",
            str(jsonl(tmp_path / "a.jsonl", RECORDS[:2])),
            "--store",
            str(store),
            "-q",
        ],
    )
    assert r.exit_code == 0, r.output
    assert "built 2 documents" in r.output
    r = runner.invoke(
        app,
        [
            "index",
            "add",
            str(jsonl(tmp_path / "b.jsonl", RECORDS[2:])),
            "--store",
            str(store),
            "-q",
        ],
    )
    assert r.exit_code == 0, r.output
    assert "added 1 documents" in r.output and "now holds 3" in r.output
    r = runner.invoke(app, ["index", "info", "--store", str(store), "--json"])
    info = json.loads(r.output)
    assert (info["n_docs"], info["dated"], info["undated"], info["format_version"]) == (3, 2, 1, 2)
    assert info["first_date"] == "2020-01-02" and info["n_segments"] == 2
    r = runner.invoke(app, ["index", "info", "--store", str(store)])
    assert "format_version  2" in r.output and "snopes.com (1)" in r.output
    r = runner.invoke(app, ["index", "search", "bridge cost", "--store", str(store), "--json"])
    hits = [json.loads(line) for line in r.output.splitlines()]
    assert [h["url"] for h in hits] == ["https://a.example/1"]  # the fact-check page is excluded
    r = runner.invoke(
        app, ["index", "search", "bridge cost", "--store", str(store), "--no-site-filter"]
    )
    assert r.exit_code == 0 and "snopes" in r.output
    r = runner.invoke(
        app, ["index", "search", "bridge", "--store", str(store), "--before", "2020-01-02"]
    )
    assert r.exit_code == 0 and r.output.strip() == ""


def test_malformed_line_exits_2_with_file_and_line(tmp_path: Path) -> None:
    src = jsonl(tmp_path / "m.jsonl", RECORDS, extra="{oops\n")
    r = runner.invoke(app, ["index", "build", str(src), "--store", str(tmp_path / "s"), "-q"])
    assert r.exit_code == 2
    assert "m.jsonl:4: invalid JSON" in r.output
    r = runner.invoke(
        app,
        ["index", "build", str(src), "--store", str(tmp_path / "s"), "-q", "--on-error", "skip"],
    )
    assert r.exit_code == 0, r.output
    assert (
        "built 3 documents" in r.output
        and "skipped 1 record(s)" in r.output
        and "m.jsonl:4" in r.output
    )


def test_missing_store_is_one_line_exit_1(tmp_path: Path) -> None:
    r = runner.invoke(app, ["index", "info", "--store", str(tmp_path / "none")])
    assert r.exit_code == 1
    assert r.output.startswith("error: no knowledge store") and r.output.count("\n") == 1


def test_bad_on_error_choice_is_usage_error(tmp_path: Path) -> None:
    src = jsonl(tmp_path / "a.jsonl", RECORDS)
    r = runner.invoke(
        app, ["index", "build", str(src), "--store", str(tmp_path / "s"), "--on-error", "ignore"]
    )
    assert r.exit_code == 2


def test_build_twice_needs_force(tmp_path: Path) -> None:
    src = jsonl(tmp_path / "a.jsonl", RECORDS)
    args = ["index", "build", str(src), "--store", str(tmp_path / "s"), "-q"]
    assert runner.invoke(app, args).exit_code == 0
    r = runner.invoke(app, args)
    assert r.exit_code == 1 and "--force" in r.output
    assert runner.invoke(app, [*args, "--force"]).exit_code == 0


def test_dense_build_uses_the_default_encoder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from factseek.ml import encode

    fake = encode.FunctionEncoder(
        lambda texts: np.ones((len(texts), 4)) + np.arange(4), dim=4, name="fake"
    )
    monkeypatch.setattr(encode, "default_encoder", lambda: fake)
    monkeypatch.setattr(encode, "encoder_from_name", lambda name: fake)
    src = jsonl(tmp_path / "a.jsonl", RECORDS[:2])
    r = runner.invoke(app, ["index", "build", str(src), "--store", str(tmp_path / "s"), "--dense"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(
        app,
        [
            "index",
            "add",
            str(jsonl(tmp_path / "b.jsonl", RECORDS[2:])),
            "--store",
            str(tmp_path / "s"),
        ],
    )
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["index", "info", "--store", str(tmp_path / "s")])
    assert "fake (4-d)" in r.output
