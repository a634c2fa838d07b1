"""What the Markdown and the HTML report both show: cards, badges, page dates, rewrite lines,
clipped titles, safe URLs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

from factseek.redact import redact_url
from factseek.sanitize import clean_text
from factseek.types import Document, Evidence, Report

_QUOTE_MARKS = '"“”„«»'


def quoted(text: str, escape: Callable[[str], str]) -> str:
    """Escaped text in curly quotes, unless it already begins or ends with a quotation mark
    (no doubled quotes around a quoted sentence)."""
    text = text.strip()
    if text[:1] in _QUOTE_MARKS or text[-1:] in _QUOTE_MARKS:
        return escape(text)
    return f"“{escape(text)}”"


GENRE_NOTE = {
    "letter": "a letter to the editor: never the only support",
    "opinion": "an opinion piece: never the only support",
    "blog": "a blog post: never the only support",
}

NO_EVIDENCE = "no evidence found"


def badge(e: Evidence) -> str:
    """ "REFUTES 0.93", "TAKES NO SIDE" (a ``nei`` reading: a figure card, a gold card), or "no
    stance" (plain text; callers escape)."""
    if e.stance is None:
        return "no stance"
    if not e.stance.decides:
        return "TAKES NO SIDE"
    return f"{e.stance.label.upper()} {e.stance.confidence:.2f}"


def card_meta(e: Evidence) -> str:
    date = e.published.isoformat() if e.published else "undated"
    return f"{e.domain or 'unknown outlet'} · {date}"


def questions_with_cards(report: Report) -> list[tuple[str, list[Evidence]]]:
    """Each question (answers' order, else the report's), with its cards; cards whose question
    is not listed come last under their own question."""
    order = [a.question for a in report.answers] or [q.text for q in report.questions]
    for e in report.evidence:
        if e.question not in order:
            order.append(e.question)
    return [(q, [e for e in report.evidence if e.question == q]) for q in order]


def page_date(doc: Document) -> tuple[str, str, str, list[str]]:
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
        + (f" from “{clip(e.raw, 80)}”" if e.raw and e.raw != e.date.isoformat() else "")
        + (f" ({e.rule})" if e.rule else "")
        for e in doc.date_evidence
    ]
    if doc.meta.get("date_warning"):
        ev.append(f"warning: {doc.meta['date_warning']}")
    return date, source, rule, ev


def clip_text(text: str, n: int) -> str:
    """``text`` on one line in at most ``n`` characters, cut at a word with "…"."""
    return clip(text, n)


def count_text(x: int | None) -> str:
    return "" if x is None else f"{x:,}"


def rewrite_lines(
    r: Any, escape: Callable[[str], str], link: Callable[[str, str], str]
) -> list[str]:
    """What the rewriter did to one query, already escaped: for a rewritten query, the pages it
    found that its question as written did not (and those it lost); else why it left it."""
    q = r.query
    if q.text == q.question:
        return [f"rewriter: left as written ({escape(q.note)})"] if q.note else []
    titles = {h.url: h.title for h in r.hits}

    def pages(urls: Sequence[str]) -> str:
        return ", ".join(link(clip(titles.get(u, ""), 60), u) for u in urls)

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


def clip(text: str, n: int) -> str:
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


def safe_url(url: str) -> str:
    """The URL (cleaned, redacted) if it is http(s), else empty (no javascript:, data:, file:)."""
    url = clean_text(url)
    try:
        scheme = urlsplit(url).scheme.lower()
    except ValueError:
        return ""
    return redact_url(url) if scheme in ("http", "https") else ""


def stance_pairs_line(usage: Any) -> str:
    """ "stance pairs read: stance:small 120, stance:mpnet 40 (80 skipped by the cascade)"
    from a report's ``usage["stance_pairs"]`` (pipeline, ``stance.cascade``), else ""."""
    pairs = usage.get("stance_pairs") if hasattr(usage, "get") else None
    if not isinstance(pairs, dict) or not pairs:
        return ""
    read = ", ".join(f"{k} {v}" for k, v in pairs.items() if k != "skipped")
    skipped = pairs.get("skipped", 0)
    tail = f" ({skipped} skipped by the cascade)" if skipped else ""
    return f"stance pairs read: {read}{tail}"
