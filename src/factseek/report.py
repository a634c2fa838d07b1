"""Render a ``Report`` as JSON (complete), Markdown, or one self-contained HTML file.

>>> from factseek.report import read_report, render, write_report
>>> report = read_report("report.json")  # doctest: +SKIP
>>> write_report(report, "report.html", "html")  # doctest: +SKIP

Everything that came from a web page, a search result or a model is untrusted:

- every format: terminal escape sequences, control characters, bidi overrides and lone
  surrogates are removed (``factseek.sanitize.clean_text``; in JSON one for one, so character
  offsets stay valid), and URLs lose userinfo and key-like parameters (``factseek.redact``);
- Markdown: text is HTML-escaped and Markdown syntax backslash-escaped; link targets are
  percent-encoded inside ``<...>`` (no ``<``, ``>``, brackets, parentheses, quotes, backslashes or
  spaces survive), so neither raw HTML nor a crafted URL can add markup or leave its link;
- HTML: escaped, links limited to http(s) URLs, nothing loaded from elsewhere (a CSP, inline CSS,
  no scripts).

Files are written atomically: a temp file in the same folder, then a rename. The readable
formats speak plainly: constraint codes ("after-claim-date") become words ("published
after the claim"), long titles are cut at a word with "…".
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Iterable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from factseek.constraints import PAGE_REMOVED
from factseek.errors import DataError, InputError
from factseek.files import atomic_write
from factseek.ratings import value_tone
from factseek.redact import MESSAGE_KEYS, URL_KEYS, redact_text, redact_tree, redact_url
from factseek.sanitize import clean_text, json_loads
from factseek.types import Document, Evidence, Report, to_dict
from factseek.verdict_words import (
    abstained_words,
    answer_cell,
    answer_kind,
    by_reviewer,
    machine_answers,
    precision_words,
    review_lines,
)


class Format(StrEnum):
    """A report format: ``json`` (complete, machine-readable), ``md`` or ``html`` (for people)."""

    json = "json"
    md = "md"
    html = "html"


def _clean_tree(obj: Any, key: str = "") -> Any:
    """JSON data with every string cleaned one for one; URLs and messages also redacted."""
    if isinstance(obj, str):
        text = clean_text(obj, keep_newlines=True, keep_length=True)
        if key in URL_KEYS:
            return redact_url(text)
        return redact_text(text) if key in MESSAGE_KEYS else text
    if isinstance(obj, list):
        return [_clean_tree(x, key) for x in obj]
    if isinstance(obj, dict):
        return {_clean_tree(str(k)): _clean_tree(v, str(k)) for k, v in obj.items()}
    return obj


def render_json(report: Report) -> str:
    """The complete report as indented JSON (``read_report`` reads it back; only control
    characters, which become spaces, and credentials in URLs and messages differ)."""
    data = _clean_tree(redact_tree(to_dict(report)))
    return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


# ----------------------------------------------------------------------------- plain words

#: What a constraint decision's reason code means, in words for the readable formats.
REASON_WORDS = {
    "after-claim-date": "published after the claim's day",
    "claim-day": "published on the claim's day",
    "modified-after-claim": "modified on or after the claim's day",
    "guessed-date": "publication date only guessed",
    "undated": "no publication date",
    "date-conflict": "conflicting publication dates",
    "excluded-site": "excluded site",
    "excluded-marker": "URL marks a fact-check",
    "pdf": "PDF file",
    "video": "video page",
    "over-k": "beyond the first k kept results",
}

#: What a search filter is about, in words.
FILTER_WORDS = {"date": "publication date", "domain": "excluded sites"}


def reason_words(reason: str) -> str:
    """A reason code in plain words: ``"excluded-site:snopes.com"`` -> ``"excluded site
    (snopes.com)"``; an unknown code is returned as it is."""
    code, _, detail = reason.partition(":")
    if code == "page" and detail:  # removed after fetching, by the page's own dates
        return f"{reason_words(detail)} (by the page's own dates)"
    words = REASON_WORDS.get(code, code)
    if not detail:
        return words
    return f'URL contains "{detail}"' if code == "excluded-marker" else f"{words} ({detail})"


def stage_words(stage: str) -> str:
    """A funnel stage in plain words (a page-date removal names its reason in words)."""
    if stage.startswith(PAGE_REMOVED):
        return PAGE_REMOVED + REASON_WORDS.get(
            stage[len(PAGE_REMOVED) :], stage[len(PAGE_REMOVED) :]
        )
    return stage


def filter_words(native: Sequence[str], emulated: Sequence[str]) -> str:
    """Who applied which search filter, in words ("" when there were none)."""

    def names(xs: Sequence[str]) -> str:
        return " and ".join(FILTER_WORDS.get(x, x) for x in xs)

    parts = []
    if native:
        parts.append(f"{names(native)} filtered by the search engine itself")
    if emulated:
        parts.append(f"{names(emulated)} filtered by factseek after the search")
    return "; ".join(parts)


_QUOTE_MARKS = '"“”„«»'


def _quoted(text: str, escape: Callable[[str], str]) -> str:
    """Escaped text in curly quotes, unless it already begins or ends with a quotation mark
    (no doubled quotes around a quoted sentence)."""
    text = text.strip()
    if text[:1] in _QUOTE_MARKS or text[-1:] in _QUOTE_MARKS:
        return escape(text)
    return f"“{escape(text)}”"


# ----------------------------------------------------------------------------- markdown


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
    safe = _safe_url(url)
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


GENRE_NOTE = {
    "letter": "a letter to the editor: never the only support",
    "opinion": "an opinion piece: never the only support",
    "blog": "a blog post: never the only support",
}


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
        machine = machine_answers(report)
        out.append("| question | answer | confidence | evidence |\n|---|---|---|---|")
        for a in report.answers:
            confidence = None if by_reviewer(report, a.evidence_ids) else a.confidence
            conf = f"{confidence:.2f}" if confidence is not None else ""
            cited = ", ".join(a.evidence_ids) or _md(a.rationale or NO_EVIDENCE)
            cell = _md(answer_cell(a, machine.get(a.question)))
            out.append(f"| {_md(a.question)} | **{cell}** | {conf} | {cited} |")
        out.append("")
    out.append("## Evidence cards\n")
    for q, cards in _questions_with_cards(report):
        out.append(f"**{_md(q)}**\n")
        if not cards:
            out.append(f"- _{NO_EVIDENCE}_\n")
            continue
        for e in cards:
            flag = "" if e.independent else f" — not independent: {_md(e.note)}"
            if e.genre in GENRE_NOTE:
                flag += f" — {GENRE_NOTE[e.genre]}"
            out.append(
                f"- {e.id} `{_badge(e)}` {_md_link(e.title or e.domain, e.url)} ({_md(_card_meta(e))}): "
                f"“{_md(_clip(e.text, 400))}” [chars {e.start_char}-{e.end_char}]{flag}"
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
            out.append(f"  - {_quoted(sent.text, _md)}{where}{flag}")
        if not s.sentences:
            out.append(f"  - {_md(s.text)}")
    out.append("")

    out.append("## Subquestions and queries\n")
    for r in report.results:
        q = r.query
        kept = sum(d.kept for d in r.decisions)
        line = f"- {_md(q.question)} — {len(r.hits)} hits, {kept} kept"
        if q.text != q.question:
            line += f"; rewritten to {_quoted(q.text, _md)} ({', '.join(_md(a) for a in q.trace)})"
        if r.native or r.emulated:
            line += f"; {filter_words(r.native, r.emulated)}"
        if r.error:
            line += f"; **error:** {_md(r.error)}"
        out.append(line)
        out.extend(f"  - {x}" for x in _rewrite_lines(r, _md, _md_link))
    out.append("")

    out.append("## Hits and constraint decisions\n")
    out.append("| query | rank | page | published | decision |\n|---|---|---|---|---|")
    for r in report.results:
        for h, d in zip(r.hits, r.decisions, strict=True):
            date = h.published.isoformat() if h.published else "undated"
            out.append(
                f"| {_md(_clip(r.query.text, 60))} | {h.rank} | {_md_link(_clip(h.title, 60), h.url)} "
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
        date, source, rule, ev = _page_date(d)
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
            f"score {p.score:.2f}: {_quoted(_clip(p.text, 300), _md)}"
        )
    out.append("")

    out.append("## Information funnel\n")
    out.append("| stage | hits | documents | words |\n|---|---|---|---|")
    for f in report.funnel:
        out.append(f"| {stage_words(f.stage)} | {_n(f.hits)} | {_n(f.documents)} | {_n(f.words)} |")
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


def _page_date(doc: Document) -> tuple[str, str, str, list[str]]:
    """A kept page's date, its source, the rule that chose it, and every date the page gave."""
    date = doc.published.isoformat() if doc.published else "undated"
    source, rule = doc.meta.get("date_source", ""), doc.meta.get("date_rule", "")
    if not source and len(doc.date_evidence) == 1:  # e.g. a knowledge store's own date
        source, rule = doc.date_evidence[0].source, "the only date recorded for it"
    source = f"from {source}" if source else ""
    rule = rule or ("no date on the page" if not doc.published else "not recorded")
    if doc.meta.get("date_confidence") == "low":
        rule += "; low-confidence: only a guess"
    mod = doc.meta.get("modified_rule", "")
    if doc.modified is not None:
        rule += f"; last modified {doc.modified.isoformat()}" + (f" ({mod})" if mod else "")
    elif mod:
        rule += f"; no modification date ({mod})"
    ev = [
        f"{e.source}: {e.date.isoformat()}"
        + (f" from “{_clip(e.raw, 80)}”" if e.raw and e.raw != e.date.isoformat() else "")
        + (f" ({e.rule})" if e.rule else "")
        for e in doc.date_evidence
    ]
    if doc.meta.get("date_warning"):
        ev.append(f"warning: {doc.meta['date_warning']}")
    return date, source, rule, ev


def markdown_text(text: str) -> str:
    """Untrusted text made safe for one line of Markdown (markup and HTML neutralised)."""
    return _md(text)


def clip_text(text: str, n: int) -> str:
    """``text`` on one line in at most ``n`` characters, cut at a word with "…"."""
    return _clip(text, n)


def _n(x: int | None) -> str:
    return "" if x is None else f"{x:,}"


def _rewrite_lines(
    r: Any, escape: Callable[[str], str], link: Callable[[str, str], str]
) -> list[str]:
    """What the rewriter did to one query, already escaped: for a rewritten query, the pages it
    found that its question as written did not (and those it lost); else why it left it."""
    q = r.query
    if q.text == q.question:
        return [f"rewriter: left as written ({escape(q.note)})"] if q.note else []
    titles = {h.url: h.title for h in r.hits}

    def pages(urls: Sequence[str]) -> str:
        return ", ".join(link(_clip(titles.get(u, ""), 60), u) for u in urls)

    out = []
    if r.new_urls:
        n = len(r.new_urls)
        out.append(f"the rewrite found {n} page{'s' if n != 1 else ''} the question as written did not: {pages(r.new_urls)}")  # fmt: skip
    else:
        out.append("the rewrite found no page the question as written did not")
    if r.lost_urls:
        n = len(r.lost_urls)
        out.append(f"and lost {n} the question as written found: {pages(r.lost_urls)}")
    return out


def _clip(text: str, n: int) -> str:
    """``text`` on one line, at most ``n`` characters: cut at the last word that fits, then "…"
    (mid-word only when a single word is longer than half of ``n``)."""
    text = " ".join(text.split())
    if len(text) <= n:
        return text
    head = text[: n - 1]
    space = head.rfind(" ")
    if text[n - 1] != " " and space >= n // 2:  # the cut falls inside a word: drop that word
        head = head[:space]
    return head.rstrip(" ,;:.-–—") + "…"


# ----------------------------------------------------------------------------- html


def _safe_url(url: str) -> str:
    """The URL (cleaned, redacted) if it is http(s), else empty (no javascript:, data:, file:)."""
    url = clean_text(url)
    try:
        scheme = urlsplit(url).scheme.lower()
    except ValueError:
        return ""
    return redact_url(url) if scheme in ("http", "https") else ""


def _e(text: object) -> str:
    return html.escape(redact_text(clean_text(str(text), keep_newlines=True)), quote=True)


def _a(title: str, url: str) -> str:
    safe = _safe_url(url)
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
    return f"<span class='badge {_e(cls)}'>{_e(_badge(e))}</span>"


def _html_evidence(report: Report) -> list[str]:
    if not report.evidence and not report.answers:
        return []
    out = ["<h2>Subquestions and answers</h2>"]
    if report.answers:
        out.append(
            "<table><tr><th>question</th><th>answer</th><th>confidence</th><th>evidence</th></tr>"
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
            if e.genre in GENRE_NOTE:
                flag += f"<p class='small warn'>{_e(GENRE_NOTE[e.genre])}</p>"
            out.append(
                f"<div class='card'><div>{_e(e.id)} {_html_badge(e)} {_a(e.title or e.domain, e.url)}"
                f" <span class='small'>{_e(_card_meta(e))} · chars {e.start_char}–{e.end_char}</span></div>"
                f"<p class='quote'>“{_e(_clip(e.text, 1200))}”</p>{flag}</div>"
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
                add(f"<p class='quote'>{_quoted(sent.text, _e)}{where}{warn}</p>")
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
                f"<p class='small'>rewritten query: {_quoted(q.text, _e)} — {_e(', '.join(q.trace))}</p>"
            )
        if r.native or r.emulated:
            add(f"<p class='small'>{_e(filter_words(r.native, r.emulated))}</p>")
        parts.extend(f"<p class='small'>{x}</p>" for x in _rewrite_lines(r, _e, _a))
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
                f"<tr><td>{h.rank}</td><td>{_a(_clip(h.title, 90), h.url)}</td><td>{date}</td>"
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
        date, source, rule, ev = _page_date(d)
        items = "".join(f"<li>{_e(e)}</li>" for e in ev)
        add(
            f"<li>{_a(_clip(d.title, 90), d.url)}: <b>{_e(date)}</b> {_e(source)}"
            f"<br><span class='small'>rule: {_e(rule)}</span><ul class='small'>{items}</ul></li>"
        )
    add("</ul>" if report.documents else "<li>no documents</li></ul>")

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
            f"<tr><td>{_e(stage_words(f.stage))}</td><td>{_n(f.hits)}</td><td>{_n(f.documents)}</td><td>{_n(f.words)}</td>"
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


def _format(fmt: Format | str) -> Format:
    try:
        return Format(fmt)
    except ValueError:
        raise InputError(
            f"unknown report format {fmt!r}; choose one of: {', '.join(RENDERERS)}"
        ) from None


def render(report: Report, fmt: Format | str = Format.json) -> str:
    """The report as text in ``fmt``: ``"json"`` (complete), ``"md"`` or ``"html"`` (one
    self-contained page). Untrusted text is escaped in every format; an unknown format is an
    ``InputError`` that lists the choices."""
    return RENDERERS[_format(fmt)](report)


def write_report(report: Report, path: str | Path, fmt: Format | str = Format.json) -> None:
    """Render ``report`` in ``fmt`` and write it to ``path`` atomically (a reader never sees half
    a file; the file gets the usual permissions, 0o666 less the umask)."""
    atomic_write(path, render(report, _format(fmt)))


#: File suffixes and the format each one means (``format_for_path``).
SUFFIXES = {
    ".json": Format.json,
    ".md": Format.md,
    ".markdown": Format.md,
    ".html": Format.html,
    ".htm": Format.html,
}


def format_for_path(path: str | Path) -> Format:
    """The format a file name asks for by its suffix; ``InputError`` for any other suffix."""
    try:
        return SUFFIXES[Path(path).suffix.lower()]
    except KeyError:
        raise InputError(
            f"cannot tell the report format from {Path(path).name!r}: name the format "
            f"({', '.join(RENDERERS)}) or use a suffix ({', '.join(SUFFIXES)})"
        ) from None


def report_from_data(data: Any, where: str) -> Report:
    """A report from JSON data, checked field by field (``factseek.validate``); ``DataError``
    naming ``where`` and the first bad field (``verdict.confidence``...) otherwise."""
    from factseek.validate import RecordError, record_from

    if not isinstance(data, dict) or not isinstance(data.get("claim"), dict):
        raise DataError("not a factseek report (no claim)", where)
    try:
        return record_from(Report, data)
    except RecordError as e:
        raise DataError(f"not a factseek report: {e}", where) from None


def read_report(path: str | Path) -> Report:
    """A report from a JSON file written by factseek (``render_json``, ``check -f json``, a batch's
    ``reports/*.json``), read with the input size cap (``factseek.input_files``) and checked
    field by field. ``DataError`` names the file (and the field) when it is not one."""
    from factseek.input_files import read_input

    path = Path(path)
    raw = read_input(path, "report")
    try:
        data = json_loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise DataError("not a JSON report (render reads the JSON format)", str(path)) from None
    return report_from_data(data, str(path))


def iter_urls(report: Report) -> Iterable[str]:
    """URLs of the documents a report kept (for run comparisons)."""
    return (d.url for d in report.documents)
