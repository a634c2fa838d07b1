"""Figures in text: what numbers of which unit a sentence states, and how they compare with a
question's (``summarize.evidence``: the question's own figure among the candidates, figure
cards, and the notes that tell a reviewer to compare figures).

A figure is a number followed by a word, its unit, stemmed: "about $61.8 million" is
``(61.8, "#milli")``. Two figures of one unit within ``FIGURE_TOLERANCE`` of each other are the
same figure; for comparison with a question, a currency mark is part of the unit ("$6 million"
is not "6 million gallons").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from factseek.text import STOPWORDS, stem

__all__ = [
    "FIGURE_TOLERANCE",
    "QUANTITY",
    "YEAR",
    "figure_note",
    "figures",
    "gives_figure",
    "quantities",
    "same_figure",
]

# A number (not glued to a word, as in "COVID-19") and the word after it: "40 percent", "18%",
# "$44.5 million", "5,000 gallons". A year ("in 2019 Nigeria") is a date, not a quantity.
QUANTITY = re.compile(r"(?<![\w.,-])[$€£]?(\d+(?:[.,]\d+)*)\s*(%|[^\W\d_]+)")
YEAR = re.compile(r"1[89]\d\d|20\d\d")


Span = tuple[float, str, str]  # value, unit slot, as written


FIGURE_TOLERANCE = 0.05  # two figures of one unit this close (relative) are the same figure


def quantities(text: str, *, marked: bool = False) -> list[tuple[Span, int, int]]:
    """Every quantity of ``text`` as ``((value, slot, as written), start, end)``, its character
    offsets in ``text``; with ``marked`` a currency mark is part of the slot ("$6 million" is
    not "6 million gallons")."""
    out = []
    for m in QUANTITY.finditer(text):
        number, word = m.group(1), m.group(2).lower()
        if YEAR.fullmatch(number) or word in STOPWORDS:
            continue
        digits = re.sub(r",(?=\d{3}(?!\d))", "", number).replace(",", ".")
        try:
            value = float(digits)
        except ValueError:  # "1.2.3": not one number
            continue
        written = m.group(0)
        slot = "#" + stem("percent" if word == "%" else word)
        if marked and written[0] in "$€£":
            slot = written[0] + slot
        out.append(((value, slot, written), m.start(), m.end()))
    return out


def _figure_spans(text: str) -> list[Span]:
    """``(value, slot, as written)`` of every quantity in ``text`` (``figures``)."""
    return [span for span, _, _ in quantities(text)]


def figures(text: str) -> list[tuple[float, str]]:
    """``(value, slot)`` of every quantity in ``text``, the slot as ``match_terms`` writes it
    (the stemmed unit): "$61.8 million" is ``(61.8, "#milli")``. A comma before three digits
    groups thousands ("5,000"); any other is a decimal point."""
    return [(value, slot) for value, slot, _ in _figure_spans(text)]


def _figure_spans_marked(text: str) -> list[Span]:
    """``_figure_spans`` with a currency mark kept in the slot: "$6 million" is not "6 million"."""
    return [span for span, _, _ in quantities(text, marked=True)]


def _compared(question: str, text: str) -> tuple[list[Span], list[Span], bool]:
    """(the question's figures, the text's figures in the question's units, whether one of
    them is the question's own within ``FIGURE_TOLERANCE``)."""
    asked = _figure_spans_marked(question)
    units = {slot for _, slot, _ in asked}
    said = [f for f in _figure_spans_marked(text) if f[1] in units]
    return asked, said, bool(said) and same_figure([f[:2] for f in asked], [f[:2] for f in said])


def figure_note(question: str, text: str, label: str = "") -> str:
    """What a reviewer should compare, else "":

    - a card that states a figure in the question's unit but none within ``FIGURE_TOLERANCE``
      of the question's: "this says 18 percent; the question, 40 percent";
    - a card read as refuting (``label``) that repeats the question's own figure: "this
      repeats the question's $31 million, yet reads as refuting" (such readings were right
      less than half the time on the real-world sides: docs/verdicts.md, "Evidence cards" 7);
    - a card that takes no side (``label`` "nei": a figure card, ``summarize.evidence`` rule 5) and gives the
      question's own figure: "this gives $61.8 million, the question's $62 million, and takes
      no side".

    It says nothing of what the figures belong to: "a 40 percent increase" of another charge
    matches "40 percent" all the same."""
    asked, said, same = _compared(question, text)
    if not said:
        return ""
    if not same:
        shown = {slot for _, slot, _ in said}
        ours = list(dict.fromkeys(w for _, _, w in said))[:3]
        theirs = list(dict.fromkeys(w for _, slot, w in asked if slot in shown))
        return f"this says {', '.join(ours)}; the question, {', '.join(theirs)}"
    repeated = list(
        dict.fromkeys(w for v, slot, w in asked if same_figure([(v, slot)], [f[:2] for f in said]))
    )
    if label == "refutes":
        return f"this repeats the question's {', '.join(repeated)}, yet reads as refuting"
    if label == "nei":
        given = [w for v, slot, w in said if same_figure([(v, slot)], [f[:2] for f in asked])]
        return (
            f"this gives {', '.join(dict.fromkeys(given))}, the question's "
            f"{', '.join(repeated)}, and takes no side"
        )
    return ""


def gives_figure(question: str, text: str) -> bool:
    """Whether ``text`` gives one of the question's figures (same unit, a currency mark
    counting, within ``FIGURE_TOLERANCE``): what makes a figure card (``summarize.evidence``
    rule 5)."""
    return _compared(question, text)[2]


def same_figure(a: Sequence[tuple[float, str]], b: Sequence[tuple[float, str]]) -> bool:
    """Whether a figure of ``a`` and one of ``b`` have one unit and values within
    ``FIGURE_TOLERANCE`` of each other ("$62 million" and "about $61.8 million")."""
    return any(
        sa == sb and abs(va - vb) <= FIGURE_TOLERANCE * max(abs(va), abs(vb))
        for va, sa in a
        for vb, sb in b
    )
