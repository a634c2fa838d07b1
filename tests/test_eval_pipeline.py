"""`eval pipeline` on a 10-claim AVeriTeC-format fixture whose metrics can be checked by hand."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factseek.api import CheckOptions, build_parts, check_config
from factseek.cli import app
from factseek.datasets.claims import load_averitec, with_ids
from factseek.judge.rules import VerdictRules
from factseek.judge.verdict import StanceRules
from factseek.labels import AVERITEC
from factseek.runs.evaluate import evaluate_pipeline
from factseek.stance import FunctionStance
from factseek.store import build_store

# (claim, gold label, evidence pages in the store as (url, text), gold answers without a page)
SUPPORT = "Officials confirmed that {}"
REFUTE = "It is false that {}; records show otherwise."
CLAIMS = [
    ("the Zorblax bridge reopened in March 2020.", "Supported", ["s"], []),
    ("the Quennix dam was rebuilt in 2018.", "Supported", ["s"], []),
    ("the Trellix school hired 40 teachers in 2021.", "Supported", ["s"], []),
    ("the Morvax library doubled its opening hours.", "Supported", ["s"], []),
    ("the Daxlex mayor banned cars from the old town.", "Refuted", ["r"], []),
    ("the Fennix river flooded 300 homes in 2019.", "Refuted", ["r"], []),
    ("the Golvix airport closed its second runway.", "Refuted", ["r"], []),
    ("the Hurnix zoo sold its two elephants.", "Refuted", [], ["r"]),  # no page: not retrieved
    ("the Vextrix museum sold a painting for 5 million dollars.", "Not Enough Evidence", [], []),
    (
        "the Plonix festival drew 10,000 visitors in 2018.",
        "Conflicting Evidence/Cherrypicking",
        ["s", "r"],
        [],
    ),
]


def toy_stance(question: str, evidence: str) -> str:
    """Stance only toward evidence naming the same made-up place (the names end in x)."""
    if not set(re.findall(r"\b[A-Z]\w*x\b", question)) & set(
        re.findall(r"\b[A-Z]\w*x\b", evidence)
    ):
        return "nei"
    if "false" in evidence:
        return "refutes"
    return "supports" if "confirmed" in evidence else "nei"


def _fixture(tmp_path: Path) -> tuple[Path, Path]:
    data, docs = [], []
    for i, (text, label, pages, unpaged) in enumerate(CLAIMS):
        claim = "The " + text[4:] if text.startswith("the ") else text
        answers = []
        for j, kind in enumerate(pages):
            url = f"https://news{i}.example/page-{j}"
            page = (SUPPORT if kind == "s" else REFUTE).format(text.rstrip("."))
            docs.append({"url": url, "title": "", "text": page})
            answers.append({"answer": page, "answer_type": "Extractive", "source_url": url})
        for kind in unpaged:
            page = (SUPPORT if kind == "s" else REFUTE).format(text.rstrip("."))
            answers.append({"answer": page, "answer_type": "Abstractive", "source_url": ""})
        if not answers:
            answers = [{"answer": "No answer could be found.", "answer_type": "Unanswerable"}]
        data.append(
            {
                "claim": claim,
                "label": label,
                "claim_date": "01-06-2023",
                "speaker": None,
                "questions": [{"question": f"Is it true that {text}", "answers": answers}],
            }
        )
    claims = tmp_path / "dev.json"
    claims.write_text(json.dumps(data), encoding="utf-8")
    (tmp_path / "corpus.jsonl").write_text(
        "".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8"
    )
    build_store([tmp_path / "corpus.jsonl"], tmp_path / "store", progress=False)
    return claims, tmp_path / "store"


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("eval")
    claims, store = _fixture(tmp)
    parts = build_parts(CheckOptions(store=store))
    from dataclasses import replace

    stance = FunctionStance(toy_stance, name="toy")
    # the built-in rules (no calibration, no abstention), so the metrics can be checked by hand
    parts = replace(parts, stance=stance, evidence_judge=StanceRules("toy", VerdictRules()))
    rows = with_ids(load_averitec(claims))
    out = tmp / "run"
    res = evaluate_pipeline(
        rows, AVERITEC, parts, check_config(undated="keep"), out, resamples=200, progress=False
    )
    return res, out, rows, parts


def test_metrics_are_the_hand_computed_ones(result) -> None:
    res, _, _, _ = result
    by = {s.name: s for s in res.systems}
    assert list(by) == ["claim-only", "gold", "gold-pages", "retrieved"]
    assert res.n == 10 and res.failed == 0
    # claim-only: the rules judge says not-enough-evidence for all: right only for claim 8.
    assert by["claim-only"].metrics["accuracy"] == pytest.approx(0.1)
    assert by["claim-only"].metrics["macro_f1"] == pytest.approx((2 / 11) / 4)
    # gold: every claim right (claim 7's answer has no page but is gold evidence).
    assert by["gold"].metrics["accuracy"] == 1.0 and by["gold"].metrics["macro_f1"] == 1.0
    # gold-pages: claim 7's gold answer has no page, so it reads the claim alone (wrong); claim
    # 8's "No answer could be found." has none either (right either way): as retrieved.
    assert by["gold-pages"].metrics["accuracy"] == pytest.approx(0.9)
    assert by["gold-pages"].metrics["macro_f1"] == pytest.approx((1 + 6 / 7 + 2 / 3 + 1) / 4)
    assert res.gap_closed_pages == {"accuracy": 1.0, "macro_f1": 1.0}
    # retrieved: all but claim 7 (refuted, its page is not in the store: not enough evidence).
    assert by["retrieved"].metrics["accuracy"] == pytest.approx(0.9)
    assert by["retrieved"].metrics["macro_f1"] == pytest.approx((1 + 6 / 7 + 2 / 3 + 1) / 4)
    assert res.gap_closed["accuracy"] == pytest.approx(0.8 / 0.9, abs=1e-4)
    v = by["retrieved"].versus_claim_only["accuracy"]
    assert v["delta"] == pytest.approx(0.8) and v["ci_low"] <= 0.8 <= v["ci_high"]
    assert res.evidence_recall == {
        "claims": 8,
        "documents": 1.0,
        "cards": 1.0,
        "claims_with_gold_document": 1.0,
        "claims_with_gold_card": 1.0,
        "claims_with_gold_card_any": 1.0,
    }
    # what each label is worth: retrieved says not-enough-evidence for claims 7 (wrong) and 8
    nee = by["retrieved"].precision["not-enough-evidence"]
    assert nee == {"precision": 0.5, "n": 2, "share": 0.2}
    assert all(
        p["precision"] == 1.0
        for k, p in by["retrieved"].precision.items()
        if k != "not-enough-evidence"
    )
    assert any("floor" in n for n in res.notes)
    assert by["claim-only"].predicted == {"not-enough-evidence": 10}
    assert sum(by["retrieved"].predicted.values()) == 10
    assert by["retrieved"].predicted["not-enough-evidence"] == 2  # claim 7 and claim 8
    # the claim's own question: yes for the four supported claims, no for the three refuted
    # ones with a page, conflicting for claim 9; claims 7 and 8 have nothing to answer from
    assert res.claim_answers == {
        "yes": {"precision": 1.0, "right": 4, "n": 4},
        "no": {"precision": 1.0, "right": 3, "n": 3},
    }


def test_the_claims_own_answer_is_wrong_where_the_label_is_not_its_side(result) -> None:
    from dataclasses import replace

    from factseek.runs.evaluate import claim_answers, load_reports

    _, out, rows, _ = result
    reports = load_reports(out)
    flipped = [replace(r, label="refuted") if i == 0 else r for i, r in enumerate(rows)]
    flipped[9] = replace(flipped[9], label="supported")  # answered conflicting: not counted
    assert claim_answers(flipped, reports) == {
        "yes": {"precision": 0.75, "right": 3, "n": 4},
        "no": {"precision": 1.0, "right": 3, "n": 3},
    }
    assert claim_answers(rows[7:9], reports) == {}  # nothing answered yes or no


def test_outputs_and_resume(result) -> None:
    res, out, rows, parts = result
    saved = json.loads((out / "results.json").read_text())
    assert saved["n"] == 10 and [s["name"] for s in saved["systems"]] == [
        "claim-only",
        "gold",
        "gold-pages",
        "retrieved",
    ]
    md = (out / "results.md").read_text()
    assert "| retrieved | 10 | 90.0 |" in md and "+80.0 [" in md
    assert "- claim-only: not-enough-evidence 10" in md
    assert "claim-only → gold-pages gap closed by retrieved evidence: accuracy 100%" in md
    preds = (out / "predictions-retrieved.jsonl").read_text().splitlines()
    assert len(preds) == 10 and json.loads(preds[7])["label"] == "not-enough-evidence"
    # A rerun resumes: nothing is checked again, the journal keeps one line per claim.
    again = evaluate_pipeline(
        rows, AVERITEC, parts, check_config(undated="keep"), out, resamples=200, progress=False
    )
    assert again.systems == res.systems
    assert len((out / "journal.jsonl").read_text().splitlines()) == 10


def test_cli_runs_the_claims_and_measures_recall_without_a_judge(tmp_path: Path) -> None:
    claims, store = _fixture(tmp_path)
    out = tmp_path / "run"
    args = ["eval", "pipeline", "--claims", str(claims), "--format", "averitec"]
    args += [
        "--store",
        str(store),
        "--out",
        str(out),
        "--stance",
        "none",
        "--undated",
        "keep",
        "--date-basis",
        "published",
        "-q",
    ]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    assert "among kept documents 100.0%" in r.output and "nothing judged" in r.output
    reports = list((out / "reports").glob("*.json"))
    assert len(reports) == 10
    config = json.loads(reports[0].read_text(encoding="utf-8"))["config"]
    assert config["temporal"]["date_basis"] == "published"
    bad = CliRunner().invoke(app, [*args[:4], "--format", "liar", *args[6:]])
    assert bad.exit_code == 2 and "error:" in bad.output


def test_cli_reads_a_claims_file(tmp_path: Path) -> None:
    """`eval pipeline` takes the claims file every command takes (here as CSV; `--format`
    defaults to auto), its label set read from the labels."""
    _, store = _fixture(tmp_path)
    claims = tmp_path / "claims.csv"
    rows = ["id,claim,date,label"] + [
        f'c{i},"The {text[4:]}",2023-06-01,{label}' for i, (text, label, _, _) in enumerate(CLAIMS)
    ]
    claims.write_text("\n".join(rows) + "\n", encoding="utf-8")
    out = tmp_path / "run"
    args = ["eval", "pipeline", "--claims", str(claims), "--store", str(store), "--out", str(out)]
    args += ["--stance", "none", "--undated", "keep", "-q"]
    r = CliRunner().invoke(app, [*args, "--format", "claims"])
    assert r.exit_code == 0, r.output
    assert "10 claims (averitec labels)" in r.output and "nothing judged" in r.output
    assert sorted(p.stem for p in (out / "reports").glob("*.json")) == [f"c{i}" for i in range(10)]
    report = json.loads((out / "reports" / "c0.json").read_text(encoding="utf-8"))
    assert report["claim"]["date"] == "2023-06-01"
    assert "https://news0.example/page-0" in [d["url"] for d in report["documents"]]
    unlabelled = tmp_path / "unlabelled.jsonl"
    unlabelled.write_text('{"id": "u1", "claim": "The Zorblax bridge reopened."}\n')
    r = CliRunner().invoke(app, [*args[:3], str(unlabelled), *args[4:]])  # auto: a claims file
    assert (
        r.exit_code == 2
        and "every claim needs a gold label; 1 of 1 have none (the first: u1)" in r.output
    )


def test_cli_trains_the_evidence_judge_and_scores_it(tmp_path: Path, monkeypatch) -> None:
    """`judge train-evidence` on a `--stance none` run, then `eval pipeline --judge`: the
    command's defaults are the configuration docs/verdicts.md reports."""
    pytest.importorskip("sklearn")
    import hashlib

    import numpy as np

    import factseek.ml.encode
    from factseek.ml.encode import FunctionEncoder

    def bag(texts):
        out = np.zeros((len(texts), 16))
        for i, t in enumerate(texts):
            for w in t.lower().split():
                out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % 16] += 1
        return out + 1e-3

    monkeypatch.setattr(
        factseek.ml.encode, "encoder_from_name", lambda name="minilm": FunctionEncoder(bag, dim=16)
    )
    claims, store = _fixture(tmp_path)
    run = ["--claims", str(claims), "--format", "averitec", "--store", str(store)]
    run += ["--stance", "none", "--undated", "keep", "-q"]
    r = CliRunner().invoke(app, ["eval", "pipeline", *run, "--out", str(tmp_path / "train")])
    assert r.exit_code == 0, r.output
    judge = tmp_path / "judge"
    train = ["judge", "train-evidence", "--data", str(claims), "--format", "averitec"]
    train += ["--reports", str(tmp_path / "train"), "--out", str(judge)]
    r = CliRunner().invoke(app, train)
    assert r.exit_code == 0, r.output
    assert "trained on 30 inputs of 10 claims" in r.output
    cfg = json.loads((judge / "config.json").read_text())
    assert (cfg["reads"], cfg["stance"], cfg["bow"], cfg["words"]) == (
        "passages",
        "none",
        2048,
        "all",
    )
    sel = cfg["selection"]
    assert sel["folds"] == 5  # chosen by cross-validation over the training claims
    assert len(sel["grid"]) == 4 * 3  # l2 x balance
    best = max(g["value"] for g in sel["grid"])
    assert sel["cv_score"] == best and f"(cross-validated score {best:.4f})" in r.output
    r = CliRunner().invoke(
        app, ["eval", "pipeline", *run, "--out", str(tmp_path / "dev"), "--judge", str(judge)]
    )
    assert r.exit_code == 0, r.output
    assert "Judge: evidence-model:judge" in r.output
    for system in ("claim-only", "gold", "retrieved"):
        assert f"| {system} | 10 |" in r.output


def test_fit_rules_and_record_their_precision_from_a_run(result, tmp_path) -> None:
    _, out, _, _ = result
    claims, rules = out.parent / "dev.json", tmp_path / "rules.json"
    runner = CliRunner()
    args = ["judge", "fit-rules", "--data", str(claims), "--format", "averitec"]
    r = runner.invoke(app, [*args, "--reports", str(out), "--out", str(rules), "--folds", "2"])
    assert r.exit_code == 0, r.output
    assert "cross-validated coverage" in r.output
    got = json.loads(rules.read_text())
    assert got["kind"] == "factseek-verdict-rules" and got["abstain"]["refuted"] == 0.8
    assert got["fitted_on"] == "2-fold cross-validation over 10 dev.json claims"
    r = runner.invoke(
        app, [*args, "--reports", str(out), "--out", str(rules), "--levels", "maybe=2"]
    )
    assert r.exit_code == 2 and "bad --levels" in r.output
    r = runner.invoke(
        app, ["judge", "rules-precision", str(rules), "--run", str(out), "--basis", "the fixture"]
    )
    assert r.exit_code == 0, r.output
    got = json.loads(rules.read_text())
    assert got["precision"] == {"supported": 1.0, "refuted": 1.0, "conflicting-evidence": 1.0}
    assert got["precision_basis"] == "the fixture"
    assert got["answer_precision"]["yes"] == {"precision": 1.0, "right": 4, "n": 4}
    assert got["answer_basis"] == "the fixture"  # --answer-basis: the --basis unless given
    assert "the claim answered yes: 100.0%" in r.output
    measured = json.loads((out / "results.json").read_text())["subquestion_answers"]
    assert got["subquestion_precision"] == measured  # whatever the fixture's subquestions said
    assert measured and all(v["n"] >= v["right"] for v in measured.values())
    r = runner.invoke(
        app, ["judge", "rules-precision", str(rules), "--run", str(tmp_path), "--basis", "x"]
    )
    assert r.exit_code == 2 and "no measured precision" in r.output


def test_gold_pages_among_cards_count_figure_cards_apart() -> None:
    """A gold page shown only as a figure card (read nei) is among the cards shown, not among
    those that take a side: the figure before figure cards stays comparable."""
    from factseek.datasets.labeled import LabeledClaim
    from factseek.runs.evaluate import _recall
    from factseek.types import Claim, Document, Evidence, Report, StanceResult

    nei = StanceResult(label="nei", probs={"supports": 0.2, "refutes": 0.2, "nei": 0.6})
    claim = Claim(text="The plant cost $62 million.", id="c1")
    gold = "https://gold.example/a"
    report = Report(
        claim=claim,
        documents=(Document(url=gold, text="about $61.8 million"),),
        evidence=(
            Evidence(
                id="E1", url=gold, text="about $61.8 million", start_char=0, end_char=19, stance=nei
            ),
        ),
    )
    row = LabeledClaim(claim=claim, label="supported", evidence_urls=(gold,))
    got = _recall([row], {"c1": report})
    assert got["claims_with_gold_document"] == 1.0 and got["cards"] == 0.0
    assert got["claims_with_gold_card"] == 0.0 and got["claims_with_gold_card_any"] == 1.0


def test_fit_levels_keeps_a_level_no_level_can_replace(result, tmp_path) -> None:
    _, out, _, _ = result
    claims, rules, lowered = out.parent / "dev.json", tmp_path / "r.json", tmp_path / "l.json"
    VerdictRules(abstain={"refuted": 0.8, "supported": 0.6}).save(rules)
    runner = CliRunner()
    args = ["judge", "fit-levels", str(rules), "--data", str(claims), "--format", "averitec"]
    args += ["--reports", str(out), "--folds", "2"]
    r = runner.invoke(app, [*args, "--out", str(lowered)])
    assert r.exit_code == 0, r.output
    assert "refuted at 0.30: right" in r.output and "<- chosen" not in r.output
    # ten claims: no level has the 20 verdicts a choice needs
    assert "refuted: no level reaches 0.8; it stays 0.8" in r.output
    got = json.loads(lowered.read_text())
    assert got["abstain"] == {"refuted": 0.8, "supported": 0.6}
    assert "the lowest with cross-validated precision at least refuted 0.8" in got["fitted_on"]
    r = runner.invoke(app, [*args, "--precision", "refuted=high"])
    assert r.exit_code == 2 and "bad --precision" in r.output
