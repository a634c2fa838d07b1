"""``--ray [ADDRESS]`` and ``--ray-workers N`` for ``batch`` and ``eval pipeline``.

``--ray`` alone starts a local Ray cluster; ``--ray ADDRESS`` joins a running one. An ADDRESS is
``local``, ``auto``, ``HOST:PORT`` or ``ray://HOST:PORT``; anything else after a bare ``--ray``
(the claims file, another option) is not taken as its value.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

import click
import typer
from typer.core import TyperCommand

ADDRESS = re.compile(r"^(local|auto|(ray://)?[\w.\-]+:\d+|(ray://)?\[[0-9A-Fa-f:.]+\]:\d+)$")

RayOpt = Annotated[
    str | None,
    typer.Option(
        "--ray",
        metavar="[ADDRESS]",
        help="Check the claims on a Ray cluster (needs factseek[dist]): --ray alone starts one "
        "on this machine; --ray ADDRESS (auto, HOST:PORT, ray://HOST:PORT) joins a running one. "
        "Same run folder as a local run; see docs/scale.md.",
    ),
]
RayWorkersOpt = Annotated[
    int | None,
    typer.Option(
        "--ray-workers",
        min=1,
        help="Ray workers, one CPU each [default: one per CPU of the cluster].",
    ),
]


class RayCommand(TyperCommand):
    """A command whose ``--ray`` option may come without a value (then: ``local``)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, with_ray_value(args))


def with_ray_value(args: list[str]) -> list[str]:
    """``args`` with ``local`` after a bare ``--ray`` (one not followed by an ADDRESS)."""
    args = list(args)
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if arg == "--ray" and (i + 1 == len(args) or not ADDRESS.match(args[i + 1])):
            args.insert(i + 1, "local")
            break
    return args


def ray_settings(ray: str | None, workers: int | None) -> Any:
    """The ``RaySettings`` of the options, or None for a local run."""
    from factseek.errors import InputError

    if ray is None:
        if workers is not None:
            raise InputError("--ray-workers needs --ray")
        return None
    from factseek.runs.distributed import RaySettings

    return RaySettings(address=ray, workers=workers)
