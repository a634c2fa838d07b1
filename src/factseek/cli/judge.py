"""`factseek judge train|eval|predict`: train a veracity classifier, score it, use it;
`factseek judge train-evidence`: a judge of claim + evidence features (``judge.evidence_model``)."""

from __future__ import annotations

import enum
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from factseek.cli.common import make_app
from factseek.datasets.claims import FORMATS
from factseek.judge.inputs import MODES
from factseek.judge.train import PRESETS

if TYPE_CHECKING:
    from factseek.datasets.claims import DataFormat, LabeledClaim
    from factseek.judge.classifier import ClassifierJudge
    from factseek.judge.fit_rules import RuleItem
    from factseek.judge.inputs import ReportSummaries
    from factseek.metrics.veracity import VeracityMetrics

app = make_app("Train, evaluate and use veracity classifiers (the pipeline's last stage).")

# Choices come from the registries, so help and errors never drift from the code.
DataFormatName = enum.StrEnum("DataFormatName", {x: x for x in ("auto", *FORMATS)})
PresetName = enum.StrEnum("PresetName", {x: x for x in PRESETS})
ModeName = enum.StrEnum("ModeName", {x: x for x in MODES})

FormatOpt = Annotated[
    DataFormatName, typer.Option("--format", help="Data format (auto: guess from the file).")
]
SummariesOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--summaries", help="factseek report JSON/JSONL files or folders (mode 'summaries')."
    ),
]


def _load(path: Path, fmt: str) -> tuple[list[LabeledClaim], DataFormat]:
    from factseek.datasets.claims import data_format, with_ids

    df = data_format(fmt, path)
    return with_ids(df.load(path)), df


def _summaries(paths: list[Path] | None) -> ReportSummaries | None:
    from factseek.judge.inputs import load_report_summaries

    return load_report_summaries(paths) if paths else None


def _fmt_metrics(m: VeracityMetrics) -> str:
    parts = [f"n={m.n}", f"accuracy {100 * m.accuracy:.1f}"]
    if m.soft_accuracy is not None:
        parts.append(f"soft accuracy {100 * m.soft_accuracy:.1f}")
    parts.append(f"macro-F1 {100 * m.macro_f1:.1f}")
    if m.mae is not None:
        parts.append(f"MAE {m.mae:.3f}")
    return "  ".join(parts)


@app.command()
def train(
    data: Annotated[Path, typer.Option("--data", help="Training data file.")],
    dev: Annotated[Path, typer.Option("--dev", help="Dev data file (selects epoch and seed).")],
    out: Annotated[Path, typer.Option("--out", help="Folder to write the judge to.")],
    format: FormatOpt = DataFormatName.auto,
    dev_format: Annotated[
        DataFormatName, typer.Option("--dev-format", help="Format of --dev (auto: guess).")
    ] = DataFormatName.auto,
    preset: Annotated[
        PresetName, typer.Option("--preset", help="Hyperparameters: cpu or paper (GPU).")
    ] = PresetName.cpu,
    mode: Annotated[ModeName, typer.Option("--mode", help="Classifier input.")] = ModeName.claim,
    seeds: Annotated[
        int | None, typer.Option("--seeds", min=1, help="Seeds to train (best by dev kept).")
    ] = None,
    exclude: Annotated[
        list[Path] | None,
        typer.Option(
            "--exclude",
            help="Evaluation files whose claims are removed from training (repeatable).",
        ),
    ] = None,
    backbone: Annotated[
        str | None, typer.Option("--backbone", help="'minilm' or a local model folder.")
    ] = None,
    epochs: Annotated[
        int | None, typer.Option("--epochs", min=1, help="Training epochs [default: the preset's].")
    ] = None,
    max_length: Annotated[
        int | None,
        typer.Option(
            "--max-length", min=8, help="Longest input in tokens [default: the preset's]."
        ),
    ] = None,
    lr: Annotated[
        float | None, typer.Option("--lr", help="Learning rate [default: the preset's].")
    ] = None,
    batch_size: Annotated[
        int | None,
        typer.Option("--batch-size", min=1, help="Examples per step [default: the preset's]."),
    ] = None,
    freeze_layers: Annotated[
        int | None,
        typer.Option(
            "--freeze-layers", min=-1, help="Frozen lower layers; -1: all (train the head only)."
        ),
    ] = None,
    max_train: Annotated[
        int | None, typer.Option("--max-train", min=1, help="Subsample training data.")
    ] = None,
    device: Annotated[
        str | None, typer.Option("--device", help="auto, cpu, cuda, cuda:1...")
    ] = None,
    summaries: SummariesOpt = None,
    threads: Annotated[
        int | None, typer.Option("--threads", min=1, max=1024, help="CPU threads for torch.")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bars.")] = False,
) -> None:
    """Train a judge: several seeds, best by dev MAE, saved as a folder for `factseek check --judge`."""
    from factseek.datasets.claims import data_format, dedup
    from factseek.errors import InputError
    from factseek.judge.train import preset as make_preset
    from factseek.judge.train import train_classifier

    train_rows, df = _load(data, format.value)
    dev_rows, dev_df = _load(dev, dev_format.value)
    if dev_df.labels is not df.labels:
        raise InputError(
            f"training labels are {df.labels.name} but dev labels are {dev_df.labels.name}"
        )
    held_out = [dev_rows]
    for path in exclude or []:
        rows = data_format("auto", path).load(path)
        held_out.append(rows)
    train_rows, report = dedup(train_rows, *held_out)
    typer.echo(f"{data.name}: {report.line()}")
    config = make_preset(
        preset.value,
        mode=mode.value,
        seeds=seeds,
        backbone=backbone,
        epochs=epochs,
        max_length=max_length,
        lr=lr,
        batch_size=batch_size,
        freeze_layers=freeze_layers,
        max_train=max_train,
        device=device,
    )
    report_summaries = _summaries(summaries)
    info = {
        "data": {"file": data.name, "format": df.name},
        "dev": {"file": dev.name, "format": dev_df.name},
        "excluded": [p.name for p in exclude or []],
        "dedup": {"kept": report.kept, "overlap": report.overlap, "repeated": report.repeated},
    }
    result = train_classifier(
        train_rows,
        dev_rows,
        out,
        df.labels,
        config,
        summaries=report_summaries,
        preset_name=preset.value,
        info=info,
        progress=not quiet,
        threads=threads,
        log=typer.echo,
    )
    typer.echo(
        f"saved {result.path} (seed {result.best.seed}, epoch {result.best.epoch}; "
        f"{result.n_train} train / {result.n_dev} dev; {result.seconds:.0f}s)"
    )
    typer.echo(f"dev: {_fmt_metrics(result.best.dev)}")


@app.command("eval")
def eval_(
    model: Annotated[Path, typer.Option("--model", help="Judge folder.")],
    data: Annotated[Path, typer.Option("--data", help="Labelled data file.")],
    format: FormatOpt = DataFormatName.auto,
    summaries: SummariesOpt = None,
    compare: Annotated[
        Path | None,
        typer.Option(
            "--compare", help="Another system's predictions JSONL: paired significance test."
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Also write this judge's predictions JSONL.")
    ] = None,
    confusion: Annotated[
        Path | None, typer.Option("--confusion", help="Write a confusion-matrix PNG.")
    ] = None,
    resamples: Annotated[
        int, typer.Option("--resamples", min=100, help="Resamples of the significance test.")
    ] = 10_000,
    device: Annotated[
        str, typer.Option("--device", help="auto, cpu, cuda, cuda:1... (auto: a GPU if any).")
    ] = "auto",
) -> None:
    """Accuracy, soft accuracy, macro-F1 and MAE of a judge on a data set (+ majority baseline)."""
    from factseek.judge.evaluate import compare as compare_preds
    from factseek.judge.evaluate import predict_rows, read_predictions, score, write_predictions
    from factseek.metrics.veracity import (
        confusion_matrix,
        majority_baseline,
        plot_confusion,
        veracity_metrics,
    )

    judge, rows = _judge_and_rows(model, data, format.value, device)
    preds, missing = predict_rows(judge, rows, _summaries(summaries))
    if judge.mode == "summaries":
        typer.echo(f"no report for {missing} of {len(rows)} claims (claim-only input for those)")
    m = score(preds, judge.labels)
    typer.echo(f"{judge.name} on {data.name}: {_fmt_metrics(m)}")
    counts = judge.config.get("train", {}).get("label_counts")
    if counts:
        train_gold = [label for label, c in counts.items() for _ in range(int(c))]
        base = majority_baseline(train_gold, len(preds), judge.labels)
        bm = veracity_metrics([p.gold for p in preds], base, judge.labels)  # type: ignore[misc]
        typer.echo(f"majority class ({base[0]}): {_fmt_metrics(bm)}")
    if out:
        write_predictions(out, preds)
        typer.echo(f"predictions: {out}")
    if confusion:
        gold = [p.gold for p in preds]
        cm = confusion_matrix(gold, [p.label for p in preds], judge.labels)  # type: ignore[arg-type]
        plot_confusion(cm, judge.labels, confusion, title=f"{judge.name} on {data.name}")
        typer.echo(f"confusion matrix: {confusion}")
    if compare:
        theirs = read_predictions(compare, judge.labels)
        typer.echo(f"paired permutation test vs {compare.name} ({resamples} resamples, two-sided):")
        for t in compare_preds(preds, theirs, judge.labels, resamples=resamples):
            scale = 1.0 if t.metric == "mae" else 100.0
            typer.echo(
                f"  {t.metric:<13} ours {scale * t.a:7.3f}  theirs {scale * t.b:7.3f}  "
                f"delta {scale * t.delta:+7.3f}  95% CI [{scale * t.ci_low:+.3f}, {scale * t.ci_high:+.3f}]  "
                f"p = {t.p_value:.4f}"
            )


@app.command()
def predict(
    model: Annotated[Path, typer.Option("--model", help="Judge folder.")],
    data: Annotated[Path, typer.Option("--data", help="Data file (labels optional).")],
    out: Annotated[Path, typer.Option("--out", help="Predictions JSONL to write.")],
    format: FormatOpt = DataFormatName.auto,
    summaries: SummariesOpt = None,
    device: Annotated[
        str, typer.Option("--device", help="auto, cpu, cuda, cuda:1... (auto: a GPU if any).")
    ] = "auto",
) -> None:
    """Write one prediction per claim: id, label, gold, per-label probabilities."""
    from factseek.judge.evaluate import predict_rows, write_predictions

    judge, rows = _judge_and_rows(model, data, format.value, device)
    preds, _ = predict_rows(judge, rows, _summaries(summaries))
    write_predictions(out, preds)
    typer.echo(f"wrote {len(preds)} predictions to {out}")


def _judge_and_rows(
    model: Path, data: Path, fmt: str, device: str
) -> tuple[ClassifierJudge, list[LabeledClaim]]:
    from factseek.errors import InputError
    from factseek.judge.classifier import ClassifierJudge

    rows, df = _load(data, fmt)
    judge = ClassifierJudge.load(model, device=device)
    if df.labels is not judge.labels:
        raise InputError(
            f"{data.name} has {df.labels.name} labels but the judge predicts {judge.labels.name} labels"
        )
    return judge, rows


@app.command()
def thresholds(
    data: Annotated[Path, typer.Option("--data", help="Labelled training data file.")],
    out: Annotated[Path, typer.Option("--out", help="Thresholds JSON to write.")],
    fmt: FormatOpt = DataFormatName.auto,
) -> None:
    """Fit the LLM scorer's 0-100 cut points to a training label distribution (for --llm-judge)."""
    from factseek.judge.llm_scorer import fit_thresholds

    rows, df = _load(data, fmt.value)
    labels = [r.label for r in rows if r.label is not None]
    fitted = fit_thresholds(labels, labels=df.labels.labels)
    from factseek.files import atomic_write

    atomic_write(out, json.dumps(fitted.to_dict(), indent=2) + "\n")
    cuts = ", ".join(f"{c:g}" for c in fitted.cuts)
    typer.echo(f"{len(labels)} labels -> cut points {cuts}; wrote {out}", err=True)


@app.command("train-evidence")
def train_evidence(
    data: Annotated[Path, typer.Option("--data", help="Labelled claims (training split).")],
    reports: Annotated[
        list[Path] | None,
        typer.Option("--reports", help="Run folders of `factseek eval pipeline` on these claims."),
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="Judge folder to write.")] = Path("judge"),
    fmt: FormatOpt = DataFormatName.auto,
    stance: Annotated[
        str,
        typer.Option(
            "--stance",
            help="Stance model for stance features: none (the measured default), default, small, mpnet, folder.",
        ),
    ] = "none",
    encoder: Annotated[str, typer.Option("--encoder", help="Encoder name or folder.")] = "minilm",
    no_gold: Annotated[
        bool, typer.Option("--no-gold", help="Do not train on the data's gold evidence.")
    ] = False,
    reads: Annotated[
        str,
        typer.Option(
            "--reads", help="What the judge reads of a run: passages (top documents), cards, both."
        ),
    ] = "passages",
    bow: Annotated[
        int,
        typer.Option(
            "--bow",
            min=0,
            help="Hashed bag-of-words buckets (0: embeddings only; 2048 chose itself over 0 on "
            "held-out AVeriTeC train claims, docs/verdicts.md).",
        ),
    ] = 2048,
    bow_words: Annotated[
        str,
        typer.Option(
            "--bow-words",
            help="The bags' words: all (keeps no / not / never; chose itself over index on "
            "AVeriTeC train claims, held out and cross-validated, docs/verdicts.md) or index "
            "(no stop words).",
        ),
    ] = "all",
) -> None:
    """Train a judge on claim + evidence features: every claim alone, with its gold evidence and
    with the evidence the pipeline retrieved for it (what ``--reads`` names in the run folders'
    reports). The penalty and class weighting are chosen by 5-fold cross-validation over
    the claims."""
    from factseek.errors import InputError
    from factseek.judge.evidence_model import (
        BAG_WORDS,
        READS,
        Example,
        FitConfig,
        judge_texts,
        train_evidence_judge,
    )
    from factseek.ml.encode import encoder_from_name
    from factseek.runs.batch import claim_id
    from factseek.runs.evaluate import load_reports

    if reads not in READS:
        raise InputError(f"unknown --reads {reads!r}; choose one of: {', '.join(READS)}")
    if bow_words not in BAG_WORDS:
        raise InputError(
            f"unknown --bow-words {bow_words!r}; choose one of: {', '.join(BAG_WORDS)}"
        )

    rows, df = _load(data, fmt.value)
    found = {}
    for folder in reports or []:
        if not (folder / "journal.jsonl").is_file():
            raise InputError(f"{folder} is not a run folder (no journal.jsonl)")
        found.update(load_reports(folder))
    examples = []
    for r in rows:
        if r.label is None:
            continue
        cid = claim_id(r.claim)
        examples.append(
            Example(claim=r.claim, texts=(), kind="claim-only", label=r.label, group=cid)
        )
        if r.evidence and not no_gold:
            examples.append(
                Example(
                    claim=r.claim, texts=tuple(r.evidence), kind="gold", label=r.label, group=cid
                )
            )
        if cid in found:
            rep = found[cid]
            texts = tuple(t for _, t in judge_texts(reads, rep.evidence, rep.passages))
            examples.append(
                Example(claim=r.claim, texts=texts, kind="retrieved", label=r.label, group=cid)
            )
    model = None
    if stance != "none":
        from factseek.stance import engine_for_many, load_stance, resolve_stance

        stance = str(resolve_stance(stance))  # the judge records the model itself, not "default"
        from factseek.files import cache_root

        # every training claim's pairs, many of them read already by the run's own pipeline
        model = load_stance(stance, engine=engine_for_many(), readings=cache_root())
    judge = train_evidence_judge(
        examples,
        df.labels,
        out,
        encoder=encoder_from_name(encoder),
        stance=model,
        encoder_name=encoder,
        stance_name=stance,
        reads=reads,
        cfg=FitConfig(bow=bow, words=bow_words),
        info={"data": data.name, "reports": len(found)},
        log=lambda m: typer.echo(m, err=True),
    )
    sel = judge.config["selection"]
    typer.echo(
        f"trained on {sel['n_examples']} inputs of {sel['n_claims']} claims {sel['kinds']}; "
        f"selected {sel['selected']} (cross-validated score {sel['cv_score']:.4f}); wrote {out}"
    )


def _label_values(text: str, option: str) -> dict[str, float]:
    """``LABEL=P,...`` as a dict, each P in [0, 1] and each LABEL a verdict label."""
    from factseek.errors import InputError
    from factseek.judge.rules import LABELS

    wanted: dict[str, float] = {}
    for item in (x.strip() for x in text.split(",") if x.strip()):
        label, _, value = item.partition("=")
        try:
            wanted[label.strip()] = float(value)
        except ValueError:
            raise InputError(f"bad {option} item {item!r}: expected LABEL=P") from None
        if label.strip() not in LABELS or not 0 <= wanted[label.strip()] <= 1:
            raise InputError(f"bad {option} item {item!r}: labels are {', '.join(LABELS)}")
    return wanted


def _rule_items(data: Path, fmt: str, reports: list[Path]) -> list[RuleItem]:
    """The labelled claims of ``data`` with the cards the run folders ``reports`` gave them."""
    from factseek.errors import InputError
    from factseek.judge.fit_rules import RuleItem
    from factseek.runs.batch import claim_id
    from factseek.runs.evaluate import load_reports

    rows, df = _load(data, fmt)
    if df.labels.name != "averitec":
        raise InputError("the rules verdict is on the AVeriTeC scale: give AVeriTeC-labelled data")
    found = {}
    for folder in reports:
        if not (folder / "journal.jsonl").is_file():
            raise InputError(f"{folder} is not a run folder (no journal.jsonl)")
        found.update(load_reports(folder))
    return [
        RuleItem(
            gold=r.label,
            claim=r.claim,
            questions=found[claim_id(r.claim)].questions,
            evidence=found[claim_id(r.claim)].evidence,
        )
        for r in rows
        if r.label is not None and claim_id(r.claim) in found
    ]


ReportsOpt = Annotated[
    list[Path],
    typer.Option("--reports", help="Run folders of `factseek eval pipeline --stance ...` on them."),
]


@app.command("fit-rules")
def fit_rules_(
    data: Annotated[Path, typer.Option("--data", help="Labelled claims (a training split).")],
    reports: ReportsOpt,
    out: Annotated[Path, typer.Option("--out", help="Verdict rules file (JSON) to write.")],
    fmt: FormatOpt = DataFormatName.auto,
    folds: Annotated[int, typer.Option("--folds", min=2, help="Cross-validation folds.")] = 5,
    levels: Annotated[
        str,
        typer.Option(
            "--levels",
            help="Precision each verdict label must reach to be given: LABEL=P,... "
            "(below it the verdict abstains).",
        ),
    ] = "refuted=0.8,supported=0.6,conflicting-evidence=0.5",
    features: Annotated[
        bool,
        typer.Option(
            "--features/--no-features",
            help="Confidence maps read the answers too (how many questions gave the verdict's "
            "answer, the claim's own, any the other way), not the strength alone.",
        ),
    ] = True,
) -> None:
    """Choose the rules verdict's thresholds and confidence maps by cross-validation over
    labelled claims and the cards a run found for them (judge/fit_rules.py); write them."""
    from factseek.judge.fit_rules import fit_rules

    wanted = _label_values(levels, "--levels")
    items = _rule_items(data, fmt.value, reports)
    rules, report = fit_rules(
        items,
        levels=wanted,
        folds=folds,
        fitted_on=f"{folds}-fold cross-validation over {len(items)} {data.name} claims"
        + ("" if features else ", strength-only maps"),
        features=features,
    )
    rules.save(out)
    typer.echo(
        f"chosen {report.chosen} on {report.n} claims: cross-validated coverage "
        f"{100 * report.coverage:.1f}%, calibration error {report.ece:.3f}"
    )
    for label, p in report.precision.items():
        typer.echo(f"  {label}: right {100 * p:.1f}% of {100 * report.share[label]:.1f}% of claims")
    typer.echo(f"wrote {out}")


@app.command("fit-levels")
def fit_levels_(
    rules: Annotated[Path, typer.Argument(help="A verdict rules file (from `judge fit-rules`).")],
    data: Annotated[Path, typer.Option("--data", help="Labelled claims (a training split).")],
    reports: ReportsOpt,
    precision: Annotated[
        str,
        typer.Option(
            "--precision",
            help="Precision each label's verdicts must reach together: LABEL=P,...",
        ),
    ] = "refuted=0.8,supported=0.6",
    fmt: FormatOpt = DataFormatName.auto,
    folds: Annotated[int, typer.Option("--folds", min=2, help="Cross-validation folds.")] = 5,
    out: Annotated[Path | None, typer.Option("--out", help="Write here (default: RULES).")] = None,
) -> None:
    """Lower each label's abstention level as far as its precision on labelled claims, by
    cross validation, allows (judge/fit_rules.py fit_levels); the confidence maps are kept."""
    from factseek.judge.fit_rules import fit_levels
    from factseek.judge.rules import load_rules

    wanted = _label_values(precision, "--precision")
    chosen, rows = fit_levels(
        _rule_items(data, fmt.value, reports), load_rules(rules), wanted, folds=folds
    )
    for row in rows:
        typer.echo(
            f"{row.label} at {row.level:.2f}: right {100 * row.precision:.1f}% of {row.n} "
            f"claims ({100 * row.share:.1f}%){'  <- chosen' if row.chosen else ''}"
        )
    for label, p in wanted.items():
        if not any(r.chosen for r in rows if r.label == label):
            typer.echo(
                f"{label}: no level reaches {p:g}; it stays {chosen.abstain.get(label, 0.0):g}"
            )
    typer.echo(f"wrote {chosen.save(out or rules)}")


@app.command("rules-precision")
def rules_precision(
    rules: Annotated[Path, typer.Argument(help="A verdict rules file (from `judge fit-rules`).")],
    run: Annotated[
        Path,
        typer.Option(
            "--run", help="An `eval pipeline --verdict-rules RULES` run folder (results.json)."
        ),
    ],
    basis: Annotated[
        str, typer.Option("--basis", help="Where it was measured, e.g. 'AVeriTeC dev, 500 claims'.")
    ],
    out: Annotated[Path | None, typer.Option("--out", help="Write here (default: RULES).")] = None,
    answer_basis: Annotated[
        str | None,
        typer.Option("--answer-basis", help="Where the claim's answers were measured [--basis]."),
    ] = None,
) -> None:
    """Record in a rules file how often each verdict label was right in a run, and how often
    the claim's own question, and each subquestion, was answered rightly.

    The run's "retrieved" system is read, so reports can say it beside each verdict;
    not-enough-evidence is left out (the judge declining is not a finding). The claim's
    answers ("yes": supported, "no": refuted) are shown above a report's answers."""
    from factseek.errors import InputError
    from factseek.files import SIDE_LIMIT, read_json
    from factseek.judge.rules import load_rules

    verdict_rules = load_rules(rules)
    try:
        results = read_json(run / "results.json", "results file", limit=SIDE_LIMIT)
        system = next(s for s in results["systems"] if s["name"] == "retrieved")
        measured = {
            k: float(v["precision"])
            for k, v in system["precision"].items()
            if k != "not-enough-evidence"  # the judge declining is not a finding to vouch for
        }
        answers = {k: dict(v) for k, v in (results.get("claim_answers") or {}).items()}
        subs = {k: dict(v) for k, v in (results.get("subquestion_answers") or {}).items()}
    except (InputError, ValueError, KeyError, StopIteration, TypeError, AttributeError) as e:
        raise InputError(f"{run}: no measured precision of a 'retrieved' system ({e})") from None
    from dataclasses import replace

    target = out or rules
    fixed = {"precision": measured, "precision_basis": basis, "answer_precision": answers}
    fixed["subquestion_precision"] = subs
    fixed["answer_basis"] = (basis if answer_basis is None else answer_basis) if answers else ""
    replace(verdict_rules, **fixed).save(target)
    shown = ", ".join(f"{k} {100 * v:.1f}%" for k, v in measured.items())
    shown += "".join(f"; the claim answered {k}: {100 * v['precision']:.1f}%" for k, v in answers.items())  # fmt: skip
    shown += "".join(f"; a subquestion answered {k}: {100 * v['precision']:.1f}%" for k, v in subs.items())  # fmt: skip
    typer.echo(f"{shown}; wrote {target}")
