"""A disk cache of LLM responses, keyed by (backend, model, messages, parameters).

One JSON file per key (``<dir>/<key[:2]>/<key>.json``), written atomically (temp file +
``os.replace``), so concurrent runs never see half a file and a rerun costs nothing. Each file
holds the request (backend, model, messages, parameters) and the completions: a cache folder is
also a replayable record of every LLM call. API keys are never part of a request, so never
cached. Corrupt files count as misses and are overwritten.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from factseek.errors import FactseekError
from factseek.files import atomic_write, read_json
from factseek.llm.base import LLM, Prompt, check_params, to_messages

CACHE_FORMAT = 1


def default_cache_dir() -> Path:
    """``$FACTSEEK_CACHE/llm``, else ``$XDG_CACHE_HOME/factseek/llm``, else ``~/.cache/...``."""
    root = os.environ.get("FACTSEEK_CACHE")
    if root:
        return Path(root).expanduser() / "llm"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "factseek" / "llm"


def request_record(
    backend: str, model: str, messages: list[dict[str, str]], params: dict[str, Any]
) -> dict[str, Any]:
    return {
        "format": CACHE_FORMAT,
        "backend": backend,
        "model": model,
        "messages": messages,
        "params": params,
    }


def cache_key(record: dict[str, Any]) -> str:
    canonical = json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    """Completions on disk, one file per request key."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> list[str] | None:
        try:
            data = read_json(self._path(key), "LLM cache entry")
        except FactseekError:  # missing, unreadable, too large or not JSON: a miss
            return None
        comps = data.get("completions") if isinstance(data, dict) else None
        if not isinstance(comps, list) or not all(isinstance(c, str) for c in comps):
            return None
        return comps

    def put(self, key: str, record: dict[str, Any], completions: Sequence[str]) -> None:
        payload = json.dumps({**record, "completions": list(completions)}, ensure_ascii=False)
        atomic_write(self._path(key), payload)

    def __len__(self) -> int:
        return sum(1 for _ in self.directory.glob("*/*.json")) if self.directory.exists() else 0


class CachedLLM:
    """Serves cached completions and sends only the missing prompts to ``inner``, in one call.

    Shares ``inner.usage`` (cache hits are counted in ``usage.cached``). Completion lists with
    an empty string are not stored, so a transient bad answer is not replayed forever.
    """

    def __init__(self, inner: LLM, directory: str | Path) -> None:
        self.inner = inner
        self.name = inner.name
        self.model = inner.model
        self.usage = inner.usage
        self.cache = ResponseCache(directory)

    def generate(
        self,
        prompts: Sequence[Prompt],
        *,
        n: int = 1,
        temperature: float = 0.0,
        max_tokens: int = 256,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
    ) -> list[list[str]]:
        check_params(n, temperature, max_tokens)
        params = {
            "n": n,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "stop": list(stop or ()),
            "seed": seed,
        }
        out: list[list[str] | None] = []
        records: list[dict[str, Any]] = []
        keys: list[str] = []
        missing: list[int] = []
        for i, prompt in enumerate(prompts):
            record = request_record(self.name, self.model, to_messages(prompt), params)
            key = cache_key(record)
            records.append(record)
            keys.append(key)
            hit = self.cache.get(key)
            if hit is not None and len(hit) == n:
                out.append(hit)
            else:
                out.append(None)
                missing.append(i)
        self.usage.add(cached=len(prompts) - len(missing))
        if missing:
            fresh = self.inner.generate(
                [prompts[i] for i in missing],
                n=n,
                temperature=temperature,
                max_tokens=max_tokens,
                stop=stop,
                seed=seed,
            )
            for i, comps in zip(missing, fresh, strict=True):
                out[i] = comps
                if len(comps) == n and all(c.strip() for c in comps):
                    self.cache.put(keys[i], records[i], comps)
        return [c for c in out if c is not None]
