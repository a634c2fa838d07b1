"""`factseek eval decompose` (recall of gold subquestions) and `factseek eval pipeline`
(end-to-end verdicts on labelled claims)."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from factseek.cli.check import CascadeOpt
from factseek.cli.cluster import RayCommand, RayOpt, RayWorkersOpt
from factseek.cli.common import make_app
from factseek.constraints.temporal import DEFAULT_GUESSED
from factseek.files import atomic_write

app = make_app("Evaluation commands.")


class DecomposerName(StrEnum):
    rules = "rules"
    llm = "llm"
    annotators = "annotators"  # each annotator's questions against the other's: a human reference


class EvalLLM(StrEnum):
    llamacpp = "llamacpp"
    openai = "openai"


@app.command("decompose")
def decompose_cmd(
    data: Annotated[
        Path,
        typer.Option(
            "--data", help="Claims with gold questions: ClaimDecomp JSONL, or a claims file."
        ),
    ],
    data_format: Annotated[
        str,
        typer.Option(
            "--format",
            help="Data format: auto (guess), claims (docs/formats.md), claimdecomp, averitec.",
        ),
    ] = "auto",
    decomposer: Annotated[
        DecomposerName, typer.Option("--decomposer", help="What generates the questions.")
    ] = DecomposerName.rules,
    llm: Annotated[
        EvalLLM, typer.Option("--llm", help="LLM backend for --decomposer llm.")
    ] = EvalLLM.llamacpp,
    llm_model: Annotated[
        str | None, typer.Option("--llm-model", help="Model name (openai) or GGUF path (llamacpp).")
    ] = None,
    llm_base_url: Annotated[
        str | None, typer.Option("--llm-base-url", help="OpenAI-compatible base URL.")
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Bypass the LLM response cache.")
    ] = False,
    n: Annotated[int, typer.Option("--n", min=1, help="Questions to sample per claim (llm).")] = 10,
    rounds: Annotated[int, typer.Option("--rounds", min=1, help="Sampling rounds (llm).")] = 5,
    threshold: Annotated[
        float | None,
        typer.Option("--threshold", min=0.0, max=1.0, help="Cosine for a match [default: 0.79]."),
    ] = None,
    encoder: Annotated[
        str, typer.Option("--encoder", help="Encoder name (minilm, mpnet) or folder.")
    ] = "minilm",
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Only the first N claims.")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write per-claim questions and scores (JSON).")
    ] = None,
) -> None:
    """Recall of gold subquestions by generated ones (embedding match above a threshold)."""
    from rich.progress import Progress

    from factseek.datasets.claims import load_claims
    from factseek.decompose.evaluate import DEFAULT_MATCH_THRESHOLD, evaluate
    from factseek.errors import InputError, LLMError
    from factseek.ml.encode import encoder_from_name
    from factseek.types import to_dict

    if not data.is_file():
        raise InputError(f"data file not found: {data}")
    rows = [r for r in load_claims(data, data_format) if r.questions]
    if limit is not None:
        rows = rows[:limit]
    if not rows:
        raise InputError(f"{data}: no claims with annotated questions")
    threshold = DEFAULT_MATCH_THRESHOLD if threshold is None else threshold

    pairs: list[tuple[list[str], list[str]]] = []
    per_claim: list[dict[str, Any]] = []
    failures: list[str] = []
    usage: Any = None
    with Progress(transient=True) as progress:
        task = progress.add_task(f"decompose ({decomposer.value})", total=len(rows))
        if decomposer == DecomposerName.annotators:
            for r in rows:
                sets = [list(s) for s in r.question_sets if s]
                for i in range(len(sets)):
                    for j in range(len(sets)):
                        if i != j:
                            pairs.append((sets[i], sets[j]))
                progress.advance(task)
        else:
            if decomposer == DecomposerName.rules:
                from factseek.decompose.rules import RuleDecomposer

                dec: Any = RuleDecomposer()
            else:
                from factseek.decompose.llm import LLMDecomposer
                from factseek.llm import llm_from_options

                model = llm_from_options(
                    llm.value, model=llm_model, base_url=llm_base_url, no_cache=no_cache
                )
                usage = model.usage if model is not None else None
                dec = LLMDecomposer(model, n=n, rounds=rounds)
            for r in rows:
                try:
                    qs = [q.text for q in dec.decompose(r.claim) if q.source != "claim"]
                except LLMError as e:
                    qs = []
                    failures.append(f"{r.claim.id}: {e}")
                pairs.append((qs, list(r.questions)))
                per_claim.append({"id": r.claim.id, "generated": qs, "gold": list(r.questions)})
                progress.advance(task)
        enc = encoder_from_name(encoder)
        result = evaluate(pairs, enc, threshold=threshold)

    name = decomposer.value if decomposer != DecomposerName.llm else f"llm:{llm.value}"
    typer.echo(result.line(name))
    if failures:
        typer.echo(
            f"{len(failures)} claim(s) failed and count as no questions; first: {failures[0]}"
        )
    if usage is not None:
        typer.echo(f"llm usage: {dict(usage)}")
    if out is not None:
        payload = {
            "format_version": 1,
            "data": str(data),
            "decomposer": name,
            "encoder": encoder,
            "score": to_dict(result),
            "failures": failures,
            "usage": dict(usage) if usage is not None else {},
            "claims": per_claim,
        }
        atomic_write(out, json.dumps(payload, indent=2, ensure_ascii=False))
        typer.echo(f"wrote {out}", err=True)


class PipelineFormat(StrEnum):
    auto = "auto"
    claims = "claims"
    averitec = "averitec"
    claimdecomp = "claimdecomp"
    liar = "liar"
    liar_plus = "liar-plus"


@app.command("pipeline", cls=RayCommand)
def pipeline_cmd(
    claims: Annotated[
        Path,
        typer.Option(
            "--claims", help="Labelled claims: a claims file (docs/formats.md) or a data set file."
        ),
    ],
    store: Annotated[Path, typer.Option("--store", help="Knowledge store to search.")],
    out: Annotated[Path, typer.Option("--out", help="Run folder: reports, journal, results.")],
    fmt: Annotated[
        PipelineFormat,
        typer.Option(
            "--format",
            help="The file's format: auto (guess), claims (JSONL or CSV/TSV; docs/formats.md),"
            " or a data set's.",
        ),
    ] = PipelineFormat.auto,
    judge: Annotated[
        Path | None,
        typer.Option("--judge", help="Judge folder (default: rules over the evidence stance)."),
    ] = None,
    stance: Annotated[
        str,
        typer.Option(
            "--stance", help="Stance model: default, small, mpnet, a trained folder, or none."
        ),
    ] = "default",
    cascade: CascadeOpt = False,
    verdict_rules: Annotated[
        str,
        typer.Option(
            "--verdict-rules",
            help="The rules verdict's thresholds and confidence maps: default (those shipped "
            "for the stance model), small or mpnet (those shipped for that model), or a file "
            "from `factseek judge fit-rules`.",
        ),
    ] = "default",
    k: Annotated[int, typer.Option("--k", min=1, max=100, help="Documents per query.")] = 10,
    undated: Annotated[
        str, typer.Option("--undated", help="drop or keep pages without a date.")
    ] = "drop",
    date_basis: Annotated[
        str,
        typer.Option(
            "--date-basis",
            help="modified (a page modified on or after the claim's day is removed) or"
            " published (the paper). See `check --date-basis`.",
        ),
    ] = "modified",
    guessed: Annotated[
        str, typer.Option("--guessed", help="keep, flag or drop guessed page dates.")
    ] = DEFAULT_GUESSED,
    top_docs: Annotated[
        int | None, typer.Option("--top-docs", min=1, max=100, help="See `check --top-docs`.")
    ] = None,
    cards: Annotated[
        int | None, typer.Option("--cards", min=1, max=20, help="Evidence cards per question.")
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Only the first N claims.")
    ] = None,
    resamples: Annotated[
        int, typer.Option("--resamples", min=100, help="Bootstrap resamples for the CIs.")
    ] = 2000,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
    ray: RayOpt = None,
    ray_workers: RayWorkersOpt = None,
) -> None:
    """Run the pipeline over labelled claims and score claim-only, gold and retrieved evidence.
    With --ray, the claims run on a Ray cluster (the judging stays here)."""
    from factseek.api import CheckOptions, build_parts, check_config
    from factseek.cli.cluster import ray_settings
    from factseek.datasets.claims import data_format, with_ids
    from factseek.errors import InputError
    from factseek.runs.evaluate import evaluate_pipeline

    if not claims.is_file():
        raise InputError(f"claims file not found: {claims}")
    spec = data_format(fmt.value, claims)
    rows = with_ids(spec.load(claims))
    rows = rows[:limit] if limit is not None else rows
    settings = ray_settings(ray, ray_workers)
    from factseek.files import cache_root
    from factseek.stance import engine_for_many

    options = CheckOptions(
        store=store,
        stance=stance,
        cascade=cascade,
        scale="auto",
        verdict_rules=verdict_rules,
        stance_engine=engine_for_many(),
        cache_dir=cache_root(),  # stance readings: a re-run reads only pairs it has not read
    )
    parts = build_parts(options)
    the_judge = None
    if judge is not None:
        from factseek.judge import load_judge

        the_judge = load_judge(judge)
    config = check_config(
        k=k,
        undated=undated,
        top_docs=top_docs,
        cards=cards,
        date_basis=date_basis,
        guessed=guessed,
    )
    run = None
    if settings is not None:
        from factseek.runs.distributed import run_claims_ray

        def run(claims: Any, run_out: Path) -> object:
            return run_claims_ray(claims, run_out, options, config, settings, progress=not quiet)

    result = evaluate_pipeline(
        rows,
        spec.labels,
        parts,
        config,
        out,
        judge=the_judge,
        resamples=resamples,
        progress=not quiet,
        log=lambda m: typer.echo(m, err=True),
        run=run,
    )
    typer.echo((out / "results.md").read_text(encoding="utf-8"), nl=False)
    if result.failed:
        typer.echo(f"{result.failed} claims failed; see {out / 'errors.jsonl'}", err=True)
