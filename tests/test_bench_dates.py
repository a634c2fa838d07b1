"""The date benchmark end to end on a small generated set (slow: it runs htmldate and trafilatura
on every page): the generator's contract, the runner's output, and factseek beside its peer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_bench_dates_on_generated_pages(tmp_path: Path) -> None:
    pages = tmp_path / "pages"
    run = [sys.executable, str(ROOT / "bench" / "date_pages.py"), "--out", str(pages)]
    subprocess.run([*run, "--n", "64", "--seed", "5"], check=True, capture_output=True)
    manifest = json.loads((pages / "manifest.json").read_text(encoding="utf-8"))
    assert len(manifest) == 64 and all((pages / m["file"]).exists() for m in manifest)
    assert {"file", "class", "url", "headers", "date", "text"} <= set(manifest[0])
    out = tmp_path / "figures.json"
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_dates.py"), "--pages", str(pages),
         "--pages", str(ROOT / "tests" / "pages"), "--repeats", "1", "--json", str(out)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    fig = json.loads(out.read_text(encoding="utf-8"))
    ours, peer = fig["dates"]["all/factseek"], fig["dates"]["all/htmldate alone"]
    assert ours["exact"] > peer["exact"] and ours["early"] < peer["early"]
    assert fig["f1"]["factseek"] >= fig["f1"]["trafilatura"] - 0.005
    t = fig["temporal"]
    assert t["factseek"]["kept_after"] <= t["htmldate"]["kept_after"]
