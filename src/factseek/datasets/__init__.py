"""Data-set loaders (claims, retrieval, FEVER) and where the public data sets live on disk.

Benchmarks and data commands take the data folder as ``--data DIR``, defaulting to the
environment variable ``FACTSEEK_DATA``; each data set is a named folder under it (docs/data.md).
"""

from __future__ import annotations

import os
from pathlib import Path

#: The environment variable naming the folder of the public data sets.
DATA_ENV = "FACTSEEK_DATA"


def data_root(path: str | Path | None = None) -> Path | None:
    """``path``, else ``$FACTSEEK_DATA``, else ``None`` (the caller says what is missing)."""
    value = path if path is not None else os.environ.get(DATA_ENV) or None
    return Path(value).expanduser() if value is not None else None
