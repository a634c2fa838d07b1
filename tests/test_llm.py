"""The LLM protocol, FunctionLLM, retried parsing, the response cache and the registry."""

from __future__ import annotations

import json

import pytest

from factseek.errors import ConfigError, LLMError
from factseek.llm import (
    LLM,
    LLMS,
    CachedLLM,
    FunctionLLM,
    GenParams,
    Price,
    Unusable,
    generate_parsed,
    llm_choices,
    llm_from_options,
    make_llm,
)
from factseek.llm.base import to_messages


def echo(messages: list[dict[str, str]], params: GenParams) -> str:
    return f"{messages[-1]['content']}|{params.sample}|{params.seed}"


def test_function_llm_shapes_and_usage() -> None:
    llm = FunctionLLM(echo)
    assert isinstance(llm, LLM)
    out = llm.generate(["a", [{"role": "user", "content": "b"}]], n=3, seed=5)
    assert out == [["a|0|5", "a|1|5", "a|2|5"], ["b|0|5", "b|1|5", "b|2|5"]]
    assert llm.usage.requests == 6
    assert "cost_usd" not in llm.usage.to_dict()
    assert dict(llm.usage)["requests"] == 6  # reads as a mapping, as reports store it


def test_stop_strings_cut_completions() -> None:
    llm = FunctionLLM(lambda m, p: "one\ntwo\nthree")
    assert llm.generate(["x"], stop=["\nt"]) == [["one"]]


def test_bad_params_and_messages_are_config_errors() -> None:
    llm = FunctionLLM(echo)
    with pytest.raises(ConfigError):
        llm.generate(["x"], n=0)
    with pytest.raises(ConfigError):
        llm.generate(["x"], temperature=3.0)
    with pytest.raises(ConfigError):
        to_messages([{"role": "wizard", "content": "x"}])
    with pytest.raises(ConfigError):
        to_messages([])


def test_function_errors_become_llm_errors() -> None:
    def broken(messages: list[dict[str, str]], params: GenParams) -> str:
        raise RuntimeError("model exploded\nwith details")

    with pytest.raises(LLMError, match=r"RuntimeError: model exploded$"):
        FunctionLLM(broken).generate(["x"])
    with pytest.raises(LLMError, match="not str"):
        FunctionLLM(lambda m, p: 42).generate(["x"])  # type: ignore[arg-type,return-value]


def test_price_and_cost() -> None:
    llm = FunctionLLM(echo, price=Price.parse("1.0,2.0"))
    llm.usage.add(prompt_tokens=1_000_000, completion_tokens=500_000)
    assert llm.usage.to_dict()["cost_usd"] == pytest.approx(2.0)
    with pytest.raises(ConfigError):
        Price.parse("cheap")


def _parse_int(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise Unusable(f"not an integer: {text[:20]!r}") from None


def test_generate_parsed_retries_unusable_then_succeeds() -> None:
    calls: list[GenParams] = []

    def flaky(messages: list[dict[str, str]], params: GenParams) -> str:
        calls.append(params)
        return "" if len(calls) == 1 else ("oops" if len(calls) == 2 else "42")

    llm = FunctionLLM(flaky)
    assert generate_parsed(llm, ["q"], _parse_int, max_tokens=10) == [[42]]
    # retries get more room, a non-greedy temperature and a new seed
    assert [c.max_tokens for c in calls] == [10, 20, 40]
    assert calls[1].temperature > 0 and calls[1].seed != calls[2].seed
    assert llm.usage.retries == 2


def test_generate_parsed_reports_after_attempts() -> None:
    llm = FunctionLLM(lambda m, p: "   ")
    with pytest.raises(LLMError, match="after 3 attempts \\(empty completion\\)"):
        generate_parsed(llm, ["q"], _parse_int)


def test_generate_parsed_retries_only_failed_samples() -> None:
    def fn(messages: list[dict[str, str]], params: GenParams) -> str:
        if params.seed == 0 and params.sample == 1:
            return "bad"
        return str(params.sample)

    llm = FunctionLLM(fn)
    assert generate_parsed(llm, ["a", "b"], _parse_int, n=2, seed=0) == [[0, 0], [0, 0]]
    assert llm.usage.requests == 4 + 2


def test_cache_serves_repeats_and_keys_on_params(tmp_path) -> None:
    counter = {"n": 0}

    def fn(messages: list[dict[str, str]], params: GenParams) -> str:
        counter["n"] += 1
        return f"answer {counter['n']}"

    llm = make_llm("function", fn=fn, cache_dir=tmp_path)
    assert isinstance(llm, CachedLLM)
    first = llm.generate(["p1", "p2"], temperature=0.5, seed=1)
    again = llm.generate(["p2", "p1"], temperature=0.5, seed=1)
    assert again == [first[1], first[0]] and counter["n"] == 2
    assert llm.usage.cached == 2
    llm.generate(["p1"], temperature=0.5, seed=2)  # new seed: new key
    llm.generate(["p1"], temperature=0.5, seed=1, max_tokens=9)  # new max_tokens: new key
    assert counter["n"] == 4
    files = list(tmp_path.glob("*/*.json"))
    assert len(files) == 4
    record = json.loads(files[0].read_text())
    assert {"backend", "model", "messages", "params", "completions"} <= set(record)
    assert not list(tmp_path.glob("*/.tmp-*"))


def test_cache_bypass_and_corrupt_files(tmp_path) -> None:
    counter = {"n": 0}

    def fn(messages: list[dict[str, str]], params: GenParams) -> str:
        counter["n"] += 1
        return "x"

    make_llm("function", fn=fn, cache_dir=tmp_path).generate(["p"])
    for f in tmp_path.glob("*/*.json"):
        f.write_text("{not json")
    make_llm("function", fn=fn, cache_dir=tmp_path).generate(["p"])
    assert counter["n"] == 2  # corrupt file was a miss, and is rewritten
    make_llm("function", fn=fn, cache_dir=tmp_path).generate(["p"])
    assert counter["n"] == 2
    uncached = make_llm("function", fn=fn, cache_dir=tmp_path, use_cache=False)
    uncached.generate(["p"])
    assert counter["n"] == 3 and not isinstance(uncached, CachedLLM)


def test_cache_does_not_store_empty_completions(tmp_path) -> None:
    llm = make_llm("function", fn=lambda m, p: "", cache_dir=tmp_path)
    llm.generate(["p"])
    assert not list(tmp_path.glob("*/*.json"))


def test_function_backend_without_cache_dir_is_not_cached() -> None:
    assert not isinstance(make_llm("function", fn=echo), CachedLLM)


def test_registry_errors_list_choices() -> None:
    with pytest.raises(ConfigError) as e:
        make_llm("gpt-17")
    for name in LLMS:
        assert name in str(e.value)
    with pytest.raises(ConfigError, match="openai"):
        make_llm("llamacpp", base_url="http://127.0.0.1:1/v1")
    with pytest.raises(ConfigError, match="bad options"):
        make_llm("function", fn=echo, flavour="mint", use_cache=False)


def test_cli_option_helper(tmp_path, monkeypatch) -> None:
    assert llm_choices() == ["llamacpp", "openai", "none"]
    assert llm_from_options("none") is None
    with pytest.raises(ConfigError):
        llm_from_options("none", model="gpt-4o")
    with pytest.raises(ConfigError):
        llm_from_options("function")
    monkeypatch.delenv("FACTSEEK_LLM_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    llm = llm_from_options(
        "openai", base_url="http://127.0.0.1:9/v1", model="m", cache_dir=tmp_path
    )
    assert isinstance(llm, CachedLLM) and llm.model == "m"
    assert not isinstance(
        llm_from_options("openai", base_url="http://127.0.0.1:9/v1", no_cache=True), CachedLLM
    )


def test_openai_needs_a_key_only_for_openai(monkeypatch) -> None:
    monkeypatch.delenv("FACTSEEK_LLM_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("FACTSEEK_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        make_llm("openai", use_cache=False)
    monkeypatch.setenv("FACTSEEK_LLM_BASE_URL", "http://localhost:11434/v1")
    llm = make_llm("openai", model="llama3.2", use_cache=False)
    assert llm.model == "llama3.2"
    with pytest.raises(ConfigError):
        make_llm("openai", base_url="ftp://example.org", use_cache=False)


def test_public_api_is_pinned() -> None:
    import inspect

    from factseek.decompose.llm import LLMDecomposer
    from factseek.judge.llm_scorer import LLMScorer
    from factseek.summarize.llm import LLMSummarizer

    assert list(inspect.signature(make_llm).parameters) == [
        "name",
        "model",
        "base_url",
        "cache_dir",
        "use_cache",
        "options",
    ]
    assert list(inspect.signature(FunctionLLM.generate).parameters) == [
        "self",
        "prompts",
        "n",
        "temperature",
        "max_tokens",
        "stop",
        "seed",
    ]
    assert set(LLMS) == {"openai", "llamacpp", "function"}
    assert list(inspect.signature(LLMDecomposer).parameters)[:4] == [
        "llm",
        "n",
        "rounds",
        "temperature",
    ]
    assert list(inspect.signature(LLMSummarizer).parameters)[:3] == ["llm", "mode", "encoder"]
    assert list(inspect.signature(LLMScorer).parameters)[:2] == ["llm", "thresholds"]
