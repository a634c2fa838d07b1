"""experiments/probe_judge_reads.py: its data checks (the probe itself needs AVeriTeC and a run)."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "experiments" / "probe_judge_reads.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120
    )


def test_missing_data_is_skipped_not_an_error(tmp_path):
    r = _run("--data", str(tmp_path), "--reports", str(tmp_path / "run"))
    assert r.returncode == 0 and r.stdout.startswith("skipped: needs")


def test_an_unknown_variant_is_bad_usage(tmp_path):
    r = _run("--data", str(tmp_path), "--reports", str(tmp_path), "--variants", "passages,nope")
    assert r.returncode == 2 and "unknown variants ['nope']" in r.stderr
