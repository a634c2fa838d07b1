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

Modules: ``io`` (render, write, read back), ``markdown``, ``html``, ``common`` (what both show),
``words`` (plain words for codes, verdicts, answers and reviews). This package re-exports their
public names, so ``from factseek.report import render`` is the path to use.
"""

from __future__ import annotations

from factseek.report.common import clip_text
from factseek.report.html import render_html, verdict_class
from factseek.report.io import (
    RENDERERS,
    SUFFIXES,
    Format,
    format_for_path,
    iter_urls,
    read_report,
    render,
    render_json,
    report_from_data,
    write_report,
)
from factseek.report.markdown import markdown_text, render_markdown
from factseek.report.words import filter_words, reason_words, stage_words

__all__ = [
    "RENDERERS",
    "SUFFIXES",
    "Format",
    "clip_text",
    "filter_words",
    "format_for_path",
    "iter_urls",
    "markdown_text",
    "read_report",
    "reason_words",
    "render",
    "render_html",
    "render_json",
    "render_markdown",
    "report_from_data",
    "stage_words",
    "verdict_class",
    "write_report",
]
