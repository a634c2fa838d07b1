"""factseek: find and weigh evidence for claims.

>>> import factseek
>>> report = factseek.check("The mayor said the bridge cost 3 million dollars.", date="2024-05-01",
...                         store="path/to/store")  # doctest: +SKIP
>>> report.save("report.html")  # doctest: +SKIP

The names below (``__all__``) are the package's public API, listed with the rest of it in
docs/api.md. They are imported on first use, so ``import factseek`` stays fast (no numpy, no
models).
"""

from __future__ import annotations

__version__ = "0.1.0"

#: Public name -> the module that defines it (imported on first access).
_LAZY = {
    "check": "factseek.api",
    "Claim": "factseek.types",
    "Report": "factseek.types",
    "Verdict": "factseek.types",
    "Format": "factseek.report",
    "render": "factseek.report",
    "write_report": "factseek.report",
    "read_report": "factseek.report",
    "FactseekError": "factseek.errors",
    "InputError": "factseek.errors",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'factseek' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
