"""What every command group shares: one-line errors with exit codes, and the app factory."""

from __future__ import annotations

import errno
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


#: OS errors about the path a user gave (bad usage, exit 2); any other OS error exits 1.
_USAGE_ERRNOS = frozenset(
    {errno.ENOENT, errno.EISDIR, errno.ENOTDIR, errno.ENAMETOOLONG, errno.ELOOP, errno.EACCES}
)


def os_error_line(e: OSError | OverflowError) -> tuple[str, int]:
    """An OS error (or a number too large for the OS or a library) as a line and an exit code."""
    if isinstance(e, OverflowError):
        return f"a number is too large ({' '.join(str(e).split())[:120]})", 2
    what = e.strerror or type(e).__name__
    name = e.filename if e.filename is not None else ""
    shown = str(name) if len(str(name)) <= 120 else str(name)[:60] + "..." + str(name)[-40:]
    return (f"{what}: {shown}" if shown else what), (2 if e.errno in _USAGE_ERRNOS else 1)


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
        except BrokenPipeError:  # `factseek ... | head -1`: the reader left; stop quietly
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # nothing more reaches the closed pipe
            raise typer.Exit(0) from None
        except (OSError, OverflowError) as e:  # translated at the seam: one line, no traceback
            if os.environ.get("FACTSEEK_DEBUG"):
                raise
            message, code = os_error_line(e)
            click.echo(f"error: {error_line(message)}", err=True)
            raise typer.Exit(code) from None
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
