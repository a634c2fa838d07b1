"""The ``factseek`` command line: a thin typed layer over the library.

Exit codes: 0 ok, 1 runtime failure, 2 bad usage. Errors are one line on stderr; set
``FACTSEEK_DEBUG=1`` to see a traceback instead.
"""

from __future__ import annotations

import os
import sys

import typer

from factseek.cli.common import make_app

app = make_app("factseek: find and weigh evidence for claims.")


def _print_version(value: bool) -> None:
    if value:
        from factseek import __version__

        typer.echo(f"factseek {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    ctx: typer.Context,
    version: bool = typer.Option(
        False,
        "--version",
        callback=_print_version,
        is_eager=True,
        help="Print the version and exit.",
    ),
    max_input_bytes: int | None = typer.Option(
        None,
        "--max-input-bytes",
        min=1,
        max=2**62,
        help="Largest input file to read, in bytes [default: 256 MiB, or FACTSEEK_MAX_INPUT_BYTES].",
    ),
) -> None:
    """factseek: find and weigh evidence for claims. `factseek COMMAND --help` explains each command."""
    if max_input_bytes is not None:  # for this command only (restored when it ends)
        from factseek.files import ENV

        before = os.environ.get(ENV)
        os.environ[ENV] = str(max_input_bytes)

        def restore() -> None:
            if before is None:
                os.environ.pop(ENV, None)
            else:
                os.environ[ENV] = before

        ctx.call_on_close(restore)


def _register() -> None:
    from factseek.cli import (
        check,
        eval,
        feedback,
        index,
        judge,
        render,
        rewrite,
        runs,
        serve,
        stance,
    )

    check.register(app)
    render.register(app)
    app.add_typer(index.app, name="index")
    app.add_typer(judge.app, name="judge")
    app.add_typer(rewrite.app, name="rewrite")
    app.add_typer(eval.app, name="eval")
    app.add_typer(stance.app, name="stance")
    runs.register(app)
    serve.register(app)
    app.add_typer(feedback.app, name="feedback")


_register()


def main() -> None:
    app(prog_name="factseek")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
