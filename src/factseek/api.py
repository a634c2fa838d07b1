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
SCALES = ("auto", "averitec", "politifact")  # auto: the judge's scale, else averitec (stance)


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
    stance: str | Path = "none"  # "default" (shipped model), a trained folder, or "none"
    scale: str = "auto"


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
    stance, evidence_judge, answerer = _evidence_parts(opts, llm, names)

    judge: Any = None
    _choice(opts.scale, SCALES, "verdict scale")
    if opts.judge and opts.llm_judge:
        raise ConfigError(
            "choose one judge: --judge (trained classifier) or --llm-judge (LLM scorer)"
        )
    if opts.judge:
        from factseek.judge import load_judge

        judge = load_judge(Path(opts.judge).expanduser())
        names["judge"] = str(opts.judge)
        if is_evidence_judge(judge):
            evidence_judge, judge = judge, None
    elif opts.llm_judge:
        if llm is None:
            raise ConfigError("--llm-judge needs an LLM: pass --llm openai|llamacpp")
        from factseek.judge.llm_scorer import LLMScorer, ScoreThresholds

        judge = LLMScorer(llm, ScoreThresholds.load(Path(opts.llm_judge).expanduser()))
        names["judge"] = f"llm-scorer:{opts.llm_judge}"
    _check_scale(opts.scale, judge if judge is not None else evidence_judge)
    rewriter = None
    if opts.rewrite:
        from factseek.rewrite.infer import Rewriter

        rewriter = Rewriter.load(Path(opts.rewrite).expanduser())
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
        stance=stance,
        evidence_judge=evidence_judge if judge is None else None,
        answerer=answerer,
        usage=(lambda: dict(usage() if callable(usage) else usage)) if usage is not None else None,
        names=names,
    )


def is_evidence_judge(judge: Any) -> bool:
    from factseek.judge import EvidenceJudge

    return isinstance(judge, EvidenceJudge)


def _evidence_parts(opts: CheckOptions, llm: Any, names: dict[str, str]) -> tuple[Any, Any, Any]:
    """The stance model, the default evidence judge (rules over stance) and the LLM answerer."""
    stance = None
    if str(opts.stance) != "none":
        from factseek.stance import load_stance  # type: ignore[attr-defined]

        stance = load_stance(opts.stance)
        names["stance"] = getattr(stance, "name", str(opts.stance))
    evidence_judge = None
    if stance is not None and opts.scale in ("auto", "averitec"):
        from factseek.judge.verdict import StanceRules

        evidence_judge = StanceRules(names["stance"])
    answerer = None
    if llm is not None and stance is not None:
        from factseek.judge.llm_answers import LLMAnswerer

        answerer = LLMAnswerer(llm)
        names["answers"] = answerer.name
    return stance, evidence_judge, answerer


def _check_scale(scale: str, judge: Any) -> None:
    """The judge's label set must be the scale asked for (a PolitiFact judge cannot answer in
    AVeriTeC labels, and no rule maps one onto the other)."""
    if scale == "auto" or judge is None:
        return
    have = getattr(judge, "scale", None) or getattr(getattr(judge, "labels", None), "name", None)
    if have is not None and have != scale:
        raise ConfigError(f"--scale {scale} asked for, but the judge gives {have} labels")


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
    top_docs: int | None = None,
    cards: int | None = None,
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
    config = check_config(
        k=k, undated=undated, exclude_sites=exclude_sites, top_docs=top_docs, cards=cards
    )
    return run(claim, parts, config, progress=progress)


def check_config(
    *,
    k: int = 10,
    undated: str = "drop",
    exclude_sites: Sequence[str] = (),
    top_docs: int | None = None,
    cards: int | None = None,
) -> CheckConfig:
    """Pipeline settings from the options ``check`` and ``batch`` share.

    ``top_docs`` sets how many documents are summarized and searched for evidence cards (the
    paper summarizes 4; evidence cards read every kept document unless it is set); ``cards`` how
    many cards each question shows."""
    from dataclasses import replace

    if undated not in ("drop", "keep"):
        raise ConfigError(f"unknown undated policy {undated!r}; choose one of: drop, keep")
    config = CheckConfig(k=k, undated=undated, exclude_sites=tuple(exclude_sites))  # type: ignore[arg-type]
    if top_docs is not None:
        config = replace(
            config,
            spans=replace(config.spans, top_docs=top_docs),
            evidence=replace(config.evidence, top_docs=top_docs),
        )
    if cards is not None:
        ev = config.evidence
        config = replace(
            config, evidence=replace(ev, cards=cards, candidates=max(cards, ev.candidates))
        )
    return config
