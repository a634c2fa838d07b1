"""What a run leaves on disk.

- ``batch``: many claims into a run folder with a flushed journal (resumable);
- ``resume``: what a resume may skip (each journaled report checked);
- ``summary``: the run's ``summary.csv`` / ``summary.md``;
- ``distributed``: the same on a Ray cluster (``--ray``);
- ``bundle``: evidence bundles (``--record`` / ``--replay``);
- ``evaluate``: ``eval pipeline`` (batch runs + a judge + metrics);
- ``compare``: run comparison (URL Jaccard).

``factseek.runs.compare_runs`` (the old module's name) still works.
"""

from __future__ import annotations


def __getattr__(name: str) -> object:
    """The names of the old ``factseek.runs`` module (factseek.runs.compare now), imported on first use."""
    import importlib

    module = importlib.import_module("factseek.runs.compare")
    try:
        return getattr(module, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
