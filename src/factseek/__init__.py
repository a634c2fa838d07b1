"""factseek: find and weigh evidence for claims.

>>> import factseek
>>> report = factseek.check("The mayor said the bridge cost 3 million dollars.", date="2024-05-01",
...                         store="path/to/store")  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from factseek.types import Report


def check(claim: Any, **options: Any) -> Report:
    """Check one claim and return its ``Report``. See ``factseek.api.check`` for the options."""
    from factseek.api import check as _check

    return _check(claim, **options)


__all__ = ["__version__", "check"]
