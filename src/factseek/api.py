"""The Python API: ``check(claim, date=..., store=..., ...) -> Report``, building the pipeline's
parts from names.

>>> from factseek.api import check
>>> report = check("The council approved 4 new buses in March.", date="2023-06-01",
...                store="~/my-store")  # doctest: +SKIP

Every option has a CLI twin in ``factseek check``. For full control, build ``pipeline.Parts``
yourself and call ``pipeline.run``.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factseek.constraints.hits import UndatedPolicy
from factseek.constraints.temporal import DEFAULT_GUESSED
from factseek.errors import ConfigError, InputError
from factseek.pipeline import DEFAULT_CONFIG, CheckConfig, Parts, Progress, run, validate_claim
from factseek.sanitize import lone_surrogate
from factseek.types import Claim, Report

DECOMPOSERS = ("auto", "rules", "llm")
SUMMARIZERS = ("auto", "extractive", "llm-zero-shot", "llm-few-shot")
LLM_CHOICES = ("none", "openai", "llamacpp")
SCALES = ("auto", "averitec", "politifact")  # auto: the judge's scale, else averitec (stance)


def parse_date(value: str | _dt.date | None) -> _dt.date | None:
    """A date from 'YYYY-MM-DD' (or a date); InputError with one line otherwise."""
    if value is None or isinstance(value, _dt.date):
        return value
    if not isinstance(value, str):
        raise InputError(f"invalid date {value!r}: use a YYYY-MM-DD string")
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
    stance: str | Path = "default"  # default_stance's pick, small, mpnet, a folder, or none
    stance_engine: str | None = None  # numpy, torch or auto (None: $FACTSEEK_STANCE_ENGINE, auto)
    cascade: bool = False  # small screens the pairs mpnet reads (stance.cascade)
    scale: str = "auto"
    verdict_rules: str | Path = "default"  # the rules verdict's numbers (judge.rules)
    keep_pdf: bool = False  # the fetcher reads PDFs (pair with ``check_config(keep_pdf=True)``)


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
        from factseek.runs.bundle import Recorder

        recorder = Recorder(Path(opts.record))
    if opts.replay:
        from factseek.runs.bundle import Replayer

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
            keep_pdf=opts.keep_pdf,
        )
    if recorder is not None:
        search = recorder.wrap_search(search)
        if fetcher is not None:
            fetcher = recorder.wrap_fetcher(fetcher)

    rewrite_name: str | Path | None = None
    if opts.rewrite:  # a missing extra fails here, in one line, before any model loads
        from factseek.rewrite.edits.shipped import DEFAULT, default_rewriter, preflight

        # "default": the shipped scorer whose judge reads with this check's stance model
        rewrite_name = opts.rewrite
        if str(opts.rewrite) == DEFAULT:
            rewrite_name = default_rewriter(opts.stance)
        preflight(rewrite_name)
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
    notes: list[str] = []
    stance, evidence_judge, answerer = _evidence_parts(opts, llm, names, notes)

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
    if rewrite_name is not None:
        from factseek.rewrite.edits.shipped import load_rewriter

        rewriter = load_rewriter(rewrite_name, search=search)
        names["rewrite"] = str(rewrite_name)

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
        notes=tuple(notes),
    )


def is_evidence_judge(judge: Any) -> bool:
    from factseek.judge import EvidenceJudge

    return isinstance(judge, EvidenceJudge)


def _reliability_words(config: Any) -> str:
    from factseek.stance.reliability import of_model, words

    rel = of_model(config) if isinstance(config, dict) else None
    return words(rel) if rel is not None else ""


def _evidence_parts(
    opts: CheckOptions, llm: Any, names: dict[str, str], notes: list[str]
) -> tuple[Any, Any, Any]:
    """The stance model, the default evidence judge (rules over stance) and the LLM answerer."""
    stance = None
    if str(opts.stance) != "none":
        from factseek.errors import MissingDependency
        from factseek.stance import DEFAULT, default_note, load_stance, resolve_stance

        chosen_stance = resolve_stance(opts.stance)
        try:
            readings = opts.cache_dir if opts.use_cache else None  # pairs read before
            stance = load_stance(chosen_stance, engine=opts.stance_engine, readings=readings)
            names["stance"] = getattr(stance, "name", str(opts.stance))
            if opts.cascade and str(chosen_stance) == CASCADE_STRONG:
                stance = _cascade(stance, opts, readings, names)
            engine = getattr(stance, "config", {}).get("engine")
            if engine:  # the same engine reproduces a report's probabilities exactly
                names["stance_engine"] = str(engine)
            reliability = _reliability_words(getattr(stance, "config", {}))
            if reliability:  # how often its readings held on real-world evidence
                names["stance_reliability"] = reliability
            if str(opts.stance) == DEFAULT and (note := default_note(chosen_stance)):
                notes.append(note)  # the default fell back to the small model: say so
        except MissingDependency as e:
            if str(opts.stance) != DEFAULT:
                raise  # a model the user asked for by name: say what to install
            # the shipped default on a base install: run without cards, and say why
            names["stance"] = "none"
            notes.append(f"no evidence cards or verdict: {e}")
    evidence_judge = None
    if stance is not None and opts.scale in ("auto", "averitec"):
        from factseek.judge.rules import answer_words, default_rules, load_rules
        from factseek.judge.verdict import StanceRules

        chosen = opts.verdict_rules
        rules = (
            default_rules(str(chosen_stance)) if str(chosen) == "default" else load_rules(chosen)
        )
        evidence_judge = StanceRules(names["stance"], rules)
        if answered := answer_words(rules):  # how often the claim's own answer held
            names["answer_reliability"] = answered
        if str(opts.verdict_rules) != "default":
            names["verdict_rules"] = Path(opts.verdict_rules).name
    answerer = None
    if llm is not None and stance is not None:
        from factseek.judge.llm_answers import LLMAnswerer

        answerer = LLMAnswerer(llm)
        names["answers"] = answerer.name
    return stance, evidence_judge, answerer


#: The stance model a cascade's screen stands before (``stance.cascade``), and the screen.
CASCADE_STRONG, CASCADE_SCREEN = "mpnet", "small"


def _cascade(
    strong: Any, opts: CheckOptions, readings: str | Path | None, names: dict[str, str]
) -> Any:
    """``strong`` behind the ``small`` model's screen (``stance.cascade``), or ``strong`` alone
    when ``small`` cannot be loaded."""
    from factseek.errors import FactseekError
    from factseek.stance import load_stance
    from factseek.stance.cascade import CascadeStance

    try:  # torch by default: the strong model imports it anyway, and its int8 reads faster
        engine = opts.stance_engine or "torch"
        screen = load_stance(CASCADE_SCREEN, engine=engine, readings=readings)
    except FactseekError:
        return strong
    cascade = CascadeStance(screen, strong)
    names["stance_cascade"] = cascade.describe()
    return cascade


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
    """A ``Claim`` from plain, untrusted values (the date as 'YYYY-MM-DD' or a date; empty
    strings: None); ``InputError`` naming the field if one is unusable."""
    fields = {"text": text, "speaker": speaker, "venue": venue, "id": id}
    for name, value in fields.items():
        if value is not None and not isinstance(value, str):
            raise InputError(f"field {name!r} must be a string, got {type(value).__name__}")
        bad = lone_surrogate(value) if value else None
        if bad:
            raise InputError(f"field {name!r} contains a lone surrogate ({bad}): not valid text")
    return Claim(
        text=text, date=parse_date(date), speaker=speaker or None, venue=venue or None, id=id
    )


def check(
    claim: str | Claim,
    *,
    date: str | _dt.date | None = None,
    speaker: str | None = None,
    venue: str | None = None,
    store: str | Path | None = None,
    search: str = "local",
    k: int = 10,
    undated: UndatedPolicy = "drop",
    on_conflict: str = "after",
    date_basis: str = "modified",
    guessed: str = DEFAULT_GUESSED,
    keep_pdf: bool = False,
    exclude_sites: Sequence[str] = (),
    decomposer: str = "auto",
    summarizer: str = "auto",
    llm: str = "none",
    llm_model: str | None = None,
    llm_base_url: str | None = None,
    use_cache: bool = True,
    judge: str | Path | None = None,
    llm_judge: str | Path | None = None,
    rewrite: str | Path | None = None,
    record: str | Path | None = None,
    replay: str | Path | None = None,
    allow_hosts: Sequence[str] = (),
    cache_dir: str | Path | None = None,
    stance: str | Path = "default",
    stance_engine: str | None = None,
    cascade: bool = False,
    scale: str = "auto",
    verdict_rules: str | Path = "default",
    top_docs: int | None = None,
    cards: int | None = None,
    progress: Progress | None = None,
) -> Report:
    """Check one claim and return its ``Report`` (every option has a twin in ``factseek check``).

    Args:
        claim: the claim's text, or a ``Claim`` (then ``date``, ``speaker``, ``venue`` are ignored).
        date: when the claim was made ('YYYY-MM-DD' or a date); only pages published before it
            count as evidence. ``None`` turns the temporal constraint off (the report says so).
        speaker: who made the claim. venue: where it was made.
        store: knowledge store folder (``factseek index build``), for ``search="local"``.
        search: search backend: ``local`` or a web provider (brave, tavily, exa, serper,
            searxng; keys from the environment).
        k: documents kept per query after the constraints.
        undated: ``"drop"`` or ``"keep"`` pages without a publication date.
        on_conflict: a fetched page whose credible dates fall on both sides of the claim's date
            is treated as after it (``"after"``, the safe side), as undated (``"undated"``: then
            ``undated`` decides) or only noted (``"flag"``); see docs/web.md.
        date_basis: ``"modified"`` (default: a page last modified on or after the claim's day
            is removed, ``modified-after-claim``) or ``"published"`` (the paper: the
            publication date alone decides).
        guessed: a guessed (low-confidence) publication date is used (``"keep"``), used and
            noted as possible leakage (``"flag"``), or removes the page (``"drop"``).
        keep_pdf: keep PDF results the paper's site constraint removes, and read their text
            (pypdf, a dependency of factseek).
        exclude_sites: sites to exclude on top of the fact-checking sites.
        decomposer: ``auto`` (LLM when ``llm`` is set, else rules), ``rules`` or ``llm``.
        summarizer: ``auto``, ``extractive``, ``llm-zero-shot`` or ``llm-few-shot``.
        llm: ``none``, ``openai`` (any OpenAI-compatible endpoint) or ``llamacpp`` (local GGUF).
        llm_model: model name (openai) or GGUF path (llamacpp). llm_base_url: endpoint URL.
        use_cache: reuse cached LLM responses (under ``cache_dir``).
        judge: a trained judge folder (``factseek judge train``).
        llm_judge: score thresholds JSON for the LLM veracity scorer (needs ``llm``).
        rewrite: a query rewriter model folder.
        record: write an evidence bundle of this run to this folder.
        replay: rerun offline from an evidence bundle.
        allow_hosts: hosts the page fetcher may reach although they are private.
        cache_dir: folder for fetched pages and LLM responses (``None``: no cache).
        stance: the evidence stance model: ``default`` (shipped), a trained folder, or ``none``
            (cards are then shown without stance, and nothing is judged from them).
        stance_engine: what reads the stance network: ``numpy``, ``torch`` or ``auto`` (default
            ``$FACTSEEK_STANCE_ENGINE``, else ``auto``: torch when already imported, else numpy;
            docs/stance.md, "Two engines").
        cascade: with the ``mpnet`` stance model, the ``small`` model screens the pairs first
            and ``mpnet`` skips those it reads surely as taking no side (``stance.cascade``;
            docs/stance.md, "Speed": it changed 6 of 500 AVeriTeC dev verdicts and is not the
            default). Without it (the default) ``mpnet`` reads every pair.
        scale: verdict scale: ``averitec`` (4-way, from the evidence stance), ``politifact``
            (6-way, needs ``judge``), or ``auto`` (the judge's scale, else averitec).
        verdict_rules: the rules verdict's thresholds and confidence maps: ``default`` (the
            shipped ones, or ``$FACTSEEK_VERDICT_RULES``) or a file from ``factseek judge
            fit-rules`` (docs/verdicts.md).
        top_docs: documents summarized and searched for evidence cards (default: 4 summarized,
            every kept document searched for cards). cards: evidence cards per question (3).
        progress: called with each stage's name as it starts.

    Raises ``InputError`` (bad claim, date or option: nothing was run), other ``FactseekError``
    subclasses when a run fails (store missing, search failed, ...).
    """
    if isinstance(claim, str):
        claim = make_claim(claim, date=date, speaker=speaker, venue=venue)
    options = CheckOptions(
        store=store,
        search=search,
        decomposer=decomposer,
        summarizer=summarizer,
        llm=llm,
        llm_model=llm_model,
        llm_base_url=llm_base_url,
        use_cache=use_cache,
        judge=judge,
        llm_judge=llm_judge,
        rewrite=rewrite,
        record=record,
        replay=replay,
        allow_hosts=tuple(allow_hosts),
        cache_dir=cache_dir,
        stance=stance,
        stance_engine=stance_engine,
        cascade=cascade,
        scale=scale,
        keep_pdf=keep_pdf,
        verdict_rules=verdict_rules,
    )
    config = check_config(
        k=k,
        undated=undated,
        exclude_sites=exclude_sites,
        top_docs=top_docs,
        cards=cards,
        on_conflict=on_conflict,
        date_basis=date_basis,
        guessed=guessed,
        keep_pdf=keep_pdf,
    )
    (report,) = check_claims([claim], options, config, progress=progress)
    return report


def check_config(
    *,
    k: int = 10,
    undated: str = "drop",
    exclude_sites: Sequence[str] = (),
    top_docs: int | None = None,
    cards: int | None = None,
    on_conflict: str = "after",
    date_basis: str = "modified",
    guessed: str = DEFAULT_GUESSED,
    keep_pdf: bool = False,
) -> CheckConfig:
    """The pipeline settings, validated (``ConfigError`` names the bad value).

    ``top_docs`` sets how many documents are summarized and searched for evidence cards (the
    paper summarizes 4; evidence cards read every kept document unless it is set); ``cards`` how
    many cards each question shows."""
    from dataclasses import replace

    from factseek.constraints.temporal import (
        CONFLICT_POLICIES,
        DATE_BASES,
        GUESS_POLICIES,
        TemporalConfig,
    )

    if undated not in ("drop", "keep"):
        raise ConfigError(f"unknown undated policy {undated!r}; choose one of: drop, keep")
    if on_conflict not in CONFLICT_POLICIES:
        raise ConfigError(
            f"unknown date-conflict policy {on_conflict!r}; choose one of: {', '.join(CONFLICT_POLICIES)}"
        )
    if date_basis not in DATE_BASES:
        raise ConfigError(
            f"unknown date basis {date_basis!r}; choose one of: {', '.join(DATE_BASES)}"
        )
    if guessed not in GUESS_POLICIES:
        raise ConfigError(
            f"unknown guessed-date policy {guessed!r}; choose one of: {', '.join(GUESS_POLICIES)}"
        )
    if k < 1:
        raise ConfigError("k must be at least 1")
    config = CheckConfig(
        k=k,
        undated=undated,  # type: ignore[arg-type]
        exclude_sites=tuple(exclude_sites),
        temporal=TemporalConfig(
            on_conflict=on_conflict,  # type: ignore[arg-type]
            date_basis=date_basis,  # type: ignore[arg-type]
            guessed=guessed,  # type: ignore[arg-type]
        ),
        keep_pdf=keep_pdf,
    )
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


def check_claims(
    claims: Iterable[Claim],
    options: CheckOptions,
    config: CheckConfig = DEFAULT_CONFIG,
    *,
    progress: Progress | None = None,
) -> Iterator[Report]:
    """Check several claims with one set of parts (built once), yielding each ``Report`` in
    order. Every claim is validated before any part is built: bad input fails fast."""
    valid = [validate_claim(c) for c in claims]
    parts = build_parts(options)
    for claim in valid:
        yield run(claim, parts, config, progress=progress)
