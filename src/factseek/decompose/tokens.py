"""Word lists and token helpers of the rule decomposer: quoted spans, clause heads, reported speech, trimming.

They read spaCy tokens (typed ``Any``: spaCy is imported only where a pipeline is loaded).
"""

from __future__ import annotations

import re
from typing import Any

# A quotation: "...", “...”, or '...' opened after a space or bracket and closed before a
# space, punctuation or the end (apostrophes inside words, as in "don't", do not close it).
QUOTED = re.compile(
    r"\"[^\"]+\"|“[^”]+”|(?:(?<=^)|(?<=[\s(\[]))'(?:[^']|'(?=\w))+?'(?=$|[\s.,;:!?)\]])"
)

#: Verbs of saying: "X <verb> (that) Y" gives an attribution question.
SAY_LEMMAS: frozenset[str] = frozenset(
    {"say", "claim", "state", "announce", "tell", "promise", "warn", "insist", "argue", "admit"}
    | {"report", "predict", "pledge", "vow", "suggest", "assert", "declare", "write", "tweet"}
    | {"post", "boast", "acknowledge", "confirm", "deny", "estimate"}
)
#: Verbs of opinion: "I think Y" asks nothing useful beyond Y itself.
OPINION_LEMMAS: frozenset[str] = frozenset(
    {"think", "believe", "guess", "feel", "suppose", "bet", "hope"}
)
#: Modals of reported forecasts ("said it would cost ...").
REPORTED_MODALS: frozenset[str] = frozenset({"would", "could", "might", "should"})
#: Adverbial-clause markers whose clause is a claim in its own right ("... because Y").
OWN_CLAIM_MARKS: frozenset[str] = frozenset({"because", "although", "though", "whereas"})
NAME_ENTS: frozenset[str] = frozenset(
    {"PERSON", "ORG", "GPE", "NORP", "LOC", "FAC", "EVENT", "WORK_OF_ART", "LAW", "PRODUCT"}
)
TIME_UNITS: frozenset[str] = frozenset(
    {"second", "minute", "hour", "day", "week", "month", "year", "decade", "century", "time"}
)
#: Frequent function words of other Latin-script languages that English does not use.
FOREIGN_FUNCTION_WORDS: frozenset[str] = frozenset(
    {"el", "la", "los", "las", "que", "del", "y", "por", "para", "con", "una", "es", "se"}
    | {"le", "les", "des", "du", "et", "est", "une", "dans", "pour", "qui", "pas", "au"}
    | {"der", "die", "das", "und", "ist", "nicht", "mit", "ein", "eine", "den", "von", "zu"}
    | {"il", "che", "di", "della", "non", "sono", "os", "não", "em", "uma", "com", "ao"}
)
NUMBER_ENTS: frozenset[str] = frozenset({"CARDINAL", "MONEY", "PERCENT", "QUANTITY"})
NON_NUMBER_ENTS: frozenset[str] = frozenset({"DATE", "TIME", "ORDINAL"})
#: Children the short "number" clause always keeps (with the branch that holds the number).
CORE_DEPS: frozenset[str] = frozenset(
    {"dobj", "dative", "attr", "acomp", "oprd", "xcomp", "prt", "neg", "aux", "auxpass"}
)
#: Children the short "number" clause drops (besides prepositional phrases with a date).
CIRCUMSTANCE_DEPS: frozenset[str] = frozenset(
    {"advcl", "advmod", "npadvmod", "relcl", "parataxis", "intj", "ccomp"}
)
SUBJECT_DEPS: frozenset[str] = frozenset({"nsubj", "nsubjpass", "expl", "csubj"})
DO_SUPPORT: dict[str, str] = {"VBD": "did", "VBN": "did", "VBZ": "does", "VBP": "do", "VB": "do"}
CONTRACTIONS: dict[str, str] = {
    "ca": "can",
    "wo": "will",
    "sha": "shall",
    "'m": "am",
    "'re": "are",
    "'ve": "have",
    "'ll": "will",
    "ve": "have",
}
#: Operator forms after "I" is replaced by a third-person speaker.
THIRD_PERSON: dict[str, str] = {"am": "is", "have": "has", "do": "does"}
FIRST_PERSON: dict[str, str] = {
    "i": "{s}",
    "me": "{s}",
    "myself": "{s}",
    "my": "{s}'s",
    "mine": "{s}'s",
}
THIRD_PRONOUNS: frozenset[str] = frozenset({"it", "they", "he", "she"})
KEEP_SYMBOLS: frozenset[str] = frozenset("$€£¥%,.-–'/&:;")


def quoted_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the quotations in ``text`` (quote marks included)."""
    return [m.span() for m in QUOTED.finditer(text)]


def inside(offset: int, spans: list[tuple[int, int]]) -> bool:
    return any(s < offset < e for s, e in spans)


def is_clause_head(t: Any) -> bool:
    if t.pos_ not in ("VERB", "AUX"):
        return False
    if t.dep_ in ("aux", "auxpass"):
        return False
    if t.dep_ == "conj":
        return t.head.pos_ in ("VERB", "AUX")
    return t.dep_ in ("ROOT", "ccomp", "advcl", "relcl", "parataxis")


def inside_relative(tok: Any, top: Any) -> bool:
    """True if ``tok`` sits in a relative clause below ``top``."""
    path = []
    while tok.i != top.i and tok.head.i != tok.i:
        path.append(tok.dep_)
        tok = tok.head
    return tok.i == top.i and any(dep in ("relcl", "acl") for dep in path)


def reported(head: Any) -> bool:
    """ "X said (that) Y" in this order, with an explicit X."""
    subj = next((c for c in head.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    ccomp = child_of(head, "ccomp")
    return subj is not None and ccomp is not None and subj.i < head.i < ccomp.i


def conj_root(tok: Any) -> Any:
    while tok.dep_ == "conj" and tok.head.i != tok.i:
        tok = tok.head
    return tok


def child_of(tok: Any, dep: str) -> Any:
    return next((c for c in tok.children if c.dep_ == dep), None)


def is_according_to(tok: Any) -> bool:
    return tok.lower_ == "according" and any(c.lower_ == "to" for c in tok.children)


def ancestors_to(t: Any, top: Any) -> list[Any]:
    out = []
    while t.i != top.i and t.head.i != t.i:
        out.append(t)
        t = t.head
    return out


def aux_text(tok: Any) -> str:
    low = tok.lower_
    if low == "'s":
        return "is" if tok.lemma_ == "be" else "has"
    if low == "'d":
        return "would" if tok.tag_ == "MD" else "had"
    return CONTRACTIONS.get(low, low)


def lowerable(tok: Any) -> bool:
    if tok.text == "I" or (tok.is_upper and len(tok.text) > 1) or tok.pos_ == "PROPN":
        return False
    if tok.ent_type_ not in NAME_ENTS or tok.pos_ == "DET":
        return True
    nxt = tok.doc[tok.i + 1] if tok.i + 1 < len(tok.doc) else None
    alone = tok.ent_iob_ == "B" and (nxt is None or nxt.ent_iob_ != "I")
    return tok.pos_ == "NOUN" and alone  # "Taxes" tagged ORG at the start of a sentence


def keep_token(tok: Any) -> bool:
    """Drops quotes, emoji and other symbols that only add noise to a question."""
    if tok.is_quote:
        return False
    return any(ch.isalnum() for ch in tok.text) or tok.text in KEEP_SYMBOLS


def trim(doc: Any, ids: list[int], *, marks: bool = True) -> list[int]:
    """Strips punctuation, conjunctions (and markers) from both ends of a token-id run."""
    edge = ("punct", "cc", "mark") if marks else ("punct", "cc")
    while ids and (doc[ids[0]].dep_ in edge or not keep_token(doc[ids[0]])):
        ids = ids[1:]
    while ids and (doc[ids[-1]].dep_ in ("punct", "cc") or not keep_token(doc[ids[-1]])):
        ids = ids[:-1]
    return ids
