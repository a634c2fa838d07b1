"""No tracked file may point at one machine: no development-machine tree, no data folder beside
the checkout, no home folders (the patterns are below).

Data and corpora are given as arguments or through FACTSEEK_DATA (docs/data.md). The test reads
the files git tracks (skipped outside a git checkout) and ignores binary files.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Spelled in pieces so that this file does not match itself.
WORK, SHARED, HOME, USERS, ROOT_HOME = (
    "/" + "work/",
    r"\.\./" + "shared",
    "/" + "home/",
    "/" + "Users/",
    "/" + "root/",
)
MACHINE_PATH = re.compile(
    re.escape(WORK)  # the development machines' tree
    + rf"|{SHARED}\b"  # the data folder beside the checkout on those machines
    + rf"|{HOME}[A-Za-z0-9_.-]+"  # anyone's home folder
    + rf"|{USERS}[A-Za-z0-9_.-]+"
    + rf"|{re.escape(ROOT_HOME)}"
)


def tracked_files() -> list[Path]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode("utf-8", "surrogateescape")
    return [ROOT / name for name in out.split("\0") if name]


def test_no_tracked_file_names_a_machine_path():
    offenders = []
    files = tracked_files()
    for path in files:
        if not path.is_file():  # deleted in the working tree
            continue
        raw = path.read_bytes()
        if b"\0" in raw[:8192]:
            continue  # binary (images, model weights)
        for n, line in enumerate(raw.decode("utf-8", "replace").splitlines(), 1):
            if MACHINE_PATH.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:120]}")
    assert len(files) > 50
    assert offenders == [], "machine-specific paths:\n" + "\n".join(offenders)


@pytest.mark.parametrize(
    ("line", "bad"),
    [
        (f"python {WORK}shared/bench/corpus.py", True),
        ("--data ../" + "shared/data/liar", True),
        (f"open('{HOME}alice/data.jsonl')", True),
        (f"see {USERS}bob/x", True),
        ('--data "$FACTSEEK_DATA/liar/train.tsv"', False),
        ("cache in ~/.cache/factseek", False),
        ("a shared 2-core machine", False),
    ],
)
def test_the_pattern(line, bad):
    assert bool(MACHINE_PATH.search(line)) is bad
