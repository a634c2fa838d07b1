"""Generated contrast pairs: small edits of supporting pairs whose gold stance is known.

A stance model trained only on natural pairs learns shortcuts: lexical overlap means support,
a number that differs goes unnoticed, "someone said X" confirms X. ``contrast_pairs(pairs)``
turns each *supporting* training pair (claim or question, evidence) into at most one edited
pair per rule, with the label the edit implies. Rules, in order (the first that applies to a
pair is tried first; every rule that applies contributes):

1. ``number`` (refutes): a number in the claim that the evidence states too (the same digits;
   not a year, not glued to a word like "COVID-19") is changed in the claim (a small count
   moves by 2-4, a larger one is halved, raised by half, doubled or tripled, keeping its
   thousands separators and decimals) to a value the evidence does not state.
2. ``date`` (refutes): a year (1800-2099) or a month name the evidence states too is moved
   (a year by 1-5 or 10, a month by 1-6) to one the evidence does not state.
3. ``duration`` (refutes): a duration ("14 months", "a few seconds") whose unit the evidence
   uses too gets another unit the evidence does not use ("14 weeks").
4. ``attribution`` (refutes): a person the claim names as a speaker ("X said", "according to
   X") whom the evidence names too is replaced by another person named in the training claims
   (a quote attributed to someone else).
5. ``entity`` (refutes): otherwise a person, place, organisation or nationality the claim
   names and the evidence names too is replaced by another of the same kind from the training
   claims, one the evidence does not name. The claim's subject is never replaced ("Y was born
   in 1950" is not refuted by evidence about X, only not supported), nor are names with digits
   or of more than four words.
6. ``negation`` (refutes): the claim's main verb is negated ("was" -> "was not", "won" ->
   "did not win"); claims that already hold a negation are left alone.
7. ``drop-clause`` (nei): the clauses of the evidence that carry the claim's deciding details
   (its numbers, years and names that the evidence states) are removed; kept when at least
   ``MIN_REST_WORDS`` words remain, none of those details, and under half of the claim's
   content words.
8. ``reported`` (nei): the evidence becomes an unverified assertion of someone, quoted ('A
   viral social media post claimed: "..."') or reported ("Some residents believe that ..."),
   which does not establish the claim.
9. ``antonym`` (refutes): a verb, adjective or adverb of the claim whose lemma the evidence
   states too is replaced by its opposite from ``ANTONYMS``, a hand-made list of pairs that
   decide news claims ("rose" -> "fell", "approved" -> "rejected", "higher" -> "lower",
   "legal" -> "illegal"), inflected like the word it replaces (lemminflect); a word in a
   negated clause is left alone.

Choices (which number, which replacement) are deterministic functions of the pair's text, so
the same data always give the same pairs. A generated pair keeps its source pair's group (it
stays on its side of the split) and is named ``contrast:<rule>`` as its source. At most
``max_per_rule`` pairs per rule are kept (chosen by a hash of their text). spaCy (``nlp``) finds
names and the main verb; it is loaded once.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from factseek.text import tokenize

RULES: tuple[str, ...] = (
    "number",
    "date",
    "duration",
    "attribution",
    "entity",
    "negation",
    "drop-clause",
    "reported",
    "antonym",
)
MIN_REST_WORDS = 6
MAX_PER_RULE = 1000
ENTITY_KINDS = ("PERSON", "GPE", "LOC", "ORG", "NORP")
SPEECH_VERBS = frozenset(
    {"say", "tell", "claim", "state", "write", "announce", "argue", "add", "tweet", "insist"}
)
NEGATIONS = frozenset({"not", "n't", "never", "no", "none", "nobody", "nothing", "neither", "nor"})
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
UNITS = ("second", "minute", "hour", "day", "week", "month", "year", "decade")
REPORTERS = (
    "A viral social media post claimed",
    "An anonymous blogger alleged",
    "A reader wrote in a letter",
    "A campaign flyer claimed",
    "A forwarded message alleged",
)
#: Reported-speech frames of rule 8 (the evidence follows as a that-clause).
REPORTED_FRAMES = (
    "Some residents believe that",
    "A rumour among parents says that",
    "Critics of the plan have alleged that",
    "One commenter on a forum insisted that",
    "A chain email circulating this week states that",
)
#: Rule 9: pairs of opposites (lemmas; either side replaces the other).
ANTONYMS: tuple[tuple[str, str], ...] = (
    # verbs
    ("rise", "fall"), ("increase", "decrease"), ("grow", "shrink"), ("gain", "lose"),
    ("win", "lose"), ("open", "close"), ("reopen", "close"), ("approve", "reject"),
    ("accept", "reject"), ("allow", "ban"), ("permit", "forbid"), ("support", "oppose"),
    ("confirm", "deny"), ("include", "exclude"), ("hire", "fire"), ("raise", "lower"),
    ("expand", "reduce"), ("begin", "end"), ("start", "stop"), ("buy", "sell"),
    ("uphold", "overturn"), ("acquit", "convict"), ("succeed", "fail"),
    ("strengthen", "weaken"), ("improve", "worsen"), ("add", "remove"), ("join", "leave"),
    ("lift", "impose"), ("survive", "die"), ("enter", "exit"), ("import", "export"),
    # adjectives and adverbs
    ("high", "low"), ("large", "small"), ("big", "small"), ("more", "less"), ("many", "few"),
    ("legal", "illegal"), ("true", "false"), ("alive", "dead"), ("safe", "dangerous"),
    ("public", "private"), ("positive", "negative"), ("full", "empty"), ("rich", "poor"),
    ("strong", "weak"), ("early", "late"), ("male", "female"), ("above", "below"),
    ("before", "after"), ("up", "down"), ("domestic", "foreign"), ("permanent", "temporary"),
    ("voluntary", "mandatory"), ("ahead", "behind"), ("cheap", "expensive"),
)  # fmt: skip

_NUMBER = re.compile(r"(?<![\w.,\-/])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w\-/]|,\d)")
_YEAR = re.compile(r"(?<![\w.,\-])(1[89]\d\d|20\d\d)(?![\w\-])")
_MONTH = re.compile(r"\b(" + "|".join(MONTHS) + r")\b")
_DURATION = re.compile(
    r"\b(\d+(?:\.\d+)?|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"a few|several)\s+(" + "|".join(UNITS) + r")(s?)\b",
    re.IGNORECASE,
)
_CLAUSE = re.compile(r"(?<=[.!?;])\s+|,\s+|\s+[–—-]\s+")


def _h(*parts: str) -> int:
    return int.from_bytes(hashlib.sha1("\x1f".join(parts).encode()).digest()[:8], "big")


def _pick(options: Sequence[Any], *key: str) -> Any:
    return options[_h(*key) % len(options)]


def _has_token(text: str, token: str) -> bool:
    return re.search(r"(?<![\w.,])" + re.escape(token) + r"(?![\w]|,\d)", text) is not None


# ----------------------------------------------------------------------------- rules 1-3


def _format_like(value: float, original: str, decimals: str) -> str:
    if decimals:
        return f"{value:.{len(decimals) - 1}f}"
    n = round(value)
    return f"{n:,}" if "," in original else str(n)


def change_number(claim: str, evidence: str) -> str | None:
    """Rule 1: the claim with one number the evidence states changed (None: no such number)."""
    for m in _NUMBER.finditer(claim):
        whole, decimals = m.group(1), m.group(2) or ""
        token = whole + decimals
        if _YEAR.fullmatch(token) or not _has_token(evidence, token):
            continue
        value = float(whole.replace(",", "") + decimals)
        if value == int(value) and value <= 10:
            options = [value + k for k in (2, 3, 4)]
        else:
            options = [value * f for f in (0.5, 1.5, 2.0, 3.0)]
        start = _h(claim, token) % len(options)
        for k in range(len(options)):
            new = _format_like(options[(start + k) % len(options)], whole, decimals)
            if new != token and not _has_token(evidence, new) and new not in ("0", "0.0"):
                return claim[: m.start()] + new + claim[m.end() :]
    return None


def change_date(claim: str, evidence: str) -> str | None:
    """Rule 2: the claim with one year or month the evidence states moved."""
    for m in _YEAR.finditer(claim):
        year = m.group(1)
        if not _has_token(evidence, year):
            continue
        shifts = [1, -1, 2, -2, 3, 5, -5, 10]
        start = _h(claim, year) % len(shifts)
        for k in range(len(shifts)):
            new = str(int(year) + shifts[(start + k) % len(shifts)])
            if not _has_token(evidence, new):
                return claim[: m.start()] + new + claim[m.end() :]
    for m in _MONTH.finditer(claim):
        month = m.group(1)
        if month not in evidence:
            continue
        i = MONTHS.index(month)
        start = _h(claim, month) % 6
        for k in range(6):
            new = MONTHS[(i + 1 + (start + k) % 6) % 12]
            if new not in evidence:
                return claim[: m.start()] + new + claim[m.end() :]
    return None


def change_duration(claim: str, evidence: str) -> str | None:
    """Rule 3: the claim with one duration's unit changed to one the evidence does not use."""
    low = evidence.lower()
    for m in _DURATION.finditer(claim):
        unit = m.group(2).lower()
        if unit not in low:
            continue
        others = [u for u in UNITS if u != unit and u not in low]
        if not others:
            continue
        new = _pick(others, claim, unit)
        if m.group(2)[0].isupper():
            new = new.capitalize()
        return claim[: m.start(2)] + new + m.group(3) + claim[m.end() :]
    return None


# ----------------------------------------------------------------------------- rules 4-6


_NAME = re.compile(r"^[A-Z][^\W\d_]*(?:[ .'’\-][^\W\d_]+){0,3}$")


def _entities(doc: Any) -> list[tuple[str, str, int, int, bool]]:
    """(text, kind, start, end, spoken): the doc's names, ``spoken`` when the name is a speaker.
    Names that are the claim's subject are left out: "Y was a man" for evidence about X is not
    refuted by it, only not supported."""
    out = []
    for ent in doc.ents:
        if ent.label_ not in ENTITY_KINDS or not _NAME.match(ent.text):
            continue
        if ent.root.dep_ in ("nsubj", "nsubjpass") and not _speaks(doc, ent):
            continue
        out.append((ent.text, ent.label_, ent.start_char, ent.end_char, _speaks(doc, ent)))
    return out


def _speaks(doc: Any, ent: Any) -> bool:
    """A person followed by a speech verb ("X said") or after "according to"."""
    window = doc[ent.end : min(len(doc), ent.end + 3)]
    before = doc[max(0, ent.start - 2) : ent.start].text.lower()
    return ent.label_ == "PERSON" and (
        any(t.lemma_ in SPEECH_VERBS for t in window) or before.endswith("according to")
    )


def change_entity(
    claim: str,
    evidence: str,
    ents: Sequence[tuple[str, str, int, int, bool]],
    pool: dict[str, list[str]],
    *,
    spoken: bool,
) -> str | None:
    """Rules 4 (``spoken``: a speaker) and 5: the claim with one name the evidence states replaced
    by another of its kind from ``pool`` that the evidence does not name."""
    for text, kind, start, end, is_speaker in ents:
        if is_speaker != spoken or text not in evidence:
            continue
        options = [x for x in pool.get(kind, ()) if x not in evidence and x not in text]
        options = [x for x in options if text not in x]
        if not options:
            continue
        return claim[:start] + _pick(options, claim, text) + claim[end:]
    return None


def negate(doc: Any) -> str | None:
    """Rule 6: the claim with its main verb negated (None: no main verb, or already negated)."""
    if any(t.lower_ in NEGATIONS for t in doc):
        return None
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None or root.pos_ not in ("VERB", "AUX"):
        return None
    aux = [c for c in root.children if c.dep_ in ("aux", "auxpass") and c.i < root.i]
    if aux:
        at = aux[0]
        return doc.text[: at.idx + len(at.text)] + " not" + doc.text[at.idx + len(at.text) :]
    if root.lemma_ == "be" or root.pos_ == "AUX":
        return (
            doc.text[: root.idx + len(root.text)] + " not" + doc.text[root.idx + len(root.text) :]
        )
    do = {"VBD": "did", "VBZ": "does", "VBP": "do"}.get(root.tag_)
    if do is None:
        return None
    return doc.text[: root.idx] + f"{do} not {root.lemma_}" + doc.text[root.idx + len(root.text) :]


# ----------------------------------------------------------------------------- rules 7-8


def _details(
    claim: str, evidence: str, ents: Sequence[tuple[str, str, int, int, bool]]
) -> list[str]:
    found = [m.group(0) for m in _NUMBER.finditer(claim) if _has_token(evidence, m.group(0))]
    found += [m.group(1) for m in _YEAR.finditer(claim) if _has_token(evidence, m.group(1))]
    found += [e[0] for e in ents if e[0] in evidence]
    return list(dict.fromkeys(found))


def drop_clause(
    claim: str, evidence: str, ents: Sequence[tuple[str, str, int, int, bool]]
) -> str | None:
    """Rule 7: the evidence without the clauses that carry the claim's deciding details."""
    details = _details(claim, evidence, ents)
    if not details:
        return None
    clauses = [c for c in _CLAUSE.split(evidence) if c.strip()]
    rest = [c for c in clauses if not any(d in c for d in details)]
    if len(rest) == len(clauses):
        return None
    text = ", ".join(c.strip().rstrip(",") for c in rest).strip()
    if len(text.split()) < MIN_REST_WORDS:
        return None
    text = text[0].upper() + text[1:]
    want = set(tokenize(claim))
    if want and len(want & set(tokenize(text))) / len(want) >= 0.5:
        return None
    return text if text.endswith((".", "!", "?")) else text + "."


def _one_sentence(text: str) -> bool:
    """Rule 8's evidence: one sentence of at most 40 words."""
    return bool(text) and len(text.split()) <= 40 and not re.search(r"[.!?]\s+[A-Z]", text)


def reported(claim: str, evidence: str) -> str | None:
    """Rule 8: the evidence as someone's unverified assertion (one sentence of 40 words at most)."""
    text = evidence.strip()
    if not _one_sentence(text):
        return None
    return f'{_pick(REPORTERS, claim, evidence)}: "{text}"'


def report_frame(claim: str, evidence: str) -> str | None:
    """Rule 8, reported speech: 'Some residents believe that the bridge ...' (one sentence)."""
    text = evidence.strip().rstrip(".!?")
    if not _one_sentence(text):
        return None
    first = text.split()[0]
    if first.isupper() or any(c.isupper() for c in first[1:]):  # "NASA", "McDonald's": keep
        lead = text
    else:
        lead = text[0].lower() + text[1:]
    return f"{_pick(REPORTED_FRAMES, evidence, claim)} {lead}."


def _opposites() -> dict[str, str]:
    out: dict[str, str] = {}
    for a, b in ANTONYMS:
        out.setdefault(a, b)
        out.setdefault(b, a)
    return out


_OPPOSITE = _opposites()


@functools.lru_cache(maxsize=256)
def _forms(lemma: str) -> frozenset[str]:
    """Every inflected form of ``lemma`` (asked once per lemma of ``ANTONYMS``)."""
    from lemminflect import getAllInflections

    forms = {lemma}
    for values in getAllInflections(lemma).values():
        forms.update(values)
    return frozenset(forms)


def opposite(doc: Any, evidence: str) -> str | None:
    """Rule 9: the claim with one word replaced by its opposite (None: no such word)."""
    from lemminflect import getInflection

    words = {w.lower() for w in re.findall(r"[A-Za-z]+", evidence)}
    for t in doc:
        lemma = t.lemma_.lower()
        new_lemma = _OPPOSITE.get(lemma)
        if new_lemma is None or t.pos_ not in ("VERB", "ADJ", "ADV", "ADP") or t.dep_ == "prt":
            continue
        if not (_forms(lemma) & words) or _forms(new_lemma) & words:
            continue
        if any(c.dep_ == "neg" for c in t.head.children) or any(
            c.dep_ == "neg" for c in t.children
        ):
            continue
        # lemminflect inflects verbs, adjectives and adverbs (it prints a warning for others)
        inflected = getInflection(new_lemma, t.tag_) if t.tag_[:1] in ("V", "J", "R") else ()
        new = (inflected or (new_lemma,))[0]
        if t.text[0].isupper():
            new = new[0].upper() + new[1:]
        return doc.text[: t.idx] + new + doc.text[t.idx + len(t.text) :]
    return None


# ----------------------------------------------------------------------------- all rules


def _edit(
    rule: str,
    c: str,
    e: str,
    doc: Any,
    found: Sequence[tuple[str, str, int, int, bool]],
    pool: dict[str, list[str]],
) -> tuple[str | None, str | None, str]:
    """(question, evidence, label) of ``rule`` applied to the pair (None where it does not apply)."""
    if rule == "number":
        return change_number(c, e), e, "refutes"
    if rule == "date":
        return change_date(c, e), e, "refutes"
    if rule == "duration":
        return change_duration(c, e), e, "refutes"
    if rule in ("attribution", "entity"):
        return change_entity(c, e, found, pool, spoken=rule == "attribution"), e, "refutes"
    if rule == "negation":
        return negate(doc), e, "refutes"
    if rule == "drop-clause":
        return c, drop_clause(c, e, found), "nei"
    if rule == "antonym":
        return opposite(doc, e), e, "refutes"
    # rule 8: half reported speech (by a hash of the pair), the rest and any misfit quoted
    framed = report_frame(c, e) if _h(c, e) % 2 else None
    return c, framed or reported(c, e), "nei"


def contrast_pairs(
    pairs: Iterable[Any], *, rules: Sequence[str] = RULES, max_per_rule: int = MAX_PER_RULE
) -> list[Any]:
    """Generated pairs from the supporting statement pairs among ``pairs`` (``StancePair``),
    rule by rule (see the module docstring)."""
    from factseek.errors import InputError
    from factseek.ml.nlp import load_spacy

    unknown = [r for r in rules if r not in RULES]
    if unknown:
        raise InputError(
            f"unknown contrast rule(s) {', '.join(unknown)}; choose from: {', '.join(RULES)}"
        )
    base = [p for p in pairs if p.label == "supports" and p.form == "statement"]
    if not base or not rules:
        return []
    nlp = load_spacy()
    docs = list(nlp.pipe([p.question for p in base], batch_size=256))
    ents = [_entities(d) for d in docs]
    pool: dict[str, list[str]] = {}
    for found in ents:
        for text, kind, *_ in found:
            if text not in pool.setdefault(kind, []):
                pool[kind].append(text)
    made: dict[str, list[Any]] = {r: [] for r in rules}
    for p, doc, found in zip(base, docs, ents, strict=True):
        for rule in rules:
            question, evidence, label = _edit(rule, p.question, p.evidence, doc, found, pool)
            if question and evidence and (question, evidence) != (p.question, p.evidence):
                made[rule].append(
                    replace(
                        p,
                        question=question,
                        evidence=evidence,
                        label=label,
                        source=f"contrast:{rule}",
                    )
                )
    out: list[Any] = []
    for rule in rules:
        chosen = made[rule]
        if len(chosen) > max_per_rule:
            keep = set(
                sorted(
                    range(len(chosen)),
                    key=lambda i: _h(rule, chosen[i].question, chosen[i].evidence),
                )[:max_per_rule]
            )
            chosen = [x for i, x in enumerate(chosen) if i in keep]
        out.extend(chosen)
    return out


__all__ = [
    "RULES",
    "change_date",
    "change_duration",
    "change_entity",
    "change_number",
    "contrast_pairs",
    "drop_clause",
    "negate",
    "opposite",
    "report_frame",
    "reported",
]
