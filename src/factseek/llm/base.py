"""The ``LLM`` protocol, usage accounting, ``FunctionLLM``, and retried parsing of completions.

A prompt is either a string (one user message) or a sequence of chat messages
(``{"role": "system"|"user"|"assistant", "content": str}``). ``generate`` returns, for every
prompt, ``n`` completion strings. Backends deal with transport failures themselves;
``generate_parsed`` deals with completions that arrive but are unusable (empty, truncated,
malformed): it retries them with more room and a new seed, then raises ``LLMError``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

from factseek.errors import ConfigError, FactseekError, LLMError

T = TypeVar("T")

Message = Mapping[str, str]
Prompt = str | Sequence[Message]

ROLES = frozenset({"system", "user", "assistant"})

#: Attempts ``generate_parsed`` makes per completion before giving up.
PARSE_ATTEMPTS = 3
#: Temperature used when retrying an unusable completion (a greedy retry would repeat it).
RETRY_TEMPERATURE = 0.7
#: Longest completion kept, in characters; longer output is cut (LLM output is untrusted).
MAX_COMPLETION_CHARS = 20_000


def to_messages(prompt: Prompt) -> list[dict[str, str]]:
    """Normalise a prompt to a list of ``{"role", "content"}`` dicts (validated copies)."""
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    out: list[dict[str, str]] = []
    for m in prompt:
        role, content = m.get("role"), m.get("content")
        if role not in ROLES or not isinstance(content, str):
            raise ConfigError(
                f"bad chat message: role must be one of {sorted(ROLES)} with text content"
            )
        out.append({"role": role, "content": content})
    if not out:
        raise ConfigError("empty prompt: no messages")
    return out


@dataclass(frozen=True, kw_only=True)
class Price:
    """US dollars per million prompt and completion tokens."""

    prompt: float
    completion: float

    @classmethod
    def parse(cls, text: str) -> Price:
        """``"0.15,0.60"`` -> Price(prompt=0.15, completion=0.6)."""
        try:
            a, b = (float(x) for x in text.split(","))
        except ValueError:
            raise ConfigError(
                f"bad price {text!r}: expected 'PROMPT,COMPLETION' dollars per million tokens"
            ) from None
        return cls(prompt=a, completion=b)


class Usage(Mapping[str, Any]):
    """What a backend has consumed: requests, tokens, cache hits, retries, and cost if priced.

    A thread-safe accumulator that reads as a mapping (``dict(llm.usage)`` is what reports
    store): requests, cached, retries, prompt_tokens, completion_tokens, and cost_usd when a
    price is configured.
    """

    def __init__(self, price: Price | None = None) -> None:
        self.price = price
        self.requests = 0
        self.cached = 0
        self.retries = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self._lock = threading.Lock()

    def add(
        self,
        *,
        requests: int = 0,
        cached: int = 0,
        retries: int = 0,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
    ) -> None:
        with self._lock:
            self.requests += requests
            self.cached += cached
            self.retries += retries
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens

    @property
    def cost(self) -> float | None:
        """Dollars spent, or None when no price is configured."""
        if self.price is None:
            return None
        return (
            self.prompt_tokens * self.price.prompt + self.completion_tokens * self.price.completion
        ) / 1e6

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "requests": self.requests,
            "cached": self.cached,
            "retries": self.retries,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }
        if self.price is not None:
            d["cost_usd"] = round(self.cost or 0.0, 6)
        return d

    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())

    def __repr__(self) -> str:
        return f"Usage({self.to_dict()})"


@runtime_checkable
class LLM(Protocol):
    name: str  # backend name in the registry: "openai", "llamacpp", "function"
    model: str
    usage: Usage

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
        """``n`` completions for each prompt, in prompt order. Raises ``LLMError``."""
        ...


@dataclass(frozen=True, kw_only=True)
class GenParams:
    """The sampling parameters of one completion, as ``FunctionLLM`` passes them to its function."""

    temperature: float = 0.0
    max_tokens: int = 256
    stop: tuple[str, ...] = ()
    seed: int | None = None
    sample: int = 0  # index of this completion among the n asked for


def check_params(n: int, temperature: float, max_tokens: int) -> None:
    if n < 1:
        raise ConfigError(f"n must be >= 1, got {n}")
    if not 0.0 <= temperature <= 2.0:
        raise ConfigError(f"temperature must be in [0, 2], got {temperature}")
    if max_tokens < 1:
        raise ConfigError(f"max_tokens must be >= 1, got {max_tokens}")


def apply_stop(text: str, stop: Sequence[str] | None) -> str:
    """Cut ``text`` at the first stop string, as servers do."""
    for s in stop or ():
        if s and s in text:
            text = text[: text.index(s)]
    return text


class FunctionLLM:
    """An LLM that calls ``fn(messages, params) -> str`` once per completion.

    Library code like httpx's ``MockTransport``: tests use it, and users can wrap any model they
    can call from Python. ``messages`` is a list of ``{"role", "content"}`` dicts.
    """

    def __init__(
        self,
        fn: Callable[[list[dict[str, str]], GenParams], str],
        *,
        name: str = "function",
        model: str = "function",
        price: Price | None = None,
    ) -> None:
        self._fn = fn
        self.name = name
        self.model = model
        self.usage = Usage(price)

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
        out: list[list[str]] = []
        for prompt in prompts:
            messages = to_messages(prompt)
            completions = []
            for i in range(n):
                params = GenParams(
                    temperature=temperature,
                    max_tokens=max_tokens,
                    stop=tuple(stop or ()),
                    seed=seed,
                    sample=i,
                )
                try:
                    text = self._fn([dict(m) for m in messages], params)
                except FactseekError:
                    raise
                except Exception as e:  # the seam: a user's function fails as an LLMError
                    first = str(e).splitlines()[0] if str(e) else ""
                    raise LLMError(f"{self.model}: {type(e).__name__}: {first}"[:300]) from e
                if not isinstance(text, str):
                    raise LLMError(
                        f"{self.model}: function returned {type(text).__name__}, not str"
                    )
                completions.append(apply_stop(text, stop)[:MAX_COMPLETION_CHARS])
            self.usage.add(requests=n)
            out.append(completions)
        return out


class Unusable(ValueError):
    """Raised by a completion parser: the text cannot be used (the message says why, one line)."""


def generate_parsed(
    llm: LLM,
    prompts: Sequence[Prompt],
    parse: Callable[[str], T],
    *,
    n: int = 1,
    temperature: float = 0.0,
    max_tokens: int = 256,
    stop: Sequence[str] | None = None,
    seed: int | None = None,
    attempts: int = PARSE_ATTEMPTS,
    what: str = "completion",
) -> list[list[T]]:
    """``generate`` then ``parse`` every completion; unusable ones are retried, then reported.

    A completion is unusable when it is empty or ``parse`` raises ``Unusable``. A retry asks for
    one new completion of that prompt with twice the ``max_tokens`` (truncation is the usual
    cause), temperature at least ``RETRY_TEMPERATURE`` and a new seed. After ``attempts``
    tries the whole call raises ``LLMError`` naming the last reason.
    """
    raw = llm.generate(
        prompts, n=n, temperature=temperature, max_tokens=max_tokens, stop=stop, seed=seed
    )
    if len(raw) != len(prompts) or any(len(r) != n for r in raw):
        raise LLMError(f"{llm.name}/{llm.model}: backend returned the wrong number of completions")
    results: list[list[T | None]] = [[None] * n for _ in prompts]
    pending: list[tuple[int, int, str]] = []  # (prompt index, sample index, text)
    for i, comps in enumerate(raw):
        for j, text in enumerate(comps):
            pending.append((i, j, text))
    base_seed = 0 if seed is None else seed
    for attempt in range(attempts):
        failed: list[tuple[int, int, str]] = []
        for i, j, text in pending:
            try:
                if not text.strip():
                    raise Unusable("empty completion")
                results[i][j] = parse(text)
            except Unusable as e:
                failed.append((i, j, str(e).splitlines()[0] if str(e) else "unusable"))
        if not failed:
            break
        if attempt == attempts - 1:
            reason = failed[0][2]
            raise LLMError(
                f"{llm.name}/{llm.model}: unusable {what} after {attempts} attempts ({reason})"
            )
        llm.usage.add(retries=len(failed))
        pending = []
        for j in sorted({j for _, j, _ in failed}):  # one call per sample index: distinct seeds
            group = [i for i, jj, _ in failed if jj == j]
            again = llm.generate(
                [prompts[i] for i in group],
                n=1,
                temperature=max(temperature, RETRY_TEMPERATURE),
                max_tokens=max_tokens * 2 ** (attempt + 1),
                stop=stop,
                seed=base_seed + 7919 * (attempt + 1) + j,
            )
            if len(again) != len(group) or any(len(c) != 1 for c in again):
                raise LLMError(
                    f"{llm.name}/{llm.model}: backend returned the wrong number of completions"
                )
            pending.extend((i, j, comps[0]) for i, comps in zip(group, again, strict=True))
    return [[r for r in row if r is not None] for row in results]  # type: ignore[misc]
