"""Stance readings kept on disk: a pair read once is not read again by the same model.

An int8 stance model reads one pair per pass, or (``int8-rows``) in packed batches with one
activation scale per token, so a pair's reading depends on that pair alone, bit for bit
(``stance.crossencoder``, ``stance.rowint8``), and a fp32 one agrees with its one-by-one reading
to float precision: a reading can be kept and given again. The quantisation mode is part of the
model's key, so a reading kept for one mode is never given for another. ``ReadingCache`` keeps the raw probabilities (before the
calibration map and thresholds, so recalibrating a model does not invalidate them) in one SQLite
file, keyed by

- the model (``model_key``): its adapter's bytes, its network and token settings, how it runs
  (engine and quantisation, with the version of the library that runs it) and its base
  checkpoint's size and modification time (a base replaced is a new model);
- the pair as the network sees it: its token ids and type ids after truncation.

So checking a claim again (another output format, the review page, an evaluation re-run with
other evidence settings) reads only the pairs it has not read before, and when it has read them
all it never builds the network (``CrossEncoderStance`` builds it on the first pair it must
read). The file grows by about 190 bytes a pair; delete it (no factseek process running) to
empty it. A file that cannot be opened or read is left alone and the model reads every pair
(one warning per process). A process keeps one connection per file and model
(``kept_readings``).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import logging
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

FILE = "stance-readings.sqlite"
FORMAT = 1


def model_key(folder: Path, config: Mapping[str, Any], base: Path, engine: str) -> str:
    """What makes two loads of a stance model read every pair alike (module docstring)."""
    h = hashlib.sha256()
    h.update((folder / "adapter.safetensors").read_bytes())
    runtime = "torch" if engine == "torch" else "numpy"
    try:
        version = importlib.metadata.version(runtime)
    except importlib.metadata.PackageNotFoundError:
        version = "?"
    weights = base / "model.safetensors"
    stat = weights.stat() if weights.exists() else None
    settings = {
        "format": FORMAT,
        "net": config.get("net"),
        "max_length": config.get("max_length"),
        "quantize": config.get("quantize"),
        "engine": engine,
        "runtime": f"{runtime} {version}",
        "base": [str(base.resolve()), stat.st_size, stat.st_mtime_ns] if stat else str(base),
    }
    h.update(json.dumps(settings, sort_keys=True, default=str).encode("utf-8"))
    return h.hexdigest()


def pair_key(model: str, ids: Sequence[int], types: Sequence[int]) -> str:
    """One pair's key under a model's: its token ids and type ids."""
    h = hashlib.sha256(model.encode("ascii"))
    h.update(np.asarray(ids, dtype=np.int64).tobytes())
    h.update(b"|")
    h.update(np.asarray(types, dtype=np.int8).tobytes())
    return h.hexdigest()


class ReadingCache:
    """Raw (supports, refutes, nei) readings of one model, in ``directory / FILE``."""

    _warned = False

    def __init__(self, directory: str | Path, model: str) -> None:
        self.path = Path(directory).expanduser() / FILE
        self.model = model
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._broken = False

    def _connect(self) -> sqlite3.Connection | None:
        if self._db is None and not self._broken:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute(
                    "CREATE TABLE IF NOT EXISTS readings "
                    "(key TEXT PRIMARY KEY, supports REAL, refutes REAL, nei REAL)"
                )
                db.commit()
                self._db = db
            except (OSError, sqlite3.Error) as e:
                self._give_up(e)
        return self._db

    def _give_up(self, error: Exception) -> None:
        self._broken, self._db = True, None
        if not ReadingCache._warned:
            ReadingCache._warned = True
            log.warning("stance readings cache %s not used (%s)", self.path, error)

    def keys(self, ids: Sequence[Sequence[int]], types: Sequence[Sequence[int]]) -> list[str]:
        return [pair_key(self.model, i, t) for i, t in zip(ids, types, strict=True)]

    def get(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The kept readings among ``keys`` (a missing or unreadable one is simply absent)."""
        found: dict[str, np.ndarray] = {}
        if not keys:
            return found
        with self._lock:
            db = self._connect()
            if db is None:
                return found
            unique = list(dict.fromkeys(keys))
            try:
                for start in range(0, len(unique), 500):  # SQLite's bound on parameters
                    chunk = unique[start : start + 500]
                    marks = ",".join("?" * len(chunk))
                    rows = db.execute(
                        f"SELECT key, supports, refutes, nei FROM readings WHERE key IN ({marks})",
                        chunk,
                    )
                    for key, *probs in rows:
                        row = np.array(probs, dtype=np.float64)
                        if row.shape == (3,) and np.all(np.isfinite(row)):
                            found[key] = row
            except sqlite3.Error as e:
                self._give_up(e)
                return {}
        return found

    def put(self, readings: Mapping[str, np.ndarray]) -> None:
        """Keep ``readings`` (key -> raw probabilities); a failure only disables the cache."""
        with self._lock:
            db = self._connect()
            if db is None or not readings:
                return
            rows = [(k, *map(float, v)) for k, v in readings.items()]
            try:
                db.executemany("INSERT OR REPLACE INTO readings VALUES (?, ?, ?, ?)", rows)
                db.commit()
            except sqlite3.Error as e:
                self._give_up(e)

    def __len__(self) -> int:
        with self._lock:
            db = self._connect()
            if db is None:
                return 0
            return int(db.execute("SELECT COUNT(*) FROM readings").fetchone()[0])


@functools.lru_cache(maxsize=16)
def _kept(path: Path, model: str) -> ReadingCache:
    return ReadingCache(path, model)


def kept_readings(directory: str | Path, model: str) -> ReadingCache:
    """The process's one ``ReadingCache`` of ``model`` under ``directory``: one connection,
    opened once, for every check a server or a batch runs."""
    return _kept(Path(directory).expanduser().resolve(), model)


__all__ = ["FILE", "ReadingCache", "kept_readings", "model_key", "pair_key"]
