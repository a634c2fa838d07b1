"""Old import paths of modules that moved in the December 2026 restructuring.

``import factseek.batch`` (and every other path below) still works: it gives the module at its
new place, the same module object, with a ``DeprecationWarning``. ``factseek.runs``,
``factseek.review`` and ``factseek.constraints`` became packages; their old names are
answered by the packages themselves (``old_names``). The finder is installed once, by
``factseek/__init__.py``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Callable, Sequence
from types import ModuleType

#: Old module path -> the module's path now.
MOVED: dict[str, str] = {
    "factseek.extract": "factseek.pages.extract",
    "factseek.dates": "factseek.pages.dates",
    "factseek.pagedates": "factseek.pages.pagedates",
    "factseek.pagesources": "factseek.pages.sources",
    "factseek.datepolicy": "factseek.pages.datepolicy",
    "factseek.webarchive": "factseek.pages.webarchive",
    "factseek.pdftext": "factseek.pages.pdftext",
    "factseek.temporal": "factseek.constraints.temporal",
    "factseek.verdict_words": "factseek.report.words",
    "factseek.batch": "factseek.runs.batch",
    "factseek.batch_resume": "factseek.runs.resume",
    "factseek.batch_summary": "factseek.runs.summary",
    "factseek.bundle": "factseek.runs.bundle",
    "factseek.evaluate": "factseek.runs.evaluate",
    "factseek.distributed": "factseek.runs.distributed",
    "factseek.history": "factseek.review.history",
    "factseek.feedback": "factseek.review.feedback",
    "factseek.feedback_export": "factseek.review.export",
    "factseek.ratings": "factseek.review.ratings",
    "factseek.web.claimreview": "factseek.review.claimreview",
    "factseek.nlp": "factseek.ml.nlp",
    "factseek.encode": "factseek.ml.encode",
    "factseek.modelfolder": "factseek.ml.folder",
    "factseek.training": "factseek.ml.training",
    "factseek.retry": "factseek.net.retry",
    "factseek.ratelimit": "factseek.net.ratelimit",
    "factseek.input_files": "factseek.files",
    "factseek.textlen": "factseek.text",
    "factseek.rewrite.actions": "factseek.rewrite.environment.actions",
    "factseek.rewrite.wordnet": "factseek.rewrite.environment.wordnet",
    "factseek.rewrite.env": "factseek.rewrite.environment.env",
    "factseek.rewrite.bm25_index": "factseek.rewrite.environment.bm25_index",
    "factseek.rewrite.scorer": "factseek.rewrite.environment.scorer",
    "factseek.rewrite.scorer_candidates": "factseek.rewrite.environment.scorer_candidates",
    "factseek.rewrite.scorer_kernels": "factseek.rewrite.environment.scorer_kernels",
    "factseek.rewrite.bfs": "factseek.rewrite.environment.bfs",
    "factseek.rewrite.guard": "factseek.rewrite.environment.guard",
    "factseek.rewrite.model": "factseek.rewrite.transformer.model",
    "factseek.rewrite.trajectories": "factseek.rewrite.transformer.trajectories",
    "factseek.rewrite.train": "factseek.rewrite.transformer.train",
    "factseek.rewrite.infer": "factseek.rewrite.transformer.infer",
    "factseek.rewrite.editor": "factseek.rewrite.transformer.editor",
    "factseek.rewrite.tables": "factseek.rewrite.transformer.tables",
    "factseek.rewrite.feedback": "factseek.rewrite.edits.features",
    "factseek.rewrite.edit_model": "factseek.rewrite.edits.model",
    "factseek.rewrite.edit_train": "factseek.rewrite.edits.train",
    "factseek.rewrite.npencoder": "factseek.rewrite.edits.npencoder",
    "factseek.rewrite.vectorcache": "factseek.rewrite.edits.vectorcache",
    "factseek.rewrite.shipped": "factseek.rewrite.edits.shipped",
}


class MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old path (after the real finders failed) and loads the moved module for it."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # a placeholder; exec_module swaps in the real module

    def exec_module(self, module: ModuleType) -> None:
        old = module.__name__
        new = MOVED[old]
        warnings.warn(f"{old} moved to {new}", DeprecationWarning, stacklevel=2)
        # The import system returns whatever sys.modules holds for the old name once this
        # returns, so the caller gets the real module (its own __spec__ untouched).
        sys.modules[old] = importlib.import_module(new)


def install() -> None:
    """Add the finder once, after the real ones (it only answers the paths in ``MOVED``)."""
    if not any(isinstance(f, MovedModules) for f in sys.meta_path):
        sys.meta_path.append(MovedModules())


def old_names(package: str, module: str) -> Callable[[str], object]:
    """A module ``__getattr__`` for a package that was once the module ``package``: its old
    names come from ``module`` (where that module's code lives now), imported on first use."""

    def __getattr__(name: str) -> object:
        try:
            return getattr(importlib.import_module(module), name)
        except AttributeError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None

    return __getattr__
