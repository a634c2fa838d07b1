"""`factseek feedback export`: the web app's corrections as training data (JSONL)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from factseek.cli import make_app
from factseek.cli.serve import DbOpt, default_db

app = make_app("Fact-checkers' corrections as training data.")


@app.command("export")
def export_cmd(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the JSONL files.")],
    db: DbOpt = None,
) -> None:
    """Write decompose.jsonl, stance.jsonl, rewrite_queries.jsonl, rewrite_corpus.jsonl and
    verdicts.jsonl from the corrections in the history (formats: docs/web-app.md)."""
    from factseek.errors import InputError
    from factseek.feedback import FeedbackLog
    from factseek.feedback_export import export
    from factseek.history import History

    path = (db or default_db()).expanduser()
    if not path.is_file():
        raise InputError(f"no history database at {path} (start `factseek serve` first, or --db)")
    counts = export(History(path), FeedbackLog(path), out)
    typer.echo(f"{counts.line()}; wrote {out}", err=True)
