"""`factseek rewrite train-edits`: the learned edit scorer over endpoint feedback."""

from __future__ import annotations

import dataclasses
import json
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
)
from factseek.errors import InputError


def train_edits(
    claims: ClaimsOpt,
    out: Annotated[Path, typer.Option(help="Model folder to write.")],
    corpus: CorpusOpt = None,
    data_format: FormatOpt = DataFormat.jsonl,
    split: Annotated[
        SplitName, typer.Option(help="Claims to fit on (groups of shared relevant documents).")
    ] = SplitName.train,
    val_split: Annotated[
        SplitName, typer.Option(help="Claims to choose the threshold and budget on.")
    ] = SplitName.validation,
    val_claims: Annotated[
        Path | None,
        typer.Option(
            help="Take the --val-split claims from this data set instead (same --format; it"
            " must search the same documents, see --val-corpus): FEVER dev when fitting on"
            " FEVER train."
        ),
    ] = None,
    val_corpus: Annotated[
        list[Path] | None, typer.Option(help="Corpus of --val-claims (repeatable, as --corpus).")
    ] = None,
    reward: Annotated[
        str, typer.Option(help="ap@K, recall@K or rr (K: the endpoint's cut-off).")
    ] = "ap@50",
    retriever: RetrieverOpt = RetrieverName.bm25,
    encoder: Annotated[str, typer.Option(help="Sentence encoder for the feedback.")] = "minilm",
    hidden: Annotated[int, typer.Option(min=4, help="MLP width.")] = 64,
    ensemble: Annotated[
        int,
        typer.Option(
            min=1, help="Fit N MLPs (seeds SEED..SEED+N-1) and average them into one scorer."
        ),
    ] = 1,
    epochs: Annotated[int, typer.Option(min=1, help="Training passes over the single edits.")] = 20,
    rounds: Annotated[
        int,
        typer.Option(
            min=1, help="Fit rounds; each after the first adds the states the policy reaches."
        ),
    ] = 2,
    seed: Annotated[int, typer.Option(help="Random seed (initial weights, batch order).")] = 0,
    limit: Annotated[int, typer.Option(min=0, help="First N training claims (0: all).")] = 0,
    judge: Annotated[
        bool,
        typer.Option(
            help="Learn the judge of which pooled result is the evidence (rewrite/edits/judge.py)"
            " on the training claims' pools, and give the scorer its features."
        ),
    ] = True,
    judge_reader: Annotated[
        str,
        typer.Option(
            help="A stance model the judge reads its top --judge-reads pooled documents with"
            " (small, mpnet, a folder; '' : none)."
        ),
    ] = "",
    judge_reads: Annotated[
        int, typer.Option(min=1, help="Documents the reader reads a step.")
    ] = 10,
    judge_margin: Annotated[
        float | None,
        typer.Option(
            help="Allow an edit only when it raises the AP@K the judge expects by more than this"
            " (backs every edit with the judge's reading of the results; calibrated with it)."
        ),
    ] = None,
    judge_claims: Annotated[
        int,
        typer.Option(
            min=0,
            help="Fit the judge on this many --split claims after the first --limit ones (claims"
            " the scorer does not fit on, so it learns how far to trust the judge on new"
            " claims); 0: on the scorer's own claims.",
        ),
    ] = 0,
    threads: Annotated[int, typer.Option(min=1, help="torch CPU threads.")] = 1,
) -> None:
    """Fit an edit scorer on single edits of the --split claims (the --retriever endpoint),
    choose its threshold on the --val-split claims, and write MODEL (abstains unless edits
    clearly help)."""
    import torch

    from factseek.datasets.retrieval import load_retrieval
    from factseek.files import cache_root
    from factseek.metrics.retrieval import parse_metric
    from factseek.ml.encode import encoder_from_name
    from factseek.rewrite.edits import model as edit_model
    from factseek.rewrite.edits import train as edit_train
    from factseek.rewrite.edits.features import Endpoint
    from factseek.rewrite.environment.env import BM25Retriever, KNNRetriever, corpus_info
    from factseek.rewrite.splits import claims_fingerprint, select_split

    torch.set_num_threads(threads)
    if judge_margin is not None and not judge:
        raise InputError("--judge-margin needs the judge (leave out --no-judge)")
    if val_claims is None and (split is SplitName.all or split == val_split):
        raise InputError("--split and --val-split must be two different sides of the split")
    data = load_retrieval(claims, corpus, data_format.value)
    side = select_split(data.claims, split.value)
    fit_claims = side[:limit] if limit else side
    judge_side = side[limit : limit + judge_claims] if judge_claims else fit_claims
    if judge and judge_claims and (not limit or not judge_side):
        raise InputError("--judge-claims takes claims after the first --limit: give --limit too")
    val_data = data
    if val_claims is not None:
        val_data = load_retrieval(val_claims, val_corpus, data_format.value)
        if corpus_info(val_data.pairs()) != corpus_info(data.pairs()):
            raise InputError(
                "--val-claims search other documents than --claims: give --val-corpus so that"
                " both corpora are the same (docs/rewrite-model.md)"
            )
    val_side = select_split(val_data.claims, val_split.value)
    if not fit_claims or not val_side:
        raise InputError(f"no claims on the {split.value!r} or {val_split.value!r} side")
    _, k = parse_metric(reward)
    enc = encoder_from_name(encoder)
    vectors = KNNRetriever.build(data.pairs(), enc, cache_dir=cache_root())
    ranker = vectors if retriever is RetrieverName.knn else BM25Retriever.from_docs(data.pairs())
    endpoint = Endpoint.from_corpus(ranker, data.pairs(), vectors.embeddings, enc, k=k)
    where = corpus_info(data.pairs())["fingerprint"]  # rows kept per corpus and endpoint
    cache = (
        cache_root() / "rewrite-edits",
        where if ranker.name == "bm25" else f"{where}:{ranker.name}",
    )
    judged = None
    if judge:
        from factseek.rewrite.edits.judge import Reader
        from factseek.rewrite.edits.judge import fit as fit_judge

        reader = Reader(judge_reader, judge_reads) if judge_reader else None
        xs, ys = edit_train.judge_pools(judge_side, endpoint, enc, progress=True, reader=reader)
        judged = fit_judge(xs, ys, seed=seed, reader=reader)
    scorer = None
    for _ in range(rounds):
        rows = edit_train.collect(
            fit_claims, endpoint, enc, reward=reward, progress=True, cache=cache,
            policy=scorer, steps=max(edit_train.BUDGETS), judge=judged,
        )  # fmt: skip
        fits = [edit_train.fit_scorer(rows, hidden=hidden, epochs=epochs, seed=seed + i, judge=judged) for i in range(ensemble)]  # fmt: skip
        scorer = fits[0] if ensemble == 1 else edit_model.average(fits)
    roll = edit_train.rollout(scorer, val_side, endpoint, enc, reward=reward, judge_margin=judge_margin)  # fmt: skip
    choice = edit_train.choose(roll, seed=seed)
    meta = {
        "train": {"source": Path(claims).name, "format": data_format.value, "split": split.value,
                  "validation_source": Path(val_claims or claims).name, "validation_split": val_split.value,
                  "claims": len(fit_claims), "edits": len(rows.y), "reward": reward,
                  "retriever": ranker.name, "hidden": hidden, "epochs": epochs, "rounds": rounds,
                  "seed": seed, "ensemble": ensemble, "judge": judge,
                  "judge_claims": len(judge_side) if judge else 0,
                  "judge_reader": Path(judge_reader).name if judge else ""},
        # what `rewrite eval` checks: never evaluate on that side of that claims set
        "bfs": {"split": split.value, "claims": claims_fingerprint(data.claims)},
    }  # fmt: skip
    policy = edit_train.calibrated_policy(choice, k=k, encoder=encoder, meta=meta)
    policy = dataclasses.replace(policy, judge_margin=judge_margin)
    edit_model.save(out, scorer, policy)
    lo, hi = choice.gain_ci
    typer.echo(
        json.dumps(
            {
                "out": str(out),
                "fit_claims": len(fit_claims),
                "edits": len(rows.y),
                "validation_claims": len(val_side),
                "claim": round(choice.claim_score, 4),
                "best": round(choice.score, 4),
                "threshold": policy.meta["calibration"]["threshold"],
                "max_edits": choice.max_edits,
                "gain_ci": [round(lo, 4), round(hi, 4)],
                "abstain": choice.abstain,
            }
        )
    )


def register(app: typer.Typer) -> None:
    """Add ``train-edits`` to the ``rewrite`` app."""
    app.command("train-edits")(train_edits)
