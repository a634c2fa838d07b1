"""The knowledge store: factseek's embedded search backend (a folder of plain files).

``build_store`` / ``add_to_store`` / ``write_documents`` write one, ``Store.open`` reads it and
``StoreBackend.open(path)`` searches it (BM25 with date and site constraints inside the index,
optional dense vectors). See docs/store.md. Names are imported lazily: numba loads on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "StoreBackend": "factseek.store.backend",
    "Store": "factseek.store.reader",
    "StoreInfo": "factseek.store.reader",
    "WriteReport": "factseek.store.build",
    "add_to_store": "factseek.store.build",
    "build_store": "factseek.store.build",
    "write_documents": "factseek.store.build",
    "DocumentSource": "factseek.store.sources",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'factseek.store' has no attribute {name!r}")
