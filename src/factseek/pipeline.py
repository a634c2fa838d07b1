"""The verification pipeline: composes the stages, records what each did, never invents a verdict.

    claim -> decompose -> (rewrite) -> search under constraints -> documents (store or fetch)
          -> select_passages -> summarize -> evidence cards (stance) -> answers -> (judge) -> Report

``run(claim, parts, config)`` takes built objects (``Parts``); ``factseek.api`` builds them from
names and paths. A failing optional stage (LLM decomposition or summaries, the judge) degrades to
the offline method or to "not judged", with a note in the report, instead of crashing the run.
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from factseek import __version__
from factseek.constraints.hits import PAGE_REMOVED, Constraints, UndatedPolicy, removed_counts
from factseek.constraints.temporal import DEFAULT_TEMPORAL, TemporalConfig
from factseek.decompose import Decomposer, dedup, merge_same
from factseek.errors import FactseekError, InputError
from factseek.judge import EvidenceJudge, Judge
from factseek.judge.verdict import answer_questions
from factseek.passages import DEFAULT_SPANS, SpanConfig, select_passages
from factseek.redact import redact_document, redact_failure
from factseek.sanitize import lone_surrogate
from factseek.search.base import SearchBackend, constrained_search
from factseek.stance import StanceModel
from factseek.stance.cascade import read_pairs
from factseek.summarize import NOT_RELEVANT, Summarizer
from factseek.summarize.deciding import uncarded_quotes
from factseek.summarize.evidence import (
    DEFAULT_EVIDENCE,
    EvidenceConfig,
    evidence_candidates,
    select_cards,
)
from factseek.summarize.figures import gives_figure
from factseek.types import (
    MAX_CLAIM_CHARS,
    Answer,
    Claim,
    ConstraintDecision,
    Document,
    Evidence,
    FetchFailure,
    FunnelRow,
    Hit,
    Passage,
    Query,
    QueryResult,
    Question,
    Report,
    Summary,
    Verdict,
    to_dict,
)

Progress = Callable[[str], None]


class Fetcher(Protocol):
    def fetch(self, urls: Sequence[str]) -> tuple[list[Document], list[FetchFailure]]: ...


class Rewriter(Protocol):
    def rewrite(self, queries: Sequence[str]) -> Sequence[Any]:
        """Objects with ``text`` and ``trace`` (tuple of action strings), one per query."""
        ...


class Answerer(Protocol):
    name: str

    def answer(
        self, claim: Claim, questions: Sequence[Question], evidence: Sequence[Evidence]
    ) -> tuple[list[Answer | None], list[str]]:
        """One answer per question (None: fall back to the stance answer), and notes."""
        ...


@dataclass(frozen=True, kw_only=True)
class CheckConfig:
    """Pipeline settings. Stage-specific settings live in their own config dataclasses."""

    k: int = 10  # documents per query after the constraints (the paper: 10)
    undated: UndatedPolicy = "drop"
    exclude_sites: tuple[str, ...] = ()  # added to the paper's fact-checking sites
    spans: SpanConfig = DEFAULT_SPANS
    max_questions: int = 12  # bound on queries sent per claim (claim + subquestions)
    search_threads: int = 4  # concurrent queries for web backends
    evidence: EvidenceConfig = DEFAULT_EVIDENCE  # evidence cards per question (stance-ranked)
    temporal: TemporalConfig = DEFAULT_TEMPORAL  # page dates: conflicts, date basis, guesses
    keep_pdf: bool = False  # keep PDF results the paper's site constraint removes


DEFAULT_CONFIG = CheckConfig()


@dataclass(frozen=True, kw_only=True)
class Parts:
    """The plugged-in components of one run."""

    search: SearchBackend
    decomposer: Decomposer
    summarizer: Summarizer
    fallback_decomposer: Decomposer | None = None  # used if ``decomposer`` fails
    fallback_summarizer: Summarizer | None = None  # used if ``summarizer`` fails
    fetcher: Fetcher | None = None  # needed when ``search`` holds no documents (web backends)
    judge: Judge | None = None
    rewriter: Rewriter | None = None
    stance: StanceModel | None = None  # reads (question, sentence) pairs for evidence cards
    evidence_judge: EvidenceJudge | None = None  # verdict from evidence (when ``judge`` is None)
    answerer: Answerer | None = None  # answers the subquestions from the cards (an LLM)
    usage: Callable[[], dict[str, Any]] | None = None  # LLM token/cost accounting, if any
    names: dict[str, str] = field(default_factory=dict)  # what the report's config shows
    notes: tuple[str, ...] = ()  # what building the parts left out, said in every report


def validate_claim(claim: Claim, *, today: _dt.date | None = None) -> Claim:
    """The claim, whitespace-normalised, or InputError with one line."""
    for name in ("text", "speaker", "venue", "id"):
        value = getattr(claim, name)
        bad = lone_surrogate(value) if isinstance(value, str) else None
        if bad:
            raise InputError(
                f"the claim's {name} contains a lone surrogate ({bad}): not valid text"
            )
    text = " ".join(claim.text.split()) if isinstance(claim.text, str) else ""
    if not text:
        raise InputError("the claim is empty")
    if len(text) > MAX_CLAIM_CHARS:
        raise InputError(f"the claim has {len(text)} characters; the limit is {MAX_CLAIM_CHARS}")
    today = today or _dt.date.today()
    if claim.date is not None and claim.date > today:
        raise InputError(f"the claim date {claim.date.isoformat()} is in the future")
    return replace(claim, text=text)


class _Clock:
    def __init__(self, progress: Progress | None) -> None:
        self.timings: dict[str, float] = {}
        self.progress = progress

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        if self.progress:
            self.progress(name)
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = round(time.perf_counter() - t0, 4)


def _decompose(claim: Claim, parts: Parts, notes: list[str]) -> list[Question]:
    try:
        return parts.decomposer.decompose(claim)
    except FactseekError as e:
        if parts.fallback_decomposer is None:
            raise
        notes.append(
            f"decomposition by {parts.decomposer.name} failed ({e}); used {parts.fallback_decomposer.name}"
        )
        return parts.fallback_decomposer.decompose(claim)


def _queries(questions: Sequence[Question], parts: Parts, notes: list[str]) -> list[Query]:
    plain = [Query(text=q.text, question=q.text) for q in questions]
    if parts.rewriter is None:
        return plain
    try:
        rewritten = parts.rewriter.rewrite([q.text for q in questions])
    except FactseekError as e:
        notes.append(f"query rewriting failed ({e}); used the questions as they are")
        return plain
    if any(getattr(r, "stopped", "") == "abstain" for r in rewritten):
        notes.append(
            "the rewriter abstained: its calibration found no clear gain from its edits, so the"
            " questions were searched as they are"
        )
    return [
        Query(
            text=r.text or q.text, question=q.text, trace=tuple(r.trace), note=getattr(r, "why", "")
        )
        for q, r in zip(questions, rewritten, strict=True)
    ]


def _search(
    queries: Sequence[Query], parts: Parts, cfg: CheckConfig, c: Constraints
) -> list[QueryResult]:
    def one(q: Query) -> QueryResult:
        return constrained_search(parts.search, q, cfg.k, c)

    if parts.fetcher is None or cfg.search_threads <= 1 or len(queries) <= 1:
        return [one(q) for q in queries]
    with ThreadPoolExecutor(max_workers=cfg.search_threads) as pool:
        return list(pool.map(one, queries))


def _kept_hits(results: Sequence[QueryResult]) -> list[Hit]:
    """Kept hits across queries, one per URL, in query order then rank order."""
    seen: set[str] = set()
    out: list[Hit] = []
    for r in results:
        for hit, d in zip(r.hits, r.decisions, strict=True):
            if d.kept and hit.url not in seen:
                seen.add(hit.url)
                out.append(hit)
    return out


def _documents(
    hits: Sequence[Hit],
    parts: Parts,
    c: Constraints,
    notes: list[str],
    temporal: TemporalConfig = DEFAULT_TEMPORAL,
) -> tuple[list[Document], list[FetchFailure], list[ConstraintDecision]]:
    """Documents for kept hits: from the store when it holds them, else fetched and re-checked."""
    if not hits:
        return [], [], []
    from factseek.constraints.temporal import post_fetch_check, stored_check

    documents_of = getattr(parts.search, "documents", None)
    if callable(documents_of):
        # the store applied the constraints to publication dates in its index; the date basis
        # and the guessed policy need the documents themselves
        stored = [redact_document(d) for d in documents_of(hits)]
        if c.before is None or not any(
            d.modified is not None or d.meta.get("date_confidence") for d in stored
        ):
            return stored, [], []
        checked = [(d, *stored_check(d, c, config=temporal)) for d in stored]
        for _, _, flags in checked:
            notes.extend(flags)
        return [d for d, dec, _ in checked if dec.kept], [], [dec for _, dec, _ in checked]
    if parts.fetcher is None:
        raise InputError(
            f"search backend {parts.search.name!r} returns URLs only and no fetcher is configured"
        )
    docs, failures = parts.fetcher.fetch([h.url for h in hits])  # URLs redacted at search
    docs = [redact_document(d) for d in docs]  # where pages enter: redirects redacted too
    failures = [redact_failure(f) for f in failures]
    by_url = {h.url: h for h in hits}
    kept: list[Document] = []
    decisions: list[ConstraintDecision] = []
    for doc in docs:
        hit = by_url.get(doc.url) or Hit(url=doc.url)
        decision, flags = post_fetch_check(hit, doc, c, config=temporal)
        notes.extend(flags)
        decisions.append(decision)
        if decision.kept:
            kept.append(doc)
    return kept, list(failures), decisions


def _summarize(
    claim: Claim,
    questions: Sequence[Question],
    passages: Sequence[Any],
    parts: Parts,
    notes: list[str],
) -> list[Any]:
    try:
        return parts.summarizer.summarize(claim, questions, passages)
    except FactseekError as e:
        if parts.fallback_summarizer is None:
            raise
        notes.append(
            f"summaries by {parts.summarizer.name} failed ({e}); used {parts.fallback_summarizer.name}"
        )
        return parts.fallback_summarizer.summarize(claim, questions, passages)


def judge_view(summaries: Sequence[Summary]) -> list[Summary]:
    """What a judge may read: summary sentences the document does not support are dropped.

    A model's summary of an adversarial page can carry the page's instructions ("the claim is
    true"); the support check flags such sentences, and no judge gets to see them.
    """
    out: list[Summary] = []
    for s in summaries:
        if any(x.supported is False for x in s.sentences):
            kept = [x.text for x in s.sentences if x.supported is not False]
            s = replace(s, text=" ".join(kept), relevant=s.relevant and bool(kept))
        out.append(s)
    return out


def _judge(claim: Claim, summaries: Sequence[Summary], parts: Parts, notes: list[str]) -> Verdict:
    if parts.judge is None:
        return Verdict.not_judged()
    view = judge_view(summaries)
    if not any(s.relevant for s in view):
        notes.append("the judge saw no relevant evidence; its label rests on the claim alone")
    try:
        return parts.judge.predict(claim, view)
    except FactseekError as e:
        notes.append(f"judge {parts.judge.name} failed: {e}")
        return Verdict.not_judged(f"judge failed: {e}")


def quoted_spans(
    documents: Sequence[Document], summaries: Sequence[Summary]
) -> list[tuple[int, int, int]]:
    """``(document index, start, end)`` of every sentence the summaries quote verbatim."""
    index = {d.url: i for i, d in reversed(list(enumerate(documents)))}
    return [
        (index[s.url], q.start_char, q.end_char)
        for s in summaries
        if s.url in index
        for q in s.sentences
        if q.start_char is not None and q.end_char is not None
    ]


def _evidence(
    claim: Claim,
    questions: Sequence[Question],
    documents: Sequence[Document],
    summaries: Sequence[Summary],
    parts: Parts,
    cfg: EvidenceConfig,
    notes: list[str],
    counts: dict[str, int],
) -> tuple[list[Evidence], bool, list[Summary]]:
    """Evidence cards, whether a stance model read them, and the summaries. Without a stance
    model there are no cards (cards are what takes a side): the report shows the summaries, as
    in the paper. A sentence the summaries quote that takes a side on a question is one of its
    cards (``summarize.deciding``); one that is not is left out of the summaries. ``counts``
    gets how many pairs each stance model read and how many a cascade skipped
    (``stance.cascade``: a quoted sentence, and one that gives the question's figure, are
    always read by its strong model: either can be a card whatever a reader says)."""
    summaries = list(summaries)
    if parts.stance is None:
        return [], False, summaries
    candidates = evidence_candidates(
        claim, questions, documents, cfg, quoted_spans(documents, summaries)
    )
    if not candidates:
        return [], True, summaries  # nothing to read: every question says "no evidence found"
    try:
        reads = read_pairs(
            parts.stance,
            [(c.question, c.text) for c in candidates],
            [c.quoted or gives_figure(c.question, c.text) for c in candidates],
        )
    except FactseekError as e:
        notes.append(f"stance model {parts.stance.name} failed ({e}); no evidence cards")
        return [], False, summaries
    counts.update(reads.counts())
    stances = list(reads.results)
    chosen = select_cards(claim, candidates, stances, documents, cfg)
    read = [
        (c.question, c.doc, c.start, c.end, s)
        for c, s in zip(candidates, chosen.readings, strict=True)
        if c.quoted  # a sentence the summaries quote for this question
    ]
    uncarded = uncarded_quotes(summaries, documents, read, chosen.cards)
    return list(chosen.cards), True, quotes_as_cards(summaries, uncarded, notes)


def quotes_as_cards(
    summaries: Sequence[Summary], uncarded: Sequence[tuple[int, int, str]], notes: list[str]
) -> list[Summary]:
    """``summaries`` without the sentences ``uncarded`` names (``(summary, sentence, question)``
    of a quoted sentence that takes a side on the question but is none of its cards), each
    named in ``notes``: the summary never quotes a deciding sentence that is not a card."""
    drop: dict[int, set[int]] = {}
    for i, j, question in uncarded:
        drop.setdefault(i, set()).add(j)
        text = summaries[i].sentences[j].text
        notes.append(
            f"a summary sentence was left out: it takes a side on {question!r} but is not one "
            f"of its cards ({text[:80]!r})"
        )
    out = []
    for i, s in enumerate(summaries):
        if i in drop:
            kept = tuple(x for j, x in enumerate(s.sentences) if j not in drop[i])
            text = " ".join(x.text for x in kept)
            s = replace(s, sentences=kept, text=text or NOT_RELEVANT, relevant=bool(kept))
        out.append(s)
    return out


def _answers(
    claim: Claim,
    questions: Sequence[Question],
    evidence: Sequence[Evidence],
    parts: Parts,
    notes: list[str],
) -> list[Answer]:
    """Stance answers (with the evidence judge's rules when it has some), replaced by the
    answerer's (an LLM's) where it gave a checked one."""
    rules = getattr(parts.evidence_judge, "rules", None)
    answers = answer_questions(questions, evidence, *([rules] if rules is not None else []))
    if parts.answerer is None:
        return answers
    try:
        llm_answers, answer_notes = parts.answerer.answer(claim, questions, evidence)
    except FactseekError as e:
        notes.append(f"answers by {parts.answerer.name} failed ({e}); stance answers are shown")
        return answers
    notes.extend(answer_notes)
    return [
        mine if mine is not None else theirs
        for mine, theirs in zip(llm_answers, answers, strict=True)
    ]


def _verdict(
    claim: Claim,
    questions: Sequence[Question],
    summaries: Sequence[Summary],
    passages: Sequence[Passage],
    evidence: Sequence[Evidence],
    answers: Sequence[Answer],
    stance_ran: bool,
    parts: Parts,
    notes: list[str],
) -> Verdict:
    """The summaries judge when one is configured, else the evidence judge, else not judged."""
    if parts.judge is not None or parts.evidence_judge is None:
        return _judge(claim, summaries, parts, notes)
    if not stance_ran:
        return Verdict.not_judged("no evidence stance: the stance model did not run")
    try:
        return parts.evidence_judge.judge(claim, questions, evidence, answers, passages)
    except FactseekError as e:
        notes.append(f"judge {parts.evidence_judge.name} failed: {e}")
        return Verdict.not_judged(f"judge failed: {e}")


def _words(texts: Sequence[str]) -> int:
    return sum(len(t.split()) for t in texts)


def run(
    claim: Claim,
    parts: Parts,
    config: CheckConfig = DEFAULT_CONFIG,
    *,
    progress: Progress | None = None,
    questions: Sequence[Question] | None = None,
) -> Report:
    """Check one claim with the given parts and return its complete ``Report``.

    ``questions`` given (a fact-checker's edited subquestions) replace decomposition: the run
    starts at search, and the report records them with their sources (``"user"`` for edits).
    """
    claim = validate_claim(claim)
    clock = _Clock(progress)
    notes: list[str] = list(parts.notes)
    constraints = Constraints(
        before=claim.date, undated=config.undated, exclude_pdf=not config.keep_pdf
    ).with_sites(*config.exclude_sites)
    if claim.date is None:
        notes.append(
            "the claim has no date: the temporal constraint is off, later pages may leak the answer"
        )

    with clock.stage("decompose"):
        if questions is None:
            questions = merge_same(dedup(_decompose(claim, parts, notes)))[: config.max_questions]
        else:
            questions = dedup(questions)[: config.max_questions]
            if not questions:
                raise InputError("no questions to search: give at least one")
            notes.append("the subquestions were edited by the user; decomposition was skipped")
    with clock.stage("rewrite"):
        queries = _queries(questions, parts, notes)
    # Pages fetched from the web are dated by their own content after fetching (temporal.py):
    # a hit the provider left undated must not be dropped before its page is read.
    holds_documents = callable(getattr(parts.search, "documents", None))
    search_constraints = constraints if holds_documents else replace(constraints, undated="keep")
    with clock.stage("search"):
        results = _search(queries, parts, config, search_constraints)
        if parts.rewriter is not None:  # what each rewrite found that its question did not
            from factseek.rewrite.gains import compare_with_questions

            results, baseline_searches = compare_with_questions(
                results, lambda q: _search([q], parts, config, search_constraints)[0]
            )
    for r in results:
        if r.error:
            notes.append(f"search failed for {r.query.text!r}: {r.error}")
    hits = _kept_hits(results)
    with clock.stage("documents"):
        documents, failures, page_decisions = _documents(
            hits, parts, constraints, notes, config.temporal
        )
    with clock.stage("passages"):
        passages = select_passages(documents, [q.text for q in questions], config.spans)
    with clock.stage("summarize"):
        summaries = _summarize(claim, questions, passages, parts, notes)
    stance_pairs: dict[str, int] = {}
    with clock.stage("evidence"):
        evidence, stance_ran, summaries = _evidence(
            claim, questions, documents, summaries, parts, config.evidence, notes, stance_pairs
        )
    with clock.stage("judge"):
        answers = _answers(claim, questions, evidence, parts, notes) if stance_ran else []
        verdict = _verdict(
            claim, questions, summaries, passages, evidence, answers, stance_ran, parts, notes
        )

    all_decisions = [d for r in results for d in r.decisions]
    removed = removed_counts(all_decisions)
    page_removed = removed_counts(page_decisions)
    for reason, n in page_removed.items():
        removed[f"page:{reason}"] = n
    if constraints.undated == "keep":
        undated_kept = sum(1 for d in documents if d.published is None)
        removed["undated-kept (not removed)"] = undated_kept
    all_hits = [h for r in results for h in r.hits]
    kept_docs = {p.url for p in passages}
    read: tuple[FunnelRow, ...] = ()
    if page_decisions:  # pages whose own dates were checked after reading them
        read = (
            FunnelRow(stage="pages read", documents=len(page_decisions)),
            *(
                FunnelRow(stage=f"{PAGE_REMOVED}{reason}", documents=n)
                for reason, n in page_removed.items()
            ),
        )
    funnel = (
        FunnelRow(stage="search hits", hits=len(all_hits)),
        FunnelRow(stage="after constraints (unique URLs)", hits=len(hits)),
        *read,
        FunnelRow(
            stage="documents", documents=len(documents), words=_words([d.text for d in documents])
        ),
        FunnelRow(
            stage="passages (top documents)",
            documents=len(kept_docs),
            words=_words([p.text for p in passages]),
        ),
        FunnelRow(
            stage="summaries",
            documents=sum(1 for s in summaries if s.relevant),
            words=_words([s.text for s in summaries if s.relevant]),
        ),
    )
    usage: dict[str, Any] = {"search_requests": len(queries)}
    if stance_pairs:  # pairs each stance model read, and those a cascade skipped
        usage["stance_pairs"] = stance_pairs
    if parts.rewriter is not None:
        usage["search_requests"] += baseline_searches  # the questions searched as written
    if parts.usage is not None:
        usage.update(parts.usage())
    cfg_view: dict[str, Any] = {**to_dict(config), **parts.names}
    return Report(
        claim=claim,
        questions=tuple(questions),
        results=tuple(results),
        documents=tuple(documents),
        failures=tuple(failures),
        passages=tuple(passages),
        summaries=tuple(summaries),
        evidence=tuple(evidence),
        answers=tuple(answers),
        verdict=verdict,
        funnel=funnel,
        removed=removed,
        timings=clock.timings,
        config=cfg_view,
        notes=tuple(notes),
        usage=usage,
        version=__version__,
    )
