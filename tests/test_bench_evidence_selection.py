"""bench/bench_evidence_selection.py: its data checks, and what it measures on a hand-made run
(the bench itself reads an AVeriTeC dev run and the shipped stance model)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

from factseek.datasets.claims import LabeledClaim
from factseek.types import Claim, Document, Question, Report
from test_evidence import STANCE  # same percentage supports, a different one refutes

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "bench_evidence_selection.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120
    )


def test_missing_data_is_skipped_and_an_unknown_variant_is_bad_usage(tmp_path):
    r = _run("--data", str(tmp_path), "--run", str(tmp_path))
    assert r.returncode == 0 and r.stdout.startswith("skipped: needs"), r.stderr
    r = _run("--data", str(tmp_path), "--run", str(tmp_path), "--variants", "words,lemmas")
    assert r.returncode == 2 and "unknown variants ['lemmas']" in r.stderr


def test_measure_counts_gold_pages_cards_and_verdicts_per_variant():
    spec = importlib.util.spec_from_file_location("bench_selection", SCRIPT)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    claim = Claim(text="Water bills have risen 40 percent.")
    texts = {
        "https://letters.example/1": "My water bills have gone up 40 percent, I tell you.",
        "https://town.example/due": "Water bills are due on the first of the month, the water office says.",
        "https://town.example/open": "The water office is open on weekdays.",
        "https://news.example/rates": "The typical household bill rose from $48.20 to $56.90, about 18 percent.",
    }
    docs = tuple(Document(url=u, text=t) for u, t in texts.items())
    report = Report(claim=claim, questions=(Question(text=claim.text),), documents=docs)
    gold = LabeledClaim(
        claim=claim,
        label="conflicting-evidence",
        evidence=("About 18 percent.",),
        evidence_urls=("https://news.example/rates",),
    )
    rows = bench.measure([(gold, report)], ["words", "quantities"], STANCE, resamples=10)
    words, quantities = rows
    # Words alone miss the page with the figure; stems and the quantity slot find it, and its
    # refutation beside the letter's support makes the verdict "conflicting evidence".
    assert words["claims_with_gold_page"] == quantities["claims_with_gold_page"] == 1
    assert (words["gold_in_candidates"], quantities["gold_in_candidates"]) == (0.0, 1.0)
    assert (words["gold_in_cards"], quantities["gold_in_cards"]) == (0.0, 1.0)
    assert words["predictions"] == ["supported"] and words["accuracy"] == 0.0
    assert quantities["predictions"] == ["conflicting-evidence"] and quantities["accuracy"] == 1.0
    assert quantities["refuting_cards_per_claim"] == 1.0 and words["refuting_cards_per_claim"] == 0
    assert words["delta"]["accuracy"] is None and quantities["delta"]["accuracy"][0] == 1.0
    assert words["pairs_per_claim"] == 2 and quantities["pairs_per_claim"] == 3


def test_the_int8_batching_probe_skips_without_a_run(tmp_path):
    script = SCRIPT.parents[1] / "experiments" / "probe_int8_batching.py"
    r = subprocess.run(
        [sys.executable, str(script), "--run", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0 and r.stdout.startswith("skipped: needs a run folder"), r.stderr
