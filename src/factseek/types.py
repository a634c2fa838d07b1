"""The typed records that flow between pipeline stages.

All are frozen, keyword-only dataclasses. ``to_dict``/``from_dict`` (and ``to_json``/``from_json``)
give a lossless JSON round trip for every record here, nested ones included: dates become ISO
strings, tuples become lists, and back again by the field's type hint.

This module imports nothing else from factseek.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import functools
import json
import os
import types as _pytypes
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

T = TypeVar("T")

MAX_CLAIM_CHARS = 2000

# ----------------------------------------------------------------------------- claims, questions


REVIEWER_PREFIX = "user:"  # a stance or verdict a reviewer set: model / judge "user:NAME"
#: How the note of a card whose reading was set aside ends (``summarize.compare.yielding``,
#: ``summarize.hearsay``): "...; the reader said supports 0.82, so it takes no side".
SET_ASIDE = "so it takes no side"


def figures_heading(figures: str) -> str:
    """How reports introduce a card's ``figures`` note: "set aside" when it says why the
    reading was set aside (it ends with ``SET_ASIDE``), else "compare the figures"."""
    return "set aside" if figures.endswith(SET_ASIDE) else "compare the figures"


@dataclass(frozen=True, kw_only=True)
class Claim:
    """A claim to check. ``date`` is when it was made: evidence must predate it."""

    text: str
    date: _dt.date | None = None
    speaker: str | None = None
    venue: str | None = None
    id: str | None = None


QuestionSource = Literal["claim", "rules", "llm", "user", "gold"]


@dataclass(frozen=True, kw_only=True)
class Question:
    """A yes/no subquestion (or the claim itself, ``source="claim"``) used as a search query."""

    text: str
    source: QuestionSource = "rules"
    kind: str = ""  # e.g. "predicate", "number", "attribution", "claim", "llm"


@dataclass(frozen=True, kw_only=True)
class Query:
    """What is actually sent to search: a question's text, possibly rewritten.

    ``trace`` lists the rewriter's edit actions (empty when not rewritten); ``note`` says, when
    a rewriter ran, why it stopped (e.g. no edit predicted to gain more than its threshold).
    """

    text: str
    question: str
    trace: tuple[str, ...] = ()
    note: str = ""


# ----------------------------------------------------------------------------- search and pages


@dataclass(frozen=True, kw_only=True)
class Hit:
    """One search result, before fetching."""

    url: str
    title: str = ""
    snippet: str = ""
    published: _dt.date | None = None
    rank: int = 0
    score: float | None = None
    query: str = ""
    backend: str = ""
    doc_id: str | None = None  # set by backends that hold the document text (the local store)


@dataclass(frozen=True, kw_only=True)
class ConstraintDecision:
    """Whether one hit passed the constraints, and why not if it did not."""

    url: str
    kept: bool
    reason: str  # "ok", "after-claim-date", "claim-day", "modified-after-claim", "undated", "excluded-site:fullfact.org", "pdf", ...
    native: bool = False  # True when the backend applied this filter itself


@dataclass(frozen=True, kw_only=True)
class DateEvidence:
    """One source's opinion of a page's publication date."""

    source: str  # "store", "provider", "htmldate", "meta:article:published_time", "json-ld", "url", "text", "text:updated", "last-modified", "archive", "pdf:created", ...
    date: _dt.date  # the calendar day in the page's own time zone
    raw: str = ""  # the string as the page gave it (time and offset included)
    rule: str = ""  # how the string was read ("UTC time read at the page's offset +02:00", ...)


@dataclass(frozen=True, kw_only=True)
class Document:
    """A page's main text with its metadata.

    ``published`` is the page's publication date; ``modified`` its last modification, when the
    page states one (None otherwise: older reports and stores have none).
    """

    url: str
    text: str
    title: str = ""
    published: _dt.date | None = None
    domain: str = ""
    id: str | None = None
    date_evidence: tuple[DateEvidence, ...] = ()
    meta: Mapping[str, str] = field(default_factory=dict)
    modified: _dt.date | None = None

    @property
    def n_words(self) -> int:
        return len(self.text.split())


@dataclass(frozen=True, kw_only=True)
class FetchFailure:
    """A URL that could not be turned into a Document, and why (one line)."""

    url: str
    error: str


# ----------------------------------------------------------------------------- passages, summaries


@dataclass(frozen=True, kw_only=True)
class Passage:
    """A merged span of one kept document selected by the second-stage retrieval.

    Word offsets index ``document.text.split()``; character offsets index ``document.text``.
    """

    url: str
    text: str
    doc_rank: int
    score: float
    start_word: int
    end_word: int  # exclusive
    start_char: int
    end_char: int  # exclusive
    title: str = ""


@dataclass(frozen=True, kw_only=True)
class SummarySentence:
    """One sentence of a summary, with where it came from and whether the document supports it."""

    text: str
    start_char: int | None = None  # offsets into the document text (verbatim quotes)
    end_char: int | None = None
    supported: bool | None = None  # None: not checked
    support: float | None = None  # support score in [0, 1]


@dataclass(frozen=True, kw_only=True)
class Summary:
    """A claim-focused summary of one document."""

    url: str
    text: str
    relevant: bool
    method: str  # "extractive", "llm-zero-shot", "llm-few-shot", ...
    title: str = ""
    sentences: tuple[SummarySentence, ...] = ()
    note: str = ""


# ----------------------------------------------------------------------------- stance, evidence, answers

StanceLabel = Literal["supports", "refutes", "nei"]
STANCE_LABELS: tuple[StanceLabel, ...] = ("supports", "refutes", "nei")
#: The ``StanceResult.model`` prefix of a reading a cascade's screen gave alone (stance.cascade).
SCREENED = "screened:"


@dataclass(frozen=True, kw_only=True)
class StanceResult:
    """A stance model's reading of one (claim or subquestion, evidence text) pair.

    ``probs`` maps each of ``STANCE_LABELS`` to a probability (they sum to 1); ``label`` is the
    label the model's thresholds chose, which need not be the arg-max.
    """

    label: StanceLabel
    probs: Mapping[str, float] = field(default_factory=dict)
    model: str = ""

    @property
    def confidence(self) -> float:
        return float(self.probs.get(self.label, 0.0))

    @property
    def decides(self) -> bool:
        """Whether the reading takes a side (``supports`` or ``refutes``); a ``nei`` one does
        not (a figure card's, a gold card's)."""
        return self.label in ("supports", "refutes")

    @property
    def screened(self) -> bool:
        """Whether a cascade's fast screen gave this reading alone (``stance.cascade``): the
        pair was not read by the strong model, and it is never a card."""
        return self.model.startswith(SCREENED)

    @property
    def set_by(self) -> str:
        """The reviewer who set this stance (``model`` "user:NAME", ``review.apply``), or ""
        for a model's reading."""
        return (
            self.model.removeprefix(REVIEWER_PREFIX)
            if self.model.startswith(REVIEWER_PREFIX)
            else ""
        )


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """One evidence card: a quoted span of a kept document, selected for one question.

    ``id`` ("E1", "E2", ...) is stable within a report; answers and verdicts cite it.
    ``start_char``/``end_char`` index the document's text. ``stance`` is toward ``question``
    (a subquestion, or the claim itself). ``independent=False`` marks evidence that cannot count
    as independent confirmation (the claimant's own words, a syndicated copy of another card);
    ``note`` says why. ``genre`` marks letters, opinion pieces and blogs, which never confirm a
    claim on their own. ``figures`` says when the card states a figure in the question's unit
    but not the question's figure ("this says 18 percent; the question, 40 percent"), repeats
    it yet reads as refuting, or gives it and takes no side (a figure card), for the reviewer to
    compare (``summarize.figures.figure_note``). ``figure_of_other`` marks a card that gives the
    question's own figure only for another thing ("the fixed charge rose 40 percent" for "have
    water bills risen 40 percent?"; ``summarize.measures.elsewhere``, which writes ``figures``):
    it never counts as support. A card whose reading was set aside (it takes no side) says why
    in ``figures`` too, ending with ``SET_ASIDE`` (``set_aside``).
    """

    id: str
    url: str
    text: str
    start_char: int
    end_char: int
    question: str = ""
    title: str = ""
    domain: str = ""
    published: _dt.date | None = None
    stance: StanceResult | None = None
    independent: bool = True
    note: str = ""
    genre: str = ""  # "" (reporting), "letter", "opinion" or "blog" (summarize.genre)
    figures: str = ""  # a figure to compare with the question's (summarize.figures.figure_note)
    figure_of_other: bool = False  # the question's figure, said of another thing

    @property
    def set_aside(self) -> bool:
        """Whether ``figures`` says why the card's reading was set aside (it yielded, or it
        passes the claim on as hearsay) rather than what figures to compare."""
        return self.figures.endswith(SET_ASIDE)

    @property
    def figures_heading(self) -> str:
        """``figures_heading`` of the card's note."""
        return figures_heading(self.figures)

    @property
    def compare_figures(self) -> bool:
        """Whether ``figures`` names figures for a reviewer to compare."""
        return bool(self.figures) and not self.set_aside


AnswerLabel = Literal["yes", "no", "unknown", "conflicting"]
"""``unknown``: no usable evidence; ``conflicting``: evidence on both sides that does not settle it."""


@dataclass(frozen=True, kw_only=True)
class Answer:
    """A subquestion's answer from evidence, with the evidence ids it rests on."""

    question: str
    answer: AnswerLabel
    confidence: float | None = None
    evidence_ids: tuple[str, ...] = ()
    method: str = ""  # "stance", "llm", "user"
    rationale: str = ""


Label = str  # a label name from factseek.labels; kept as a string in records


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """A veracity judgement. ``judged=False`` means no judge ran: ``label`` is then None.

    ``scale`` names the label set ("politifact" 6-way, "averitec" 4-way); ``confidence`` is the
    judge's probability for ``label`` (None when it has none); ``rationale`` is a short reason
    that cites ``evidence_ids``. ``precision`` is how often the judge's ``label`` was right on
    ``precision_basis`` (None when never measured); ``abstained`` marks a verdict the judge
    declined to give (too little or too weak evidence).
    """

    judged: bool
    label: Label | None = None
    judge: str = ""
    scores: Mapping[str, float] = field(default_factory=dict)
    explanation: str = ""
    scale: str = ""
    confidence: float | None = None
    rationale: str = ""
    evidence_ids: tuple[str, ...] = ()
    precision: float | None = None  # how often this label was right where it was measured
    precision_basis: str = ""  # where: "AVeriTeC dev, 500 claims"
    abstained: bool = False  # the judge declined to decide (``label`` says not enough evidence)

    @classmethod
    def not_judged(cls, why: str = "no judge configured") -> Verdict:
        return cls(judged=False, label=None, judge="none", explanation=why)

    def __str__(self) -> str:
        """One readable line: "refuted (confidence 0.85)", "not judged: <why>"."""
        if not self.judged:
            return f"not judged: {self.explanation}" if self.explanation else "not judged"
        details = ["abstained"] if self.abstained else []
        if self.confidence is not None:
            details.append(f"confidence {self.confidence:.2f}")
        return f"{self.label or '?'}" + (f" ({', '.join(details)})" if details else "")


# ----------------------------------------------------------------------------- report


@dataclass(frozen=True, kw_only=True)
class QueryResult:
    """One query's hit list with the constraint decision for each hit."""

    query: Query
    hits: tuple[Hit, ...]
    decisions: tuple[ConstraintDecision, ...]
    native: tuple[str, ...] = ()  # constraints the backend applied itself ("date", "domain")
    emulated: tuple[str, ...] = ()  # constraints factseek applied by over-fetching and filtering
    error: str = ""
    # a rewritten query only: kept URLs the question as written did not find under the same
    # constraints, and kept URLs of the question as written that the rewrite lost
    new_urls: tuple[str, ...] = ()
    lost_urls: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class FunnelRow:
    """One stage of the information funnel (paper Tables 1 and 8)."""

    stage: str
    hits: int | None = None
    documents: int | None = None
    words: int | None = None


ReviewStatus = Literal["machine", "approved", "set", "stale"]


@dataclass(frozen=True, kw_only=True)
class ReviewRecord:
    """A reviewer's decision on a report, with what the pipeline said (``factseek.review.apply``).

    ``status``: "machine" (no one approved or set the verdict: an automated result), "approved"
    (a named reviewer approved the machine's verdict), "set" (a reviewer set it), "stale"
    (approved, but corrections changed the machine's verdict since). ``label`` is the decision
    on the organisation's rating ``scale``, ``rating`` its schema.org value (1-5; None: not on a
    truth scale) and ``rating_name`` its published words ("" when the scale has no label for it).
    ``machine`` is the pipeline's verdict as it ran and ``machine_answers`` its answers that the
    corrections changed; ``citations`` are the card ids a published review cites.
    """

    status: ReviewStatus = "machine"
    reviewer: str = ""
    at: str = ""  # UTC, ISO 8601
    label: str = ""
    scale: str = ""
    rating: int | None = None
    rating_name: str = ""
    note: str = ""
    machine: Verdict | None = None
    machine_answers: tuple[Answer, ...] = ()
    citations: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Report:
    """Everything a run found for one claim. Complete in JSON; rendered by factseek.report."""

    claim: Claim
    questions: tuple[Question, ...] = ()
    results: tuple[QueryResult, ...] = ()
    documents: tuple[Document, ...] = ()
    failures: tuple[FetchFailure, ...] = ()
    passages: tuple[Passage, ...] = ()
    summaries: tuple[Summary, ...] = ()
    evidence: tuple[Evidence, ...] = ()  # evidence cards per question, with stance
    answers: tuple[Answer, ...] = ()  # one per subquestion
    verdict: Verdict = field(default_factory=Verdict.not_judged)
    funnel: tuple[FunnelRow, ...] = ()
    removed: Mapping[str, int] = field(default_factory=dict)  # constraint reason -> hits removed
    timings: Mapping[str, float] = field(default_factory=dict)  # stage -> seconds
    config: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # degradations, warnings, leakage flags
    usage: Mapping[str, Any] = field(default_factory=dict)  # LLM tokens / cost, search calls
    version: str = ""
    review: ReviewRecord | None = None  # a reviewer's decision (reports from the workbench)

    # Rendering lives in factseek.report, above this module: it is handed in (``use_report_io``,
    # done by ``factseek/__init__.py``), so this module imports nothing else from factseek.

    def render(self, format: str) -> str:
        """This report as text: ``"json"`` (complete), ``"md"`` or ``"html"`` (one self-contained
        page); see ``factseek.report.render``."""
        return _report_io().render(self, format)

    def save(self, path: str | os.PathLike[str], format: str | None = None) -> None:
        """Write this report to ``path`` atomically, as ``format`` (``"json"``, ``"md"``,
        ``"html"``); ``None``: from the file's suffix (``.json``, ``.md``, ``.html``)."""
        _report_io().save(self, path, format)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Report:
        """A report from a JSON file factseek wrote; see ``factseek.report.read_report``."""
        return _report_io().load(path)


class ReportIO(typing.Protocol):
    """What ``Report.render``, ``save`` and ``load`` call: factseek.report's functions."""

    def render(self, report: Report, format: str) -> str: ...

    def save(self, report: Report, path: str | os.PathLike[str], format: str | None) -> None: ...

    def load(self, path: str | os.PathLike[str]) -> Report: ...


_REPORT_IO: list[ReportIO] = []


def use_report_io(io: ReportIO) -> None:
    """Hand in the renderer and reader behind ``Report.render``/``save``/``load``."""
    _REPORT_IO[:] = [io]


def _report_io() -> ReportIO:
    if not _REPORT_IO:  # only when factseek/__init__.py did not run, which Python prevents
        raise RuntimeError("no report renderer: import factseek first")
    return _REPORT_IO[0]


# ----------------------------------------------------------------------------- JSON round trip


def to_dict(obj: Any) -> Any:
    """A JSON-ready structure for a record (or any nesting of records, lists, dicts, dates)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (_dt.date, _dt.datetime)):
        return obj.isoformat()
    if isinstance(obj, (list, tuple)):
        return [to_dict(x) for x in obj]
    if isinstance(obj, Mapping):
        return {str(k): to_dict(v) for k, v in obj.items()}
    return obj


@functools.cache  # resolving hints is most of a report's from_json time (48 -> 8 ms)
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, globalns=globals())


def _convert(tp: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, _pytypes.UnionType):
        non_none = [a for a in args if a is not type(None)]
        if len(non_none) == 1:
            return _convert(non_none[0], value)
        return value
    if tp is _dt.date:
        return _dt.date.fromisoformat(value) if isinstance(value, str) else value
    if tp is _dt.datetime:
        return _dt.datetime.fromisoformat(value) if isinstance(value, str) else value
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return from_dict(tp, value)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_convert(args[0], v) for v in value)
        if args:
            return tuple(_convert(a, v) for a, v in zip(args, value, strict=True))
        return tuple(value)
    if origin is list:
        return [_convert(args[0], v) for v in value] if args else list(value)
    if origin in (dict, Mapping) or tp is Mapping:
        if len(args) == 2:
            return {k: _convert(args[1], v) for k, v in value.items()}
        return dict(value)
    return value


def from_dict(cls: type[T], data: Mapping[str, Any]) -> T:
    """Rebuild a record of type ``cls`` from ``to_dict`` output. Unknown keys are an error."""
    if not isinstance(data, Mapping):
        raise TypeError(f"{cls.__name__}: expected an object, got {type(data).__name__}")
    hints = _hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = set(data) - names
    if unknown:
        raise TypeError(f"{cls.__name__}: unknown field(s) {sorted(unknown)}")
    kwargs = {k: _convert(hints[k], v) for k, v in data.items()}
    return cls(**kwargs)


def to_json(obj: Any, *, indent: int | None = 2) -> str:
    """``obj`` (a record, or any nesting of records) as JSON text; ``indent=None``: one line."""
    return json.dumps(to_dict(obj), indent=indent, ensure_ascii=False, sort_keys=False)


def from_json(cls: type[T], text: str) -> T:
    """The record of type ``cls`` that ``to_json`` wrote as ``text``."""
    return from_dict(cls, json.loads(text))
