"""Figures compared, not guessed: a sentence that states the question's figure for the
question's thing and time agrees on it; one that states another figure for them disagrees.

A stance reader guesses at figures: "Harlan County's unemployment rate was 3.1 percent in June,
down from 3.6 percent in May" was read as *refuting* "Unemployment in Harlan County fell to 3.1
percent in June 2023" at 0.77 (the other figures in the sentence look like a contradiction).
``compare(question, text)`` reads the figures instead:

- the question's figures are its quantities of money or of a unit of measure
  (``summarize.measures``: "3.1 percent", "$62 million"; counts such as "four buses" are left to
  the reader: "will ask to buy four buses" states a plan, not a count), each with what it is
  said of (its *thing*) and its *time* (the months and years the question names);
- a figure of the text is **comparable** when it has the question figure's unit (currency marks
  counting), its thing is the question's (or it names none and the text names the question's
  thing, or the question names none and the text is about the question: ``relevance.about``),
  and its time (the month or year written nearest to it, at most 8 words away) is the question's;
  with no time written near it, it is comparable only for agreeing;
- **agrees** when every figure of the question has a comparable figure equal to it (within
  ``FIGURE_TOLERANCE``), none is contradicted, and the sentence neither reports nor disputes a
  claim (quotation marks, "claimed", "disputes", "false", ...) nor passes it on as hearsay
  (``summarize.hearsay``: "reportedly", "is said to", ...); **disagrees** when a comparable
  figure with its time written is another value (or the question's after "not"); **other
  time** when the only figures of the question's thing are of other months or years.

``figure_reading(question, text, reading)``: an agreement overrules the reader, whatever it
said: the card supports with the probability such agreements had on the real-world sides' gold
pairs (``AGREE_DATED_RIGHT`` when the figures' month or year is written and is the question's,
else ``AGREE_RIGHT``; measured by ``bench/bench_figures.py``), its stance's model is
``FIGURES``, and its note says what was compared and what the reader said. A disagreement or
another time only adds a note (they matched the gold label about half the time or less:
``DISAGREE_RIGHT``, ``OTHER_TIME_RIGHT``). ``EvidenceConfig.compare`` turns it off.

``yielding(pairs, readings)``: of one question's readings, one that takes a side on a sentence
**not about the question** (under half of its subject words, ``relevance.subject_terms``: the
bus brief shares only "grant" of grant, library, state) or whose figures
are **only of other times** yields to a stronger reading of the other side of a sentence that
is about it and not of another time, and that counts fully (not a letter's, an opinion piece's,
a blog's or the claimant's own words): it takes no side, and its note says why ("a bus brief"
against the grant's own sentence; May's "rose to 3.6 percent" against June's 3.1). Alone, such
a reading stands: setting every off-topic refutation aside also set aside right refutations on
AVeriTeC dev (docs/verdicts.md). ``EvidenceConfig.yielding`` turns it off.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from factseek.summarize.figures import FIGURE_TOLERANCE, quantities
from factseek.summarize.hearsay import hearsay, hearsay_reading
from factseek.summarize.measures import things
from factseek.summarize.relevance import about, off_topic_reading, stems, subject_terms
from factseek.text import MONTH_NAME, MONTHS
from factseek.types import SET_ASIDE, StanceResult

__all__ = [
    "AGREE_DATED_RIGHT",
    "AGREE_RIGHT",
    "DISAGREE_RIGHT",
    "FIGURES",
    "OTHER_TIME_RIGHT",
    "Comparison",
    "compare",
    "figure_reading",
    "reread",
    "yielding",
]

#: How often each comparison matched the gold label on the real-world sides' gold pairs, every
#: side pooled (``python bench/bench_figures.py --data DIR``; docs/verdicts.md).
AGREE_RIGHT = 0.63  # 63 of 100 gold pairs, every side pooled (the rule is fitted on none)
AGREE_DATED_RIGHT = 0.88  # 14 of 16: the figure's month or year written and the question's
DISAGREE_RIGHT = 0.48  # 58 of 121
OTHER_TIME_RIGHT = 0.31  # 5 of 16 were nei
#: The ``StanceResult.model`` of a reading that figures compared set (summarize.evidence).
FIGURES = "figures"
NEAR = 8  # words between a figure and the time written nearest to it

_TIME = re.compile(rf"\b(?:(?P<month>{MONTH_NAME})\b\.?|(?P<year>(?:19|20)\d\d)\b)", re.IGNORECASE)


_DENIED = re.compile(r"\b(?:not|never|no|n't|rather than|instead of)\W+(?:\w+\W+)?$")
_BOUND = re.compile(
    r"\b(?:more|less|fewer|greater|higher|lower|over|under|up to|at least|at most|nearly|almost)"
    r"(?:\s+than)?\W+$"
)


#: A sentence that reports a claim or disputes one confirms no figure by repeating it: "bills
#: have 'gone up 40 percent,' a figure the finance office disputes".
_REPORTED = re.compile(
    r"[\"“”]|\b(?:disput\w*|claim\w*|alleg\w*|false|falsely|wrong|untrue|not true|"
    r"denie[sd]|deny|mislead\w*|debunk\w*|rumou?r\w*|hoax)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Comparison:
    """What the text's figures say of the question's: ``agrees`` or ``disagrees``, and how."""

    result: Literal["agrees", "disagrees", "other-time"]
    note: str
    dated: bool = False  # the agreeing figure's month or year is written and is the question's


def _times(text: str) -> list[tuple[int, str, str]]:
    """(character offset, kind, value) of every month and year written in ``text``."""
    out = []
    for m in _TIME.finditer(text):
        if m.group("month"):
            if not m.group(0)[0].isupper():
                continue  # "may", "march": a verb, not a month (a month name is capitalised)
            word = m.group("month").lower().rstrip(".")
            month = next(x for x in MONTHS if x.startswith(word[:3]))
            out.append((m.start(), "month", month))
        else:
            out.append((m.start(), "year", m.group("year")))
    return out


def _words_between(text: str, a: int, b: int) -> int:
    lo, hi = sorted((a, b))
    return len(text[lo:hi].split())


def _time_near(
    text: str, start: int, end: int, times: list[tuple[int, str, str]]
) -> dict[str, str]:
    """The month and year written nearest to the figure at ``start:end`` (within ``NEAR`` words)."""
    out: dict[str, str] = {}
    for kind in ("month", "year"):
        best = None
        for pos, k, value in times:
            if k != kind:
                continue
            d = _words_between(text, end, pos) if pos >= end else _words_between(text, pos, start)
            if d <= NEAR and (best is None or d < best[0]):
                best = (d, value)
        if best is not None:
            out[kind] = best[1]
    return out


def _compatible(asked: dict[str, str], said: dict[str, str]) -> bool:
    return all(said[k] == v for k, v in asked.items() if k in said)


def compare(question: str, text: str) -> Comparison | None:
    """Whether ``text``'s figures agree or disagree with the question's (module docstring)."""
    asked = things(question)
    if not asked:
        return None
    qtime = {k: v for _, k, v in _times(question)}
    said = things(text)
    if not said:
        return None
    spans = {s: (a, b) for s, a, b in quantities(text[:2_000], marked=True)}
    times = _times(text)
    text_stems = stems(text)
    subject = subject_terms(question)
    on_subject = about(question, text)
    elsewhen: list[str] = []
    agreed: list[tuple[str, str, bool]] = []  # (as the text writes it, the question's, dated)
    for (value, slot, written), thing in asked:
        same, other = [], []
        for s, t in said:
            if s[1] != slot:
                continue
            if thing is not None and t is not None and not t.same(thing):
                continue
            loose = thing is not None and t is None and thing.head not in text_stems
            if thing is None and (
                not on_subject or (t is not None and subject.isdisjoint(t.words))
            ):
                continue  # the question names no thing; this text or figure is of another one
            start, end = spans.get(s, (0, 0))
            when = _time_near(text, start, end, times)
            if qtime and not _compatible(qtime, when):
                elsewhen.append(
                    f"{s[2].strip()} ({', '.join(v.capitalize() for v in when.values())})"
                )
                continue
            close = abs(s[0] - value) <= FIGURE_TOLERANCE * max(abs(s[0]), abs(value))
            before = text[max(0, start - 40) : start].lower()
            if _BOUND.search(before):
                continue  # "more than 3 million": a bound, not the figure
            if loose and not (close and qtime and when):
                continue  # names no thing and not the question's: only its own dated figure counts
            shown = s[2].strip()
            if close and _DENIED.search(before):  # "5 million, not 3 million"
                close, when, shown = False, when or {"denied": "yes"}, f"not {shown}"
            (same if close else other).append((shown, bool(when) or not qtime))
        if same:
            dated = [w for w, timed in same if timed and qtime]
            agreed.append(((dated or [w for w, _ in same])[0], written.strip(), bool(dated)))
            continue
        dated = [w for w, timed in other if timed]
        if dated:  # another figure for the question's: the card disagrees, whatever else it says
            return Comparison(
                "disagrees",
                f"states {', '.join(dict.fromkeys(dated))}, not the question's {written.strip()}",
            )
    if agreed and len(agreed) == len(asked) and not _REPORTED.search(text) and not hearsay(text):
        # every figure of the question, none contradicted, and not a claim reported or disputed
        shown = "; ".join(f"the question's {q} ({w})" for w, q, _ in agreed)
        return Comparison("agrees", f"states {shown}", all(d for _, _, d in agreed))
    if elsewhen and not agreed:
        asked_when = " ".join(v.capitalize() for v in qtime.values())
        return Comparison(
            "other-time", f"gives {', '.join(dict.fromkeys(elsewhen))}, nothing of {asked_when}"
        )
    return None


def figure_reading(
    question: str, text: str, reading: StanceResult | None
) -> tuple[StanceResult | None, str]:
    """The card's stance after comparing figures, and the note that says so ("" when the
    comparison says nothing or says what the reader said)."""
    found = compare(question, text)
    if found is None:
        return reading, ""
    label = {"agrees": "supports", "disagrees": "refutes", "other-time": "nei"}[found.result]
    if (reading is None and label == "nei") or (reading is not None and reading.label == label):
        return reading, ""
    if found.result != "agrees":
        right = DISAGREE_RIGHT if label == "refutes" else OTHER_TIME_RIGHT
        return reading, (
            f"figures compared: {found.note}; the reading stands (such a comparison matched "
            f"the gold label {right:.0%} of the time)"
        )
    p = AGREE_DATED_RIGHT if found.dated else AGREE_RIGHT
    rest = (1.0 - p) / 2
    probs = {"supports": p, "refutes": rest, "nei": rest}
    was = (
        f"; the reader said {reading.label} {reading.confidence:.2f}" if reading is not None else ""
    )
    return (
        StanceResult(label="supports", probs=probs, model=FIGURES),
        f"figures compared: {found.note}, so it supports{was}",
    )


def reread(
    pairs: Sequence[tuple[str, str]],
    readings: Sequence[StanceResult | None],
    figures: bool = True,
    off_topic: bool = False,
    yields: bool = True,
    eligible: Sequence[bool] | None = None,
    hearsay: bool = False,
) -> tuple[list[StanceResult | None], dict[int, str], set[int]]:
    """The readings of ``(question, text)`` pairs after comparing figures (``figure_reading``),
    with ``off_topic`` setting aside refutations of sentences not about the question
    (``relevance.off_topic_reading``), with ``hearsay`` a supporting reading of hearsay taking
    no side (``summarize.hearsay``), and with ``yields`` the off-topic and other-time
    readings yielding (``yielding``, to the ``eligible`` ones); by pair index, the note of each one changed; and the
    indices of the readings set aside (off topic, or yielding), which take no side."""
    out, notes, aside = list(readings), {}, set()
    for i, (question, text) in enumerate(pairs):
        note = ""
        if figures:
            out[i], note = figure_reading(question, text, out[i])
        if off_topic and not note:
            out[i], note = off_topic_reading(question, text, out[i])
            if note:
                aside.add(i)
        if hearsay and not note:
            out[i], note = hearsay_reading(question, text, out[i])  # figures never agree on it
            if note:
                aside.add(i)
        if note:
            notes[i] = note
    if yields:
        out, yielded = yielding(pairs, out, eligible)
        notes |= yielded
        aside |= set(yielded)
    return out, notes, aside


def _apart(question: str, text: str) -> str:
    """Why a sentence is not evidence on ``question`` of its own (not about it, or of other
    times' figures only), or ""."""
    subject = subject_terms(question)
    shared = subject & stems(text)
    if 2 * len(shared) < len(subject):
        held = f"only {', '.join(sorted(shared))} of" if shared else "none of"
        return f"not about the question ({held} its subject words: {', '.join(sorted(subject))})"
    found = compare(question, text)
    if found is not None and found.result == "other-time":
        return f"its figures are of other times ({found.note})"
    return ""


def yielding(
    pairs: Sequence[tuple[str, str]],
    readings: Sequence[StanceResult | None],
    eligible: Sequence[bool] | None = None,
) -> tuple[list[StanceResult | None], dict[int, str]]:
    """The readings after the off-topic and other-time ones yield (module docstring), and, by
    pair index, the note of each one that did; only a reading ``eligible`` marks (default:
    every one) is one to yield to."""
    out, notes = list(readings), {}
    by_question: dict[str, list[int]] = {}
    for i, (question, _) in enumerate(pairs):
        if (r := readings[i]) is not None and r.decides and not r.screened and not r.set_by:
            by_question.setdefault(question, []).append(i)
    for question, idx in by_question.items():
        if len({readings[i].label for i in idx}) < 2:  # type: ignore[union-attr]
            continue  # one side only: nothing to yield to
        apart = {i: _apart(question, pairs[i][1]) for i in idx}
        best: dict[str, float] = {}  # side -> its strongest reading on the question, eligible
        for i in idx:
            r = readings[i]
            if r is not None and not apart[i] and (eligible is None or eligible[i]):
                best[r.label] = max(best.get(r.label, 0.0), r.confidence)
        for i in idx:
            r = readings[i]
            if r is None or not apart[i]:
                continue
            other = "refutes" if r.label == "supports" else "supports"
            if best.get(other, 0.0) >= r.confidence > 0.0:
                out[i] = StanceResult(label="nei", probs=dict(r.probs), model=r.model)
                notes[i] = (
                    f"{apart[i]}; the reader said {r.label} {r.confidence:.2f}, but a sentence "
                    f"about it {other} at {best[other]:.2f}, {SET_ASIDE}"
                )
    return out, notes
