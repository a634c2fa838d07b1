"""`factseek check`, `factseek demo` and `factseek batch`."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from factseek.cli.cluster import RayCommand, RayOpt, RayWorkersOpt
from factseek.constraints.temporal import DEFAULT_GUESSED
from factseek.errors import InputError
from factseek.files import cache_root
from factseek.report import Format


class Undated(StrEnum):
    drop = "drop"
    keep = "keep"


class LLMName(StrEnum):
    none = "none"
    openai = "openai"
    llamacpp = "llamacpp"


def _progress(quiet: bool) -> Any:
    if quiet:
        return None
    from rich.console import Console

    console = Console(stderr=True)
    return lambda stage: console.print(f"[dim]· {stage}[/dim]", highlight=False)


def _emit(report: Any, fmt: Format, out: Path | None) -> None:
    from factseek.files import atomic_write
    from factseek.report import render

    text = render(report, fmt)
    if out is None:
        typer.echo(text, nl=False)
    else:
        atomic_write(out, text)
        typer.echo(f"wrote {out}", err=True)


# Option declarations shared by check and batch.
StoreOpt = Annotated[
    Path | None, typer.Option("--store", help="Knowledge store folder (for --search local).")
]
SearchOpt = Annotated[
    str,
    typer.Option("--search", help="Search backend: local, brave, tavily, exa, serper, searxng."),
]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Report format.")]
KOpt = Annotated[
    int, typer.Option("--k", min=1, max=100, help="Documents per query after the constraints.")
]
UndatedOpt = Annotated[Undated, typer.Option("--undated", help="Policy for pages without a date.")]


class OnConflict(StrEnum):
    after = "after"
    undated = "undated"
    flag = "flag"


ConflictOpt = Annotated[
    OnConflict,
    typer.Option(
        "--on-conflict",
        help="A fetched page dated on both sides of the claim's date: treat as after it "
        "(dropped), as undated (then --undated decides), or only flag it.",
    ),
]


class DateBasisName(StrEnum):
    modified = "modified"
    published = "published"


class Guessed(StrEnum):
    keep = "keep"
    drop = "drop"
    flag = "flag"


DateBasisOpt = Annotated[
    DateBasisName,
    typer.Option(
        "--date-basis",
        help="modified: a page last modified on or after the claim's day is removed (the safe "
        "side); published: the publication date alone decides (the paper).",
    ),
]
GuessedOpt = Annotated[
    Guessed,
    typer.Option(
        "--guessed",
        help="A page whose date is only a guess (htmldate's heuristics, or printed outside the "
        "article): use the guess (keep), use it and note it (flag), or remove the page (drop).",
    ),
]
KeepPdfOpt = Annotated[
    bool,
    typer.Option(
        "--keep-pdf",
        help="Keep PDF results (the paper's site constraint removes them) and read their text"
        " (needs factseek[pdf]).",
    ),
]
ExcludeOpt = Annotated[
    list[str] | None, typer.Option("--exclude-site", help="Another site to exclude (repeatable).")
]
DecompOpt = Annotated[str, typer.Option("--decomposer", help="auto, rules or llm.")]
SummOpt = Annotated[
    str, typer.Option("--summarizer", help="auto, extractive, llm-zero-shot or llm-few-shot.")
]
LLMOpt = Annotated[LLMName, typer.Option("--llm", help="Language model backend.")]
LLMModelOpt = Annotated[
    str | None, typer.Option("--llm-model", help="Model name (openai) or GGUF path (llamacpp).")
]
LLMUrlOpt = Annotated[
    str | None, typer.Option("--llm-base-url", help="OpenAI-compatible base URL.")
]
NoCacheOpt = Annotated[
    bool,
    typer.Option("--no-cache", help="Bypass the caches of LLM responses and of stance readings."),
]
JudgeOpt = Annotated[
    Path | None, typer.Option("--judge", help="Trained judge folder (factseek judge train).")
]
LLMJudgeOpt = Annotated[
    Path | None,
    typer.Option(
        "--llm-judge", help="Score thresholds JSON: judge by the LLM's 0-100 score (needs --llm)."
    ),
]
RewriteOpt = Annotated[
    Path | None,
    typer.Option(
        "--rewrite",
        help="Query rewriter: 'default' (the shipped one whose judge reads with this check's stance model: mpnet beside mpnet, else small), 'mpnet' or 'small' (either shipped one), or a model folder.",
    ),
]
RecordOpt = Annotated[
    Path | None, typer.Option("--record", help="Write an evidence bundle of this run to DIR.")
]
ReplayOpt = Annotated[
    Path | None, typer.Option("--replay", help="Rerun from an evidence bundle, offline.")
]
AllowOpt = Annotated[
    list[str] | None,
    typer.Option("--allow-host", help="Host the fetcher may reach though private."),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")]


class Scale(StrEnum):
    auto = "auto"
    averitec = "averitec"
    politifact = "politifact"


TopDocsOpt = Annotated[
    int | None,
    typer.Option(
        "--top-docs",
        min=1,
        max=100,
        help="Documents summarized and searched for evidence cards [default: 4 summarized, "
        "all kept documents searched for cards].",
    ),
]
CardsOpt = Annotated[
    int | None, typer.Option("--cards", min=1, max=20, help="Evidence cards per question [3].")
]
StanceOpt = Annotated[
    str,
    typer.Option(
        "--stance",
        help="Evidence stance model: default (mpnet when installed, else small; $FACTSEEK_STANCE), mpnet (stronger, slower; needs all-mpnet-base-v2: docs/stance.md), small (fast), a trained folder, or none.",
    ),
]
CascadeOpt = Annotated[
    bool,
    typer.Option(
        "--cascade",
        help="With --stance mpnet: the small model screens the pairs first and mpnet skips those"
        " it reads surely as taking no side (fewer mpnet reads, a few verdicts differ;"
        " docs/stance.md, Speed). Default: mpnet reads every pair.",
    ),
]
ScaleOpt = Annotated[
    Scale,
    typer.Option(
        "--scale",
        help="Verdict scale: averitec (4-way, from evidence stance) or politifact (6-way, "
        "needs --judge); auto: the judge's scale, else averitec.",
    ),
]


def _options(**kw: Any) -> dict[str, Any]:
    return {
        "store": kw["store"],
        "search": kw["search"],
        "decomposer": kw["decomposer"],
        "summarizer": kw["summarizer"],
        "llm": kw["llm"].value,
        "llm_model": kw["llm_model"],
        "llm_base_url": kw["llm_base_url"],
        "use_cache": not kw["no_cache"],
        "judge": kw["judge"],
        "llm_judge": kw["llm_judge"],
        "rewrite": kw["rewrite"],
        "record": kw["record"],
        "replay": kw["replay"],
        "allow_hosts": tuple(kw["allow_host"] or ()),
        "cache_dir": cache_root(),
        "stance": kw["stance"],
        "cascade": kw["cascade"],
        "scale": kw["scale"].value,
        "keep_pdf": kw["keep_pdf"],
    }


def check(
    claim: Annotated[
        str | None,
        typer.Argument(help="The claim to check (at most 2,000 characters); or use --claims."),
    ] = None,
    claims: Annotated[
        Path | None,
        typer.Option(
            "--claims",
            help="Check every claim of a claims file (docs/formats.md) instead; JSON output is"
            " then one report per line. For many claims, `factseek batch` resumes and summarises.",
        ),
    ] = None,
    date: Annotated[
        str | None,
        typer.Option(
            "--date",
            help="When the claim was made, YYYY-MM-DD (with --claims: the"
            " default for lines without a date).",
        ),
    ] = None,
    speaker: Annotated[str | None, typer.Option("--speaker", help="Who made the claim.")] = None,
    venue: Annotated[str | None, typer.Option("--venue", help="Where it was made.")] = None,
    store: StoreOpt = None,
    search: SearchOpt = "local",
    fmt: FormatOpt = Format.md,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the report here.")] = None,
    k: KOpt = 10,
    undated: UndatedOpt = Undated.drop,
    on_conflict: ConflictOpt = OnConflict.after,
    date_basis: DateBasisOpt = DateBasisName.modified,
    guessed: GuessedOpt = Guessed(DEFAULT_GUESSED),
    keep_pdf: KeepPdfOpt = False,
    exclude_site: ExcludeOpt = None,
    decomposer: DecompOpt = "auto",
    summarizer: SummOpt = "auto",
    llm: LLMOpt = LLMName.none,
    llm_model: LLMModelOpt = None,
    llm_base_url: LLMUrlOpt = None,
    no_cache: NoCacheOpt = False,
    judge: JudgeOpt = None,
    llm_judge: LLMJudgeOpt = None,
    rewrite: RewriteOpt = None,
    record: RecordOpt = None,
    replay: ReplayOpt = None,
    allow_host: AllowOpt = None,
    top_docs: TopDocsOpt = None,
    cards: CardsOpt = None,
    stance: StanceOpt = "default",
    cascade: CascadeOpt = False,
    scale: ScaleOpt = Scale.auto,
    quiet: QuietOpt = False,
) -> None:
    """Check one claim and print (or write) its evidence report.

    \b
    Examples:
      factseek check "The council approved 4 new buses in March." --date 2023-06-01 --store my-store
      factseek check --claims claims.jsonl --store my-store --format md --out reports.md
    """
    from factseek.api import check as api_check

    if (claim is None) == (claims is None):
        raise InputError("give a claim or --claims FILE (one of the two)")
    if claims is not None:
        _check_file(**locals())
        return
    assert claim is not None
    if out is not None:
        from factseek.files import check_writable_file

        check_writable_file(out, "--out")  # before the run, not after it
    if date is None:
        typer.echo("note: no --date given; the temporal constraint is off", err=True)
    report = api_check(
        claim,
        date=date,
        speaker=speaker,
        venue=venue,
        k=k,
        undated=undated.value,
        on_conflict=on_conflict.value,
        date_basis=date_basis.value,
        guessed=guessed.value,
        exclude_sites=tuple(exclude_site or ()),
        top_docs=top_docs,
        cards=cards,
        progress=_progress(quiet),
        **_options(**locals()),
    )
    _emit(report, fmt, out)


def _check_file(
    *,
    claims: Path,
    fmt: Format,
    out: Path | None,
    quiet: bool,
    date: str | None,
    speaker: str | None,
    venue: str | None,
    **kw: Any,
) -> None:
    """``check --claims``: every claim of a claims file, parts built once, reports concatenated
    (JSON: one report per line; Markdown: separated by rules)."""
    from dataclasses import replace

    from factseek.api import CheckOptions, check_claims, check_config, parse_date
    from factseek.datasets.claimsfile import read_claims_file
    from factseek.files import atomic_write
    from factseek.report import render

    records = read_claims_file(claims)
    if not records:
        raise InputError(f"{claims}: no claims")
    if fmt == Format.html and len(records) > 1:
        raise InputError(
            "an HTML report holds one claim: use --format md or json, or `factseek batch"
            " --format html` for one page per claim"
        )
    default_date = parse_date(date)
    todo = [
        replace(
            r.claim,
            date=r.claim.date or default_date,
            speaker=r.claim.speaker or speaker or None,
            venue=r.claim.venue or venue or None,
        )
        for r in records
    ]
    undated = sum(c.date is None for c in todo)
    if undated:
        typer.echo(
            f"note: {undated} claim(s) have no date; their temporal constraint is off", err=True
        )
    config = check_config(
        k=kw["k"],
        undated=kw["undated"].value,
        exclude_sites=tuple(kw["exclude_site"] or ()),
        top_docs=kw["top_docs"],
        cards=kw["cards"],
        on_conflict=kw["on_conflict"].value,
        date_basis=kw["date_basis"].value,
        guessed=kw["guessed"].value,
        keep_pdf=kw["keep_pdf"],
    )
    options = _options(**kw)
    if len(todo) > 1:  # many claims read many pairs: torch's kernels pay for its import
        from factseek.stance import engine_for_many

        options["stance_engine"] = engine_for_many()
    reports = check_claims(todo, CheckOptions(**options), config, progress=_progress(quiet))
    if fmt == Format.json:
        from factseek.types import to_json

        text = "".join(to_json(r, indent=None) + "\n" for r in reports)
    else:
        text = "\n---\n\n".join(render(r, fmt) for r in reports)
    if out is None:
        typer.echo(text, nl=False)
    else:
        atomic_write(out, text)
        typer.echo(f"wrote {len(todo)} reports to {out}", err=True)


def demo(
    fmt: FormatOpt = Format.md,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the report here.")] = None,
    quiet: QuietOpt = False,
    stance: StanceOpt = "default",
    cascade: CascadeOpt = False,
) -> None:
    """Build the bundled demo store (once, in the cache) and check its sample claim offline."""
    from factseek.api import check as api_check
    from factseek.demo import demo_claim, demo_store

    store = demo_store(cache_root() / "demo-store", progress=not quiet)
    claim = demo_claim()
    report = api_check(
        claim,
        store=store,
        stance=stance,
        cascade=cascade,
        progress=_progress(quiet),
        cache_dir=cache_root(),
    )
    _emit(report, fmt, out)
    if not quiet:
        from factseek.report import reason_words

        removed = ", ".join(f"{reason_words(k)} ({v})" for k, v in report.removed.items())
        typer.echo(
            f"demo: {len(report.documents)} documents kept; removed by the constraints: "
            f"{removed or 'nothing'}. "
            f"Verdict: {'not judged (no judge configured)' if not report.verdict.judged else report.verdict.label}",
            err=True,
        )


def batch(
    claims: Annotated[
        Path,
        typer.Argument(
            help="Claims file: JSONL, or CSV/TSV with a header, with claim (or text) and optional"
            " id, date, speaker, venue, label (docs/formats.md)."
        ),
    ],
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="Folder for reports, summaries and the run journal."),
    ],
    fmt: Annotated[
        list[Format] | None,
        typer.Option(
            "--format",
            "-f",
            help="Per-claim report format besides JSON (repeatable): md, html.",
        ),
    ] = None,
    store: StoreOpt = None,
    search: SearchOpt = "local",
    k: KOpt = 10,
    undated: UndatedOpt = Undated.drop,
    on_conflict: ConflictOpt = OnConflict.after,
    date_basis: DateBasisOpt = DateBasisName.modified,
    guessed: GuessedOpt = Guessed(DEFAULT_GUESSED),
    keep_pdf: KeepPdfOpt = False,
    exclude_site: ExcludeOpt = None,
    decomposer: DecompOpt = "auto",
    summarizer: SummOpt = "auto",
    llm: LLMOpt = LLMName.none,
    llm_model: LLMModelOpt = None,
    llm_base_url: LLMUrlOpt = None,
    no_cache: NoCacheOpt = False,
    judge: JudgeOpt = None,
    llm_judge: LLMJudgeOpt = None,
    rewrite: RewriteOpt = None,
    record: RecordOpt = None,
    replay: ReplayOpt = None,
    allow_host: AllowOpt = None,
    top_docs: TopDocsOpt = None,
    cards: CardsOpt = None,
    stance: StanceOpt = "default",
    cascade: CascadeOpt = False,
    scale: ScaleOpt = Scale.auto,
    quiet: QuietOpt = False,
    ray: RayOpt = None,
    ray_workers: RayWorkersOpt = None,
) -> None:
    """Check many claims; resumable: claims already in OUT/journal.jsonl are skipped.

    Writes OUT/reports/ID.json (plus .md/.html with --format), OUT/summary.csv and OUT/summary.md
    (claim, verdict, abstained, confidence, kept documents, time; with the claims file's labels:
    right, wrong, abstained). With --ray, on a Ray cluster.
    """
    from factseek.cli.cluster import ray_settings
    from factseek.runs.batch import run_batch

    done, skipped, failed = run_batch(
        claims,
        out,
        k=k,
        undated=undated.value,
        on_conflict=on_conflict.value,
        date_basis=date_basis.value,
        guessed=guessed.value,
        keep_pdf=keep_pdf,
        exclude_sites=tuple(exclude_site or ()),
        top_docs=top_docs,
        cards=cards,
        progress=not quiet,
        options=_options(**locals()),
        formats=[f.value for f in fmt or ()],
        ray=ray_settings(ray, ray_workers),
    )
    typer.echo(
        f"{done} checked, {skipped} already done, {failed} failed; reports in {out}, "
        f"summary in {out / 'summary.md'}",
        err=True,
    )
    if failed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("check")(check)
    app.command("demo")(demo)
    app.command("batch", cls=RayCommand)(batch)
