"""`factseek serve`: the fact-checker's workbench, a local web app (needs the ``web`` extra)."""

from __future__ import annotations

import getpass
import os
from pathlib import Path
from typing import Annotated

import typer

from factseek.cli.check import CascadeOpt, StanceOpt


def data_root() -> Path:
    """``$FACTSEEK_HOME``, else ``$XDG_DATA_HOME/factseek``, else ``~/.local/share/factseek``."""
    if os.environ.get("FACTSEEK_HOME"):
        return Path(os.environ["FACTSEEK_HOME"]).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "factseek"


def default_db() -> Path:
    return data_root() / "history.sqlite"


def default_user() -> str:
    try:
        return os.environ.get("FACTSEEK_USER") or getpass.getuser()
    except (KeyError, OSError):
        return "anonymous"


DbOpt = Annotated[
    Path | None,
    typer.Option("--db", help="History database [default: $FACTSEEK_HOME/history.sqlite]."),
]


def serve(
    store: Annotated[
        Path | None,
        typer.Option("--store", help="Knowledge store folder [default: the bundled demo store]."),
    ] = None,
    host: Annotated[
        str, typer.Option("--host", help="Address to bind; anything but loopback warns.")
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", min=1, max=65535, help="TCP port to listen on.")
    ] = 8321,
    db: DbOpt = None,
    user: Annotated[
        str | None, typer.Option("--user", help="Default reviewer name [default: login name].")
    ] = None,
    org: Annotated[
        str, typer.Option("--org", help="Organisation named as ClaimReview author.")
    ] = "",
    ratings: Annotated[
        Path | None,
        typer.Option(
            "--ratings",
            help="The organisation's rating scale (JSON with a mapping to schema.org's 1-5;"
            " docs/web-app.md) [default: PolitiFact and AVeriTeC labels as they are].",
        ),
    ] = None,
    judge: Annotated[
        Path | None, typer.Option("--judge", help="Trained judge folder offered in the form.")
    ] = None,
    rewrite: Annotated[
        Path | None, typer.Option("--rewrite", help="Query rewriter folder offered in the form.")
    ] = None,
    llm_model: Annotated[
        str | None, typer.Option("--llm-model", help="Model name (openai) or GGUF path.")
    ] = None,
    llm_base_url: Annotated[
        str | None, typer.Option("--llm-base-url", help="OpenAI-compatible base URL.")
    ] = None,
    workers: Annotated[int, typer.Option("--workers", min=1, max=16, help="Parallel checks.")] = 2,
    stance: StanceOpt = "default",
    cascade: CascadeOpt = False,
    allow_host_header: Annotated[
        list[str] | None,
        typer.Option("--server-name", help="Extra Host name to answer to (with --host)."),
    ] = None,
) -> None:
    """Start the web workbench: check, review, correct, rerun, keep a history, export."""
    from factseek.files import cache_root
    from factseek.review.ratings import load_ratings
    from factseek.web import require_web

    require_web()
    scale = load_ratings(ratings)
    from factseek.web.app import WebSettings
    from factseek.web.security import allowed_hosts
    from factseek.web.server import exposure_warning
    from factseek.web.server import serve as run_server

    warm_claim = None
    if store is None:
        from factseek.demo import demo_claim, demo_store

        typer.echo("no --store: using the bundled demo store", err=True)
        store = demo_store(cache_root() / "demo-store")
        label = "demo store"
        warm_claim = demo_claim()
    else:
        store = store.expanduser()
        label = store.name
    settings = WebSettings(
        db=(db or default_db()).expanduser(),
        store=store,
        store_label=label,
        user=user or default_user(),
        organisation=org,
        ratings=scale,
        judge=judge,
        rewrite=rewrite,
        llm_model=llm_model,
        llm_base_url=llm_base_url,
        cache_dir=cache_root(),
        workers=workers,
        stance=stance,
        cascade=cascade,
        hosts=tuple(allowed_hosts(host, allow_host_header or ())),
    )
    warning = exposure_warning(host)
    if warning:
        typer.echo(warning, err=True)
    shown = f"[{host}]" if ":" in host else host
    typer.echo(
        f"factseek serve: http://{shown}:{port}/ (history in {settings.db}; Ctrl-C stops)", err=True
    )
    run_server(settings, host=host, port=port, warm_claim=warm_claim)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
