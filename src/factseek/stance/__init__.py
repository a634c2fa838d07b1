"""Evidence stance: does a passage support, refute, or say nothing about a claim or subquestion?

``StanceModel.classify(pairs) -> list[StanceResult]`` over ``(question, evidence)`` pairs, where
``question`` is the claim or a subquestion and ``evidence`` a sentence or passage. Implementations
sit behind one registry (``load_stance``): the two models shipped in the package (``"small"``
and ``"mpnet"``; ``"default"`` names whichever ``default_stance`` picks), a folder trained with
``factseek stance train``, or any function (``FunctionStance``, for tests and for plugging in
anything else). A trained folder is read by numpy (``stance.npnet``, no torch
import) or torch: ``resolve_engine`` says which (docs/stance.md, "Two engines").
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Protocol, runtime_checkable

from factseek.errors import InputError
from factseek.types import STANCE_LABELS, StanceLabel, StanceResult

__all__ = [
    "DEFAULT",
    "SHIPPED",
    "STANCE_ENV",
    "STANCE_MODELS",
    "FunctionStance",
    "StanceModel",
    "StanceResult",
    "default_model_path",
    "default_note",
    "default_stance",
    "engine_for_many",
    "load_stance",
    "model_folder",
    "resolve_engine",
    "resolve_stance",
    "shipped_model_path",
]

Pair = tuple[str, str]


@runtime_checkable
class StanceModel(Protocol):
    name: str

    def classify(self, pairs: Sequence[Pair]) -> list[StanceResult]:
        """One result per ``(question, evidence)`` pair, in order."""
        ...


class FunctionStance:
    """A stance model from a function ``(question, evidence) -> label or {label: probability}``.

    >>> s = FunctionStance(lambda q, e: "refutes" if "not" in e.split() else "nei")
    >>> [r.label for r in s.classify([("Is it red?", "It is not red."), ("Is it red?", "Hi.")])]
    ['refutes', 'nei']
    """

    def __init__(
        self,
        fn: Callable[[str, str], StanceLabel | dict[str, float]],
        *,
        name: str = "function",
    ) -> None:
        self.fn = fn
        self.name = name

    def classify(self, pairs: Sequence[Pair]) -> list[StanceResult]:
        out: list[StanceResult] = []
        for q, e in pairs:
            r = self.fn(q, e)
            if isinstance(r, str):
                probs = {lab: 1.0 if lab == r else 0.0 for lab in STANCE_LABELS}
            else:
                total = sum(r.values()) or 1.0
                probs = {lab: float(r.get(lab, 0.0)) / total for lab in STANCE_LABELS}
            label = max(STANCE_LABELS, key=lambda lab: (probs[lab], -STANCE_LABELS.index(lab)))
            out.append(StanceResult(label=label, probs=probs, model=self.name))
        return out


# ----------------------------------------------------------------------------- registry


#: The stance models shipped inside the package: name -> folder under ``factseek/models/``.
#: ``small`` is the six-layer MiniLM model (called ``default`` before 4 December 2026); ``mpnet``
#: the stronger, slower one over all-mpnet-base-v2, whose weights come from five pip packages
#: installed apart (docs/stance.md, "The MPNet model").
SHIPPED = {"small": "stance", "mpnet": "stance-mpnet"}
#: The name that means "the default model" (``default_stance``) wherever a model is named.
DEFAULT = "default"
#: Names the default stance model (a key of ``SHIPPED`` or a trained folder) for this process.
STANCE_ENV = "FACTSEEK_STANCE"


def default_stance() -> str:
    """The model ``"default"`` names: ``$FACTSEEK_STANCE`` when set, else ``mpnet`` when its
    base can be had without installing anything (``ml.encode.mpnet_available``), else
    ``small``. ``mpnet`` reads real-world evidence far better (docs/stance.md), so it is the
    default wherever it is installed; ``small`` needs nothing beyond the ``dense`` extra and
    reads a check's pairs about five times faster."""
    env = os.environ.get(STANCE_ENV, "").strip()
    if env:
        if env == DEFAULT:
            raise InputError(
                f"${STANCE_ENV}={env}: name a model ({', '.join(SHIPPED)}) or a folder"
            )
        return env
    from factseek.ml.encode import mpnet_available

    return "mpnet" if mpnet_available() else "small"


def default_note(chosen: str | Path) -> str | None:
    """One line for a report whose ``"default"`` stance model resolved to ``chosen``: said when
    the default fell back to ``small`` because ``mpnet`` is not installed (None otherwise)."""
    if str(chosen) != "small" or os.environ.get(STANCE_ENV, "").strip():
        return None
    from factseek.ml.encode import MPNET_INSTALL

    return (
        "evidence read by the small stance model (the mpnet model reads real-world evidence "
        f"better: docs/stance.md); to make it the default: {MPNET_INSTALL}"
    )


def resolve_stance(name_or_path: str | Path) -> str | Path:
    """``name_or_path`` with ``"default"`` replaced by the model it names (``default_stance``)."""
    return default_stance() if str(name_or_path) == DEFAULT else name_or_path


def default_model_path() -> Path:
    """The folder of the small stance model shipped inside the package."""
    return shipped_model_path("small")


def shipped_model_path(name: str) -> Path:
    """The folder of the shipped stance model ``name`` (a key of ``SHIPPED``)."""
    return Path(str(resources.files("factseek") / "models" / SHIPPED[name]))


def model_folder(name_or_path: str | Path) -> Path:
    """A shipped model's folder for its name (``"default"``: the default's), else the path."""
    name_or_path = resolve_stance(name_or_path)
    if isinstance(name_or_path, str) and name_or_path in SHIPPED:
        return shipped_model_path(name_or_path)
    return Path(name_or_path).expanduser()


#: What reads the stance network when a caller does not say (``FACTSEEK_STANCE_ENGINE``).
ENGINE_ENV = "FACTSEEK_STANCE_ENGINE"
ENGINE_CHOICES = ("auto", "numpy", "torch")


def resolve_engine(engine: str | None = None) -> str:
    """``"numpy"`` or ``"torch"`` for ``engine`` (default: ``$FACTSEEK_STANCE_ENGINE``, else
    ``"auto"``). ``auto`` reads with torch when torch is already imported in this process (its
    import is paid, and its int8 kernels read a pair about 3 times faster), else with numpy
    (``stance.npnet``: importing torch would cost more than a check's few hundred pairs).
    Long-running commands that read many pairs (``serve``, ``batch``, ``eval``) ask for torch."""
    choice = (engine or os.environ.get(ENGINE_ENV, "") or "auto").strip().lower()
    if choice not in ENGINE_CHOICES:
        raise InputError(f"stance engine {choice!r}: one of {', '.join(ENGINE_CHOICES)}")
    if choice == "auto":
        return "torch" if "torch" in sys.modules else "numpy"
    return choice


def engine_for_many() -> str:
    """The engine of a process that reads many pairs (``serve``, ``batch``, ``eval``, a claims
    file): ``$FACTSEEK_STANCE_ENGINE`` when set, else torch (its import is paid once, and its
    int8 kernels then read each pair about 3 times faster than numpy: docs/stance.md)."""
    return os.environ.get(ENGINE_ENV, "").strip().lower() or "torch"


@functools.lru_cache(maxsize=4)
def _shipped(name: str, engine: str) -> StanceModel:
    from factseek.stance.crossencoder import CrossEncoderStance

    return CrossEncoderStance.load(shipped_model_path(name), name=f"stance:{name}", engine=engine)


#: Named stance models (and ``"default"``, ``default_stance``); anything else given to
#: ``load_stance`` must be a trained folder.
STANCE_MODELS: dict[str, Callable[[str], StanceModel]] = {
    name: functools.partial(_shipped, name) for name in SHIPPED
}


def load_stance(
    name_or_path: str | Path = DEFAULT,
    *,
    engine: str | None = None,
    readings: str | Path | None = None,
) -> StanceModel:
    """A stance model by registry name (``STANCE_MODELS``; ``"default"``: ``default_stance``)
    or from a folder written by ``factseek stance train``, read by ``engine``
    (``resolve_engine``). A shipped model is loaded once per process and engine. With
    ``readings`` (a folder, e.g. ``files.cache_root()``) it keeps what it reads there and reads
    a pair it has read before from there (``stance.readings``)."""
    which = resolve_engine(engine)
    name_or_path = resolve_stance(name_or_path)
    if isinstance(name_or_path, str) and name_or_path in STANCE_MODELS:
        model = STANCE_MODELS[name_or_path](which)
    else:
        path = Path(name_or_path).expanduser()
        if not path.is_dir():
            raise InputError(
                f"unknown stance model {str(name_or_path)!r}: one of "
                f"{', '.join([DEFAULT, *STANCE_MODELS])}, or a folder written by `factseek stance train`"
            )
        from factseek.stance.crossencoder import CrossEncoderStance

        model = CrossEncoderStance.load(path, engine=which)
    keeps = getattr(model, "with_readings", None)
    return keeps(readings) if readings is not None and keeps is not None else model
