"""The paper's temporal and site constraints.

- ``hits``: the constraints as data and one pure check per search hit (before the claim's
  date, not from an excluded site);
- ``temporal``: the post-fetch date check of documents (the claim's day, the date basis,
  guessed dates, the safe side across a cut-off) and leakage flags.

``factseek.constraints.X`` still gives the names of ``hits`` (the module's old path).
"""

from __future__ import annotations


def __getattr__(name: str) -> object:
    """The names of the old ``factseek.constraints`` module (factseek.constraints.hits now), imported on first use."""
    import importlib

    module = importlib.import_module("factseek.constraints.hits")
    try:
        return getattr(module, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
