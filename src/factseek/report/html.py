"""A report as one self-contained HTML page: escaped, http(s) links only, a CSP, inline CSS, no
scripts."""

from __future__ import annotations

import html

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
    answer_kind,
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
from factseek.review.ratings import value_tone
from factseek.sanitize import clean_text
from factseek.types import Evidence, Report


def _e(text: object) -> str:
    return html.escape(redact_text(clean_text(str(text), keep_newlines=True)), quote=True)


def _a(title: str, url: str) -> str:
    safe = safe_url(url)
    label = _e(title or redact_url(url))
    if not safe:
        return label
    return f'<a href="{_e(safe)}" rel="noopener noreferrer nofollow">{label}</a>'


_CSS = """
body{font:15px/1.5 system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222}
blockquote{font-size:1.2em;border-left:4px solid #888;margin:0;padding:.3em 1em;background:#f6f6f6}
.meta{color:#555}.verdict{font-size:1.1em;padding:.6em 1em;border-radius:6px;background:#eef}
.nj{background:#f3f3f3;color:#444}table{border-collapse:collapse;width:100%;font-size:.9em}
td,th{border-bottom:1px solid #ddd;padding:.3em .5em;text-align:left;vertical-align:top}
.kept{color:#175}.removed{color:#a33}.card{border:1px solid #ddd;border-radius:6px;padding:.6em 1em;margin:.6em 0}
.quote{margin:.3em 0}.warn{color:#a33;font-weight:600}.small{color:#666;font-size:.85em}
.bar{background:#cde;height:.8em;display:inline-block}
.v-good{background:#dfd;border-left:6px solid #282}.v-bad{background:#fdd;border-left:6px solid #b22}
.v-mixed{background:#ffe9c6;border-left:6px solid #c80}.v-none{background:#eee;border-left:6px solid #888}
.badge{font:600 .75em system-ui;padding:.1em .45em;border-radius:3px;color:#fff;background:#888}
.b-supports{background:#282}.b-refutes{background:#b22}.b-nei{background:#888}
.noev{color:#666;font-style:italic}.a-conflicting{color:#a60}.a-unknown{color:#666}
.review{margin:.6em 0;padding:.5em 1em;border-radius:6px;font-size:.95em}
.rev-ok{background:#eef6ee;border:1px solid #282}.rev-no{background:#f6f6f6;border:1px dashed #888}
"""

#: Verdict box colour by label (both scales); anything else is neutral.
VERDICT_CLASS: dict[str, str] = {
    "supported": "v-good",
    "true": "v-good",
    "mostly-true": "v-good",
    "refuted": "v-bad",
    "false": "v-bad",
    "pants-fire": "v-bad",
    "barely-true": "v-bad",
    "conflicting-evidence": "v-mixed",
    "half-true": "v-mixed",
    "not-enough-evidence": "v-none",
}


def verdict_class(report: Report) -> str:
    """The verdict box's colour: by the reviewer's rating when they set or approved it, else by
    the machine label (``VERDICT_CLASS``)."""
    r = report.review
    if r is not None and r.status in ("approved", "set") and r.rating_name:
        return f"v-{value_tone(r.rating)}"
    return VERDICT_CLASS.get(report.verdict.label or "", "")


def _html_badge(e: Evidence) -> str:
    cls = f"b-{e.stance.label}" if e.stance is not None else "b-nei"
    return f"<span class='badge {_e(cls)}'>{_e(badge(e))}</span>"


def _html_evidence(report: Report) -> list[str]:
    if not report.evidence and not report.answers:
        return []
    out = ["<h2>Subquestions and answers</h2>"]
    if report.answers:
        out.append(
            "<table><tr><th>question</th><th>answer</th><th>strength</th><th>evidence</th></tr>"
        )
        machine = machine_answers(report)
        for a in report.answers:
            confidence = None if by_reviewer(report, a.evidence_ids) else a.confidence
            conf = f"{confidence:.2f}" if confidence is not None else ""
            cited = (
                _e(", ".join(a.evidence_ids))
                or f"<span class='noev'>{_e(a.rationale or NO_EVIDENCE)}</span>"
            )
            kind = answer_kind(a)[0]
            cell = _e(answer_cell(a, machine.get(a.question)))
            out.append(
                f"<tr><td>{_e(a.question)}</td><td class='a-{_e(kind)}'><b>{cell}</b></td>"
                f"<td>{conf}</td><td>{cited}</td></tr>"
            )
        out.append("</table>")
        if line := answer_reliability_line(report):
            out.append(f"<p class='small' id='answer-reliability'>{_e(line)}</p>")
    out.append("<h2>Evidence cards</h2>")
    if line := reliability_line(report):
        out.append(f"<p class='small' id='stance-reliability'>{_e(line)}</p>")
    for q, cards in questions_with_cards(report):
        out.append(f"<h3>{_e(q)}</h3>")
        if not cards:
            out.append(f"<p class='noev'>{NO_EVIDENCE}</p>")
            continue
        for e in cards:
            flag = (
                "" if e.independent else f"<p class='small warn'>not independent: {_e(e.note)}</p>"
            )
            if e.genre in GENRE_NOTE:
                flag += f"<p class='small warn'>{_e(GENRE_NOTE[e.genre])}</p>"
            if e.figures:
                flag += f"<p class='small warn figures'>{e.figures_heading}: {_e(e.figures)}</p>"
            out.append(
                f"<div class='card'><div>{_e(e.id)} {_html_badge(e)} {_a(e.title or e.domain, e.url)}"
                f" <span class='small'>{_e(card_meta(e))} · chars {e.start_char}–{e.end_char}</span></div>"
                f"<p class='quote'>“{_e(clip(e.text, 1200))}”</p>{flag}</div>"
            )
    return out


def render_html(report: Report) -> str:
    """The report as one self-contained HTML page (inline CSS, no scripts, nothing loaded from
    elsewhere; a strict Content-Security-Policy), everything untrusted escaped."""
    c = report.claim
    parts: list[str] = []
    add = parts.append
    add("<!doctype html><html lang='en'><head><meta charset='utf-8'>")
    add(
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'\">"
    )
    add(f"<title>factseek: {_e(clip(c.text, 80))}</title><style>{_CSS}</style></head><body>")
    add(f"<h1>factseek report</h1><blockquote>{_e(c.text)}</blockquote>")
    meta = [f"date: {_e(c.date.isoformat()) if c.date else 'unknown'}"]
    if c.speaker:
        meta.append(f"speaker: {_e(c.speaker)}")
    if c.venue:
        meta.append(f"venue: {_e(c.venue)}")
    add(f"<p class='meta'>{' · '.join(meta)}</p>")
    v = report.verdict
    if v.judged:
        box = verdict_class(report)
        confidence = None if by_reviewer(report, v.evidence_ids) else v.confidence
        conf = f" · confidence {confidence:.2f}" if confidence is not None else ""
        scale = f" · {_e(v.scale)} scale" if v.scale else ""
        add(
            f"<div class='verdict {box}'>Verdict: <b>{_e(v.label or '')}</b>"
            f" <span class='small'>by {_e(v.judge)}{scale}{conf}</span>"
        )
        if v.abstained:
            words = abstained_words(report)
            add(f"<br><b>{_e(words[:1].upper() + words[1:])}</b>")
        if precision_words(v):
            add(f"<br><span class='small'>{_e(precision_words(v))}</span>")
        if v.scores:
            add(
                "<br><span class='small'>"
                + ", ".join(f"{_e(k)} {float(s):.2f}" for k, s in v.scores.items())
                + "</span>"
            )
        if v.explanation:
            add(f"<p>{_e(v.explanation)}</p>")
        add("</div>")
    else:
        add(f"<div class='verdict nj'>Not judged: {_e(v.explanation)}</div>")
    lines = review_lines(report)
    if lines:
        cls = (
            "rev-ok" if report.review and report.review.status in ("approved", "set") else "rev-no"
        )
        add(f"<div class='review {cls}'>" + "<br>".join(_e(x) for x in lines) + "</div>")
    parts.extend(_html_evidence(report))

    add("<h2>Evidence</h2>")
    if not any(s.relevant for s in report.summaries):
        add("<p>No relevant evidence was found under the constraints.</p>")
    for s in report.summaries:
        add(
            f"<div class='card'><div>{_a(s.title, s.url)}"
            f"{'' if s.relevant else ' <span class=small>(not relevant)</span>'}"
            f" <span class='small'>{_e(s.method)}</span></div>"
        )
        if s.sentences:
            for sent in s.sentences:
                warn = (
                    " <span class='warn'>unsupported by the document</span>"
                    if sent.supported is False
                    else ""
                )
                where = (
                    f" <span class='small'>chars {sent.start_char}–{sent.end_char}</span>"
                    if sent.start_char is not None
                    else ""
                )
                add(f"<p class='quote'>{quoted(sent.text, _e)}{where}{warn}</p>")
        else:
            add(f"<p class='quote'>{_e(s.text)}</p>")
        if s.note:
            add(f"<p class='small'>{_e(s.note)}</p>")
        add("</div>")

    add("<h2>Subquestions, queries and hits</h2>")
    for r in report.results:
        q = r.query
        add(f"<h3>{_e(q.question)}</h3>")
        if q.text != q.question:
            add(
                f"<p class='small'>rewritten query: {quoted(q.text, _e)} — {_e(', '.join(q.trace))}</p>"
            )
        if r.native or r.emulated:
            add(f"<p class='small'>{_e(filter_words(r.native, r.emulated))}</p>")
        parts.extend(f"<p class='small'>{x}</p>" for x in rewrite_lines(r, _e, _a))
        if r.error:
            add(f"<p class='warn'>search error: {_e(r.error)}</p>")
        if not r.hits:
            add("<p class='small'>no hits</p>")
            continue
        add("<table><tr><th>#</th><th>page</th><th>published</th><th>decision</th></tr>")
        for h, d in zip(r.hits, r.decisions, strict=True):
            cls, what = (
                ("kept", "kept") if d.kept else ("removed", f"removed: {reason_words(d.reason)}")
            )
            date = h.published.isoformat() if h.published else "undated"
            add(
                f"<tr><td>{h.rank}</td><td>{_a(clip(h.title, 90), h.url)}</td><td>{date}</td>"
                f"<td class='{cls}'>{_e(what)}</td></tr>"
            )
        add("</table>")

    add("<h2>What the constraints removed</h2><ul>")
    add(
        "".join(f"<li>{_e(reason_words(k))}: {v}</li>" for k, v in report.removed.items())
        or "<li>nothing</li>"
    )
    add("</ul>")

    add("<h2>Page dates</h2><ul>")
    for d in report.documents:
        date, source, rule, ev = page_date(d)
        items = "".join(f"<li>{_e(e)}</li>" for e in ev)
        add(
            f"<li>{_a(clip(d.title, 90), d.url)}: <b>{_e(date)}</b> {_e(source)}"
            f"<br><span class='small'>rule: {_e(rule)}</span><ul class='small'>{items}</ul></li>"
        )
    add("</ul>" if report.documents else "<li>no documents</li></ul>")

    add("<h2>Passages</h2>")
    for p in report.passages:
        add(
            f"<div class='card'><div>#{p.doc_rank + 1} {_a(p.title, p.url)} "
            f"<span class='small'>words {p.start_word}–{p.end_word}, score {p.score:.2f}</span></div>"
            f"<p class='small'>{_e(clip(p.text, 1200))}</p></div>"
        )

    add(
        "<h2>Information funnel</h2><table><tr><th>stage</th><th>hits</th><th>documents</th><th>words</th><th></th></tr>"
    )
    top = max([f.words or 0 for f in report.funnel] + [1])
    for f in report.funnel:
        width = int(300 * (f.words or 0) / top)
        add(
            f"<tr><td>{_e(stage_words(f.stage))}</td><td>{count_text(f.hits)}</td><td>{count_text(f.documents)}</td><td>{count_text(f.words)}</td>"
            f"<td><span class='bar' style='width:{width}px'></span></td></tr>"
        )
    add("</table>")
    if report.failures:
        add("<h2>Pages that could not be used</h2><ul>")
        add("".join(f"<li>{_e(f.url)}: {_e(f.error)}</li>" for f in report.failures))
        add("</ul>")
    if report.notes:
        add("<h2>Notes</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in report.notes) + "</ul>")
    add(
        "<h2>Run</h2><p class='small'>timings (s): "
        + _e(", ".join(f"{k} {v:.3f}" for k, v in report.timings.items()))
        + (f"<br>{_e(pairs)}" if (pairs := stance_pairs_line(report.usage)) else "")
        + "</p>"
    )
    add(
        "<details><summary class='small'>configuration</summary><pre class='small'>"
        + _e("\n".join(f"{k}: {v}" for k, v in report.config.items()))
        + "</pre></details>"
    )
    add(f"<p class='small'>factseek {_e(report.version)}</p></body></html>\n")
    return "\n".join(parts)
