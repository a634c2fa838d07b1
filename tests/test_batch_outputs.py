"""Batch outputs: per-claim formats, summary.csv / summary.md, file modes, compare-runs on batch
folders."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import os
import stat
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factseek.cli import app
from factseek.runs.compare import compare_runs
from factseek.runs.summary import COLUMNS, finish_batch
from factseek.types import (
    Claim,
    ConstraintDecision,
    Document,
    Hit,
    Query,
    QueryResult,
    Report,
    Verdict,
)

runner = CliRunner()

DOCS = [
    {
        "url": "https://ledger.example/buses",
        "title": "Council approves buses",
        "published": "2023-03-15",
        "text": "The council approved 4 new buses in March. The buses cost 2 million dollars.",
    },
    {
        "url": "https://ledger.example/later",
        "title": "Buses arrive",
        "published": "2023-09-01",
        "text": "Four new buses arrived in September after the council approved them.",
    },
    {
        "url": "https://radio.example/fares",
        "title": "Fares",
        "published": "2022-11-20",
        "text": "The transit plan proposes a review of bus fares by March.",
    },
]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("store")
    (tmp / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    r = runner.invoke(app, ["index", "build", str(tmp / "docs.jsonl"), "--store", str(tmp / "s")])
    assert r.exit_code == 0, r.output
    return tmp / "s"


def claims_file(path: Path) -> Path:
    rows = [
        {"id": "c1", "claim": "The council approved 4 new buses.", "date": "2023-06-01"},
        {"id": "c2", "text": "Bus fares will be reviewed by March.", "date": "2023-01-01"},
    ]
    rows[0]["label"] = "Supported"  # a gold label: the summaries compare the verdict with it
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_batch_writes_formats_and_summaries(store, tmp_path):
    out = tmp_path / "run"
    args = ["batch", str(claims_file(tmp_path / "c.jsonl")), "--out", str(out)]
    stance = ["--stance", "none"]  # no stance model: nothing is judged (as asserted below)
    r = runner.invoke(app, [*args, "--store", str(store), "-q", "--format", "md", *stance])
    assert r.exit_code == 0, r.output
    names = sorted(p.name for p in (out / "reports").iterdir())
    assert names == ["c1.json", "c1.md", "c2.json", "c2.md"]
    for path in [*out.iterdir(), *(out / "reports").iterdir()]:
        if path.is_file():
            assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask(), path

    rows = list(csv.DictReader(io.StringIO((out / "summary.csv").read_text())))
    assert tuple(rows[0]) == COLUMNS
    assert [(x["id"], x["claim"], x["verdict"], x["report"]) for x in rows] == [
        ("c1", "The council approved 4 new buses.", "not judged", "reports/c1.md"),
        ("c2", "Bus fares will be reviewed by March.", "not judged", "reports/c2.md"),
    ]
    for x in rows:
        report = json.loads((out / "reports" / f"{x['id']}.json").read_text())
        assert int(x["kept_documents"]) == len(report["documents"])
        assert float(x["seconds"]) == pytest.approx(sum(report["timings"].values()), abs=1e-3)
        assert x["confidence"] == ""  # no judge: no confidence
    kept = {x["id"]: int(x["kept_documents"]) for x in rows}
    assert kept["c1"] >= 1  # the March article predates the claim; the September one does not
    assert [(x["gold_label"], x["agrees"]) for x in rows] == [("Supported", ""), ("", "")]
    md = (out / "summary.md").read_text()
    assert "2 claims: not judged 2" in md
    assert "[The council approved 4 new buses.](<reports/c1.md>)" in md
    assert (
        "Against the claims file's labels: 0 right, 0 wrong, 0 abstained; 1 without a verdict."
        in md
    )

    # A rerun with another format renders the missing files from JSON and checks nothing again.
    r = runner.invoke(app, [*args, "--store", str(store), "-q", "--format", "html"])
    assert r.exit_code == 0 and "0 checked, 2 already done" in r.stderr
    assert (out / "reports" / "c2.html").read_text().startswith("<!doctype html>")
    assert "reports/c1.html" in (out / "summary.csv").read_text()


def fake_report(cid: str, urls: list[str], label: str | None = None) -> Report:
    hits = tuple(Hit(url=u, title=u, rank=i + 1) for i, u in enumerate(urls))
    return Report(
        claim=Claim(text=f"=claim {cid}", id=cid, date=dt.date(2023, 1, 1)),
        results=(
            QueryResult(
                query=Query(text="q", question="q"),
                hits=hits,
                decisions=tuple(ConstraintDecision(url=u, kept=True, reason="ok") for u in urls),
            ),
        ),
        documents=tuple(Document(url=u, text="t") for u in urls[:1]),
        verdict=(
            Verdict(judged=True, label=label, judge="test", confidence=0.625)
            if label
            else Verdict.not_judged()
        ),
        timings={"search": 1.0, "judge": 0.5},
    )


def fake_run(folder: Path, reports: list[Report], failed: dict[str, str] | None = None) -> Path:
    (folder / "reports").mkdir(parents=True)
    journal = []
    for r in reports:
        r.save(folder / "reports" / f"{r.claim.id}.json")
        journal.append(
            json.dumps({"id": r.claim.id, "line": 1, "report": f"reports/{r.claim.id}.json"})
        )
    journal.append('{"id": "torn')  # a killed run's last line
    journal.append(json.dumps({"id": "evil", "report": "../../outside.json"}))
    (folder / "journal.jsonl").write_text("\n".join(journal) + "\n")
    (folder / "errors.jsonl").write_text(
        "".join(json.dumps({"id": k, "error": v}) + "\n" for k, v in (failed or {}).items())
    )
    return folder


def test_summary_rows_by_hand(tmp_path):
    out = fake_run(
        tmp_path / "run",
        [fake_report("a", ["https://x.example/1"], "half-true"), fake_report("b", [])],
        failed={"c": "search failed: 503", "a": "an earlier failure, since fixed"},
    )
    rows = finish_batch(out, ["md"])
    assert [(r.id, r.verdict, r.confidence, r.kept_documents, r.seconds) for r in rows] == [
        ("a", "half-true", 0.625, 1, 1.5),
        ("b", "not judged", None, 0, 1.5),
        ("evil", "failed", None, None, None),  # a refused report path: shown, never dropped
        ("c", "failed", None, None, None),
    ]
    assert "'../../outside.json'" in rows[2].error
    assert rows[3].error == "search failed: 503"
    assert (out / "reports" / "a.md").exists()  # missing formats are rendered from JSON
    text = (out / "summary.csv").read_text()
    assert "'=claim a" in text and ",=claim" not in text  # no formula injection
    assert "0.625" in text
    md = (out / "summary.md").read_text()
    assert "4 claims: failed 2, half-true 1, not judged 1" in md
    assert "| c |" in md and "search failed: 503" in md


def test_summary_agreement_with_gold_labels(tmp_path):
    reports = [
        fake_report("a", [], "half-true"),  # the judge's scale is not set: read from the label
        replace(
            fake_report("b", []), verdict=Verdict(judged=True, label="refuted", scale="averitec")
        ),
        replace(
            fake_report("c", []), verdict=Verdict(judged=True, label="refuted", scale="averitec")
        ),
        replace(
            fake_report("d", []), verdict=Verdict(judged=True, label="refuted", scale="averitec")
        ),
        fake_report("e", []),
    ]
    out = fake_run(tmp_path / "run", reports)
    gold = {"a": "Half True", "b": "Refuted", "c": "Supported", "d": "false", "e": "true"}
    rows = finish_batch(out, [], gold)
    assert [(r.id, r.gold_label, r.agrees) for r in rows] == [
        ("a", "Half True", "yes"),
        ("b", "Refuted", "yes"),
        ("c", "Supported", "no"),
        ("d", "false", ""),  # a PolitiFact label against an AVeriTeC verdict: not compared
        ("e", "true", ""),  # not judged
        ("evil", "", ""),  # fake_run's refused report path: a failed row, no label
    ]
    text = (out / "summary.csv").read_text().splitlines()
    assert text[0].endswith(",gold_label,agrees") and text[3].endswith(",Supported,no")
    md = (out / "summary.md").read_text()
    assert (
        "Against the claims file's labels: 2 right, 1 wrong (67% of 3 given), 0 abstained;"
        " 1 without a verdict, 1 with a gold label not on the verdict's scale." in md
    )
    assert "| gold label | agrees |" in md and "| Refuted | yes |" in md
    finish_batch(out, [])  # no labels: no agreement line, no gold columns in the table
    assert "Agreement" not in (out / "summary.md").read_text()


def test_summaries_count_abstentions_apart_from_right_and_wrong(tmp_path):
    """An abstention (the judge declined; its label reads not-enough-evidence) is neither "no" on
    a supported claim nor agreement on a not-enough-evidence one: docs/verdicts.md scores a
    judge by how often the labels it gives are right, and counts its abstentions apart."""

    def verdict(cid: str, label: str, abstained: bool = False) -> Report:
        v = Verdict(judged=True, label=label, scale="averitec", abstained=abstained)
        return replace(fake_report(cid, []), verdict=v)

    reports = [
        verdict("a", "not-enough-evidence", abstained=True),  # gold: supported
        verdict("b", "not-enough-evidence", abstained=True),  # gold: not enough evidence
        verdict("c", "not-enough-evidence"),  # the judge said so: compared
        verdict("d", "refuted"),
        verdict("e", "supported"),
    ]
    gold = {
        "a": "Supported",
        "b": "Not Enough Evidence",
        "c": "Not Enough Evidence",
        "d": "Refuted",
        "e": "Refuted",
    }
    out = fake_run(tmp_path / "run", reports)
    rows = finish_batch(out, [], gold)
    assert [(r.id, r.verdict, r.abstained, r.agrees) for r in rows[:5]] == [
        ("a", "not-enough-evidence", True, "abstained"),
        ("b", "not-enough-evidence", True, "abstained"),
        ("c", "not-enough-evidence", False, "yes"),
        ("d", "refuted", False, "yes"),
        ("e", "supported", False, "no"),
    ]
    table = list(csv.DictReader(io.StringIO((out / "summary.csv").read_text())))
    assert tuple(table[0]) == COLUMNS and "abstained" in COLUMNS
    assert [(x["id"], x["abstained"], x["agrees"]) for x in table[:5]] == [
        ("a", "yes", "abstained"),
        ("b", "yes", "abstained"),
        ("c", "", "yes"),
        ("d", "", "yes"),
        ("e", "", "no"),
    ]
    md = (out / "summary.md").read_text()
    assert "6 claims: abstained 2, failed 1, not-enough-evidence 1, refuted 1, supported 1" in md
    assert "Against the claims file's labels: 2 right, 1 wrong (67% of 3 given), 2 abstained." in md
    assert "| verdict | abstained | confidence |" in md
    assert "| not-enough-evidence | yes |" in md and "| abstained |" in md
    finish_batch(out, [])  # without labels the abstentions are still counted apart
    md = (out / "summary.md").read_text()
    assert "abstained 2" in md and "Against" not in md


def test_batch_reads_gold_labels_from_the_claims_file(tmp_path):
    from factseek.runs.batch import claim_id, gold_labels

    path = claims_file(tmp_path / "c.jsonl")
    assert gold_labels(path) == {"c1": "Supported"}
    assert claim_id(Claim(text="x")) not in gold_labels(path)


def test_compare_runs_accepts_batch_folders(tmp_path):
    a = fake_run(tmp_path / "a", [fake_report("x", ["u1", "u2"]), fake_report("y", ["u3"])])
    b = fake_run(tmp_path / "b", [fake_report("x", ["u2", "u4"]), fake_report("y", ["u3"])])
    finish_batch(a, ["md", "html"])  # extra per-claim formats and summaries must not confuse it
    c = compare_runs(a, b)
    assert [(r.key, r.shared, r.jaccard) for r in c.rows] == [("x", 1, 1 / 3), ("y", 1, 1.0)]
    assert c.mean == pytest.approx((1 / 3 + 1) / 2)
    assert compare_runs(a / "reports", b).rows == c.rows
    r = runner.invoke(app, ["compare-runs", str(a), str(b)])
    assert r.exit_code == 0 and "mean Jaccard over 2 claim(s): 0.667" in r.stdout
