"""`factseek render REPORT.json`: turn a saved JSON report into Markdown or HTML."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from factseek.report import Format


def render_command(
    report: Annotated[
        Path, typer.Argument(help="A JSON report (check -f json, or a batch's reports/ID.json).")
    ],
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Format to render.")] = Format.html,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write here instead of printing.")
    ] = None,
) -> None:
    """Render a saved JSON report as HTML or Markdown (or JSON again).

    \b
    Examples:
      factseek render report.json --format html --out report.html
      factseek render run/reports/c1.json --format md
    """
    from factseek.report import read_report, render, write_report

    loaded = read_report(report)
    if out is None:
        typer.echo(render(loaded, fmt), nl=False)
        return
    write_report(loaded, out, fmt)
    typer.echo(f"wrote {out}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``render`` to ``app``."""
    app.command("render")(render_command)
