"""Evidence bundles: record what a run saw, replay it with no network.

A bundle is a folder of plain files::

    config.json            {"format_version": 1, "kind": "factseek-evidence-bundle",
                            "redaction": the rule below, in words}
    search.jsonl           one search call per line: backend, capabilities, query, k,
                           constraints, and the hit list (or the error it raised)
    llm.jsonl              one LLM call per line: prompts, sampling parameters, completions,
                           and the usage it added (tokens, price), replayed as recorded
    pages/index.jsonl      one line per fetched URL: its document's sha256, or its error
    pages/<sha256>.json.gz the extracted Document as JSON, gzip-compressed, stored once
    redactions.jsonl       one line per recorded URL that lost credentials: where ("search",
                           "page", "failure"), its position, and which parts were removed
                           ("userinfo", "query:api_key", ...), never their values

``Recorder(dir)`` wraps a search backend, a fetcher and an LLM so every call is written as it
happens (one flushed line each). ``Replayer(dir)`` serves exactly the recorded answers; a
request the bundle does not hold raises ``BundleError`` naming it. Identical requests recorded
more than once replay in recorded order. Serialization is canonical (sorted keys, gzip
without timestamps), so replaying a bundle while recording it again rewrites it byte for byte.

API keys are never written: backends are recorded by name and capabilities only. Nor are
credentials inside result URLs: the recorder sits where hits and pages enter factseek and
redacts them (``factseek.redact``) before it writes or returns them; replay serves bundles
recorded before that redacted too.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import threading
import zlib
from collections import defaultdict, deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from factseek import errors
from factseek.constraints.hits import Constraints
from factseek.errors import BundleError, FactseekError, InputError, SearchError
from factseek.files import (
    atomic_write,
    check_writable_dir,
    input_limit,
    input_lines,
    os_errors,
    read_input,
    too_large,
)
from factseek.redact import (
    RULE,
    redact_document,
    redact_failure,
    redact_hit,
    redact_url,
    redacted_parts,
)
from factseek.sanitize import json_loads
from factseek.search.base import Capabilities, SearchBackend
from factseek.types import Document, FetchFailure, Hit, from_dict, to_dict

FORMAT_VERSION = 1
KIND = "factseek-evidence-bundle"
SEARCH_LOG = "search.jsonl"
LLM_LOG = "llm.jsonl"
PAGES = "pages"
PAGE_INDEX = "pages/index.jsonl"
REDACTIONS = "redactions.jsonl"
MAX_LINE = 64 * 2**20  # one recorded call (an LLM call with long prompts) per line


def canonical(obj: Any) -> str:
    """One JSON line, keys sorted: the same data always gives the same bytes."""
    return json.dumps(to_dict(obj), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _search_key(backend: str, query: str, k: int, constraints: Constraints | dict[str, Any]) -> str:
    return canonical([backend, query, k, constraints])


def _llm_key(
    prompts: Any, n: int, temperature: float, max_tokens: int, stop: Any, seed: Any
) -> str:
    return canonical([prompts, n, temperature, max_tokens, stop, seed])


def _check_config(root: Path) -> None:
    try:
        config = json_loads(read_input(root / "config.json", "bundle config", limit=2**20))
    except (OSError, ValueError, InputError):
        raise BundleError(f"{root}: not an evidence bundle (no readable config.json)") from None
    if config.get("kind") != KIND or config.get("format_version") != FORMAT_VERSION:
        raise BundleError(
            f"{root}: unsupported bundle (kind {config.get('kind')!r}, "
            f"format_version {config.get('format_version')!r}; expected {FORMAT_VERSION})"
        )


def _error_record(e: FactseekError) -> dict[str, str]:
    return {"type": type(e).__name__, "message": str(e)}


def _raise_recorded(record: dict[str, str]) -> None:
    cls = getattr(errors, record.get("type", ""), None)
    if not (isinstance(cls, type) and issubclass(cls, FactseekError)):
        cls = FactseekError
    raise cls(record.get("message", ""))


# ----------------------------------------------------------------------------- recording


class Recorder:
    """Writes every search, fetch and LLM call of the wrapped objects into ``root``."""

    def __init__(self, root: Path | str) -> None:
        self.root = check_writable_dir(root, "evidence bundle folder")
        if (self.root / "config.json").exists():
            _check_config(self.root)
        else:
            config = {"format_version": FORMAT_VERSION, "kind": KIND, "redaction": RULE}
            atomic_write(self.root / "config.json", (canonical(config) + "\n").encode())
        self._lock = threading.Lock()

    def _append(self, name: str, record: dict[str, Any]) -> None:
        line = canonical(record) + "\n"
        path = self.root / name
        with self._lock:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8") as f:
                f.write(line)
                f.flush()

    def _note_redactions(self, where: str, raw: Sequence[str], shown: Sequence[str]) -> None:
        """One ``redactions.jsonl`` line per URL that lost something (names, never values)."""
        for i, (url, safe) in enumerate(zip(raw, shown, strict=True)):
            if url != safe:
                parts = list(redacted_parts(url)) or ["text"]
                self._append(
                    REDACTIONS, {"where": where, "index": i, "url": safe, "removed": parts}
                )

    def _store_document(self, doc: Document) -> str:
        data = canonical(doc).encode()
        digest = hashlib.sha256(data).hexdigest()
        path = self.root / PAGES / f"{digest}.json.gz"
        if not path.exists():
            atomic_write(path, gzip.compress(data, mtime=0))
        return digest

    def wrap_search(self, backend: SearchBackend) -> SearchBackend:
        return _RecordingSearch(self, backend)

    def wrap_fetcher(self, fetcher: Any) -> Any:
        """Wrap anything with ``fetch(urls) -> (documents, failures)``."""
        return _RecordingFetcher(self, fetcher)

    def wrap_llm(self, llm: Any) -> Any:
        """Wrap anything with ``generate(prompts, *, n, temperature, max_tokens, stop, seed)``."""
        return _RecordingLLM(self, llm)


class _RecordingSearch:
    def __init__(self, recorder: Recorder, inner: SearchBackend) -> None:
        self._rec = recorder
        self._inner = inner
        self.name = inner.name
        self.capabilities = inner.capabilities

    def search(self, query: str, k: int, constraints: Constraints) -> list[Hit]:
        record: dict[str, Any] = {
            "backend": self.name,
            "capabilities": self.capabilities,
            "query": query,
            "k": k,
            "constraints": constraints,
        }
        try:
            raw = self._inner.search(query, k, constraints)
        except SearchError as e:
            self._rec._append(SEARCH_LOG, {**record, "error": _error_record(e)})
            raise
        hits = [redact_hit(h) for h in raw]  # where results enter factseek
        self._rec._note_redactions("search", [h.url for h in raw], [h.url for h in hits])
        self._rec._append(SEARCH_LOG, {**record, "hits": hits})
        return hits


class _RecordingFetcher:
    def __init__(self, recorder: Recorder, inner: Any) -> None:
        self._rec = recorder
        self._inner = inner

    def fetch(self, urls: Sequence[str]) -> tuple[list[Document], list[FetchFailure]]:
        raw_docs, raw_failures = self._inner.fetch(urls)
        docs = [redact_document(d) for d in raw_docs]  # where pages enter factseek
        failures = [redact_failure(f) for f in raw_failures]
        self._rec._note_redactions("page", [d.url for d in raw_docs], [d.url for d in docs])
        self._rec._note_redactions(
            "failure", [f.url for f in raw_failures], [f.url for f in failures]
        )
        for d in docs:
            self._rec._append(PAGE_INDEX, {"url": d.url, "sha256": self._rec._store_document(d)})
        for f in failures:
            self._rec._append(PAGE_INDEX, {"url": f.url, "error": f.error})
        return docs, failures


#: Usage counters replayed exactly, so a replayed report accounts the same tokens and cost.
USAGE_FIELDS = ("requests", "cached", "retries", "prompt_tokens", "completion_tokens")


def _usage_counts(usage: Any) -> dict[str, int]:
    return {k: int(getattr(usage, k, 0) or 0) for k in USAGE_FIELDS}


class _RecordingLLM:
    def __init__(self, recorder: Recorder, inner: Any) -> None:
        self._rec = recorder
        self._inner = inner
        self.name = inner.name
        self.model = inner.model

    def __getattr__(self, attr: str) -> Any:  # usage and other read-only extras
        return getattr(self._inner, attr)

    def generate(
        self,
        prompts: Sequence[Any],
        *,
        n: int = 1,
        temperature: float = 0.0,
        max_tokens: int = 256,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
    ) -> list[list[str]]:
        usage = getattr(self._inner, "usage", None)
        before = _usage_counts(usage)
        outputs = self._inner.generate(
            prompts, n=n, temperature=temperature, max_tokens=max_tokens, stop=stop, seed=seed
        )
        after = _usage_counts(usage)
        price = getattr(usage, "price", None)
        self._rec._append(
            LLM_LOG,
            {
                "llm": self.name,
                "model": self.model,
                "prompts": list(prompts),
                "n": n,
                "temperature": temperature,
                "max_tokens": max_tokens,
                "stop": list(stop) if stop is not None else None,
                "seed": seed,
                "outputs": outputs,
                "usage": {k: after[k] - before[k] for k in after},
                "price": price,
            },
        )
        return outputs


# ----------------------------------------------------------------------------- replaying


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = []
    for i, line in input_lines(path, "bundle log", max_line=MAX_LINE):
        if not line.strip():
            continue
        try:
            record = json_loads(line.decode("utf-8"))
        except ValueError:  # UnicodeDecodeError included
            raise BundleError(f"{path}:{i}: not valid JSON") from None
        if not isinstance(record, dict):
            raise BundleError(f"{path}:{i}: not a JSON object")
        out.append(record)
    return out


class _Queue:
    """Recorded answers per request key; repeats replay in order, the last one sticks."""

    def __init__(self) -> None:
        self._by_key: dict[str, deque[Any]] = defaultdict(deque)
        self._lock = threading.Lock()

    def add(self, key: str, value: Any) -> None:
        self._by_key[key].append(value)

    def take(self, key: str) -> Any:
        with self._lock:
            q = self._by_key.get(key)
            if not q:
                raise KeyError(key)
            return q.popleft() if len(q) > 1 else q[0]


class Replayer:
    """Serves a bundle's recorded search results, pages and LLM completions; no network."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        _check_config(self.root)
        with os_errors(self.root, "evidence bundle"):
            self.searches = _read_jsonl(self.root / SEARCH_LOG)
            self.llm_calls = _read_jsonl(self.root / LLM_LOG)
            self.pages = _read_jsonl(self.root / PAGE_INDEX)

    def search_backend(self, name: str | None = None) -> SearchBackend:
        """The recorded backend (``name`` picks one when a bundle holds several)."""
        names = list(dict.fromkeys(r["backend"] for r in self.searches))
        if not names:
            raise BundleError(f"{self.root}: the bundle holds no search calls")
        if name is None:
            if len(names) > 1:
                raise BundleError(f"{self.root}: several backends recorded; pick one of {names}")
            name = names[0]
        if name not in names:
            raise BundleError(f"{self.root}: no search calls recorded for backend {name!r}")
        return _ReplayedSearch(self.root, name, [r for r in self.searches if r["backend"] == name])

    def fetcher(self) -> Any:
        return _ReplayedFetcher(self.root, self.pages)

    def llm(self) -> Any:
        return _ReplayedLLM(self.root, self.llm_calls)


class _ReplayedSearch:
    def __init__(self, root: Path, name: str, records: list[dict[str, Any]]) -> None:
        self._root = root
        self.name = name
        self.capabilities = Capabilities(**records[0]["capabilities"])
        self._answers = _Queue()
        for r in records:  # recorded constraints are to_dict output: same canonical key
            self._answers.add(_search_key(name, r["query"], r["k"], r["constraints"]), r)

    def search(self, query: str, k: int, constraints: Constraints) -> list[Hit]:
        try:
            r = self._answers.take(_search_key(self.name, query, k, constraints))
        except KeyError:
            raise BundleError(
                f"{self._root}: no recorded {self.name} search for {query[:80]!r} (k={k})"
            ) from None
        if "error" in r:
            _raise_recorded(r["error"])
        return [redact_hit(from_dict(Hit, h)) for h in r["hits"]]  # older bundles: raw URLs


class _ReplayedFetcher:
    def __init__(self, root: Path, index: list[dict[str, Any]]) -> None:
        self._root = root
        self._answers = _Queue()
        for r in index:  # by redacted URL: hits replay redacted, even from older bundles
            self._answers.add(redact_url(r["url"]), r)

    def _document(self, digest: str) -> Document:
        path = self._root / PAGES / f"{digest}.json.gz"
        limit = input_limit()
        try:
            inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)  # gzip
            data = inflate.decompress(read_input(path, "bundle page"), limit + 1)
        except (InputError, zlib.error):
            raise BundleError(f"{path}: missing or damaged page") from None
        if len(data) > limit or inflate.unconsumed_tail:
            raise too_large(path, "bundle page", limit)
        if hashlib.sha256(data).hexdigest() != digest:
            raise BundleError(f"{path}: content does not match its hash")
        return from_dict(Document, json_loads(data))

    def fetch(self, urls: Sequence[str]) -> tuple[list[Document], list[FetchFailure]]:
        docs: list[Document] = []
        failures: list[FetchFailure] = []
        for url in dict.fromkeys(urls):
            try:
                r = self._answers.take(redact_url(url))
            except KeyError:
                shown = redact_url(url)[:200]
                raise BundleError(f"{self._root}: page not recorded: {shown}") from None
            if "error" in r:
                failures.append(redact_failure(FetchFailure(url=url, error=r["error"])))
            else:
                docs.append(redact_document(self._document(r["sha256"])))
        return docs, failures


class _ReplayedLLM:
    def __init__(self, root: Path, records: list[dict[str, Any]]) -> None:
        from factseek.llm.base import Price, Usage

        self._root = root
        first = records[0] if records else {"llm": "replay", "model": "replay"}
        self.name = first["llm"]
        self.model = first["model"]
        price = first.get("price")
        self.usage = Usage(Price(**price) if price else None)
        self._answers = _Queue()
        for r in records:
            key = _llm_key(
                r["prompts"], r["n"], r["temperature"], r["max_tokens"], r["stop"], r["seed"]
            )
            self._answers.add(key, (r["outputs"], r.get("usage") or {}))

    def generate(
        self,
        prompts: Sequence[Any],
        *,
        n: int = 1,
        temperature: float = 0.0,
        max_tokens: int = 256,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
    ) -> list[list[str]]:
        key = _llm_key(
            list(prompts),
            n,
            temperature,
            max_tokens,
            list(stop) if stop is not None else None,
            seed,
        )
        try:
            outputs, usage = self._answers.take(key)
        except KeyError:
            first = str(to_dict(prompts[0]))[:80] if prompts else ""
            raise BundleError(f"{self._root}: no recorded LLM call for prompt {first!r}") from None
        self.usage.add(**{k: int(v) for k, v in usage.items() if k in USAGE_FIELDS})
        return [list(o) for o in outputs]
