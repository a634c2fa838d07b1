"""End-to-end evaluation over labelled claims: run the pipeline, then one judge on three inputs.

``evaluate_pipeline(rows, labels, parts, config, out, judge=...)``:

1. **Run.** Every claim goes through the pipeline with the run journal of ``batch.run_claims``
   (``OUT/reports/<id>.json``, ``OUT/journal.jsonl``, progress bar): a killed run resumes where
   it stopped; a claim that failed is retried on the next run and, until it succeeds, is left
   out of the metrics (and counted).
2. **Systems**, each a label per claim from the *same* judge:
   ``claim-only`` (the claim, no evidence), ``retrieved`` (the report's evidence cards and
   answers, or its summaries for a summaries judge) and, when the data set has gold evidence
   (AVeriTeC: the claim's question-answer answers), ``gold`` (each gold text as a card about
   the claim, its stance read by the same stance model), and ``gold-pages``: only the gold texts
   that have a page (an http(s) source URL), i.e. what a perfect retrieval from a store of the
   answer pages could return. They differ on AVeriTeC, whose annotators also wrote answers with no
   source ("No answer could be found.", 21% of the Not Enough Evidence claims' answers on dev):
   such a text is not evidence any search can find, yet it names the label; ``gold-pages`` is
   shown only when some claim has one. When the judge is not the one the pipeline ran with, the
   report's own verdict is scored too, as ``pipeline``.
3. **Metrics** per system: accuracy and macro-F1, plus soft accuracy and MAE on ordinal label
   sets (``metrics.veracity``); how often each label it gives is right and its share of the
   claims, the calibration error of its confidences and its risk-coverage table
   (``metrics.selective``; a verdict that abstains or says not-enough-evidence has no
   confidence). Each system against claim-only: the difference and its 95%
   paired-bootstrap interval (``resamples`` resamples, seed 0), and for ``retrieved`` the share
   of the claim-only-to-gold gap it closes (and of the claim-only-to-gold-pages gap).
4. **The claim's own answer** (AVeriTeC labels): of the reports whose answer to the claim's own
   question is "yes" or "no", how often the claim was supported, or refuted
   (``claim_answers``), and the same over every subquestion's answer (``subquestion_answers``:
   they have no gold answers, so the claim's label scores them too); ``judge rules-precision``
   records both in a rules file, and reports show them above their answers.
5. **Evidence recall** (when gold evidence pages are known): per claim, the share of its gold
   pages among the documents the pipeline kept, and among its evidence cards; averaged over the
   claims with at least one gold page; and the share of those claims with at least one gold
   page among the kept documents, and among the cards.
6. **Output**: ``OUT/results.json``, ``OUT/results.md`` (the table) and
   ``OUT/predictions-<system>.jsonl`` (``judge.evaluate`` format).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from factseek.constraints.hits import url_host_path
from factseek.datasets.claims import LabeledClaim
from factseek.decompose import claim_question
from factseek.errors import DataError, InputError
from factseek.files import atomic_write
from factseek.judge import EvidenceJudge, Judge
from factseek.judge.evaluate import Prediction, write_predictions
from factseek.judge.verdict import answer_questions
from factseek.labels import LabelSet
from factseek.metrics.selective import label_precision, risk_coverage, selective_ece
from factseek.metrics.veracity import METRICS, paired_test, veracity_metrics
from factseek.pipeline import CheckConfig, Parts
from factseek.runs.batch import claim_id, run_claims
from factseek.stance import StanceModel
from factseek.types import Claim, Evidence, Report, Summary, Verdict

DEFAULT_RESAMPLES = 2000
PAGE_SCHEMES = ("http://", "https://")  # a gold text with such a source URL is a page
SYSTEMS = ("claim-only", "gold", "gold-pages", "retrieved", "pipeline")


@dataclass(frozen=True, kw_only=True)
class SystemResult:
    name: str
    metrics: dict[str, Any]
    versus_claim_only: dict[str, dict[str, float]] = field(default_factory=dict)
    predicted: dict[str, int] = field(default_factory=dict)  # label -> claims, most frequent first
    precision: dict[str, dict[str, float]] = field(
        default_factory=dict
    )  # label -> precision, n, share
    risk_coverage: dict[str, Any] = field(default_factory=dict)  # metrics.selective.risk_coverage
    ece: float | None = None  # of the verdicts that carry a confidence


@dataclass(frozen=True, kw_only=True)
class EvalResult:
    """What ``results.json`` holds."""

    n: int
    failed: int
    labels: str
    judge: str
    stance: str
    systems: tuple[SystemResult, ...]
    gap_closed: dict[str, float] = field(default_factory=dict)
    gap_closed_pages: dict[str, float] = field(default_factory=dict)  # vs gold-pages
    evidence_recall: dict[str, float] = field(default_factory=dict)
    claim_answers: dict[str, dict[str, float]] = field(default_factory=dict)  # claim_answers()
    subquestion_answers: dict[str, dict[str, float]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


Verdicts = Callable[[Claim, Report | None, Sequence[Evidence] | None], Verdict]
ClaimsRunner = Callable[[Sequence[tuple[int, Claim]], Path], object]


def _judge_fn(judge: EvidenceJudge | Judge) -> Verdicts:
    """One call for the three inputs: no evidence, a report, or gold cards."""
    if isinstance(judge, EvidenceJudge):

        def evidence_judge(
            claim: Claim, report: Report | None, gold: Sequence[Evidence] | None
        ) -> Verdict:
            if report is not None:
                return judge.judge(
                    claim, report.questions, report.evidence, report.answers, report.passages
                )
            questions = [claim_question(claim)]
            cards = list(gold or ())
            return judge.judge(claim, questions, cards, answer_questions(questions, cards))

        return evidence_judge

    def summaries_judge(
        claim: Claim, report: Report | None, gold: Sequence[Evidence] | None
    ) -> Verdict:
        if report is not None:
            from factseek.pipeline import judge_view

            return judge.predict(claim, judge_view(report.summaries))
        text = " ".join(e.text for e in gold or ())
        summaries = [Summary(url="gold", text=text, relevant=True, method="gold")] if text else []
        return judge.predict(claim, summaries)

    return summaries_judge


def gold_cards(
    rows: Sequence[LabeledClaim], stance: StanceModel | None
) -> dict[str, list[Evidence]]:
    """Gold evidence as cards about each claim (ids G1, G2, ...), stance read in one batch."""
    pairs = [(r.claim.text, t) for r in rows for t in r.evidence]
    results = stance.classify(pairs) if stance is not None and pairs else [None] * len(pairs)
    out: dict[str, list[Evidence]] = {}
    k = 0
    for r in rows:
        cards = []
        for i, (text, url) in enumerate(
            zip(r.evidence, r.evidence_urls or [""] * len(r.evidence), strict=True), start=1
        ):
            cards.append(
                Evidence(
                    id=f"G{i}",
                    url=url,
                    text=text,
                    start_char=0,
                    end_char=len(text),
                    question=r.claim.text,
                    domain=url_host_path(url)[0] if url else "",
                    stance=results[k],
                )
            )
            k += 1
        out[claim_id(r.claim)] = cards
    return out


def load_reports(out: Path) -> dict[str, Report]:
    """The reports of a run folder's journal, by claim id (each checked: ``batch_resume``)."""
    from factseek.runs.resume import journal_entries, journaled_report

    reports: dict[str, Report] = {}
    for cid, entry in journal_entries(out).items():
        report, problem = journaled_report(out, cid, entry)
        if report is None:
            raise DataError(f"claim {cid!r}: {problem}", str(out / "journal.jsonl"))
        reports[cid] = report
    return reports


def _recall(rows: Sequence[LabeledClaim], reports: dict[str, Report]) -> dict[str, float]:
    """Gold pages among kept documents and cards. Cards are those that take a side (what
    decides answers; every card before figure cards); ``claims_with_gold_card_any`` counts
    figure cards (a ``nei`` reading) too."""
    docs, cards, any_doc, any_card, any_shown = [], [], [], [], []
    for r in rows:
        gold = {u for u in r.evidence_urls if u}
        report = reports.get(claim_id(r.claim))
        if not gold or report is None:
            continue
        kept = gold & {d.url for d in report.documents}
        carded = gold & {e.url for e in report.evidence if e.stance is None or e.stance.decides}
        docs.append(len(kept) / len(gold))
        cards.append(len(carded) / len(gold))
        any_doc.append(bool(kept))
        any_card.append(bool(carded))
        any_shown.append(bool(gold & {e.url for e in report.evidence}))
    if not docs:
        return {}
    return {
        "claims": len(docs),
        "documents": round(sum(docs) / len(docs), 4),
        "cards": round(sum(cards) / len(cards), 4),
        "claims_with_gold_document": round(sum(any_doc) / len(docs), 4),
        "claims_with_gold_card": round(sum(any_card) / len(docs), 4),
        "claims_with_gold_card_any": round(sum(any_shown) / len(docs), 4),
    }


#: The answer to the claim's own question that each gold label makes right.
RIGHT_ANSWER = {"supported": "yes", "refuted": "no"}


def _answer_counts(
    rows: Sequence[LabeledClaim], reports: dict[str, Report], claims_own: bool
) -> dict[str, dict[str, float]]:
    """``{"yes": {"precision", "right", "n"}, "no": ...}`` over the answers to the claim's own
    question (``claims_own``) or to every other question: an answer "yes" (or "no") is right
    when the claim was supported (refuted); any other gold label makes it wrong."""
    counts = {a: [0, 0] for a in RIGHT_ANSWER.values()}  # answer -> [right, n]
    for r in rows:
        report = reports.get(claim_id(r.claim))
        if report is None:
            continue
        own = {q.text for q in report.questions if q.kind == "claim"}
        given = [a.answer for a in report.answers if (a.question in own) == claims_own]
        for answer in given[:1] if claims_own else given:
            if answer in counts:
                counts[answer][1] += 1
                counts[answer][0] += RIGHT_ANSWER.get(str(r.label)) == answer
    return {
        a: {"precision": round(right / n, 4), "right": right, "n": n}
        for a, (right, n) in counts.items()
        if n
    }


def claim_answers(
    rows: Sequence[LabeledClaim], reports: dict[str, Report]
) -> dict[str, dict[str, float]]:
    """``{"yes": {"precision", "right", "n"}, "no": ...}``: of the reports that answer the
    claim's own question "yes" (or "no"), how many claims were supported (refuted); any other
    gold label makes the answer wrong. Empty when no report answers so."""
    return _answer_counts(rows, reports, claims_own=True)


def subquestion_answers(
    rows: Sequence[LabeledClaim], reports: dict[str, Report]
) -> dict[str, dict[str, float]]:
    """The same over every answer to a subquestion (each answer counts once): subquestions
    have no gold answers, so an answer is scored by the claim's label, as the claim's own is
    (a "no" to a part of the claim should mean the claim is refuted)."""
    return _answer_counts(rows, reports, claims_own=False)


def evaluate_pipeline(
    rows: Sequence[LabeledClaim],
    labels: LabelSet,
    parts: Parts,
    config: CheckConfig,
    out: Path,
    *,
    judge: EvidenceJudge | Judge | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    progress: bool = True,
    log: Callable[[str], None] = lambda _: None,
    run: ClaimsRunner | None = None,
) -> EvalResult:
    """Run, judge and score (see the module docstring). ``judge`` defaults to the pipeline's;
    ``run(claims, out)`` runs the claims into ``out`` (default: ``batch.run_claims`` with
    ``parts``; ``eval pipeline --ray`` passes ``distributed.run_claims_ray``)."""
    if not rows:
        raise InputError("no labelled claims to evaluate")
    unlabelled = [r for r in rows if r.label is None]
    if unlabelled:
        raise InputError(
            f"every claim needs a gold label; {len(unlabelled)} of {len(rows)} have none "
            f"(the first: {claim_id(unlabelled[0].claim)})"
        )
    judge = judge or parts.judge or parts.evidence_judge
    judge_scale = getattr(judge, "scale", None) or getattr(
        getattr(judge, "labels", None), "name", ""
    )
    if judge_scale and judge_scale != labels.name:
        raise InputError(
            f"the judge gives {judge_scale} labels but the data has {labels.name} labels"
        )
    claims = [(i + 1, r.claim) for i, r in enumerate(rows)]
    if run is None:
        run_claims(claims, out, parts, config, progress=progress)
    else:
        run(claims, out)
    reports = load_reports(out)
    done = [r for r in rows if claim_id(r.claim) in reports]
    if not done:
        raise InputError(f"no claim finished; see {out / 'errors.jsonl'}")
    missing = len(rows) - len(done)
    log(f"{len(done)} reports; {missing} claims without one (failed)")
    if judge is None:  # the runs only (e.g. to train a judge on them): no verdicts to score
        result = EvalResult(
            n=len(done),
            failed=missing,
            labels=labels.name,
            judge="none",
            stance=getattr(parts.stance, "name", "none") if parts.stance else "none",
            systems=(),
            evidence_recall=_recall(done, reports),
            notes=(
                "no judge: the claims were run and the evidence recall measured, nothing judged",
            ),
        )
        atomic_write(out / "results.json", json.dumps(asdict(result), indent=2) + "\n")
        atomic_write(out / "results.md", results_table(result))
        return result

    verdicts = _judge_fn(judge)
    has_gold = any(r.evidence for r in done)
    gold = gold_cards(done, parts.stance) if has_gold else {}
    pipeline_judge = parts.judge or parts.evidence_judge
    systems: dict[str, list[str]] = {"claim-only": [], "retrieved": []}
    confidences: dict[str, list[float | None]] = {}
    pages = {
        cid: [c for c in cards if c.url.startswith(PAGE_SCHEMES)] for cid, cards in gold.items()
    }
    if has_gold:
        systems["gold"] = []
        if any(len(pages[cid]) != len(gold[cid]) for cid in gold):
            systems["gold-pages"] = []
    if pipeline_judge is not None and pipeline_judge is not judge:
        systems["pipeline"] = []
    from rich.progress import Progress

    with Progress(disable=not progress, transient=True) as bar:
        task = bar.add_task("judging", total=len(done))
        for r in done:
            cid = claim_id(r.claim)
            report = reports[cid]
            given = {
                "claim-only": verdicts(r.claim, None, []),
                "retrieved": verdicts(r.claim, report, None),
            }
            if "gold" in systems:
                given["gold"] = verdicts(r.claim, None, gold[cid])
            if "gold-pages" in systems:
                given["gold-pages"] = verdicts(r.claim, None, pages[cid])
            if "pipeline" in systems:
                given["pipeline"] = report.verdict
            for name, v in given.items():
                systems[name].append(_label(v, labels))
                confidences.setdefault(name, []).append(_confidence(v, labels))
            bar.advance(task)

    gold_labels = [r.label for r in done]
    results = []
    for name in [s for s in SYSTEMS if s in systems]:
        pred = systems[name]
        m = asdict(veracity_metrics(gold_labels, pred, labels))  # type: ignore[arg-type]
        versus: dict[str, dict[str, float]] = {}
        if name != "claim-only":
            for metric in [x for x in METRICS if labels.ordinal or x in ("accuracy", "macro_f1")]:
                t = paired_test(
                    gold_labels,  # type: ignore[arg-type]
                    pred,
                    systems["claim-only"],
                    labels,
                    metric=metric,
                    method="bootstrap",
                    resamples=resamples,
                )
                versus[metric] = {
                    "delta": round(t.delta, 4),
                    "ci_low": round(t.ci_low, 4),
                    "ci_high": round(t.ci_high, 4),
                    "p_value": round(t.p_value, 4),
                }
        counts = dict(Counter(pred).most_common())
        conf = confidences[name]
        results.append(
            SystemResult(
                name=name,
                metrics=m,
                versus_claim_only=versus,
                predicted=counts,
                precision=label_precision(gold_labels, pred),  # type: ignore[arg-type]
                risk_coverage=risk_coverage(gold_labels, pred, conf),  # type: ignore[arg-type]
                ece=selective_ece(gold_labels, pred, conf),  # type: ignore[arg-type]
            )
        )
        write_predictions(
            out / f"predictions-{name}.jsonl",
            [
                Prediction(id=claim_id(r.claim), label=p, gold=r.label, judge=_name(judge))
                for r, p in zip(done, pred, strict=True)
            ],
        )
    by = {s.name: s.metrics for s in results}
    gap, gap_pages = _gap(by, "gold"), _gap(by, "gold-pages")
    notes = []
    if _name(judge).startswith("stance-rules"):
        notes.append(
            "the rules judge says not-enough-evidence whenever it sees no evidence, so its "
            "claim-only line is a floor, not a baseline; compare judges that read the claim"
        )
    result = EvalResult(
        n=len(done),
        failed=missing,
        labels=labels.name,
        judge=_name(judge),
        stance=getattr(parts.stance, "name", "none") if parts.stance else "none",
        systems=tuple(results),
        gap_closed=gap,
        gap_closed_pages=gap_pages,
        evidence_recall=_recall(done, reports),
        claim_answers=claim_answers(done, reports) if labels.name == "averitec" else {},
        subquestion_answers=(
            subquestion_answers(done, reports) if labels.name == "averitec" else {}
        ),
        notes=tuple(notes),
    )
    atomic_write(out / "results.json", json.dumps(asdict(result), indent=2) + "\n")
    atomic_write(out / "results.md", results_table(result))
    return result


def _gap(by: dict[str, dict[str, Any]], ceiling: str) -> dict[str, float]:
    """Per metric, (retrieved - claim-only) / (ceiling - claim-only) where the span is positive."""
    gap: dict[str, float] = {}
    if ceiling in by:
        for metric in ("accuracy", "macro_f1"):
            span = by[ceiling][metric] - by["claim-only"][metric]
            if span > 0:
                gap[metric] = round((by["retrieved"][metric] - by["claim-only"][metric]) / span, 4)
    return gap


def _name(judge: Any) -> str:
    return str(getattr(judge, "name", type(judge).__name__))


def _label(v: Verdict, labels: LabelSet) -> str:
    """A verdict's label on the data's scale. A verdict that is not judged (no stance, a judge
    failure) counts as "not enough evidence" where the scale has it, else is an error."""
    if v.judged and v.label in labels:
        return v.label  # type: ignore[return-value]
    if "not-enough-evidence" in labels:
        return "not-enough-evidence"
    raise InputError(f"the judge gave no {labels.name} label ({v.explanation or v.label})")


def _confidence(v: Verdict, labels: LabelSet) -> float | None:
    """A verdict's confidence where it commits to a label of the scale (None: abstained, not
    judged, not enough evidence, or no confidence given)."""
    if not v.judged or v.abstained or v.label not in labels or v.label == "not-enough-evidence":
        return None
    return v.confidence


def _selective_lines(r: EvalResult) -> list[str]:
    """Per system: each label's precision and share, the calibration error and risk-coverage."""
    lines: list[str] = []
    for s in r.systems:
        if not s.precision:
            continue
        lines += ["", f"**{s.name}**: when it says a label, how often it is right"]
        lines += ["", "| label | right | claims | share of claims |", "|---|---|---|---|"]
        for label, p in s.precision.items():
            lines.append(
                f"| {label} | {_pct(p['precision'])}% | {int(p['n'])} | {_pct(p['share'])}% |"
            )
        if s.ece is not None:
            lines += ["", f"Expected calibration error of its confidences: {s.ece:.3f}"]
        rows = s.risk_coverage.get("rows") if s.risk_coverage else None
        if rows:
            lines += ["", "| coverage | claims | accuracy |", "|---|---|---|"]
            lines += [
                f"| {_pct(x['coverage'])}% | {x['n']} | {_pct(x['accuracy'])}% |" for x in rows
            ]
            lines.append(
                f"(most confident first; its confident verdicts reach {_pct(s.risk_coverage['max_coverage'])}% of the claims)"
            )
    return lines


def _pct(x: float | None) -> str:
    return "" if x is None else f"{100 * x:.1f}"


def results_table(r: EvalResult) -> str:
    """The Markdown table of ``results.md``."""
    ordinal = any(s.metrics.get("mae") is not None for s in r.systems)
    head = "| system | n | accuracy | macro-F1 |"
    sep = "|---|---|---|---|"
    if ordinal:
        head += " soft acc. | MAE |"
        sep += "---|---|"
    head += " Δ accuracy vs claim-only [95% CI] | Δ macro-F1 vs claim-only [95% CI] |"
    sep += "---|---|"
    lines = [
        f"Judge: {r.judge}; stance model: {r.stance}; {r.n} claims ({r.labels} labels)"
        + (f"; {r.failed} failed and left out" if r.failed else ""),
        "",
    ]
    if r.systems:
        lines += [head, sep]
    for s in r.systems:
        m = s.metrics
        row = f"| {s.name} | {m['n']} | {_pct(m['accuracy'])} | {_pct(m['macro_f1'])} |"
        if ordinal:
            row += f" {_pct(m['soft_accuracy'])} | {m['mae']:.2f} |"
        for metric in ("accuracy", "macro_f1"):
            v = s.versus_claim_only.get(metric)
            row += (
                f" {100 * v['delta']:+.1f} [{100 * v['ci_low']:+.1f}, {100 * v['ci_high']:+.1f}] |"
                if v
                else " |"
            )
        lines.append(row)
    if r.systems:
        lines.append("")
        lines.append("Labels given:")
        lines += [
            f"- {s.name}: " + ", ".join(f"{k} {v}" for k, v in s.predicted.items())
            for s in r.systems
        ]
    lines += _selective_lines(r)
    if r.gap_closed:
        lines.append("")
    for ceiling, gap in (("gold", r.gap_closed), ("gold-pages", r.gap_closed_pages)):
        if gap:
            lines.append(
                f"Share of the claim-only → {ceiling} gap closed by retrieved evidence: "
                + ", ".join(f"{k.replace('_', '-')} {100 * v:.0f}%" for k, v in gap.items())
            )
    if r.evidence_recall:
        e = r.evidence_recall
        lines.append(
            f"Gold evidence pages found ({int(e['claims'])} claims): among kept documents "
            f"{100 * e['documents']:.1f}%, among evidence cards {100 * e['cards']:.1f}%"
        )
        if "claims_with_gold_document" in e:
            lines.append(
                f"Claims with a gold page among kept documents: {100 * e['claims_with_gold_document']:.1f}%;"
                f" among evidence cards: {100 * e['claims_with_gold_card']:.1f}%"
                + (
                    f" ({100 * e['claims_with_gold_card_any']:.1f}% with figure cards)"
                    if e.get("claims_with_gold_card_any", e["claims_with_gold_card"])
                    != e["claims_with_gold_card"]
                    else ""
                )
            )
    for what, measured in (
        ("The claim's own question", r.claim_answers),
        ("The subquestions", r.subquestion_answers),
    ):
        if measured:
            lines.append(
                f"{what}: "
                + "; ".join(
                    f"answered {a} {int(m['n'])} times, right {_pct(m['precision'])}%"
                    f" ({int(m['right'])}: the claim was {'supported' if a == 'yes' else 'refuted'})"
                    for a, m in measured.items()
                )
            )
    lines.extend(f"\nNote: {n}" for n in r.notes)
    return "\n".join(lines) + "\n"
