"""`factseek feedback export`: the web app's corrections as training data (JSONL)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from factseek.cli.common import make_app
from factseek.cli.serve import DbOpt, default_db

app = make_app("Fact-checkers' corrections as training data.")


RatingsOpt = Annotated[
    Path | None,
    typer.Option(
        "--ratings",
        help="The organisation's rating scale (JSON, docs/web-app.md) [default: PolitiFact and"
        " AVeriTeC labels as they are].",
    ),
]


@app.command("export")
def export_cmd(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the files.")],
    db: DbOpt = None,
    org: Annotated[
        str, typer.Option("--org", help="Organisation named as the ClaimReviews' author.")
    ] = "",
    ratings: RatingsOpt = None,
) -> None:
    """Write the history's corrections and reviewed verdicts as training data and ClaimReviews.

    Files: decompose.jsonl, stance.jsonl, rewrite_queries.jsonl, rewrite_corpus.jsonl,
    verdicts.jsonl, verdicts_averitec.json, claimreview.jsonl (verdicts a named reviewer
    approved or set) and machine_verdicts.jsonl (automated, for research); formats:
    docs/web-app.md."""
    from factseek.errors import InputError
    from factseek.review.export import export
    from factseek.review.feedback import FeedbackLog
    from factseek.review.history import History
    from factseek.review.ratings import load_ratings

    scale = load_ratings(ratings)
    path = (db or default_db()).expanduser()
    if not path.is_file():
        raise InputError(f"no history database at {path} (start `factseek serve` first, or --db)")
    counts = export(
        History(path),
        FeedbackLog(path, ratings=scale),
        out,
        ratings=scale,
        organisation=" ".join(org.split()),
    )
    typer.echo(f"{counts.line()}; wrote {out}", err=True)
