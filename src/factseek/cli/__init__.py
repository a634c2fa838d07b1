"""The ``factseek`` command line: a thin typed layer over the library.

Exit codes: 0 ok, 1 runtime failure, 2 bad usage. Errors are one line on stderr; set
``FACTSEEK_DEBUG=1`` to see a traceback instead.
"""

from __future__ import annotations

import os
import sys

import click
import typer
from typer.core import TyperGroup

from factseek.errors import FactseekError


def error_line(message: str) -> str:
    """A message as one terminal-safe line: no escapes or controls, no credentials."""
    from factseek.redact import redact_text
    from factseek.sanitize import clean_text

    return " ".join(redact_text(clean_text(message)).split())


class FactseekGroup(TyperGroup):
    """Turns factseek errors (and unexpected ones) into one line and an exit code."""

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except (typer.Exit, typer.Abort, typer.TyperException):  # typer >= 0.24 vendors click
            raise
        except FactseekError as e:
            if os.environ.get("FACTSEEK_DEBUG"):
                raise
            click.echo(f"error: {error_line(str(e))}", err=True)
            raise typer.Exit(e.exit_code) from None
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            raise typer.Exit(130) from None
        except Exception as e:  # a bug or an untranslated library error: still one line
            if os.environ.get("FACTSEEK_DEBUG"):
                raise
            first = error_line(str(e).splitlines()[0]) if str(e) else ""
            click.echo(
                f"error: unexpected {type(e).__name__}: {first} (FACTSEEK_DEBUG=1 shows the traceback)",
                err=True,
            )
            raise typer.Exit(1) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:  # type: ignore[override]
        """List subcommands with their whole first sentence (click cuts them at the width)."""
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit=200)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


#: Every command and group accepts ``-h`` as well as ``--help`` (subcommands inherit it).
CONTEXT = {"help_option_names": ["-h", "--help"]}


def make_app(help: str) -> typer.Typer:
    """A typer app with factseek's error handling and conventions (used by every subcommand group)."""
    return typer.Typer(
        cls=FactseekGroup,
        help=help,
        context_settings=CONTEXT,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )


app = make_app("factseek: find and weigh evidence for claims.")


def _print_version(value: bool) -> None:
    if value:
        from factseek import __version__

        typer.echo(f"factseek {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(
        False,
        "--version",
        callback=_print_version,
        is_eager=True,
        help="Print the version and exit.",
    ),
) -> None:
    """factseek: find and weigh evidence for claims. `factseek COMMAND --help` explains each command."""


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
