"""The deciding sentence of each page: what the summaries quote, plans and their outcomes.

Three rules keep the evidence cards and the summaries saying the same thing
(``summarize.evidence`` uses the first two, the pipeline the third):

1. **Quoted.** A unit of a page is *quoted* when a sentence the summaries quote covers at
   least half of it, or when it holds at least half of that sentence (``overlaps``): a short
   brief is one whole-page unit, and the one sentence the summary quotes from it is less than
   half of it, yet it is that unit's deciding sentence.
2. **Plans and their outcomes.** A sentence that states one of a question's words only as a
   plan (``states_plan``: the first word after "will", "expects to", "is scheduled to", "plans
   to", ... that is no stop word: "will *open* September 14", "is expected to *reopen*") is
   *superseded* for that question when a page published later holds a candidate of the same
   question that states that word otherwise ("*opened* on Monday, September 14"), and at
   least half of the question's other words the plan states: the later page reports what came
   of the plan. Among a
   question's cards, superseded ones rank after the rest, so an earlier plan never crowds out
   the later report of its outcome (``superseded``). Undated pages supersede nothing and are
   superseded by nothing.
3. **Quoted, deciding, a card.** A sentence the summaries quote that lies in a candidate read as
   taking a side on a question is one of that question's cards (``evidence.select_evidence``
   makes it one, past the ``cards`` cap if it must); ``uncarded_quotes`` finds any that is not,
   and the pipeline drops such a sentence from its summary with a note, so the summary never
   quotes a deciding sentence that is not a card.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from factseek.text import STOPWORDS, WORD_RE, stem, tokenize
from factseek.types import Document, Evidence, StanceResult, Summary

__all__ = ["overlaps", "states_plan", "superseded", "uncarded_quotes"]


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether span ``a`` (a quoted sentence) and span ``b`` (a unit) are the same text: their
    overlap is at least half of ``b`` or at least half of ``a``."""
    common = min(a[1], b[1]) - max(a[0], b[0])
    return common > 0 and (2 * common >= b[1] - b[0] or 2 * common >= a[1] - a[0])


_PLAN = re.compile(
    r"\b(?:will|shall|won't|going\s+to|"
    r"(?:is|are|was|were|be|been)\s+(?:expected|scheduled|set|slated|due|planned|poised)\s+to|"
    r"(?:plans?|planned|planning|expects?|expected|expecting|intends?|intended|aims?|hopes?)"
    r"\s+to)\b",
    re.IGNORECASE,
)


def states_plan(text: str, question: str) -> tuple[frozenset[str], frozenset[str]]:
    """Rule 2: the question's terms (light stems) that ``text`` states as a plan, the first word
    after "will", "is scheduled to", "expects to", ... that is no stop word ("will *open*",
    "will be *opened*", "is expected to *reopen*"), and those it states otherwise ("*opened* on
    Monday", "September 14")."""
    asked = {stem(w) for w in tokenize(question.lower())}
    words = list(WORD_RE.finditer(text))
    heads: set[int] = set()
    for m in _PLAN.finditer(text):
        after = (i for i, w in enumerate(words) if w.start() >= m.end())
        head = next((i for i in after if words[i].group().lower() not in STOPWORDS), None)
        if head is not None:
            heads.add(head)
    planned, stated = set(), set()
    for i, w in enumerate(words):
        term = stem(w.group().lower())
        if term in asked:
            (planned if i in heads else stated).add(term)
    return frozenset(planned), frozenset(stated)


def superseded(
    question: str, rows: Sequence[tuple[int, str]], documents: Sequence[Document]
) -> list[bool]:
    """Rule 2 for one question's candidates, given as ``(document index, text)``: which state
    as a plan one of the question's terms that they state nowhere else ("will open") and that a
    candidate of a later-dated page states otherwise ("opened"), along with at least half of the
    question's terms the plan states besides ("Quillan Falls aquatic center ... September 14")."""
    read = [states_plan(text, question) for _, text in rows]
    dates = [documents[d].published for d, _ in rows]
    out = []
    for (planned, stated), when in zip(read, dates, strict=True):
        plan = planned - stated
        out.append(
            bool(plan)
            and when is not None
            and any(
                later is not None
                and later > when
                and plan & told
                and 2 * len(told & stated) >= len(stated)  # about the same thing
                for (_, told), later in zip(read, dates, strict=True)
            )
        )
    return out


def uncarded_quotes(
    summaries: Sequence[Summary],
    documents: Sequence[Document],
    read: Sequence[tuple[str, int, int, int, StanceResult | None]],
    cards: Sequence[Evidence],
) -> list[tuple[int, int, str]]:
    """Rule 3's check: ``(summary index, sentence index, question)`` of every sentence the
    summaries quote that lies in a unit read as taking a side on ``question`` (``read``:
    ``(question, document index, start, end, reading)`` of every candidate read) but in none of
    that question's cards from the same page (or of the same text)."""
    index = {d.url: i for i, d in reversed(list(enumerate(documents)))}
    carded: dict[tuple[str, int], list[tuple[int, int]]] = {}
    texts: set[tuple[str, str]] = set()
    for e in cards:
        if e.url in index:
            carded.setdefault((e.question, index[e.url]), []).append((e.start_char, e.end_char))
        texts.add((e.question, " ".join(e.text.split())))
    deciding: dict[int, list[tuple[str, int, int]]] = {}
    for question, d, start, end, s in read:
        if s is not None and s.decides:
            deciding.setdefault(d, []).append((question, start, end))
    out = []
    for i, summary in enumerate(summaries):
        d = index.get(summary.url)
        if d is None:
            continue
        for j, sentence in enumerate(summary.sentences):
            if sentence.start_char is None or sentence.end_char is None:
                continue  # not a verbatim quote
            span = (sentence.start_char, sentence.end_char)
            for question, start, end in deciding.get(d, ()):
                if not overlaps(span, (start, end)):
                    continue
                spans = carded.get((question, d), ())
                same = (question, " ".join(documents[d].text[start:end].split())) in texts
                if not same and not any(overlaps(span, c) for c in spans):
                    out.append((i, j, question))
    return out
