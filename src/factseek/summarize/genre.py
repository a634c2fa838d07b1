"""What kind of page a document is: reporting, or opinion that never confirms a claim alone.

``genre(doc) -> str``: ``""`` for an ordinary page, else the first that applies:

1. ``"letter"``: a letter to the editor. A path segment ``letter``, ``letters``,
   ``letters-to-the-editor``, ``letter-to-the-editor``, ``readers-letters`` or ``mailbag``; a
   title starting "Letter:", "Letters:" or "Letter to the editor"; or "letter to the editor"
   in the first ``HEAD_CHARS`` characters of the text.
2. ``"opinion"``: an opinion piece. A path segment ``opinion``, ``opinions``, ``editorial``,
   ``editorials``, ``op-ed``, ``oped``, ``commentary``, ``column``, ``columns``,
   ``columnists``, ``views``, ``viewpoint``, ``perspective``, ``perspectives`` or
   ``guest-column``; a title starting "Opinion", "Op-ed", "Editorial", "Column", "Commentary",
   "Viewpoint" or "Guest column" (followed by ":", "|" or "-"); or the page's
   ``meta["section"]`` (when the extractor kept one) naming one of those.
3. ``"blog"``: a personal blog or post. A host on a blogging platform (``BLOG_HOSTS``), a path
   segment ``blog`` or ``blogs``, or a title starting "Guest post".

Such pages are shown like any other, but ``judge.verdict`` never lets them be a question's only
support (docs/verdicts.md).
"""

from __future__ import annotations

import re

from factseek.constraints.hits import url_host_path
from factseek.types import Document

HEAD_CHARS = 300
LETTER_SEGMENTS = frozenset(
    {
        "letter",
        "letters",
        "letters-to-the-editor",
        "letter-to-the-editor",
        "readers-letters",
        "mailbag",
    }
)
OPINION_SEGMENTS = frozenset(
    {
        "opinion",
        "opinions",
        "editorial",
        "editorials",
        "op-ed",
        "oped",
        "commentary",
        "column",
        "columns",
        "columnists",
        "views",
        "viewpoint",
        "perspective",
        "perspectives",
        "guest-column",
    }
)
BLOG_HOSTS = (
    "blogspot.com",
    "wordpress.com",
    "medium.com",
    "substack.com",
    "tumblr.com",
    "ghost.io",
    "livejournal.com",
    "typepad.com",
    "blogger.com",
)
_LETTER_TITLE = re.compile(r"^\s*(letters?\s*:|letters?\s+to\s+the\s+editor)", re.I)
_OPINION_TITLE = re.compile(
    r"^\s*(opinion|op-?ed|editorial|column|commentary|viewpoint|guest column)\s*[:|\-–—]", re.I
)
_BLOG_TITLE = re.compile(r"^\s*guest\s+post\b", re.I)
_LETTER_TEXT = re.compile(r"\bletters?\s+to\s+the\s+editor\b", re.I)

GENRES = ("", "letter", "opinion", "blog")


def _segments(path: str) -> set[str]:
    return {s.lower() for s in re.split(r"[/?#]", path) if s}


def genre(doc: Document) -> str:
    """The page's genre (see the module docstring)."""
    host, path = url_host_path(doc.url)
    segments = _segments(path)
    title = doc.title or ""
    if (
        segments & LETTER_SEGMENTS
        or _LETTER_TITLE.search(title)
        or _LETTER_TEXT.search(doc.text[:HEAD_CHARS])
    ):
        return "letter"
    section = str(doc.meta.get("section", "")).strip().lower()
    if segments & OPINION_SEGMENTS or _OPINION_TITLE.search(title) or section in OPINION_SEGMENTS:
        return "opinion"
    host = host.lower()
    if (
        any(host == h or host.endswith("." + h) for h in BLOG_HOSTS)
        or segments & {"blog", "blogs"}
        or _BLOG_TITLE.search(title)
    ):
        return "blog"
    return ""


__all__ = ["GENRES", "genre"]
