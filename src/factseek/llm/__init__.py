"""Language models: one protocol, a registry of backends, and a disk cache of responses.

``make_llm("openai")`` talks to any OpenAI-compatible server (OpenAI, vLLM, llama.cpp server,
Ollama, LM Studio); ``make_llm("llamacpp")`` runs a GGUF file in-process (SmolLM2 by default);
``FunctionLLM(fn)`` wraps a Python callable. Backends are listed as "module:factory" strings so
that listing them imports nothing heavy.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from factseek.errors import ConfigError
from factseek.llm.base import (
    LLM,
    FunctionLLM,
    GenParams,
    Message,
    Price,
    Prompt,
    Unusable,
    Usage,
    generate_parsed,
)
from factseek.llm.cache import CachedLLM, ResponseCache, default_cache_dir

__all__ = [
    "LLM",
    "LLMS",
    "NO_LLM",
    "CachedLLM",
    "FunctionLLM",
    "GenParams",
    "Message",
    "Price",
    "Prompt",
    "ResponseCache",
    "Unusable",
    "Usage",
    "default_cache_dir",
    "generate_parsed",
    "llm_choices",
    "llm_from_options",
    "make_llm",
]

#: name -> "module:factory"; factories take keyword options.
LLMS: dict[str, str] = {
    "openai": "factseek.llm.openai:OpenAILLM",
    "llamacpp": "factseek.llm.llamacpp:LlamaCppLLM",
    "function": "factseek.llm.base:FunctionLLM",
}

#: The CLI value that means "no language model: use the offline stages".
NO_LLM = "none"


def _factory(target: str) -> Any:
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def make_llm(
    name: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    **options: Any,
) -> LLM:
    """Build the backend registered as ``name``, behind the response cache unless told not to.

    ``model`` is a model name for "openai" and a GGUF path for "llamacpp"; ``base_url`` applies
    to "openai" only. "function" needs ``fn=...`` and is cached only when ``cache_dir`` is given
    (two functions cannot be told apart by name). Other ``options`` go to the factory
    (``api_key``, ``timeout``, ``retries``, ``concurrency``, ``price``, ``n_ctx``...).
    """
    try:
        target = LLMS[name]
    except KeyError:
        raise ConfigError(
            f"unknown LLM backend {name!r}; choose one of: {', '.join(sorted(LLMS))}"
        ) from None
    if base_url is not None:
        if name != "openai":
            raise ConfigError(f"a base URL applies to the 'openai' backend only, not {name!r}")
        options["base_url"] = base_url
    if name == "function":
        if model is not None:
            options["model"] = model
    else:
        options["model"] = model
    try:
        llm: LLM = _factory(target)(**options)
    except TypeError as e:
        raise ConfigError(f"bad options for LLM backend {name!r}: {e}") from None
    if use_cache and (name != "function" or cache_dir is not None):
        llm = CachedLLM(llm, cache_dir or default_cache_dir())
    return llm


def llm_choices() -> list[str]:
    """What a ``--llm`` option accepts: the registered HTTP/local backends and ``none``."""
    return [*sorted(n for n in LLMS if n != "function"), NO_LLM]


def llm_from_options(
    llm: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    no_cache: bool = False,
    cache_dir: Path | None = None,
) -> LLM | None:
    """The CLI's ``--llm/--llm-model/--llm-base-url/--no-cache`` to an LLM, or None for "none"."""
    if llm == NO_LLM:
        if model or base_url:
            raise ConfigError("--llm-model and --llm-base-url need --llm openai or llamacpp")
        return None
    if llm not in llm_choices():
        raise ConfigError(f"unknown --llm {llm!r}; choose one of: {', '.join(llm_choices())}")
    return make_llm(
        llm, model=model, base_url=base_url, cache_dir=cache_dir, use_cache=not no_cache
    )
