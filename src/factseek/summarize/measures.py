"""What a figure is said of: the thing a quantity in a sentence measures, by spaCy's dependency
parse, and whether a card gives the question's own figure for something else.

"Have water bills risen 40 percent?" asks 40 percent of *water bills*; "the typical bill rose
18 percent ... because the fixed charge rose 40 percent" gives 40 percent of *the fixed charge*
(and 18 percent of the bill). A stance model that sees the question's figure in the evidence
may read such a sentence as support; ``elsewhere`` tells the card builder
(``summarize.evidence``) that the card's figure belongs to another thing, and the answers
(``judge.verdict`` rule 1) then do not count it as support.

The thing a figure measures (``measured``), climbing the parse from the figure:

- the direct object of the verb it measures, when it has one: "raise taxes by $1 billion",
  "cut emissions 50%";
- else the subject of the verb it is the object, measure or complement of: "the fixed charge rose
  40 percent", "bills went up by 40 percent", "the plant ended up costing $62 million"
  (through ``xcomp`` and ``conj`` to the verb that has a subject; a relative pronoun stands for
  the noun its clause describes: "the charge, which rose 40 percent");
- the noun it modifies (written before it), or for a change ("a 40 percent increase in that
  charge") the object of that noun's "in"/"of"/"for"/"on";
- for "40 percent is the fixed charge", what it is said to be (but "X is $31 million" names no
  thing: a copula's subject is as often a framing, "a fair comparison is $31 million promised
  versus $44.5 million delivered", as what is measured).

Anything else (a pronoun, "it's about $61.8 million"; a generic head, "the cost is $62
million"; a parse that leads nowhere) is unknown, and an unknown thing never makes a card
"elsewhere": the rule only speaks when both the question's thing and the card's are named and
share no word (their head nouns against each other's words, stemmed), and are not both names
(two names may be one person). Only a quantity of money or of a unit of measure is placed ("40
percent", "$62 million", "1,768 MW"): "45 countries" counts countries, so two sentences that give
it speak of the same kind of thing; an ordinal or a name ("16th", "5G"), a date or a span of time
("24 January", "75 years": said of events, not things) is not a measure either.

A count is placed apart (``counts``): "cut 40 teaching jobs" counts *teaching jobs*, the noun
its number modifies. A text's count of the question's number counts another thing when that
noun lacks a word the question's counted noun is qualified by: "eliminates 40 positions" and
"the 40 jobs" do not say 40 *teaching* jobs; "40 teaching positions" is not set apart (it
keeps "teaching"; "positions" may be "jobs" by another name). Counts only ever set a card's
support aside this way: they are never compared for agreement ("will ask to buy 4 buses"
states a plan, not a count).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from factseek.errors import MissingDependency
from factseek.summarize.figures import FIGURE_TOLERANCE, figure_note, gives_figure, quantities
from factseek.text import stem

__all__ = [
    "NOT_COUNTED",
    "CardFigures",
    "Thing",
    "card_figures",
    "counts",
    "elsewhere",
    "measured",
    "things",
]

log = logging.getLogger(__name__)

# fmt: off
#: Nouns of change: the thing is what changes ("a 40 percent increase in that charge").
CHANGE = frozenset({
    "increase", "rise", "hike", "jump", "growth", "gain", "cut", "drop", "decline", "fall",
    "reduction", "decrease", "raise", "boost", "spike", "surge", "climb", "loss", "overrun",
})
#: Heads that name no thing of their own: a figure said of them is unknown.
GENERIC = frozenset({
    "cost", "price", "total", "amount", "figure", "number", "sum", "value", "estimate", "budget",
    "rate", "level", "share", "percent", "percentage", "%", "tab", "one", "most", "all", "some",
    "part", "half", "average", "median", "mean", "people", "person", "dollar", "euro", "pound",
    "rupee", "yuan", "naira", "shilling",
})
# fmt: on
RELATIVE = frozenset({"which", "that", "who"})
NOUNS = frozenset({"NOUN", "PROPN"})
VERBS = frozenset({"VERB", "AUX"})
ORDINAL_OR_NAME = re.compile(r"\d(?:st|nd|rd|th|[^\W\d_])$", re.IGNORECASE)  # "16th", "5G"
#: Units that measure something else ("40 percent" of bills, "1,768 MW" of capacity); after any
#: other word a number counts that word ("45 countries", "100 copies") and is said of it.
MEASURE = re.compile(
    r"(?:percent|per|million|billion|trillion|thousand|hundred|lakh|crore|bn|mn|[kmgt]wh?|km|"
    r"kilomet|mile|met(?:er|re)|kg|kilogram|gram|ton|gallon|lit(?:er|re)|barrel|acre|hectare|"
    r"degree|point|dollar|euro|pound|rupee|yuan|naira|shilling|cent|usd|eur|gbp|inr)\w*$",
    re.IGNORECASE,
)
#: Dates and spans of time ("24 January", "in the last 75 years") are said of events, not things.
TIME = re.compile(
    r"(?:year|month|week|day|hour|minute|second|decade|centur|january|february|march|april|may|"
    r"june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|"
    r"oct|nov|dec)\w*$",
    re.IGNORECASE,
)
MAX_CHARS = 2_000  # longer texts are not parsed (cards are sentences)
NOT_COUNTED = "; not counted as support"  # ends the note of a supporting card said of another


@dataclass(frozen=True)
class Thing:
    """What a figure is said of: the head noun's stem, the stems of its words (the head with
    its compounds and adjectives) and those words as written, in order ("fixed charge")."""

    head: str
    words: frozenset[str]
    text: str

    proper: bool = False  # the head is a name ("Smith"; "Marion", capitalised with no article)

    def same(self, other: Thing) -> bool:
        """Whether the two may be one thing: either head is among the other's words, or both
        are names (two names may be one person: "Marion" and "Smith")."""
        if self.proper and other.proper:
            return True
        return self.head in other.words or other.head in self.words


def _word(tok: Any) -> str:
    return stem(tok.lower_)


def _thing(tok: Any) -> Thing | None:
    if tok is None or tok.pos_ not in NOUNS or tok.lemma_.lower() in GENERIC:
        return None
    head = _word(tok)
    parts = [c for c in tok.children if c.dep_ in ("compound", "amod") and c.i < tok.i]
    parts = [c for c in parts if c.pos_ in ("NOUN", "PROPN", "ADJ", "VERB")]
    words = frozenset({head, *(_word(c) for c in parts)})
    text = " ".join(t.text for t in sorted([*parts, tok], key=lambda t: t.i))
    named = tok.text[:1].isupper() and not any(c.dep_ == "det" for c in tok.children)
    return Thing(head=head, words=words, text=text, proper=tok.pos_ == "PROPN" or named)


def _subject(verb: Any) -> Any:
    """The subject of ``verb``, through ``xcomp``/``conj`` to a verb that has one."""
    for _ in range(4):
        subj = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")]
        if subj:
            s = subj[0]
            if s.lower_ in RELATIVE and verb.dep_ == "relcl":
                return verb.head
            return None if s.pos_ == "PRON" else s
        if verb.dep_ not in ("xcomp", "conj") or verb.head is verb:
            return None
        verb = verb.head
    return None


def _object_of(noun: Any, skip: Any) -> Any:
    """The object of a change noun's "in"/"of"/"for"/"on" ("an increase in that charge"), not
    through ``skip`` (the figure's own "of": "an increase of 40 percent")."""
    for prep in noun.children:
        if prep is not skip and prep.dep_ == "prep" and prep.lower_ in ("in", "of", "for", "on"):
            for obj in prep.children:
                if obj.dep_ == "pobj" and obj.pos_ in NOUNS:
                    return obj
    return None


def measured(doc: Any, start: int, end: int) -> Thing | None:
    """What the quantity at characters ``start:end`` of the parsed ``doc`` is said of (module
    docstring), or None when the parse does not name it."""
    span = doc.char_span(start, end, alignment_mode="expand")
    if span is None or not len(span):
        return None
    tok = span.root
    for _ in range(8):
        head, dep = tok.head, tok.dep_
        if head is tok:
            return None
        if dep in ("nsubj", "nsubjpass"):  # "40 percent is the fixed charge"
            if head.lemma_ == "be":
                said = [c for c in head.children if c.dep_ == "attr"]
                return _thing(said[0]) if said else None
            return None
        if head.pos_ in NOUNS:  # "a $44.5 million plant", "a charge of $14"
            if dep != "prep" and tok.i > head.i:  # "Answer three: about $61.8 million"
                return None
            if head.lemma_.lower() not in CHANGE:
                return _thing(head)
            obj = _object_of(head, tok)  # "a 40 percent increase in that charge"
            if obj is not None:
                return _thing(obj)
            if head.dep_ == "appos":  # "the charge ... -- a 40 percent increase"
                return _thing(head.head)
            if head.dep_ in ("dobj", "attr", "npadvmod", "pobj"):  # "bills saw a 40% rise"
                tok = head
                continue
            return None
        if dep == "pobj" and head.dep_ == "prep":  # "rose by 40 percent", "to $62 million"
            tok = head
            continue
        if head.pos_ in VERBS:  # not "X is $31 million": a copula's subject is often a
            # framing ("a fair comparison is $31 million promised versus $44.5 million")
            if head.lemma_ == "be":
                return None
            obj = [c for c in head.children if c.dep_ == "dobj" and c is not tok]
            if obj and dep != "dobj":  # "raise taxes by $1 billion", "cut emissions 50%"
                return _thing(obj[0])
            return _thing(_subject(head))
        return None
    return None


@lru_cache(maxsize=256)  # a text whose measures and counts are both placed is parsed once
def _parse(text: str) -> Any:
    """spaCy's parse of ``text`` (its first ``MAX_CHARS``), or None without spaCy."""
    from factseek.ml.nlp import load_spacy  # loaded once per process

    try:
        return load_spacy()(text[:MAX_CHARS])
    except MissingDependency as e:  # the parse is a refinement: without it, nothing is placed
        log.debug("figures not placed: %s", e)
        return None


@lru_cache(maxsize=4096)
def things(text: str) -> tuple[tuple[tuple[float, str, str], Thing | None], ...]:
    """Each quantity of ``text`` (currency marks in the slot: ``summarize.figures``) with what
    it is said of; empty when ``text`` holds no quantity or spaCy is not installed."""
    found = [f for f in quantities(text[:MAX_CHARS], marked=True) if _measure(f[0][2])]
    doc = _parse(text) if found else None
    if doc is None:
        return ()
    return tuple((span, measured(doc, start, end)) for span, start, end in found)


@lru_cache(maxsize=4096)
def counts(text: str) -> tuple[tuple[tuple[float, str, str], Thing | None], ...]:
    """Each count of ``text`` ("40 teaching jobs") with the thing it counts (the noun its number
    modifies, module docstring; None when the parse does not say); empty when ``text`` holds
    no count or spaCy is not installed."""
    found = [f for f in quantities(text[:MAX_CHARS], marked=True) if _count(f[0][2])]
    doc = _parse(text) if found else None
    if doc is None:
        return ()
    out = []
    for span, start, _ in found:
        number = doc.char_span(start, start + len(_NUMBER.match(span[2]).group(0)), "expand")  # type: ignore[union-attr]
        tok = number.root if number is not None and len(number) else None
        counted = tok is not None and tok.dep_ == "nummod" and tok.head.pos_ in NOUNS
        out.append((span, _thing(tok.head) if counted else None))  # type: ignore[union-attr]
    return tuple(out)


_NUMBER = re.compile(r"\d[\d.,]*")


def _count(written: str) -> bool:
    """Whether a quantity as written counts the word after it ("40 jobs"): no currency, unit
    of measure, ordinal, name, date or span of time."""
    return not (_measure(written) or ORDINAL_OR_NAME.search(written) or TIME.search(written))


def _counts_other(asked: Thing, said: Thing) -> bool:
    """Whether a count of ``said`` is not one of ``asked``: ``said`` lacks a word that
    qualifies ``asked`` ("positions" or "jobs" for "teaching jobs")."""
    return not (asked.words - {asked.head}) <= said.words


def _measure(written: str) -> bool:
    """Whether a quantity as written measures something: a currency or a unit of measure
    (``MEASURE``), not a count ("45 countries": the countries themselves), an ordinal ("16th"), a
    name ("5G"), a date ("24 January") or a span of time ("75 years")."""
    if ORDINAL_OR_NAME.search(written) or TIME.search(written):
        return False
    return written[0] in "$€£" or written.rstrip().endswith("%") or bool(MEASURE.search(written))


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= FIGURE_TOLERANCE * max(abs(a), abs(b))


def elsewhere(question: str, text: str) -> str:
    """When ``text`` gives the question's own figure only for another thing than the one the
    question asks about, what to tell the reviewer ("its 40 percent is the fixed charge's, not
    water bills'; for the typical bill it gives 18 percent"); else "".

    Spoken only when, for some figure of the question, the question names what it measures,
    ``text`` gives that figure (same unit, within ``FIGURE_TOLERANCE``) at least once, and every
    time it does it names another thing; else, the same for the question's counts, each time
    counting another thing (module docstring: "its 40 counts the positions, not teaching jobs")."""
    asked = [(span, t) for span, t in things(question) if t is not None]
    if not asked:
        return _counted_elsewhere(question, text)
    said = things(text)
    for (value, slot, written), thing in asked:
        same = [(s, t) for s, t in said if s[1] == slot and _close(s[0], value)]
        if not same or any(t is None or t.same(thing) for _, t in same):
            continue
        others = list(dict.fromkeys(t.text for _, t in same if t is not None))
        note = (
            f"its {written.strip()} is said of the {' and the '.join(others)}, not of {thing.text}"
        )
        own = _own_figures(said, slot, thing)
        if own:
            note += f"; of the {own[0][1]} it says {', '.join(w for w, _ in own)}"
        return note
    return _counted_elsewhere(question, text)


def _counted_elsewhere(question: str, text: str) -> str:
    """``elsewhere`` for the question's counts: every count of ``text`` that gives the
    question's number counts another thing (``_counts_other``)."""
    asked = [(span, t) for span, t in counts(question) if t is not None]
    if not asked or not (said := counts(text)):
        return ""
    for (value, _, written), thing in asked:
        same = [t for s, t in said if _close(s[0], value)]
        if not same or any(t is None or not _counts_other(thing, t) for t in same):
            continue
        others = " and the ".join(dict.fromkeys(t.text for t in same if t is not None))
        number = _NUMBER.match(written).group(0)  # type: ignore[union-attr]
        return f"its {number} counts the {others}, not {thing.text}"
    return ""


def gives_count(question: str, text: str) -> bool:
    """Whether ``text`` counts something with one of the question's counts' numbers (no parse:
    what makes ``card_figures`` look at the counts)."""
    asked = [s[0] for s, _, _ in quantities(question) if _count(s[2])]
    return any(_close(s[0], v) for s, _, _ in quantities(text) if _count(s[2]) for v in asked)


def _own_figures(
    said: Sequence[tuple[tuple[float, str, str], Thing | None]], slot: str, thing: Thing
) -> list[tuple[str, str]]:
    """(as written, thing) of the text's other figures of ``slot`` said of the question's thing."""
    return [
        (s[2].strip(), t.text) for s, t in said if s[1] == slot and t is not None and t.same(thing)
    ]


@dataclass(frozen=True)
class CardFigures:
    """What an evidence card says about figures: its ``Evidence.figures`` note and
    ``Evidence.figure_of_other``."""

    note: str
    other: bool = False


@lru_cache(maxsize=4096)  # a candidate is ranked, then made a card (summarize.evidence)
def card_figures(question: str, text: str, label: str) -> CardFigures:
    """An evidence card's figures (``summarize.evidence`` rule 8): a card read as supporting or
    taking no side (``label``) that gives the question's figure only for another thing says so
    (``elsewhere``; a supporting one adds that it is not counted); any other card gets
    ``figures.figure_note``'s note."""
    other = label in ("supports", "nei") and (
        gives_figure(question, text) or gives_count(question, text)
    )
    if other and (note := elsewhere(question, text)):
        return CardFigures(f"{note}{NOT_COUNTED}" if label == "supports" else note, True)
    return CardFigures(figure_note(question, text, label))
