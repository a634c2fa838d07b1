"""Syndicated copies among evidence cards (``summarize.evidence`` rule 6, second half).

A card is not independent when its page says it republishes another outlet
(``syndication_source``), or when it repeats the word triples of an earlier card from another
site (``mark_copies``), unless one states as a plan what the other reports as done.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from factseek.summarize.deciding import states_plan
from factseek.text import tokenize
from factseek.text import words as all_words
from factseek.types import Document, Evidence

__all__ = ["COPY_WORDS", "MIN_COPY_TERMS", "mark_copies", "share", "syndication_source", "triples"]


_SYNDICATED = re.compile(
    r"\b(?:(?:originally|first)\s+(?:published|appeared|ran)|(?:re)?published\s+with\s+permission|"
    r"republished|reprinted|syndicated)\s+(?:by|in|on|at|from)\s+(?:the\s+)?"
    r"(?P<source>[A-Z][\w&'’.-]*(?:\s+[A-Z][\w&'’.-]*){0,5})"
)
COPY_WORDS = 300  # a page's first words, where a card's copy is looked for
MIN_COPY_TERMS = 8  # a card this short is not called a copy for appearing inside another page


def syndication_source(doc: Document) -> str:
    """The outlet a page says it republishes ("Originally published by the Courier": "Courier"),
    from its title, its first and its last 500 characters; "" when it says none."""
    for text in (doc.title or "", doc.text[:500], doc.text[-500:]):
        m = _SYNDICATED.search(text)
        if m:
            return m.group("source").strip(" .,")
    return ""


def triples(text: str) -> frozenset[tuple[str, ...]]:
    """Every run of three words of ``text`` (stop words kept, lower-cased)."""
    w = all_words(text)
    return frozenset(zip(w, w[1:], w[2:], strict=False))


def share(a: frozenset[tuple[str, ...]], b: frozenset[tuple[str, ...]]) -> float:
    """The share of ``a``'s word triples that are ``b``'s (0 when ``a`` has none)."""
    return len(a & b) / len(a) if a else 0.0


def mark_copies(
    cards: list[Evidence], doc_of: list[int], documents: Sequence[Document], threshold: float
) -> list[Evidence]:
    """Rule 6, second half: a card is not independent when its page says it republishes another
    outlet, or when ``threshold`` of its word triples lie in an earlier card from another site
    and that card's in it, or (for a card of at least ``MIN_COPY_TERMS`` terms) when they lie in
    the first ``COPY_WORDS`` words of that card's page (a short original is one whole-page
    card, so its copy's sentence matches its page, not its card). Copied text keeps its triples
    (a 25-word sentence copied with three words changed keeps 61% or more); a page on the same
    story does not, even where it shares the words (the demo's finance director and the blog
    before him: 80% of the sentence's words, 2 of its 16 triples), nor does a sentence that
    repeats one phrase of a longer one ("the transit budget has grown 40 percent since 2019":
    54%), nor a card that reports what the other states as a plan ("opened on September 14"
    after "will open September 14": ``deciding.states_plan``), however many words they share.
    Each page is read once, however many cards it gives."""
    n_terms = [len(set(tokenize(c.text))) for c in cards]
    held = [triples(c.text) for c in cards]
    plans = [
        bool(planned - stated)
        for planned, stated in (states_plan(c.text, c.question) for c in cards)
    ]
    used = sorted(set(doc_of))  # ``documents[doc_of[i]]`` is card i's page
    opening = {d: triples(" ".join(documents[d].text.split()[:COPY_WORDS])) for d in used}
    source = {d: syndication_source(documents[d]) for d in used}
    order = sorted(
        range(len(cards)),
        key=lambda i: (cards[i].published is None, cards[i].published or 0, doc_of[i], i),
    )
    out = list(cards)

    def mark(i: int, note: str) -> None:
        joined = f"{out[i].note}; {note}" if out[i].note else note
        out[i] = replace(out[i], independent=False, note=joined)

    for pos, i in enumerate(order):
        if source[doc_of[i]]:
            mark(i, f"a syndicated copy: originally published by {source[doc_of[i]]}")
            continue
        for j in order[:pos]:
            if cards[j].domain == cards[i].domain or cards[j].url == cards[i].url:
                continue
            if plans[i] != plans[j]:  # "opened on ..." reports what "will open ..." planned
                continue
            # both ways: a short card is not a copy for being one phrase of a longer one
            same_card = min(share(held[i], held[j]), share(held[j], held[i])) >= threshold
            inside = (
                n_terms[i] >= MIN_COPY_TERMS and share(held[i], opening[doc_of[j]]) >= threshold
            )
            if same_card or inside:
                mark(i, f"near-copy of {cards[j].id} ({cards[j].domain}): a syndicated copy")
                break
    return out
