"""The llama.cpp probe: a build that crashes on this CPU becomes one clear error, not a dead process.

The child commands here are plain Python (no llama.cpp needed): one kills itself the way a build
compiled for another CPU dies, one fails, one succeeds.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import pytest

from factseek.errors import LLMError
from factseek.llm import llamacpp


@pytest.fixture
def gguf(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF")
    return path


def _child(code: str) -> list[str]:
    return [sys.executable, "-c", code]


@pytest.mark.parametrize("sig", [signal.SIGSEGV, signal.SIGILL])
def test_a_crash_in_the_child_is_one_error_that_says_how_to_rebuild(gguf, sig) -> None:
    code = f"import os, signal; os.kill(os.getpid(), {int(sig)})"
    with pytest.raises(LLMError) as e:
        llamacpp.probe(gguf, command=_child(code))
    msg = str(e.value)
    assert f"signal {int(sig)}" in msg and "tiny.gguf" in msg
    assert "GGML_NATIVE=OFF" in msg and "\n" not in msg


def test_a_failing_child_gives_its_last_line(gguf) -> None:
    code = "import sys; print('noise', file=sys.stderr); sys.exit('bad magic in tiny.gguf')"
    with pytest.raises(LLMError, match=r"cannot evaluate tiny\.gguf: bad magic in tiny\.gguf"):
        llamacpp.probe(gguf, command=_child(code))


def test_a_working_child_passes(gguf) -> None:
    llamacpp.probe(gguf, command=_child("pass"))


def test_a_build_that_passed_is_not_probed_again(gguf, monkeypatch) -> None:
    monkeypatch.setattr(llamacpp, "_build_key", lambda path: "build-1")
    monkeypatch.setattr(llamacpp, "_PROBE_CODE", "pass")
    llamacpp.probe(gguf)
    record = json.loads(llamacpp._probe_file().read_text())
    assert record == {"build-1": "ok"}
    # the same build again: remembered, the (now crashing) child is not run
    monkeypatch.setattr(llamacpp, "_PROBE_CODE", "import os; os.abort()")
    llamacpp.probe(gguf)
    # another build (a rebuilt library, another CPU): probed, and its crash reported
    monkeypatch.setattr(llamacpp, "_build_key", lambda path: "build-2")
    with pytest.raises(LLMError, match="crashes on this CPU"):
        llamacpp.probe(gguf)
    assert json.loads(llamacpp._probe_file().read_text()) == {"build-1": "ok"}


def test_the_loader_probes_before_loading(gguf, monkeypatch) -> None:
    pytest.importorskip("llama_cpp")
    calls: list[Path] = []

    def fake_probe(path: Path) -> None:
        calls.append(path)
        raise LLMError("llama.cpp crashes on this CPU")

    monkeypatch.setattr(llamacpp, "probe", fake_probe)
    monkeypatch.delenv("FACTSEEK_LLAMACPP_PROBE", raising=False)
    llm = llamacpp.LlamaCppLLM(model=gguf)
    with pytest.raises(LLMError, match="crashes on this CPU"):
        llm.generate(["Is the sky blue?"])
    assert calls == [gguf]


def test_main_prints_one_line_and_exit_code(gguf, monkeypatch, capsys) -> None:
    def crash(path: Path | None = None) -> None:
        raise LLMError("llama.cpp crashes on this CPU (signal 11)")

    monkeypatch.setattr(llamacpp, "probe", crash)
    assert llamacpp.main() == 1
    assert capsys.readouterr().err == "error: llama.cpp crashes on this CPU (signal 11)\n"
    monkeypatch.setattr(llamacpp, "probe", lambda path=None: None)
    assert llamacpp.main() == 0
