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

import os

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

# Modules that moved keep their old import paths (factseek.batch, factseek.encode, ...).
from factseek import _moved  # noqa: E402
from factseek import types as _types  # noqa: E402  (the records: no numpy, no models)

_moved.install()


class _ReportIO:
    """``Report.render``/``save``/``load``, handed to ``factseek.types`` (which may not import the
    renderer above it); factseek.report is imported on first use."""

    def render(self, report: _types.Report, format: str) -> str:
        from factseek.report import render

        return render(report, format)

    def save(self, report: _types.Report, path: str | os.PathLike[str], format: str | None) -> None:
        from factseek.report import format_for_path, write_report

        write_report(report, path, format or format_for_path(path))

    def load(self, path: str | os.PathLike[str]) -> _types.Report:
        from factseek.report import read_report

        return read_report(path)


_types.use_report_io(_ReportIO())


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
