"""A report as Markdown: text HTML-escaped and Markdown syntax backslash-escaped, link targets
percent-encoded inside ``<...>``.

Every string that comes from the report (text, ids, filter names, funnel stages, timings' names,
the version) goes through ``_md`` before it is put in a line; only numbers, dates and this
module's own words are written as they are."""

from __future__ import annotations

import html
from urllib.parse import quote

from factseek.redact import redact_text, redact_url
from factseek.report.common import (
    GENRE_NOTE,
    NO_EVIDENCE,
    badge,
    card_meta,
    clip,
    count_text,
    page_date,
    questions_with_cards,
    quoted,
    rewrite_lines,
    safe_url,
    stance_pairs_line,
)
from factseek.report.words import (
    abstained_words,
    answer_cell,
    answer_reliability_line,
    by_reviewer,
    filter_words,
    machine_answers,
    precision_words,
    reason_words,
    reliability_line,
    review_lines,
    stage_words,
)
from factseek.sanitize import clean_text
from factseek.types import Report


def _md(text: str) -> str:
    """Neutralise Markdown/HTML syntax and terminal escapes in untrusted text (one line)."""
    text = " ".join(redact_text(clean_text(text)).split())
    text = html.escape(text, quote=False)
    for ch in "\\`*_[]|#~":  # with [ ] escaped, ( ) and ! cannot start a link or an image
        text = text.replace(ch, "\\" + ch)
    return text


#: Characters left as they are in a Markdown link target; all else is percent-encoded.
_URL_SAFE = "!#$%&'*+,/:;=?@-._~"


def _md_url(url: str) -> str:
    """A link target for ``[label](<target>)``: cleaned, redacted, percent-encoded."""
    return quote(" ".join(clean_text(url).split()), safe=_URL_SAFE)


def _md_link(title: str, url: str) -> str:
    safe = safe_url(url)
    label = _md(title or redact_url(url))
    return f"[{label}](<{_md_url(safe)}>)" if safe else label


def _verdict_line(report: Report) -> str:
    v = report.verdict
    if not v.judged:
        return f"**not judged** ({_md(v.explanation)})"
    confidence = None if by_reviewer(report, v.evidence_ids) else v.confidence
    conf = f", confidence {confidence:.2f}" if confidence is not None else ""
    scale = f" ({_md(v.scale)} scale{conf})" if v.scale else conf and f" ({conf[2:]})"
    line = f"**{_md(v.label or '')}**{scale} by {_md(v.judge)}"
    if v.abstained:
        line += f" — {_md(abstained_words(report))}"
    meaning = precision_words(v)
    return line + (f"; {_md(meaning)}" if meaning else "")


def _md_evidence(report: Report) -> list[str]:
    if not report.evidence and not report.answers:
        return []
    out = ["## Subquestions and answers\n"]
    if report.answers:
        machine = machine_answers(report)
        out.append("| question | answer | strength | evidence |\n|---|---|---|---|")
        for a in report.answers:
            confidence = None if by_reviewer(report, a.evidence_ids) else a.confidence
            conf = f"{confidence:.2f}" if confidence is not None else ""
            cited = ", ".join(_md(x) for x in a.evidence_ids) or _md(a.rationale or NO_EVIDENCE)
            cell = _md(answer_cell(a, machine.get(a.question)))
            out.append(f"| {_md(a.question)} | **{cell}** | {conf} | {cited} |")
        out.append("")
        if line := answer_reliability_line(report):
            out.append(f"_{_md(line)}_\n")
    out.append("## Evidence cards\n")
    if line := reliability_line(report):
        out.append(f"_{_md(line)}_\n")
    for q, cards in questions_with_cards(report):
        out.append(f"**{_md(q)}**\n")
        if not cards:
            out.append(f"- _{NO_EVIDENCE}_\n")
            continue
        for e in cards:
            flag = "" if e.independent else f" — not independent: {_md(e.note)}"
            if e.genre in GENRE_NOTE:
                flag += f" — {GENRE_NOTE[e.genre]}"
            if e.figures:
                flag += f" — {e.figures_heading}: {_md(e.figures)}"
            out.append(
                f"- {_md(e.id)} `{badge(e)}` {_md_link(e.title or e.domain, e.url)} ({_md(card_meta(e))}): "
                f"“{_md(clip(e.text, 400))}” [chars {e.start_char}-{e.end_char}]{flag}"
            )
        out.append("")
    return out


def render_markdown(report: Report) -> str:
    """The report as Markdown for people: verdict, evidence summaries, queries, hits with their
    constraint decisions, passages, the information funnel, notes and timings."""
    c = report.claim
    out: list[str] = [f"# factseek report\n\n> {_md(c.text)}\n"]
    meta = [f"date: {c.date.isoformat() if c.date else 'unknown'}"]
    if c.speaker:
        meta.append(f"speaker: {_md(c.speaker)}")
    if c.venue:
        meta.append(f"venue: {_md(c.venue)}")
    out.append(" · ".join(meta) + "\n")
    out.append(f"**Verdict:** {_verdict_line(report)}\n")
    if report.verdict.judged and report.verdict.explanation:
        out.append(f"{_md(report.verdict.explanation)}\n")
    for line in review_lines(report):
        out.append(f"> {_md(line)}\n")
    out.extend(_md_evidence(report))

    out.append("## Evidence summaries\n")
    relevant = [s for s in report.summaries if s.relevant]
    if not relevant:
        out.append("No relevant evidence was found under the constraints.\n")
    for s in report.summaries:
        mark = "" if s.relevant else " (not relevant)"
        out.append(f"- {_md_link(s.title, s.url)}{mark}")
        for sent in s.sentences or ():
            flag = " ⚠ unsupported by the document" if sent.supported is False else ""
            where = (
                f" [chars {sent.start_char}-{sent.end_char}]" if sent.start_char is not None else ""
            )
            out.append(f"  - {quoted(sent.text, _md)}{where}{flag}")
        if not s.sentences:
            out.append(f"  - {_md(s.text)}")
    out.append("")

    out.append("## Subquestions and queries\n")
    for r in report.results:
        q = r.query
        kept = sum(d.kept for d in r.decisions)
        line = f"- {_md(q.question)} — {len(r.hits)} hits, {kept} kept"
        if q.text != q.question:
            line += f"; rewritten to {quoted(q.text, _md)} ({', '.join(_md(a) for a in q.trace)})"
        if r.native or r.emulated:
            line += f"; {_md(filter_words(r.native, r.emulated))}"
        if r.error:
            line += f"; **error:** {_md(r.error)}"
        out.append(line)
        out.extend(f"  - {x}" for x in rewrite_lines(r, _md, _md_link))
    out.append("")

    out.append("## Hits and constraint decisions\n")
    out.append("| query | rank | page | published | decision |\n|---|---|---|---|---|")
    for r in report.results:
        for h, d in zip(r.hits, r.decisions, strict=True):
            date = h.published.isoformat() if h.published else "undated"
            out.append(
                f"| {_md(clip(r.query.text, 60))} | {h.rank} | {_md_link(clip(h.title, 60), h.url)} "
                f"| {date} | {'kept' if d.kept else 'removed: ' + _md(reason_words(d.reason))} |"
            )
    out.append("")

    out.append("## What the constraints removed\n")
    if report.removed:
        out.extend(f"- {_md(reason_words(k))}: {v}" for k, v in report.removed.items())
    else:
        out.append("- nothing")
    out.append("")

    out.append("## Page dates\n")
    for d in report.documents:
        date, source, rule, ev = page_date(d)
        out.append(
            f"- {_md_link(d.title[:60], d.url)}: **{date}** {_md(source)}; rule: {_md(rule)}"
        )
        out.extend(f"  - {_md(e)}" for e in ev)
    if not report.documents:
        out.append("- no documents")
    out.append("")

    out.append("## Passages\n")
    for p in report.passages:
        out.append(
            f"- #{p.doc_rank + 1} {_md_link(p.title, p.url)} words {p.start_word}-{p.end_word}, "
            f"score {p.score:.2f}: {quoted(clip(p.text, 300), _md)}"
        )
    out.append("")

    out.append("## Information funnel\n")
    out.append("| stage | hits | documents | words |\n|---|---|---|---|")
    for f in report.funnel:
        out.append(
            f"| {_md(stage_words(f.stage))} | {count_text(f.hits)} | {count_text(f.documents)} | {count_text(f.words)} |"
        )
    out.append("")
    if report.failures:
        out.append("## Pages that could not be used\n")
        out.extend(f"- {_md(f.url)}: {_md(f.error)}" for f in report.failures)
        out.append("")
    if report.notes:
        out.append("## Notes\n")
        out.extend(f"- {_md(n)}" for n in report.notes)
        out.append("")
    out.append("## Timings (s)\n")
    out.append(", ".join(f"{_md(k)} {v:.3f}" for k, v in report.timings.items()) + "\n")
    if pairs := stance_pairs_line(report.usage):
        out.append(_md(pairs) + "\n")
    out.append(f"factseek {_md(report.version)}\n")
    return "\n".join(out)


def markdown_text(text: str) -> str:
    """Untrusted text made safe for one line of Markdown (markup and HTML neutralised)."""
    return _md(text)
