"""`factseek stance train|eval|predict`: the evidence stance model (supports / refutes / nei)."""

from __future__ import annotations

import enum
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from factseek.cli import make_app
from factseek.stance.train import StanceTrainConfig

if TYPE_CHECKING:
    from factseek.stance.crossencoder import CrossEncoderStance

D = StanceTrainConfig()  # the defaults, which train the shipped model
app = make_app("Train, evaluate and try the evidence stance model.")

QuantizeName = enum.StrEnum("QuantizeName", {x: x for x in ("config", "int8", "none")})
EvalForm = enum.StrEnum("EvalForm", {x: x for x in ("statement", "question", "both")})
SplitName = enum.StrEnum("SplitName", {x: x for x in ("train", "validation", "test")})

DataOpt = Annotated[
    Path | None,
    typer.Option(
        "--data", help="Data root with fever_dev/, fool_me_twice/... (default: $FACTSEEK_DATA)."
    ),
]
SourcesOpt = Annotated[
    str | None,
    typer.Option("--sources", help="Comma-separated sources (default: fever,fmt,climate)."),
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


def _model(model: str, quantize: str) -> CrossEncoderStance:
    from factseek.errors import InputError
    from factseek.stance import STANCE_MODELS, default_model_path
    from factseek.stance.crossencoder import CrossEncoderStance

    q = None if quantize == "config" else quantize
    if model == "default":
        return CrossEncoderStance.load(default_model_path(), quantize=q, name="stance:default")
    path = Path(model).expanduser()
    if not path.is_dir():
        raise InputError(
            f"unknown stance model {model!r}: one of {', '.join(STANCE_MODELS)}, or a folder written by `factseek stance train`"
        )
    return CrossEncoderStance.load(path, quantize=q)


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
    base: Annotated[str, typer.Option("--base", help="'minilm' or a local BERT folder.")] = D.base,
    quantize: Annotated[
        str, typer.Option("--quantize", help="How the saved model runs: int8 or none.")
    ] = D.quantize,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of sampling, batch order and initialisation.")
    ] = D.seed,
    threads: Annotated[
        int | None, typer.Option("--threads", min=1, max=1024, help="CPU threads for torch.")
    ] = None,
    teacher: Annotated[
        str | None,
        typer.Option(
            "--teacher",
            help="Distil from this stance model ('default' or a folder): its probabilities are "
            "soft targets beside the gold labels.",
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
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bars.")] = False,
) -> None:
    """Train a stance model on the train side, tune its thresholds on the validation side."""
    from factseek.stance.data import (
        SOURCES,
        add_extra,
        balance_nei,
        build_pairs,
        describe,
        extra_pairs,
        subsample,
        with_form,
    )
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
        teacher=teacher or "",
        distill=distill,
        temperature=temperature,
    )
    pairs = build_pairs(_data_root(data), names)
    for path in extra or ():
        pairs = add_extra(pairs, extra_pairs(path))
    chosen = balance_nei(pairs["train"], seed) if balance else pairs["train"]
    train_pairs = with_form(
        subsample(chosen, max_train, seed), "mixed", question_share=question_share
    )
    dev_pairs = with_form(pairs["validation"], "mixed", question_share=question_share)
    typer.echo(f"train: {describe(train_pairs)}")
    typer.echo(f"validation: {describe(dev_pairs)}")
    restricted = [n for n in names if not SOURCES[n].shareable]
    if restricted:
        typer.echo(f"note: {', '.join(restricted)} data do not allow sharing the trained weights")
    info = {
        "sources": list(names),
        "shareable": not restricted,
        "question_share": question_share,
        "max_train": max_train,
        "balance_nei": balance,
        "extra": [p.name for p in extra or ()],  # names only: no machine paths in the model
    }
    result = train_stance(
        train_pairs,
        dev_pairs,
        out,
        config,
        info=info,
        progress=not quiet,
        threads=threads,
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
    model: Annotated[str, typer.Argument(help="'default' or a stance model folder.")],
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
            "--quantize", help="config: as the model folder says; int8 or none to override."
        ),
    ] = QuantizeName.config,
    max_pairs: Annotated[
        int | None, typer.Option("--max-pairs", min=1, help="Subsample each source.")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Folder for results.json and results.md.")
    ] = None,
) -> None:
    """Accuracy, macro-F1, per-class P/R/F1 and confusion matrices on one split, per source and form."""
    from factseek.files import atomic_write
    from factseek.stance.data import build_pairs, subsample, with_form
    from factseek.stance.evaluate import evaluate_pairs, metrics_table

    names = _sources(sources)
    stance = _model(model, quantize.value)
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
            m, seconds = evaluate_pairs(stance, scored)
            results[f"{name}/{f}"] = {**m.to_dict(), "seconds": round(seconds, 2)}
            typer.echo(
                f"{name} ({f}): {metrics_table(m).splitlines()[0]}  [{len(scored) / seconds:.0f} pairs/s]"
            )
            md += [f"## {name}, {f} form", "", metrics_table(m), ""]
    typer.echo("\n".join(md[2:]))
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        payload = {
            "model": stance.name,
            "config": {
                k: stance.config.get(k) for k in ("net", "max_length", "quantize", "thresholds")
            },
            "split": split.value,
            "results": results,
        }
        atomic_write(out / "results.json", json.dumps(payload, indent=2) + "\n")
        atomic_write(out / "results.md", "\n".join(md) + "\n")
        typer.echo(f"wrote {out / 'results.json'} and {out / 'results.md'}")


@app.command()
def predict(
    model: Annotated[str, typer.Argument(help="'default' or a stance model folder.")],
    question: Annotated[str, typer.Argument(help="A claim or a yes/no question.")],
    evidence: Annotated[str, typer.Argument(help="An evidence sentence or passage.")],
    quantize: Annotated[
        QuantizeName,
        typer.Option(
            "--quantize", help="config: as the model folder says; int8 or none to override."
        ),
    ] = QuantizeName.config,
) -> None:
    """The stance of one piece of evidence toward a claim or question, with probabilities."""
    stance = _model(model, quantize.value)
    (r,) = stance.classify([(question, evidence)])
    probs = "  ".join(f"{k} {v:.3f}" for k, v in r.probs.items())
    typer.echo(f"{r.label} ({probs})")
