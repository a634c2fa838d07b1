"""FEVER train end to end on a made-up fixture of its shape: the loader, a BFS killed with
``kill -9`` and resumed, a tiny decision transformer trained on it, and the eval table on the
FEVER dev test side (the same corpus), with the real spaCy/WordNet edits."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fever_train_fixture as fixture
from factseek.cli import app
from factseek.datasets.retrieval import load_retrieval
from factseek.rewrite.splits import select_split
from factseek.rewrite.transformer import trajectories as tj

pytestmark = pytest.mark.slow


def _journal_lines(out: Path) -> list[dict]:
    path = out / "journal"
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x.endswith("}")]


def test_fever_train_bfs_killed_and_resumed_then_dt_and_eval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("spacy")
    paths = fixture.write(tmp_path / "data", n_train=160, n_dev=40)
    train_args = ["--claims", str(paths["fever_train"]), "--corpus", str(paths["fever_dev"]),
                  "--corpus", str(paths["fool_me_twice"]), "--format", "fever-dev"]  # fmt: skip
    out = tmp_path / "bfs"
    bfs = [sys.executable, "-m", "factseek", "rewrite", "bfs", *train_args, "--depth", "3",
           "--negatives", "2", "--out", str(out), "--no-progress"]  # fmt: skip
    env = {**os.environ, "FACTSEEK_CACHE": str(tmp_path / "cache")}

    # kill -9 once some claims are done, then run the same command again
    proc = subprocess.Popen(bfs, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while len(_journal_lines(out)) < 5 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = _journal_lines(out)
    assert proc.returncode == -signal.SIGKILL, "the BFS finished before it could be killed"
    assert 5 <= len(before) < 160
    done = subprocess.run(bfs, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    journal = tj.read_journal(out)
    assert summary["claims"] == len(journal) == 160  # NEI and a claim without evidence dropped
    after = {e["claim_id"]: e for e in _journal_lines(out)}
    assert len(after) == len(_journal_lines(out))  # no claim done twice
    assert all(after[e["claim_id"]] == e for e in before)  # the killed run's work was kept
    records = [r.claim_id for r in tj.read(out)]
    assert len(set(records)) == len(records)
    assert set(records) == {c for c, e in journal.items() if e["status"] == "improvable"}

    # a tiny decision transformer on it (a letter-count encoder stands in for MiniLM)
    import test_rewrite_train as synth
    from factseek.rewrite.transformer import infer, train

    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path / "cache"))
    for module in (infer, train):
        monkeypatch.setattr(module, "encoder_from_name", lambda name, device=None: synth.ENCODER)
    model = tmp_path / "dt"
    runner = CliRunner()
    res = runner.invoke(app, ["rewrite", "train", "--trajectories", str(out), "--out", str(model),
                              "--epochs", "2", "--batch-size", "8", "--stop-claims",
                              str(paths["fever_train"]), "--stop-format", "fever-dev"])  # fmt: skip
    assert res.exit_code == 0, res.output
    meta = json.loads((model / "config.json").read_text())
    assert meta["bfs"]["split"] == "all" and meta["bfs"]["claims"] == tj.read_config(out)["claims"]

    # the eval table on the FEVER dev test side, over the same corpus
    dev_args = ["--claims", str(paths["fever_dev"]), "--corpus", str(paths["fever_train"]),
                "--corpus", str(paths["fool_me_twice"]), "--format", "fever-dev"]  # fmt: skip
    res = runner.invoke(app, ["rewrite", "eval", "--model", str(model), *dev_args, "--split",
                              "test", "--out", str(tmp_path / "eval"), "--target-return", "0.2"])  # fmt: skip
    assert res.exit_code == 0, res.output
    dev = load_retrieval(paths["fever_dev"], [paths["fever_train"], paths["fool_me_twice"]], "fever-dev")  # fmt: skip
    n_test = len(select_split(dev.claims, "test"))
    row = next(line for line in res.output.splitlines() if line.startswith("| dt "))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[6] == str(n_test)
    from factseek.metrics.retrieval import average_precision
    from factseek.rewrite.environment.env import BM25Retriever

    test = select_split(dev.claims, "test")
    ranked = BM25Retriever.from_docs(dev.pairs()).rank([c.text for c in test], 50)
    own = sum(average_precision(r, set(c.relevant), 50) for r, c in zip(ranked, test, strict=True))
    assert float(cells[7]) == pytest.approx(own / len(test), abs=5e-4)  # the claim's own mAP@50
    lines = (tmp_path / "eval" / "results.jsonl").read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["n_claims"] == n_test
    # on a side of its own training claims the model is refused
    res = runner.invoke(app, ["rewrite", "eval", "--model", str(model), *train_args, "--split",
                              "test", "--out", str(tmp_path / "eval2")])  # fmt: skip
    assert res.exit_code == 2 and "cannot be evaluated" in res.output
