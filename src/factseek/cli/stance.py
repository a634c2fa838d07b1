"""`factseek stance train|eval|predict`: the evidence stance model (supports / refutes / nei)."""

from __future__ import annotations

import enum
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from factseek.cli.common import make_app
from factseek.stance.train import StanceTrainConfig

if TYPE_CHECKING:
    from factseek.stance.crossencoder import CrossEncoderStance

D = StanceTrainConfig()  # the defaults, which train the shipped model
DEFAULT_OVERSAMPLE = "checkcovid=3,wice=2,liarplus=3"
app = make_app("Train, evaluate and try the evidence stance model.")

QuantizeName = enum.StrEnum(
    "QuantizeName", {x: x for x in ("config", "int8", "int8-mixed", "int8-rows", "none")}
)
EvalForm = enum.StrEnum("EvalForm", {x: x for x in ("statement", "question", "both")})
SplitName = enum.StrEnum("SplitName", {x: x for x in ("train", "validation", "test")})
EngineName = enum.StrEnum("EngineName", {x: x for x in ("auto", "numpy", "torch")})
EngineOpt = Annotated[
    EngineName | None,
    typer.Option(
        "--engine",
        help="What reads the network: numpy (no torch import), torch (int8 kernels about 3x "
        "faster per pair), or auto (torch when already imported). Default: "
        "$FACTSEEK_STANCE_ENGINE, else torch for eval and auto for predict (docs/stance.md).",
    ),
]


DataOpt = Annotated[
    Path | None,
    typer.Option(
        "--data", help="Data root with fever_dev/, fool_me_twice/... (default: $FACTSEEK_DATA)."
    ),
]
SourcesOpt = Annotated[
    str | None,
    typer.Option(
        "--sources",
        help="Comma-separated sources (train default: every shareable source with a train side; "
        "eval default: those, symmetric and averitec-dev).",
    ),
]


def _data_root(data: Path | None) -> Path:
    from factseek.errors import InputError

    if data is not None:
        return data
    env = os.environ.get("FACTSEEK_DATA")
    if not env:
        raise InputError("give --data DIR or set FACTSEEK_DATA to the data root")
    return Path(env)


def _sources(text: str | None) -> tuple[str, ...]:
    from factseek.stance.data import DEFAULT_SOURCES, parse_sources

    return DEFAULT_SOURCES if text is None else parse_sources(text)


def _model(model: str, quantize: str, engine: str | None = None) -> CrossEncoderStance:
    from factseek.errors import InputError
    from factseek.stance import DEFAULT, SHIPPED, model_folder, resolve_engine, resolve_stance
    from factseek.stance.crossencoder import CrossEncoderStance

    name = str(resolve_stance(model))
    path = model_folder(name)
    if not path.is_dir():
        raise InputError(
            f"unknown stance model {model!r}: one of {', '.join([DEFAULT, *SHIPPED])}, or a folder written by `factseek stance train`"
        )
    q = None if quantize == "config" else quantize
    shown = f"stance:{name}" if name in SHIPPED else None
    return CrossEncoderStance.load(path, quantize=q, name=shown, engine=resolve_engine(engine))


def _training_pairs(
    data: Path | None,
    names: list[str],
    extra: list[Path] | None,
    balance: bool,
    seed: int,
    contrast: bool,
    max_train: int | None,
    oversample: str,
    question_share: float,
) -> tuple[list[Any], list[Any], dict[str, Any]]:
    """``stance train``'s train and validation pairs built from the data root, and the
    ``info`` stored with the model (sources, contrast pairs, oversampling...)."""
    from factseek.stance.contrast import contrast_pairs
    from factseek.stance.data import (
        SOURCES,
        add_extra,
        balance_nei,
        build_pairs,
        extra_pairs,
        parse_oversample,
        repeat_sources,
        subsample,
        with_form,
    )

    repeats = parse_oversample(oversample)
    pairs = build_pairs(_data_root(data), names)
    for path in extra or ():
        pairs = add_extra(pairs, extra_pairs(path))
    chosen = balance_nei(pairs["train"], seed) if balance else pairs["train"]
    generated = contrast_pairs(pairs["train"]) if contrast else []
    chosen = repeat_sources([*subsample(chosen, max_train, seed), *generated], repeats)
    train_pairs = with_form(chosen, "mixed", question_share=question_share)
    dev_pairs = with_form(pairs["validation"], "mixed", question_share=question_share)
    info = {
        "sources": list(names),
        "shareable": all(SOURCES[n].shareable for n in names),
        "question_share": question_share,
        "max_train": max_train,
        "balance_nei": balance,
        "contrast": len(generated),
        "oversample": repeats,
        "extra": [p.name for p in extra or ()],  # names only: no machine paths in the model
    }
    return train_pairs, dev_pairs, info


@app.command()
def train(
    out: Annotated[Path, typer.Option("--out", help="Folder to write the stance model to.")],
    data: DataOpt = None,
    sources: SourcesOpt = None,
    epochs: Annotated[
        int, typer.Option("--epochs", min=1, help="Passes over the training pairs.")
    ] = D.epochs,
    layers: Annotated[
        int, typer.Option("--layers", min=1, help="First base layers kept.")
    ] = D.layers,
    ffn: Annotated[
        int,
        typer.Option(
            "--ffn",
            min=0,
            help="Feed-forward units kept per layer, those with the largest weights (0: all).",
        ),
    ] = D.ffn,
    train_layers: Annotated[
        int | None,
        typer.Option(
            "--train-layers",
            min=1,
            help="Top layers that learn; the ones below are frozen and cached (default: all).",
        ),
    ] = None,
    lora_rank: Annotated[
        int, typer.Option("--lora-rank", min=1, help="Rank of the adapters of learning layers.")
    ] = D.lora_rank,
    lora_alpha: Annotated[
        float, typer.Option("--lora-alpha", help="Adapter scale numerator (scale = alpha / rank).")
    ] = D.lora_alpha,
    max_length: Annotated[
        int, typer.Option("--max-length", min=8, help="Tokens per pair (the longer side is cut).")
    ] = D.max_length,
    lr: Annotated[
        float, typer.Option("--lr", help="Peak learning rate (AdamW, linear warm-up and decay).")
    ] = D.lr,
    batch_size: Annotated[
        int, typer.Option("--batch-size", min=1, help="Pairs per step.")
    ] = D.batch_size,
    max_train: Annotated[
        int | None, typer.Option("--max-train", min=1, help="Subsample training pairs.")
    ] = None,
    balance: Annotated[
        bool,
        typer.Option(
            "--balance/--no-balance",
            help="Keep at most as many nei training pairs as the larger stance class.",
        ),
    ] = True,
    question_share: Annotated[
        float,
        typer.Option("--question-share", min=0.0, max=1.0, help="Claims asked as questions."),
    ] = 0.5,
    base: Annotated[
        str,
        typer.Option(
            "--base",
            help="'minilm', 'mpnet' (all-mpnet-base-v2 from its pip packages: docs/stance.md) or a local BERT or MPNet folder.",
        ),
    ] = D.base,
    quantize: Annotated[
        str,
        typer.Option(
            "--quantize",
            help="How the saved model runs: int8, int8-mixed (all but the feed-forward output maps; for MPNet) or none.",
        ),
    ] = D.quantize,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of sampling, batch order and initialisation.")
    ] = D.seed,
    threads: Annotated[
        int | None, typer.Option("--threads", min=1, max=1024, help="CPU threads for torch.")
    ] = None,
    init: Annotated[
        Path | None,
        typer.Option(
            "--init",
            help="Start from this stance model folder (same base and shape): e.g. one "
            "pre-trained with --sources fever-train, then trained on the default sources.",
        ),
    ] = None,
    teacher: Annotated[
        str | None,
        typer.Option(
            "--teacher",
            help="Distil from this stance model ('small', 'mpnet' or a folder), or from several "
            "separated by commas (their mean probability): soft targets beside the gold labels.",
        ),
    ] = None,
    distill: Annotated[
        float,
        typer.Option("--distill", min=0.0, max=1.0, help="With --teacher: weight of its targets."),
    ] = D.distill,
    temperature: Annotated[
        float, typer.Option("--temperature", min=0.01, help="With --teacher: softening of both.")
    ] = D.temperature,
    extra: Annotated[
        list[Path] | None,
        typer.Option(
            "--extra",
            help="JSON Lines of your own {question, evidence, label} pairs added to the train "
            "side (repeatable; e.g. feedback/stance.jsonl from `factseek feedback export`).",
        ),
    ] = None,
    contrast: Annotated[
        bool,
        typer.Option(
            "--contrast/--no-contrast",
            help="Add generated contrast pairs (changed numbers, dates, names; dropped clauses; "
            "reported claims) to the train side (stance/contrast.py).",
        ),
    ] = True,
    oversample: Annotated[
        str,
        typer.Option(
            "--oversample",
            help="Repeat the train pairs of small real-world sources: SOURCE=N,... ('' for none).",
        ),
    ] = DEFAULT_OVERSAMPLE,
    calibrate: Annotated[
        bool,
        typer.Option(
            "--calibrate/--no-calibrate",
            help="Fit a calibration map (temperature, label bias) on the validation side.",
        ),
    ] = D.calibrate,
    weigh_sources: Annotated[
        bool,
        typer.Option(
            "--weigh-sources/--pooled",
            help="Every source weighs the same in calibration and thresholds (or every pair).",
        ),
    ] = D.weigh_sources,
    stop_at_chance: Annotated[
        bool,
        typer.Option(
            "--stop-at-chance/--no-stop-at-chance",
            help="Stop (exit 1) after the first epoch when the training loss is still what "
            "answering the label shares scores: the network is not learning.",
        ),
    ] = D.stop_at_chance,
    device: Annotated[
        str,
        typer.Option(
            "--device", help="Where the training steps run: cpu, or a GPU torch sees (cuda)."
        ),
    ] = "cpu",
    pairs_out: Annotated[
        Path | None,
        typer.Option(
            "--pairs-out",
            help="Only build the train and validation pairs (sources, contrast pairs, forms) "
            "and write them to this JSON Lines file, to train on elsewhere with --pairs.",
        ),
    ] = None,
    pairs_file: Annotated[
        Path | None,
        typer.Option(
            "--pairs",
            help="Train on the pairs of a --pairs-out file instead of building them from --data "
            "(--sources, --extra, --contrast, --balance, --max-train and the rest are then "
            "those it was built with).",
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bars.")] = False,
) -> None:
    """Train a stance model on the train side, calibrate it and tune its thresholds on the
    validation side."""
    from factseek.errors import ConfigError
    from factseek.stance.data import SOURCES, describe
    from factseek.stance.pairs import read_pair_set, write_pair_set
    from factseek.stance.train import StanceTrainConfig, train_stance

    names = _sources(sources)
    config = StanceTrainConfig(
        base=base,
        layers=layers,
        ffn=ffn,
        train_layers=train_layers or layers,
        lora_rank=lora_rank,
        lora_alpha=lora_alpha,
        max_length=max_length,
        lr=lr,
        batch_size=batch_size,
        epochs=epochs,
        seed=seed,
        quantize=quantize,
        init=str(init) if init else "",
        teacher=teacher or "",
        distill=distill,
        temperature=temperature,
        calibrate=calibrate,
        weigh_sources=weigh_sources,
        stop_at_chance=stop_at_chance,
    )
    if pairs_file is not None:
        if pairs_out is not None:
            raise ConfigError("--pairs and --pairs-out do not go together")
        built, info = read_pair_set(pairs_file)
        train_pairs, dev_pairs = built["train"], built["validation"]
    else:
        train_pairs, dev_pairs, info = _training_pairs(
            data, names, extra, balance, seed, contrast, max_train, oversample, question_share
        )
    typer.echo(f"train: {describe(train_pairs)}")
    typer.echo(f"validation: {describe(dev_pairs)}")
    restricted = [n for n in info.get("sources", ()) if n in SOURCES and not SOURCES[n].shareable]
    if restricted:
        typer.echo(f"note: {', '.join(restricted)} data do not allow sharing the trained weights")
    if pairs_out is not None:
        n = write_pair_set(pairs_out, {"train": train_pairs, "validation": dev_pairs}, info)
        typer.echo(f"wrote {n} pairs to {pairs_out}")
        return
    result = train_stance(
        train_pairs,
        dev_pairs,
        out,
        config,
        info=info,
        progress=not quiet,
        threads=threads,
        device=device,
        log=typer.echo,
    )
    typer.echo(
        f"saved {result.path} ({result.n_train} train / {result.n_dev} validation pairs; {result.seconds:.0f}s)"
    )
    a, t = result.dev_argmax, result.dev_tuned
    typer.echo(
        f"validation, arg-max: accuracy {100 * a.accuracy:.1f}  macro-F1 {100 * a.macro_f1:.1f}"
    )
    typer.echo(
        f"validation, thresholds {result.thresholds}: accuracy {100 * t.accuracy:.1f}  macro-F1 {100 * t.macro_f1:.1f}"
    )


@app.command("eval")
def eval_(
    model: Annotated[
        str,
        typer.Argument(
            help="'default' (mpnet when installed, else small), 'small', 'mpnet' or a stance model folder."
        ),
    ],
    data: DataOpt = None,
    sources: SourcesOpt = None,
    split: Annotated[
        SplitName, typer.Option("--split", help="Which side of the split to score.")
    ] = SplitName.test,
    form: Annotated[
        EvalForm, typer.Option("--form", help="Questions as statements, yes/no questions, or both.")
    ] = EvalForm.both,
    quantize: Annotated[
        QuantizeName,
        typer.Option(
            "--quantize",
            help="config: as the model folder says; int8, int8-mixed, int8-rows or none to override.",
        ),
    ] = QuantizeName.config,
    max_pairs: Annotated[
        int | None, typer.Option("--max-pairs", min=1, help="Subsample each source.")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Folder for results.json and results.md.")
    ] = None,
    pairs_files: Annotated[
        list[Path] | None,
        typer.Option(
            "--pairs",
            help="Also score JSON Lines of your own {question, evidence, label[, kind]} pairs "
            "(repeatable; e.g. tests/data/stance_contrast.jsonl, the hand-written contrast set).",
        ),
    ] = None,
    engine: EngineOpt = None,
    reliability_to: Annotated[
        Path | None,
        typer.Option(
            "--reliability-to",
            help="Write how often this model's supports and refutes readings were right on the "
            "real-world sides (wice, checkcovid, averitec-dev, statement form) into this model "
            "folder's config.json: reports show it beside the cards.",
        ),
    ] = None,
) -> None:
    """Accuracy, macro-F1, calibration error, per-class P/R/F1 and confusion matrices on one
    split, per source and form (two-way sources are scored two-way), and on pair files."""
    from factseek.errors import InputError
    from factseek.files import atomic_write
    from factseek.stance.data import EVAL_SOURCES, build_pairs, extra_pairs, subsample, with_form
    from factseek.stance.evaluate import evaluate_pairs, metrics_table, reliability_table
    from factseek.stance.realworld import scoring

    names = EVAL_SOURCES if sources is None else _sources(sources)
    from factseek.stance import engine_for_many, model_folder

    if reliability_to is not None:
        folder = model_folder(model)
        if reliability_to.resolve() != Path(folder).resolve():
            raise InputError(
                f"--reliability-to must be the folder of the model evaluated ({folder}), "
                f"not {reliability_to}"
            )

    stance = _model(model, quantize.value, engine.value if engine else engine_for_many())
    pairs = build_pairs(_data_root(data), names)[split.value]
    forms = ("statement", "question") if form.value == "both" else (form.value,)
    results: dict[str, dict] = {}
    md = [f"# {stance.name} on the {split.value} side", ""]
    for name in names:
        chosen = subsample([p for p in pairs if p.source == name], max_pairs)
        if not chosen:
            typer.echo(f"{name}: no {split.value} pairs")
            continue
        for f in forms:
            scored = with_form(chosen, f)  # type: ignore[arg-type]
            ev = evaluate_pairs(stance, scored, scoring(name))
            results[f"{name}/{f}"] = {**ev.to_dict(), "scoring": scoring(name)}
            typer.echo(
                f"{name} ({f}): {metrics_table(ev.metrics).splitlines()[0]}  ECE {ev.ece_words()}  [{len(scored) / ev.seconds:.0f} pairs/s]"
            )
            md += [f"## {name}, {f} form ({scoring(name)})", "", metrics_table(ev.metrics), ""]
            md += [f"Expected calibration error of the label's probability: {ev.ece_words()}", ""]
            md += [reliability_table(ev.bins), ""]
    for path in pairs_files or ():
        own = extra_pairs(path)
        if not own:
            raise InputError(f"{path}: no pairs")
        ev = evaluate_pairs(stance, own)
        kinds = _by_kind(path, own, ev.predicted)
        results[f"file:{path.name}"] = {**ev.to_dict(), "by_kind": kinds}
        typer.echo(f"{path.name}: {metrics_table(ev.metrics).splitlines()[0]}  ECE {ev.ece:.3f}")
        md += [f"## {path.name}", "", metrics_table(ev.metrics), ""]
        if kinds:
            md += ["| kind | pairs | right |", "|---|---:|---:|"]
            md += [f"| {k} | {v['n']} | {100 * v['accuracy']:.1f}% |" for k, v in kinds.items()]
            md.append("")
    summary = _summary(results)
    if summary:
        md[2:2] = summary
    typer.echo("\n".join(md[2:]))
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        payload = {
            "model": stance.name,
            "config": {
                k: stance.config.get(k)
                for k in ("net", "max_length", "quantize", "engine", "thresholds")
            },
            "split": split.value,
            "results": results,
        }
        atomic_write(out / "results.json", json.dumps(payload, indent=2) + "\n")
        atomic_write(out / "results.md", "\n".join(md) + "\n")
        typer.echo(f"wrote {out / 'results.json'} and {out / 'results.md'}")
    if reliability_to is not None:
        from factseek.stance.reliability import from_results, record, words

        rel = from_results(results, split.value)
        typer.echo(f"wrote {record(reliability_to, rel)}: {words(rel)}")


@app.command()
def calibrate(
    model: Annotated[
        str,
        typer.Argument(
            help="'default' (mpnet when installed, else small), 'small', 'mpnet' or a stance model folder."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="Folder to write the recalibrated model to.")],
    data: DataOpt = None,
    sources: SourcesOpt = None,
    question_share: Annotated[
        float,
        typer.Option("--question-share", min=0.0, max=1.0, help="Claims asked as questions."),
    ] = 0.5,
    weigh_sources: Annotated[
        bool,
        typer.Option(
            "--weigh-sources/--pooled",
            help="Every source weighs the same in the fit (or every pair does).",
        ),
    ] = True,
) -> None:
    """Fit a model's calibration map and thresholds anew on the validation side (the network
    is untouched): a copy of the folder with the new ones (stance/calibrate.py)."""
    from factseek.stance import model_folder
    from factseek.stance.crossencoder import read_config
    from factseek.stance.data import build_pairs, describe, with_form
    from factseek.stance.train import recalibrate

    path = model_folder(model)
    trained_on = read_config(path).get("train", {}).get("sources")
    names = _sources(sources) if sources is not None or not trained_on else tuple(trained_on)
    pairs = build_pairs(_data_root(data), names)["validation"]
    dev = with_form(pairs, "mixed", question_share=question_share)
    typer.echo(f"validation: {describe(dev)}")
    fitted = recalibrate(path, dev, out, weigh_sources=weigh_sources)
    cal, ece = fitted["calibration"], fitted["metrics"]["dev_ece"]
    typer.echo(
        f"temperature {cal['temperature']:.3f}, bias {cal['bias']}; thresholds "
        f"{fitted['thresholds']}; validation ECE {ece['raw']:.3f} -> {ece['calibrated']:.3f}; "
        f"wrote {out}"
    )


#: The real-world sets whose mean macro-F1 is the stance model's headline figure.
HEADLINE = ("wice", "checkcovid", "averitec-dev")


def _summary(results: dict[str, dict]) -> list[str]:
    """A table of every scored side, and the mean macro-F1 over ``HEADLINE`` when all are there."""
    if not results:
        return []
    lines = [
        "| side | scoring | pairs | accuracy | macro-F1 | ECE |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for key, r in results.items():
        lines.append(
            f"| {key} | {r.get('scoring', '3way')} | {r['n']} | {100 * r['accuracy']:.1f} | {100 * r['macro_f1']:.1f} | {r['ece']:.3f} |"
        )
    head = [
        r["macro_f1"]
        for key, r in results.items()
        if key.split("/")[0] in HEADLINE and key.endswith("/statement")
    ]
    if len(head) == len(HEADLINE):
        lines += [
            "",
            f"Mean macro-F1 over {', '.join(HEADLINE)}: {100 * sum(head) / len(head):.1f}",
        ]
    return [*lines, ""]


def _by_kind(path: Path, pairs: list, predicted: Sequence[str]) -> dict[str, dict]:
    """Accuracy per ``kind`` field of a pair file, from the labels the model gave its pairs
    (empty when the file has none)."""
    from factseek.datasets.guard import jsonl_objects

    kinds = [str(row.get("kind", "")) for _, row in jsonl_objects(path)]
    if not any(kinds) or len(kinds) != len(pairs):
        return {}
    out: dict[str, dict] = {}
    for kind, p, label in zip(kinds, pairs, predicted, strict=True):
        row = out.setdefault(kind, {"n": 0, "right": 0})
        row["n"] += 1
        row["right"] += int(label == p.label)
    return {k: {**v, "accuracy": v["right"] / v["n"]} for k, v in out.items()}


@app.command()
def predict(
    model: Annotated[
        str,
        typer.Argument(
            help="'default' (mpnet when installed, else small), 'small', 'mpnet' or a stance model folder."
        ),
    ],
    question: Annotated[str, typer.Argument(help="A claim or a yes/no question.")],
    evidence: Annotated[str, typer.Argument(help="An evidence sentence or passage.")],
    quantize: Annotated[
        QuantizeName,
        typer.Option(
            "--quantize",
            help="config: as the model folder says; int8, int8-mixed, int8-rows or none to override.",
        ),
    ] = QuantizeName.config,
    engine: EngineOpt = None,
) -> None:
    """The stance of one piece of evidence toward a claim or question, with probabilities."""
    stance = _model(model, quantize.value, engine.value if engine else None)
    (r,) = stance.classify([(question, evidence)])
    probs = "  ".join(f"{k} {v:.3f}" for k, v in r.probs.items())
    typer.echo(f"{r.label} ({probs})  [{r.model}]")
    from factseek.summarize.measures import card_figures

    if note := card_figures(question, evidence, r.label).note:  # as a check's card says
        typer.echo(f"compare the figures: {note}")
