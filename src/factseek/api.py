"""The Python API: ``check(claim, **options) -> Report``, building the pipeline's parts from names.

>>> from factseek.api import check
>>> report = check("The council approved 4 new buses in March.", date="2023-06-01",
...                store="~/my-store")  # doctest: +SKIP

Every option has a CLI twin in ``factseek check``. For full control, build ``pipeline.Parts``
yourself and call ``pipeline.run``.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factseek.constraints import UndatedPolicy
from factseek.errors import ConfigError, InputError
from factseek.pipeline import CheckConfig, Parts, Progress, run, validate_claim
from factseek.types import Claim, Report

DECOMPOSERS = ("auto", "rules", "llm")
SUMMARIZERS = ("auto", "extractive", "llm-zero-shot", "llm-few-shot")
LLM_CHOICES = ("none", "openai", "llamacpp")


def parse_date(value: str | _dt.date | None) -> _dt.date | None:
    """A date from 'YYYY-MM-DD' (or a date); InputError with one line otherwise."""
    if value is None or isinstance(value, _dt.date):
        return value
    try:
        return _dt.date.fromisoformat(value.strip())
    except ValueError:
        raise InputError(f"invalid date {value!r}: use YYYY-MM-DD") from None


@dataclass(frozen=True, kw_only=True)
class CheckOptions:
    """Names and paths that select the parts of a run (what the CLI's options map to)."""

    store: str | Path | None = None
    search: str = "local"
    decomposer: str = "auto"
    summarizer: str = "auto"
    llm: str = "none"
    llm_model: str | None = None
    llm_base_url: str | None = None
    use_cache: bool = True
    judge: str | Path | None = None
    llm_judge: str | Path | None = None  # score thresholds (JSON) for the LLM veracity scorer
    rewrite: str | Path | None = None
    record: str | Path | None = None
    replay: str | Path | None = None
    allow_hosts: tuple[str, ...] = ()
    cache_dir: str | Path | None = None


def _choice(value: str, choices: Sequence[str], what: str) -> str:
    if value not in choices:
        raise ConfigError(f"unknown {what} {value!r}; choose one of: {', '.join(choices)}")
    return value


def build_parts(opts: CheckOptions) -> Parts:
    """Instantiate every part named in ``opts`` (heavy imports happen only for what is used)."""
    from factseek.decompose.rules import RuleDecomposer
    from factseek.search.base import make_backend
    from factseek.summarize.extractive import ExtractiveSummarizer

    _choice(opts.decomposer, DECOMPOSERS, "decomposer")
    _choice(opts.summarizer, SUMMARIZERS, "summarizer")
    _choice(opts.llm, LLM_CHOICES, "LLM backend")
    if opts.record and opts.replay:
        raise ConfigError("--record and --replay cannot be used together")
    names: dict[str, str] = {"search": opts.search, "llm": opts.llm}

    recorder = replayer = None
    if opts.record:
        from factseek.bundle import Recorder

        recorder = Recorder(Path(opts.record))
    if opts.replay:
        from factseek.bundle import Replayer

        replayer = Replayer(Path(opts.replay))
        names["replay"] = str(opts.replay)

    # search backend and fetcher
    fetcher = None
    if replayer is not None:
        search = replayer.search_backend()
        fetcher = replayer.fetcher()
    elif opts.search == "local":
        if opts.store is None:
            raise InputError(
                "the local search backend needs --store DIR (build one with `factseek index build`)"
            )
        search = make_backend("local", store=Path(opts.store).expanduser())
        names["store"] = str(opts.store)
    else:
        from factseek.fetch import make_fetcher

        search = make_backend(opts.search)
        fetcher = make_fetcher(
            allow_hosts=opts.allow_hosts,
            cache_dir=Path(opts.cache_dir) / "pages" if opts.cache_dir else None,
        )
    if recorder is not None:
        search = recorder.wrap_search(search)
        if fetcher is not None:
            fetcher = recorder.wrap_fetcher(fetcher)

    # language model
    llm: Any = None
    if replayer is not None and opts.llm != "none":
        llm = replayer.llm()
    elif opts.llm != "none":
        from factseek.llm import make_llm

        llm = make_llm(
            opts.llm,
            model=opts.llm_model,
            base_url=opts.llm_base_url,
            cache_dir=Path(opts.cache_dir) / "llm" if opts.cache_dir else None,
            use_cache=opts.use_cache,
        )
        if recorder is not None:
            llm = recorder.wrap_llm(llm)
    if llm is not None:
        names["llm_model"] = str(getattr(llm, "model", ""))

    rules = RuleDecomposer()
    extractive = ExtractiveSummarizer()
    decomposer_name = opts.decomposer if opts.decomposer != "auto" else ("llm" if llm else "rules")
    summarizer_name = (
        opts.summarizer if opts.summarizer != "auto" else ("llm-few-shot" if llm else "extractive")
    )
    if (decomposer_name == "llm" or summarizer_name.startswith("llm")) and llm is None:
        raise ConfigError("LLM decomposition or summaries need an LLM: pass --llm openai|llamacpp")
    if decomposer_name == "llm":
        from factseek.decompose.llm import LLMDecomposer

        decomposer: Any = LLMDecomposer(llm)
    else:
        decomposer = rules
    if summarizer_name.startswith("llm"):
        from factseek.summarize.llm import LLMSummarizer

        summarizer: Any = LLMSummarizer(llm, mode=summarizer_name.removeprefix("llm-"))
    else:
        summarizer = extractive
    names["decomposer"] = decomposer_name
    names["summarizer"] = summarizer_name

    judge: Any = None
    if opts.judge and opts.llm_judge:
        raise ConfigError(
            "choose one judge: --judge (trained classifier) or --llm-judge (LLM scorer)"
        )
    if opts.judge:
        from factseek.judge import load_judge

        judge = load_judge(Path(opts.judge).expanduser())
        names["judge"] = str(opts.judge)
    elif opts.llm_judge:
        if llm is None:
            raise ConfigError("--llm-judge needs an LLM: pass --llm openai|llamacpp")
        from factseek.judge.llm_scorer import LLMScorer, ScoreThresholds

        judge = LLMScorer(llm, ScoreThresholds.load(Path(opts.llm_judge).expanduser()))
        names["judge"] = f"llm-scorer:{opts.llm_judge}"
    rewriter = None
    if opts.rewrite:
        from factseek.rewrite.shipped import load_rewriter

        rewriter = load_rewriter(opts.rewrite, search=search)  # "default": the shipped model
        names["rewrite"] = str(opts.rewrite)

    usage = getattr(llm, "usage", None)
    return Parts(
        search=search,
        decomposer=decomposer,
        summarizer=summarizer,
        fallback_decomposer=rules if decomposer is not rules else None,
        fallback_summarizer=extractive if summarizer is not extractive else None,
        fetcher=fetcher,
        judge=judge,
        rewriter=rewriter,
        usage=(lambda: dict(usage() if callable(usage) else usage)) if usage is not None else None,
        names=names,
    )


def make_claim(
    text: str,
    *,
    date: str | _dt.date | None = None,
    speaker: str | None = None,
    venue: str | None = None,
    id: str | None = None,
) -> Claim:
    return Claim(
        text=text, date=parse_date(date), speaker=speaker or None, venue=venue or None, id=id
    )


def check(
    claim: str | Claim,
    *,
    date: str | _dt.date | None = None,
    speaker: str | None = None,
    venue: str | None = None,
    k: int = 10,
    undated: UndatedPolicy = "drop",
    exclude_sites: Sequence[str] = (),
    progress: Progress | None = None,
    **options: Any,
) -> Report:
    """Check one claim. ``options`` are ``CheckOptions`` fields (store, search, llm, judge, ...)."""
    if isinstance(claim, str):
        claim = make_claim(claim, date=date, speaker=speaker, venue=venue)
    claim = validate_claim(claim)  # before any part is built: bad input fails fast
    unknown = set(options) - set(CheckOptions.__dataclass_fields__)
    if unknown:
        raise ConfigError(f"unknown option(s): {', '.join(sorted(unknown))}")
    if undated not in ("drop", "keep"):
        raise ConfigError(f"unknown undated policy {undated!r}; choose one of: drop, keep")
    if k < 1:
        raise ConfigError("k must be at least 1")
    parts = build_parts(CheckOptions(**options))
    config = CheckConfig(k=k, undated=undated, exclude_sites=tuple(exclude_sites))
    return run(claim, parts, config, progress=progress)
