"""``factseek compare-runs A B``: search stability between two runs or bundles."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from factseek.sanitize import clean_text
from factseek.types import to_dict


def compare_runs_command(
    a: Path = typer.Argument(
        ..., help="Run A: report JSON/JSONL file, folder of reports, batch folder, or bundle."
    ),
    b: Path = typer.Argument(..., help="Run B, same kind as A."),
    kept: bool = typer.Option(
        False, "--kept", help="Compare only hits that passed the constraints."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
) -> None:
    """Per-claim (or per-query, for bundles) and mean Jaccard of URL sets (paper Table 4)."""
    from factseek.runs.compare import compare_runs

    c = compare_runs(a, b, kept_only=kept)
    if as_json:
        typer.echo(json.dumps({**to_dict(c), "mean": c.mean}, indent=2, ensure_ascii=False))
        return
    width = min(60, max([len(c.unit)] + [len(r.key) for r in c.rows]))
    typer.echo(f"{c.unit:<{width}}  {'A':>4}  {'B':>4}  {'both':>4}  jaccard")
    for r in c.rows:
        key = clean_text(r.key)  # claim ids and queries come from files
        key = key if len(key) <= width else key[: width - 1] + "…"
        score = "n/a" if r.jaccard is None else f"{r.jaccard:.3f}"
        typer.echo(f"{key:<{width}}  {r.a:>4}  {r.b:>4}  {r.shared:>4}  {score}")
    mean = "n/a" if c.mean is None else f"{c.mean:.3f}"
    typer.echo(f"mean Jaccard over {len(c.rows)} {c.unit}(s): {mean}")
    if c.only_a or c.only_b:
        typer.echo(f"only in A: {len(c.only_a)}; only in B: {len(c.only_b)} (not in the mean)")


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("compare-runs")(compare_runs_command)
