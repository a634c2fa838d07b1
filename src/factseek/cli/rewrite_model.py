"""`factseek rewrite {train,run,eval}`: the decision-transformer rewriter."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from factseek.cli.rewrite_options import (
    ClaimsOpt,
    CorpusOpt,
    DataFormat,
    FormatOpt,
    RetrieverName,
    RetrieverOpt,
    SplitName,
    SplitOpt,
)
from factseek.errors import InputError


class Preset(StrEnum):
    small = "small"
    paper = "paper"


class ReturnsMode(StrEnum):
    dense = "dense"
    sparse = "sparse"


class Head(StrEnum):
    linear = "linear"
    pointer = "pointer"
    words = "words"


class CalibrationMetric(StrEnum):
    map = "map"
    recall = "recall"
    mrr = "mrr"


def register(app: typer.Typer) -> None:
    """Add ``train``, ``run`` and ``eval`` to the ``rewrite`` app."""
    app.command("train")(train_cmd)
    app.command("run")(run_cmd)
    app.command("eval")(eval_cmd)
    app.command("calibrate")(calibrate_cmd)


def train_cmd(
    trajectories: Annotated[Path, typer.Option(help="BFS trajectories folder.")],
    out: Annotated[Path, typer.Option(help="Model folder to write.")],
    preset: Annotated[Preset, typer.Option(help="Model size.")] = Preset.small,
    head: Annotated[
        Head,
        typer.Option(
            help="Action head: linear (paper), pointer (shared over positions) or words"
            " (pointer that also reads each position's word vectors)."
        ),
    ] = Head.linear,
    returns: Annotated[
        ReturnsMode, typer.Option(help="Return-to-go from dense or sparse rewards.")
    ] = ReturnsMode.dense,
    negatives: Annotated[bool, typer.Option(help="Train on negative sequences too.")] = True,
    epochs: Annotated[int, typer.Option(min=1, help="Passes over the trajectories.")] = 5,
    seed: Annotated[int, typer.Option(help="Random seed (initialisation and shuffling).")] = 0,
    encoder: Annotated[
        str, typer.Option(help="State encoder: minilm, mpnet or a folder.")
    ] = "minilm",
    batch_size: Annotated[int, typer.Option(min=1, help="Sequences per training step.")] = 64,
    max_edits: Annotated[int | None, typer.Option(min=1, help="K; default: the BFS depth.")] = None,
    max_sequences_per_claim: Annotated[
        int | None, typer.Option(min=1, help="Use at most N sequences of each claim.")
    ] = None,
    holdout: Annotated[
        float,
        typer.Option(min=0.0, max=1.0, help="Fraction of claims (by id hash) never trained on."),
    ] = 0.0,
    val_fraction: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=0.9,
            help="Fraction of training claims kept for the validation loss and `calibrate`.",
        ),
    ] = 0.05,
    stop_claims: Annotated[
        Path | None,
        typer.Option(help="The BFS claims file: claims no edit improves are taught to STOP."),
    ] = None,
    stop_format: Annotated[DataFormat, typer.Option(help="Format of --stop-claims.")] = (
        DataFormat.jsonl
    ),
    threads: Annotated[
        int, typer.Option(min=1, help="torch CPU threads (1 is fastest on a busy machine).")
    ] = 1,
    finetune_encoder: Annotated[
        bool, typer.Option(help="Fine-tune the sentence encoder jointly (slow without a GPU).")
    ] = False,
    device: Annotated[
        str | None, typer.Option(help="cpu, cuda...; default: cuda if present.")
    ] = None,
) -> None:
    """Train a decision transformer on BFS trajectories."""
    import dataclasses

    from factseek.rewrite.transformer import trajectories as tr
    from factseek.rewrite.transformer.model import PRESETS
    from factseek.rewrite.transformer.train import TrainConfig, train

    depth = tr.read_config(trajectories).get("depth")
    cfg = dataclasses.replace(
        PRESETS[preset.value],
        pointer_head=head is not Head.linear,
        word_dim=1 if head is Head.words else 0,  # set to the encoder's dimension by train()
    )
    k = max_edits or (int(depth) if depth else None)
    if k:
        cfg = dataclasses.replace(cfg, max_edits=k)
    stops = None
    if stop_claims is not None:
        from factseek.datasets.retrieval import load_retrieval

        stops = {c.id: c.text for c in load_retrieval(stop_claims, None, stop_format.value).claims}
    result = train(
        trajectories,
        out,
        stop_claims=stops,
        model_config=cfg,
        config=TrainConfig(
            returns=returns.value,
            negatives=negatives,
            epochs=epochs,
            seed=seed,
            encoder=encoder,
            batch_size=batch_size,
            max_sequences_per_claim=max_sequences_per_claim,
            holdout=holdout,
            val_fraction=val_fraction,
            finetune_encoder=finetune_encoder,
            device=device,
            threads=threads,
        ),
    )
    c = result.counts
    val = f", validation loss {result.val_loss:.3f}" if result.val_loss is not None else ""
    typer.echo(
        f"trained on {c.episodes} sequences from {c.claims} claims ({c.too_long} too long,"
        f" {c.out_of_space} outside the action space, {c.negatives_dropped} negatives dropped,"
        f" {c.stop_only} stop-only):"
        f" {result.steps} steps, loss {result.final_loss:.3f}{val}, {result.seconds:.0f} s"
        f" -> {result.out}"
    )


def run_cmd(
    claims: Annotated[list[str], typer.Argument(help="Claims or queries to rewrite.")],
    model: Annotated[
        str,
        typer.Option(
            help="'default' (the shipped scorer whose judge reads with the default stance model),"
            " 'mpnet' or 'small' (either shipped scorer), or a folder from `rewrite train`/`train-edits`."
        ),
    ] = "default",
    store: Annotated[
        Path | None,
        typer.Option(help="Knowledge store to search: edit scorers check their edits on it."),
    ] = None,
    target_return: Annotated[
        float | None, typer.Option(help="Gain to aim for (decision transformers).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
    threshold: Annotated[
        float | None,
        typer.Option(
            help="Predicted AP change an edit must exceed (edit scorers) [default: the model's,"
            " -1 for the shipped ones: the best edit the judge backs; see docs/rewrite-model.md]."
        ),
    ] = None,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain",
            help="Show every edit weighed (predicted AP change, endpoint feedback) and why it"
            " stopped (edit scorers, such as the default).",
        ),
    ] = False,
    threads: Annotated[int, typer.Option(min=1, help="torch CPU threads.")] = 1,
) -> None:
    """Rewrite claims into better queries; prints each rewrite and its edit trace.

    Example: factseek rewrite run "5G towers spread the virus" --store my-store --explain
    """
    import dataclasses

    from factseek.rewrite.edits.shipped import load_rewriter, preflight, small_store_note

    texts = [c.strip() for c in claims]
    if not all(texts):
        raise InputError("empty claim")
    preflight(model)  # a missing package: one line, before the store opens
    search = None
    if store is not None:
        from factseek.search.base import make_backend

        search = make_backend("local", store=store)
    rewriter = load_rewriter(model, search=search)
    if "torch" in sys.modules:  # a decision transformer (the edit scorer runs on numpy)
        _set_threads(threads)
    if target_return is not None and not hasattr(rewriter, "default_target"):
        raise InputError("--target-return applies to decision transformers only")
    if target_return is None and threshold is None and rewriter.abstain:
        typer.echo(
            "note: calibration found no clear gain from this model's edits, so it leaves queries"
            " alone"
            + ("; --target-return forces edits" if hasattr(rewriter, "default_target") else ""),
            err=True,
        )
    extra: dict[str, object] = {} if target_return is None else {"target_return": target_return}
    if threshold is not None:
        if hasattr(rewriter, "default_target"):
            raise InputError("--threshold applies to edit scorers only")
        extra["threshold"] = threshold
    if explain:
        if hasattr(rewriter, "default_target"):
            raise InputError("--explain shows an edit scorer's weighing; this is a decision transformer")  # fmt: skip
        extra["explain"] = True
    policy = getattr(rewriter, "policy", None)
    if policy is not None and (note := small_store_note(search, policy.k)):
        typer.echo(note, err=True)
    for r in rewriter.rewrite(texts, **extra):
        if as_json:
            typer.echo(json.dumps(dataclasses.asdict(r), ensure_ascii=False))
            continue
        typer.echo(r.text)
        typer.echo(f"  trace: {' '.join(r.trace) or '(none)'} [{r.stopped}]")
        if explain:
            for line in explain_lines(r):
                typer.echo(line)


def explain_lines(r: object) -> list[str]:
    """``--explain``'s text for one ``RewriteResult``: each step's candidates, best first."""
    out = []
    for n, step in enumerate(getattr(r, "weighed", ()), 1):
        out.append(
            f"  step {n}: {len(step.candidates)} edits weighed on {step.query!r},"
            f" threshold {step.threshold:+.3f}"
        )
        judged = any(name == "pje_d" for c in step.candidates for name, _ in c.feedback)
        out.append(
            "     predicted  results→claim  pseudo-AP"
            + ("   judge-AP" if judged else "")
            + "  top-10 kept  edit         query"
        )
        for c in step.candidates:
            f = dict(c.feedback)
            mark = "*" if c.action == step.chosen else " "
            judge = f"  {f.get('pje_d', 0.0):+9.3f}" if judged else ""
            mark = mark if getattr(c, "backed", True) else "-"
            out.append(
                f"   {mark} {c.predicted:+9.3f}  {f.get('dcg_d', 0.0):+13.3f}  {f.get('prf1_d', 0.0):+9.3f}"
                f"{judge}  {f.get('ov10', 0.0):11.2f}  {c.action:<11}  {c.text}"
            )
    out.append(f"  stopped: {getattr(r, 'why', '') or getattr(r, 'stopped', '')}")
    out.append(
        "  (predicted: the change of AP@k the scorer expects; results→claim: how much closer to"
        " the claim the edit's results are (DCG-weighted cosine); pseudo-AP: change of AP with the"
        " result the endpoint and the encoder agree on most taken as relevant; judge-AP (models with a"
        " learned judge): change of the AP expected under the judge's probabilities of which result"
        " is the evidence; top-10 kept: share of the current top 10"
        " still in the edit's; * = taken; - = the judge does not back it, so it is not taken)"
    )
    return out


def eval_cmd(
    model: Annotated[
        list[Path],
        typer.Option(
            help="Model folder(s), or a shipped scorer (default, mpnet, small); several make"
            " the ablation table."
        ),
    ],
    claims: ClaimsOpt,
    corpus: CorpusOpt = None,
    data_format: FormatOpt = DataFormat.jsonl,
    split: SplitOpt = SplitName.all,
    retriever: RetrieverOpt = RetrieverName.bm25,
    out: Annotated[Path, typer.Option(help="Folder for results, table and plots.")] = Path(
        "rewrite-eval"
    ),
    k: Annotated[int, typer.Option(min=1, help="Cut-off of the metrics (mAP@k, recall@k).")] = 50,
    seed: Annotated[int, typer.Option(help="Seed of the random-edit baseline.")] = 0,
    holdout: Annotated[
        float,
        typer.Option(min=0.0, max=1.0, help="Evaluate only the claims `train --holdout` held out."),
    ] = 0.0,
    target_return: Annotated[
        float | None, typer.Option(help="Gain to aim for [default: the model's calibrated one].")
    ] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="First N claims only.")] = None,
    guard: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Also evaluate with endpoint feedback choosing among the model's top N edits"
            " (0: every allowed edit).",
        ),
    ] = None,
    guard_scorer: Annotated[
        str | None,
        typer.Option(
            help="With --guard: an edit scorer (folder, or mpnet / small / default) decides among"
            " the transformer's top N edits instead of the endpoint feedback.",
        ),
    ] = None,
    threads: Annotated[int, typer.Option(min=1, help="torch CPU threads.")] = 1,
) -> None:
    """Compare model rewrites with the claim and with random edits (mAP, recall, MRR @k)."""
    from factseek.errors import InputError
    from factseek.rewrite.evaluate import run_eval

    if guard_scorer is not None and guard is None:
        raise InputError(
            "--guard-scorer decides among the model's top --guard N edits: give --guard"
        )
    _set_threads(threads)
    table = run_eval(
        models=model,
        claims=claims,
        corpus=corpus,
        data_format=data_format.value,
        split=split.value,
        retriever=retriever.value,
        out=out,
        k=k,
        seed=seed,
        holdout=holdout,
        target_return=target_return,
        limit=limit,
        guard_candidates=guard,
        guard_scorer=guard_scorer,
    )
    typer.echo(table, nl=False)
    typer.echo(f"results, table and figures in {out}")


def calibrate_cmd(
    model: Annotated[Path, typer.Option(help="Model folder from `rewrite train`.")],
    claims: ClaimsOpt,
    corpus: CorpusOpt = None,
    data_format: FormatOpt = DataFormat.jsonl,
    split: SplitOpt = SplitName.all,
    retriever: RetrieverOpt = RetrieverName.bm25,
    k: Annotated[int, typer.Option(min=1, help="Cut-off of the metric.")] = 50,
    validation: Annotated[
        bool,
        typer.Option(
            "--validation/--all",
            help="Only the model's validation claims (never trained on), or every claim given"
            " (a dev split).",
        ),
    ] = True,
    dry_run: Annotated[
        bool, typer.Option(help="Print the choice; leave the model as it is.")
    ] = False,
    metric: Annotated[
        CalibrationMetric, typer.Option(help="What to maximise: AP, recall or RR at k.")
    ] = CalibrationMetric.map,
    threads: Annotated[int, typer.Option(min=1, help="torch CPU threads.")] = 1,
) -> None:
    """Pick the default target return on validation claims (0 unless edits clearly help)."""
    from factseek.rewrite.evaluate import run_calibrate

    _set_threads(threads)
    cal = run_calibrate(
        model=model,
        claims=claims,
        corpus=corpus,
        data_format=data_format.value,
        split=split.value,
        retriever=retriever.value,
        k=k,
        validation_only=validation,
        write=not dry_run,
        metric=metric.value,
    )
    name = f"{metric.value}@{k}"
    typer.echo(f"{cal.claims} claims, the claims themselves: {name} {cal.claim_score:.3f}")
    for target, m, steps in cal.grid:
        mark = "  <- chosen" if target == cal.target_return and not cal.abstain else ""
        typer.echo(f"  target {target:.3f}: {name} {m:.3f}, {steps:.2f} edits{mark}")
    lo, hi = cal.gain_ci
    typer.echo(
        f"best target {cal.best:g}: mean {metric.value} gain 95% CI [{lo:+.4f}, {hi:+.4f}]"
        + (
            ""
            if not cal.abstain
            else "; not clearly above 0, so the rewriter will leave queries alone"
        )
    )
    if not dry_run:
        what = "abstain" if cal.abstain else f"target return {cal.target_return:g}"
        typer.echo(f"default ({what}) written to {model}")


def _set_threads(n: int) -> None:
    import torch

    torch.set_num_threads(n)
