"""`factseek rewrite bfs`: generate query-rewriting training data (BFS over token edits)."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from factseek.cli.rewrite_options import CorpusOpt, DataFormat, FormatOpt, SplitName, SplitOpt
from factseek.errors import ConfigError


class RetrieverName(StrEnum):
    bm25 = "bm25"
    knn = "knn"
    backend = "backend"


def bfs(
    claims: Annotated[Path, typer.Option(help="Claims file (or CheckThat split folder).")],
    out: Annotated[Path, typer.Option(help="Output folder (resumed if it exists).")],
    corpus: CorpusOpt = None,
    format: FormatOpt = DataFormat.jsonl,
    split: SplitOpt = SplitName.all,
    retriever: Annotated[RetrieverName, typer.Option(help="Search endpoint.")] = (
        RetrieverName.bm25
    ),
    reward: Annotated[str, typer.Option(help="ap@K, recall@K or rr.")] = "ap@50",
    depth: Annotated[int, typer.Option(min=1, help="Edits per sequence (K).")] = 4,
    min_gain: Annotated[float, typer.Option(help="Prune relative gains below this.")] = 0.03,
    prune_fraction: Annotated[float, typer.Option(help="Drop this fraction at random.")] = 0.05,
    top: Annotated[int, typer.Option(min=1, help="Sequences kept per claim.")] = 50,
    max_frontier: Annotated[int, typer.Option(min=0, help="Queries per level (0: no cap).")] = 200,
    negatives: Annotated[int, typer.Option(min=0, help="Negative sequences per claim.")] = 0,
    seed: Annotated[int, typer.Option(help="Seed of the random pruning.")] = 0,
    limit: Annotated[int, typer.Option(min=0, help="Only the first N claims (0: all).")] = 0,
    skip_held_out: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=1.0,
            help="Skip the claims `train/eval --holdout` with this fraction hold out (before"
            " --limit); the corpus stays whole.",
        ),
    ] = 0.0,
    workers: Annotated[int, typer.Option(min=1, help="Local worker processes.")] = 1,
    ray: Annotated[
        str | None, typer.Option(help="Ray cluster address, 'auto', or 'local' (start one).")
    ] = None,
    encoder: Annotated[str, typer.Option(help="Encoder for knn (name or folder).")] = "minilm",
    backend: Annotated[str | None, typer.Option(help="SearchBackend name for 'backend'.")] = None,
    backend_opt: Annotated[
        list[str] | None, typer.Option(help="KEY=VALUE options for the backend (repeatable).")
    ] = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    threads: Annotated[
        int, typer.Option(min=1, help="torch CPU threads for knn (1 is fastest on a busy machine).")
    ] = 1,
    device: Annotated[
        str | None,
        typer.Option(help="Where the knn encoder runs: cpu (default) or cuda (use --workers 1)."),
    ] = None,
) -> None:
    """Find edit sequences that improve each claim's retrieval; write trajectories to OUT."""
    from factseek.datasets.retrieval import load_retrieval
    from factseek.rewrite.environment.bfs import BfsConfig, generate
    from factseek.rewrite.environment.env import Environment, corpus_info, make_retriever

    config = BfsConfig(
        depth=depth,
        min_gain=min_gain,
        prune_fraction=prune_fraction,
        top_sequences=top,
        max_frontier=max_frontier,
        negatives=negatives,
        seed=seed,
    )
    from factseek.rewrite.splits import claims_fingerprint, is_held_out, select_split

    data = load_retrieval(claims, corpus, format=format.value)
    todo = list(select_split(data.claims, split.value))
    if skip_held_out > 0:
        todo = [c for c in todo if not is_held_out(c.id, skip_held_out)]
    todo = todo[:limit] if limit else todo
    if not todo:
        raise ConfigError(f"no usable claims in {claims}")
    if retriever is RetrieverName.knn:
        import torch

        torch.set_num_threads(threads)
    options = dict(_kv(o) for o in backend_opt or [])
    ret = make_retriever(
        retriever.value,
        data.pairs(),
        encoder=encoder,
        backend=backend,
        options=options,
        device=device,
    )
    env = Environment(retriever=ret, reward=reward)
    result = generate(
        env,
        todo,
        out,
        config,
        workers=workers,
        ray_address=ray,
        corpus=corpus_info(data.pairs()),
        progress=progress,
        split=split.value,
        data=claims_fingerprint(data.claims),
    )
    typer.echo(json.dumps({"out": str(out), **result["counts"], "seconds": result["seconds"]}))


def _kv(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise ConfigError(f"--backend-opt wants KEY=VALUE, got {text!r}")
    return key, value


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("bfs")(bfs)
