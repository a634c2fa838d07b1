"""Render a ``Report`` as JSON (complete), Markdown, or one self-contained HTML file.

Everything that came from a web page, a search result or a model is untrusted: in HTML it is
escaped, links are limited to http(s) URLs, and nothing is loaded from elsewhere (inline CSS, no
scripts). Files are written atomically: a temp file in the same folder, then a rename.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable
from enum import StrEnum
from pathlib import Path
from urllib.parse import urlsplit

from factseek.files import atomic_write
from factseek.types import Evidence, Report, to_json


class Format(StrEnum):
    json = "json"
    md = "md"
    html = "html"


def render_json(report: Report) -> str:
    return to_json(report) + "\n"


# ----------------------------------------------------------------------------- markdown


def _md(text: str) -> str:
    """Neutralise Markdown/HTML syntax in untrusted text (one line)."""
    text = " ".join(str(text).split())
    text = html.escape(text, quote=False)
    for ch in "\\`*_[]|#":
        text = text.replace(ch, "\\" + ch)
    return text


def _md_link(title: str, url: str) -> str:
    return f"[{_md(title or url)}](<{_safe_url(url)}>)" if _safe_url(url) else _md(title or url)


def _verdict_line(report: Report) -> str:
    v = report.verdict
    if not v.judged:
        return f"**not judged** ({_md(v.explanation)})"
    conf = f", confidence {v.confidence:.2f}" if v.confidence is not None else ""
    scale = f" ({_md(v.scale)} scale{conf})" if v.scale else conf and f" ({conf[2:]})"
    return f"**{_md(v.label or '')}**{scale} by {_md(v.judge)}"


# ----------------------------------------------------------------------------- evidence and answers

NO_EVIDENCE = "no evidence found"


def _badge(e: Evidence) -> str:
    """ "REFUTES 0.93", "NEI 0.60", or "no stance" (plain text; callers escape)."""
    if e.stance is None:
        return "no stance"
    return f"{e.stance.label.upper()} {e.stance.confidence:.2f}"


def _card_meta(e: Evidence) -> str:
    date = e.published.isoformat() if e.published else "undated"
    return f"{e.domain or 'unknown outlet'} · {date}"


def _questions_with_cards(report: Report) -> list[tuple[str, list[Evidence]]]:
    """Each question (answers' order, else the report's), with its cards; cards whose question
    is not listed come last under their own question."""
    order = [a.question for a in report.answers] or [q.text for q in report.questions]
    for e in report.evidence:
        if e.question not in order:
            order.append(e.question)
    return [(q, [e for e in report.evidence if e.question == q]) for q in order]


def _md_evidence(report: Report) -> list[str]:
    if not report.evidence and not report.answers:
        return []
    out = ["## Subquestions and answers\n"]
    if report.answers:
        out.append("| question | answer | confidence | evidence |\n|---|---|---|---|")
        for a in report.answers:
            conf = f"{a.confidence:.2f}" if a.confidence is not None else ""
            cited = ", ".join(a.evidence_ids) or _md(a.rationale or NO_EVIDENCE)
            out.append(f"| {_md(a.question)} | **{_md(a.answer)}** | {conf} | {cited} |")
        out.append("")
    out.append("## Evidence cards\n")
    for q, cards in _questions_with_cards(report):
        out.append(f"**{_md(q)}**\n")
        if not cards:
            out.append(f"- _{NO_EVIDENCE}_\n")
            continue
        for e in cards:
            flag = "" if e.independent else f" — not independent: {_md(e.note)}"
            out.append(
                f"- {e.id} `{_badge(e)}` {_md_link(e.title or e.domain, e.url)} ({_md(_card_meta(e))}): "
                f"“{_md(_clip(e.text, 400))}” [chars {e.start_char}-{e.end_char}]{flag}"
            )
        out.append("")
    return out


def render_markdown(report: Report) -> str:
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
            out.append(f"  - “{_md(sent.text)}”{where}{flag}")
        if not s.sentences:
            out.append(f"  - {_md(s.text)}")
    out.append("")

    out.append("## Subquestions and queries\n")
    for r in report.results:
        q = r.query
        kept = sum(d.kept for d in r.decisions)
        line = f"- {_md(q.question)}: {len(r.hits)} hits, {kept} kept"
        if q.text != q.question:
            line += f"; rewritten to “{_md(q.text)}” ({', '.join(_md(a) for a in q.trace)})"
        if r.native or r.emulated:
            line += f"; native filters: {', '.join(r.native) or 'none'}, emulated: {', '.join(r.emulated) or 'none'}"
        if r.error:
            line += f"; **error:** {_md(r.error)}"
        out.append(line)
    out.append("")

    out.append("## Hits and constraint decisions\n")
    out.append("| query | rank | page | published | decision |\n|---|---|---|---|---|")
    for r in report.results:
        for h, d in zip(r.hits, r.decisions, strict=True):
            date = h.published.isoformat() if h.published else "undated"
            out.append(
                f"| {_md(r.query.text)[:60]} | {h.rank} | {_md_link(h.title[:60], h.url)} | {date} | "
                f"{'kept' if d.kept else 'removed: ' + _md(d.reason)} |"
            )
    out.append("")

    out.append("## What the constraints removed\n")
    if report.removed:
        out.extend(f"- {_md(k)}: {v}" for k, v in report.removed.items())
    else:
        out.append("- nothing")
    out.append("")

    out.append("## Passages\n")
    for p in report.passages:
        out.append(
            f"- #{p.doc_rank + 1} {_md_link(p.title, p.url)} words {p.start_word}-{p.end_word}, "
            f"score {p.score:.2f}: “{_md(_clip(p.text, 300))}”"
        )
    out.append("")

    out.append("## Information funnel\n")
    out.append("| stage | hits | documents | words |\n|---|---|---|---|")
    for f in report.funnel:
        out.append(f"| {f.stage} | {_n(f.hits)} | {_n(f.documents)} | {_n(f.words)} |")
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
    out.append(", ".join(f"{k} {v:.3f}" for k, v in report.timings.items()) + "\n")
    out.append(f"factseek {report.version}\n")
    return "\n".join(out)


def _n(x: int | None) -> str:
    return "" if x is None else f"{x:,}"


def _clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


# ----------------------------------------------------------------------------- html


def _safe_url(url: str) -> str:
    """The URL if it is http(s), else empty (no javascript:, data:, file: links)."""
    try:
        scheme = urlsplit(url).scheme.lower()
    except ValueError:
        return ""
    return url if scheme in ("http", "https") else ""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _a(title: str, url: str) -> str:
    safe = _safe_url(url)
    label = _e(title or url)
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
.noev{color:#666;font-style:italic}
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


def _html_badge(e: Evidence) -> str:
    cls = f"b-{e.stance.label}" if e.stance is not None else "b-nei"
    return f"<span class='badge {_e(cls)}'>{_e(_badge(e))}</span>"


def _html_evidence(report: Report) -> list[str]:
    if not report.evidence and not report.answers:
        return []
    out = ["<h2>Subquestions and answers</h2>"]
    if report.answers:
        out.append(
            "<table><tr><th>question</th><th>answer</th><th>confidence</th><th>evidence</th></tr>"
        )
        for a in report.answers:
            conf = f"{a.confidence:.2f}" if a.confidence is not None else ""
            cited = (
                _e(", ".join(a.evidence_ids))
                or f"<span class='noev'>{_e(a.rationale or NO_EVIDENCE)}</span>"
            )
            out.append(
                f"<tr><td>{_e(a.question)}</td><td><b>{_e(a.answer)}</b></td><td>{conf}</td><td>{cited}</td></tr>"
            )
        out.append("</table>")
    out.append("<h2>Evidence cards</h2>")
    for q, cards in _questions_with_cards(report):
        out.append(f"<h3>{_e(q)}</h3>")
        if not cards:
            out.append(f"<p class='noev'>{NO_EVIDENCE}</p>")
            continue
        for e in cards:
            flag = (
                "" if e.independent else f"<p class='small warn'>not independent: {_e(e.note)}</p>"
            )
            out.append(
                f"<div class='card'><div>{_e(e.id)} {_html_badge(e)} {_a(e.title or e.domain, e.url)}"
                f" <span class='small'>{_e(_card_meta(e))} · chars {e.start_char}–{e.end_char}</span></div>"
                f"<p class='quote'>“{_e(_clip(e.text, 1200))}”</p>{flag}</div>"
            )
    return out


def render_html(report: Report) -> str:
    c = report.claim
    parts: list[str] = []
    add = parts.append
    add("<!doctype html><html lang='en'><head><meta charset='utf-8'>")
    add(
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'\">"
    )
    add(f"<title>factseek: {_e(_clip(c.text, 80))}</title><style>{_CSS}</style></head><body>")
    add(f"<h1>factseek report</h1><blockquote>{_e(c.text)}</blockquote>")
    meta = [f"date: {_e(c.date.isoformat()) if c.date else 'unknown'}"]
    if c.speaker:
        meta.append(f"speaker: {_e(c.speaker)}")
    if c.venue:
        meta.append(f"venue: {_e(c.venue)}")
    add(f"<p class='meta'>{' · '.join(meta)}</p>")
    v = report.verdict
    if v.judged:
        box = VERDICT_CLASS.get(v.label or "", "")
        conf = f" · confidence {v.confidence:.2f}" if v.confidence is not None else ""
        scale = f" · {_e(v.scale)} scale" if v.scale else ""
        add(
            f"<div class='verdict {box}'>Verdict: <b>{_e(v.label or '')}</b>"
            f" <span class='small'>by {_e(v.judge)}{scale}{conf}</span>"
        )
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
                add(f"<p class='quote'>“{_e(sent.text)}”{where}{warn}</p>")
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
            add(f"<p class='small'>rewritten query: “{_e(q.text)}” — {_e(', '.join(q.trace))}</p>")
        add(
            f"<p class='small'>native filters: {_e(', '.join(r.native) or 'none')}; "
            f"emulated: {_e(', '.join(r.emulated) or 'none')}</p>"
        )
        if r.error:
            add(f"<p class='warn'>search error: {_e(r.error)}</p>")
        if not r.hits:
            add("<p class='small'>no hits</p>")
            continue
        add("<table><tr><th>#</th><th>page</th><th>published</th><th>decision</th></tr>")
        for h, d in zip(r.hits, r.decisions, strict=True):
            cls, what = ("kept", "kept") if d.kept else ("removed", f"removed: {d.reason}")
            date = h.published.isoformat() if h.published else "undated"
            add(
                f"<tr><td>{h.rank}</td><td>{_a(_clip(h.title, 90), h.url)}</td><td>{date}</td>"
                f"<td class='{cls}'>{_e(what)}</td></tr>"
            )
        add("</table>")

    add("<h2>What the constraints removed</h2><ul>")
    add("".join(f"<li>{_e(k)}: {v}</li>" for k, v in report.removed.items()) or "<li>nothing</li>")
    add("</ul>")

    add("<h2>Passages</h2>")
    for p in report.passages:
        add(
            f"<div class='card'><div>#{p.doc_rank + 1} {_a(p.title, p.url)} "
            f"<span class='small'>words {p.start_word}–{p.end_word}, score {p.score:.2f}</span></div>"
            f"<p class='small'>{_e(_clip(p.text, 1200))}</p></div>"
        )

    add(
        "<h2>Information funnel</h2><table><tr><th>stage</th><th>hits</th><th>documents</th><th>words</th><th></th></tr>"
    )
    top = max([f.words or 0 for f in report.funnel] + [1])
    for f in report.funnel:
        width = int(300 * (f.words or 0) / top)
        add(
            f"<tr><td>{_e(f.stage)}</td><td>{_n(f.hits)}</td><td>{_n(f.documents)}</td><td>{_n(f.words)}</td>"
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
        + "</p>"
    )
    add(
        "<details><summary class='small'>configuration</summary><pre class='small'>"
        + _e("\n".join(f"{k}: {v}" for k, v in report.config.items()))
        + "</pre></details>"
    )
    add(f"<p class='small'>factseek {_e(report.version)}</p></body></html>\n")
    return "\n".join(parts)


RENDERERS: dict[Format, Callable[[Report], str]] = {
    Format.json: render_json,
    Format.md: render_markdown,
    Format.html: render_html,
}


def render(report: Report, fmt: Format | str = Format.json) -> str:
    return RENDERERS[Format(fmt)](report)


def write_report(report: Report, path: str | Path, fmt: Format | str = Format.json) -> None:
    atomic_write(path, render(report, fmt))


def iter_urls(report: Report) -> Iterable[str]:
    """URLs of the documents a report kept (for run comparisons)."""
    return (d.url for d in report.documents)
