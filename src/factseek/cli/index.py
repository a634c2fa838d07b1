"""`factseek index {build,add,info,verify,seal,search}`: the local knowledge store."""

from __future__ import annotations

import datetime as _dt
import json
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from factseek.cli.common import make_app
from factseek.sanitize import clean_text

if TYPE_CHECKING:
    from factseek.store.build import WriteReport

app = make_app("Build, extend, inspect and search a local knowledge store.")


class OnErrorChoice(StrEnum):
    stop = "stop"
    skip = "skip"


class ModeChoice(StrEnum):
    bm25 = "bm25"
    dense = "dense"
    hybrid = "hybrid"


StoreOpt = Annotated[Path, typer.Option("--store", help="The store folder.")]
SourcesArg = Annotated[
    list[Path], typer.Argument(help="JSONL files and/or folders of .html/.htm files.")
]
OnErrorOpt = Annotated[
    OnErrorChoice,
    typer.Option("--on-error", help="On a malformed record: stop with its file:line, or skip it."),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]


def _summary(verb: str, report: WriteReport) -> str:
    line = f"{verb} {report.added:,} documents in {report.seconds:.1f}s; store {report.store} now holds {report.n_docs:,}"
    if report.skipped:
        line += (
            f"; skipped {report.skipped:,} record(s), first: {report.first_error or 'duplicate id'}"
        )
    return line


@app.command("build")
def build_cmd(
    sources: SourcesArg,
    store: StoreOpt,
    on_error: OnErrorOpt = OnErrorChoice.stop,
    dense: Annotated[
        bool, typer.Option("--dense", help="Also store MiniLM vectors (dense/hybrid search).")
    ] = False,
    k1: Annotated[float, typer.Option("--k1", min=0.0, help="BM25 k1.")] = 1.5,
    b: Annotated[float, typer.Option("--b", min=0.0, max=1.0, help="BM25 b.")] = 0.75,
    force: Annotated[
        bool, typer.Option("--force", help="Replace a store already in the folder.")
    ] = False,
    quiet: QuietOpt = False,
) -> None:
    """Build a store from JSONL (url, title, text, published, ...) or HTML files."""
    from factseek.store.build import build_store

    encoder = None
    if dense:
        from factseek.ml.encode import default_encoder

        encoder = default_encoder()
    report = build_store(
        sources,
        store,
        on_error=on_error.value,
        k1=k1,
        b=b,
        encoder=encoder,
        progress=not quiet,
        overwrite=force,
    )
    typer.echo(_summary("built", report))


@app.command("add")
def add_cmd(
    sources: SourcesArg,
    store: StoreOpt,
    on_error: OnErrorOpt = OnErrorChoice.stop,
    quiet: QuietOpt = False,
) -> None:
    """Add documents to a store (atomically: the store changes only when all are written)."""
    from factseek.store.build import add_to_store
    from factseek.store.layout import read_config

    encoder = None
    name = read_config(store).dense_encoder
    if name:
        from factseek.ml.encode import encoder_from_name

        encoder = encoder_from_name(name)
    report = add_to_store(
        sources, store, on_error=on_error.value, encoder=encoder, progress=not quiet
    )
    typer.echo(_summary("added", report))


@app.command("info")
def info_cmd(
    store: StoreOpt,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Counts, date range, domains and format of a store."""
    from factseek.store.reader import Store
    from factseek.types import to_dict

    info = Store.open(store).info()
    if as_json:
        typer.echo(json.dumps(to_dict(info), indent=2))
        return
    span = f"{info.first_date} .. {info.last_date}" if info.first_date else "none"
    domains = ", ".join(f"{d} ({n:,})" for d, n in info.domains)
    lines = [
        f"store           {info.path}",
        f"format_version  {info.format_version}",
        f"documents       {info.n_docs:,} in {info.n_segments} segment(s)",
        f"dated           {info.dated:,} ({span}); undated {info.undated:,}",
        f"domains         {info.n_domains:,}: {domains}",
        f"terms           {info.n_terms:,}; postings {info.n_postings:,}",
        f"bm25            k1={info.k1} b={info.b}; analyzer {info.analyzer}",
        f"dense           {f'{info.dense_encoder} ({info.dense_dim}-d)' if info.dense_encoder else 'no'}",
        f"skipped lines   {info.skipped_lines:,}",
    ]
    typer.echo(clean_text("\n".join(lines), keep_newlines=True))  # hosts come from pages


@app.command("verify")
def verify_cmd(store: StoreOpt) -> None:
    """Check every file of a store against the checksums written when it was built."""
    from factseek.store.reader import Store

    opened = Store.open(store)  # every checksum file named by config.json, present and unchanged
    checked = opened.verify()
    n = len(opened.config.checksums)
    typer.echo(f"{store}: ok, all {checked} files match their checksums ({n} checksum files)")


@app.command("seal")
def seal_cmd(
    store: StoreOpt,
    trust_contents: Annotated[
        bool,
        typer.Option(
            "--trust-contents",
            help="Write missing checksum files from the files as they are now (unverifiable).",
        ),
    ] = False,
) -> None:
    """Record the checksum files of a store built by an older factseek (after verifying them)."""
    from factseek.store.build import seal_store

    report = seal_store(store, trust_contents=trust_contents)
    if report.already_sealed:
        typer.echo(f"{store}: already sealed; every file matches its checksum")
        return
    line = f"{store}: sealed; {len(report.verified)} checksum file(s) verified"
    if report.written:
        line += f", {len(report.written)} written from the files as they are now (--trust-contents)"
    typer.echo(line)


@app.command("search")
def search_cmd(
    query: Annotated[str, typer.Argument(help="The query text.")],
    store: StoreOpt,
    k: Annotated[int, typer.Option("-k", min=1, max=10_000, help="Number of hits.")] = 10,
    before: Annotated[
        str | None, typer.Option("--before", help="Only pages published before YYYY-MM-DD.")
    ] = None,
    keep_undated: Annotated[
        bool, typer.Option("--keep-undated", help="With --before, keep undated pages too.")
    ] = False,
    no_site_filter: Annotated[
        bool, typer.Option("--no-site-filter", help="Keep fact-check, PDF and video pages.")
    ] = False,
    mode: Annotated[ModeChoice, typer.Option("--mode", help="Ranking.")] = ModeChoice.bm25,
    as_json: Annotated[bool, typer.Option("--json", help="Print hits as JSON lines.")] = False,
) -> None:
    """Search a store under the paper's constraints (fact-check sites, PDFs, video excluded)."""
    from dataclasses import replace

    from factseek.constraints.hits import DEFAULT_CONSTRAINTS, NO_CONSTRAINTS
    from factseek.errors import InputError
    from factseek.store.backend import StoreBackend
    from factseek.types import to_json

    try:
        day = _dt.date.fromisoformat(before) if before else None
    except ValueError:
        raise InputError(f"--before {before!r} is not YYYY-MM-DD") from None
    base = NO_CONSTRAINTS if no_site_filter else DEFAULT_CONSTRAINTS
    constraints = replace(base, before=day, undated="keep" if keep_undated else "drop")
    backend = StoreBackend.open(store, mode=mode.value)
    for hit in backend.search(query, k, constraints):
        if as_json:
            typer.echo(clean_text(to_json(hit, indent=None)))
        else:
            typer.echo(
                f"{hit.rank:>3}  {hit.score:8.3f}  {hit.published or '----------'}  "
                + clean_text(hit.url)
            )
