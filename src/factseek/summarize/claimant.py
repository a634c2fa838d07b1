"""The claim's speaker's own words among the evidence (``summarize.evidence`` rule 6, first half).

A card is not independent confirmation when it is the claimant speaking: a page on the
claimant's own site (the surname in the host), a page written by the claimant (a byline), or a
sentence that names the claimant with a verb of saying or a quotation mark. ``Claimant(speaker)``
recognises them; only a speaker written as a person's name (two or more capitalised words) is
looked for.
"""

from __future__ import annotations

import re

from factseek.constraints.hits import url_host_path
from factseek.types import Document

__all__ = ["Claimant"]

_SAYING = re.compile(
    r"\b(?:said|says|say|told|tells|claimed|claims|argued|argues|wrote|writes|stated|states|"
    r"insisted|insists|repeated|repeats|promised|promises|tweeted|posted|added|noted|"
    r"according to|in (?:an|a|her|his|their) (?:ad|op-ed|speech|interview|statement))\b",
    re.IGNORECASE,
)
_QUOTE_MARKS = ('"', "“", "”")


class Claimant:
    """Recognises the claim's speaker's own words (rule 6, first half)."""

    def __init__(self, speaker: str | None) -> None:
        words = (speaker or "").split()
        person = len(words) >= 2 and all(w[:1].isupper() for w in words)
        self.name = " ".join(words) if person else ""
        surname = re.sub(r"[^a-z]", "", words[-1].lower()) if person else ""
        self.surname = surname if len(surname) >= 3 else ""
        self.mention = (
            re.compile(rf"\b{re.escape(words[-1].strip('.,'))}\b") if self.surname else None
        )
        self.byline = re.compile(rf"\bby {re.escape(self.name)}\b", re.I) if self.name else None

    def note(self, doc: Document, text: str) -> str:
        if self.mention is None:
            return ""
        host = url_host_path(doc.url)[0]
        if self.surname in re.sub(r"[^a-z]", "", host):
            return f"the claimant's own site ({host})"
        if self.byline is not None and self.byline.search(f"{doc.title}\n{doc.text[:300]}"):
            return f"written by the claimant ({self.name})"
        if self.mention.search(text) and (
            _SAYING.search(text) or any(q in text for q in _QUOTE_MARKS)
        ):
            return f"the claimant's own statement, as reported ({self.name})"
        return ""
