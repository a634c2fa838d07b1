"""Token edit actions for query rewriting (Kazemi et al.): remove, swap, add, present.

An action is ``Action(kind, position)``: ``position`` indexes the tokens of ``tag(query)``.

- ``REMOVE``  drop the token.
- ``SWAP``    replace the token with its WordNet synonym (inflected like the token).
- ``ADD``     insert that synonym right after the token.
- ``PRESENT`` put a verb in the present simple (3rd person singular unless the subject is plural,
  or I/we/you/they).

Permissions by part of speech (spaCy's coarse POS): VERB all four; NOUN, ADJ, ADV all but
``PRESENT``; stop words (``factseek.text.STOPWORDS``, the list every factseek BM25 drops) and
everything else (proper nouns, numbers, punctuation, auxiliaries...) ``REMOVE`` only. ``REMOVE`` is
invalid when the query has one token; ``SWAP``/``ADD`` when WordNet has no synonym; ``PRESENT``
when the verb already has that form or has an auxiliary ("was born", "is melting").

Determinism. ``tag`` normalises whitespace (runs of whitespace become one space) and tags with
``factseek.ml.nlp.load_spacy()`` (cached per text, ``tag_many`` batches through ``nlp.pipe``). The
synonym of a token is fixed at tagging time: the first WordNet lemma name, over the token's
synsets in WordNet's sense-frequency order and the lemmas of each synset in order, that differs
(case-insensitively) from the token's text and lemma after inflection; it is inflected to the
token's Penn tag with lemminflect (first word of a multi-word verb, last word of a multi-word
noun), and capitalised when the token is. The present form is lemminflect's VBZ/VBP of the lemma.
So ``apply(tq, a)`` is a pure function of the text and the action.

Invalid actions never raise from ``valid_actions``/``action_mask``; ``apply``/``render`` on an
invalid action raise ``InvalidAction`` (an ``InputError`` and a ``ValueError``).

>>> tq = tag("Vaccines cause autism")                                   # doctest: +SKIP
>>> [str(a) for a in valid_actions(tq)][:4]                             # doctest: +SKIP
['remove@0', 'swap@0', 'add@0', 'remove@1']
>>> apply(tq, Action(kind=ActionKind.SWAP, position=1)).text            # doctest: +SKIP
'Vaccines do autism'

Flat action ids for models: ``action_index(a, max_positions) = KINDS.index(a.kind) *
max_positions + a.position``, matching ``action_mask(tq, max_positions).ravel()``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from factseek.errors import InputError
from factseek.text import STOPWORDS


class ActionKind(StrEnum):
    REMOVE = "remove"
    SWAP = "swap"
    ADD = "add"
    PRESENT = "present"


#: Fixed order: row order of ``action_mask`` and of flat action ids.
KINDS: tuple[ActionKind, ...] = tuple(ActionKind)

#: POS that may take each action besides REMOVE (stop words never do).
CONTENT_POS: frozenset[str] = frozenset({"VERB", "NOUN", "ADJ", "ADV"})
WN_POS: dict[str, str] = {"VERB": "v", "NOUN": "n", "ADJ": "a", "ADV": "r"}
PLURAL_SUBJECTS: frozenset[str] = frozenset({"i", "we", "you", "they"})
#: Bound on the per-process tagging cache.
TAG_CACHE_SIZE = 200_000


class InvalidAction(InputError, ValueError):
    """``apply`` was asked for an action the query does not allow."""


@dataclass(frozen=True, kw_only=True)
class Action:
    kind: ActionKind
    position: int

    def __str__(self) -> str:
        return f"{self.kind.value}@{self.position}"

    def to_json(self) -> list[Any]:
        """``["swap", 3]``: the trajectory file's form."""
        return [self.kind.value, self.position]

    @classmethod
    def from_json(cls, value: Sequence[Any]) -> Action:
        kind, position = value
        return cls(kind=ActionKind(kind), position=int(position))

    @classmethod
    def parse(cls, text: str) -> Action:
        """``Action.parse("swap@3")``, the inverse of ``str``."""
        kind, _, pos = text.partition("@")
        try:
            return cls(kind=ActionKind(kind), position=int(pos))
        except ValueError:
            raise InputError(f"not an action: {text!r} (want KIND@POSITION)") from None


@dataclass(frozen=True, kw_only=True)
class Token:
    text: str
    ws: str  # whitespace after the token ("" or " ")
    pos: str  # spaCy coarse POS (VERB, NOUN, ...)
    tag: str  # Penn tag (VBD, NNS, ...)
    lemma: str
    is_stop: bool
    synonym: str | None = None  # what SWAP/ADD insert; None when not allowed or none found
    present: str | None = None  # what PRESENT writes; None when not allowed or unchanged


@dataclass(frozen=True, kw_only=True)
class TaggedQuery:
    tokens: tuple[Token, ...]

    @property
    def text(self) -> str:
        return "".join(t.text + t.ws for t in self.tokens).strip()

    def __len__(self) -> int:
        return len(self.tokens)


def normalise(text: str) -> str:
    """The query text actions work on: whitespace runs collapsed to one space."""
    return " ".join(text.split())


# ----------------------------------------------------------------------------- tagging


def _inflect(lemma: str, tag: str) -> str:
    try:
        from lemminflect import getInflection
    except ImportError as e:
        from factseek.errors import MissingDependency

        raise MissingDependency("lemminflect", "dense", "inflecting synonyms") from e

    forms = getInflection(lemma, tag=tag, inflect_oov=True)
    return forms[0] if forms else lemma


def _inflect_phrase(phrase: str, pos: str, tag: str) -> str:
    words = phrase.split(" ")
    if tag in {"NN", "NNP", "JJ", "RB", "VB", "VBP"} and pos != "VERB":
        return phrase
    if pos == "VERB":
        if tag == "VB":
            return phrase
        words[0] = _inflect(words[0], tag)
    elif pos == "NOUN" and tag == "NNS":
        words[-1] = _inflect(words[-1], "NNS")
    elif tag in {"JJR", "JJS", "RBR", "RBS"} and len(words) == 1:
        words[0] = _inflect(words[0], tag)
    return " ".join(words)


def _match_case(word: str, like: str) -> str:
    if like[:1].isupper() and word[:1].islower():
        return word[:1].upper() + word[1:]
    return word


def _synonym(text: str, lemma: str, pos: str, tag: str) -> str | None:
    from factseek.rewrite.environment.wordnet import synonyms

    own = {text.lower(), lemma.lower()}
    for name in synonyms(lemma.lower(), WN_POS[pos]):
        if name.lower() in own:
            continue
        form = _inflect_phrase(name, pos, tag)
        if form.lower() in own:
            continue
        return _match_case(form, text)
    return None


def _present(token: Any) -> str | None:
    """Present simple of a spaCy verb token; None when unchanged or it has an auxiliary."""
    if any(c.dep_ in ("aux", "auxpass") for c in token.children):
        return None  # "was born" -> "was bears" helps no one; auxiliaries are stop words
    subject = next((c for c in token.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if subject is None and token.dep_ in ("conj", "xcomp") and token.head is not token:
        subject = next((c for c in token.head.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    plural = subject is not None and (
        subject.tag_ in ("NNS", "NNPS")
        or subject.lower_ in PLURAL_SUBJECTS
        or any(c.dep_ == "conj" for c in subject.children)
    )
    form = _match_case(_inflect(token.lemma_.lower(), "VBP" if plural else "VBZ"), token.text)
    return None if form.lower() == token.text.lower() else form


def _token(tok: Any) -> Token:
    lower = tok.text.lower()
    is_stop = lower in STOPWORDS
    editable = tok.pos_ in CONTENT_POS and not is_stop and any(c.isalpha() for c in tok.text)
    return Token(
        text=tok.text,
        ws=tok.whitespace_,
        pos=tok.pos_,
        tag=tok.tag_,
        lemma=tok.lemma_,
        is_stop=is_stop,
        synonym=_synonym(tok.text, tok.lemma_ or lower, tok.pos_, tok.tag_) if editable else None,
        present=_present(tok) if editable and tok.pos_ == "VERB" else None,
    )


_CACHE: OrderedDict[str, TaggedQuery] = OrderedDict()


def tag_many(texts: Iterable[str], batch_size: int = 256) -> list[TaggedQuery]:
    """Tag queries (cached per normalised text; unseen ones go through ``nlp.pipe`` in batches)."""
    norm = [normalise(t) for t in texts]
    todo = list(dict.fromkeys(t for t in norm if t not in _CACHE))
    if todo:
        from factseek.ml.nlp import load_spacy

        nlp = load_spacy(ner=False)  # tags and the parse only
        disable = [p for p in ("ner",) if p in nlp.pipe_names]
        for text, doc in zip(
            todo, nlp.pipe(todo, batch_size=batch_size, disable=disable), strict=True
        ):
            _CACHE[text] = TaggedQuery(tokens=tuple(_token(t) for t in doc if not t.is_space))
        while len(_CACHE) > TAG_CACHE_SIZE:
            _CACHE.popitem(last=False)
    out = []
    for t in norm:
        tq = _CACHE[t]
        _CACHE.move_to_end(t)
        out.append(tq)
    return out


def tag(text: str) -> TaggedQuery:
    """The tagged form of one query; positions of actions index its ``tokens``."""
    return tag_many([text])[0]


# ----------------------------------------------------------------------------- actions


def _allowed(tq: TaggedQuery, tok: Token, kind: ActionKind) -> bool:
    if kind is ActionKind.REMOVE:
        return len(tq.tokens) > 1
    if kind in (ActionKind.SWAP, ActionKind.ADD):
        return tok.synonym is not None
    return tok.present is not None


def valid_actions(tq: TaggedQuery) -> list[Action]:
    """Every allowed action, by position then in ``KINDS`` order."""
    return [
        Action(kind=kind, position=i)
        for i, tok in enumerate(tq.tokens)
        for kind in KINDS
        if _allowed(tq, tok, kind)
    ]


def is_valid(tq: TaggedQuery, action: Action) -> bool:
    return 0 <= action.position < len(tq.tokens) and _allowed(
        tq, tq.tokens[action.position], action.kind
    )


def action_mask(tq: TaggedQuery, max_positions: int) -> np.ndarray:
    """bool (len(KINDS), max_positions): True where allowed; positions past the cap are dropped."""
    mask = np.zeros((len(KINDS), max_positions), dtype=bool)
    for a in valid_actions(tq):
        if a.position < max_positions:
            mask[KINDS.index(a.kind), a.position] = True
    return mask


def action_index(action: Action, max_positions: int) -> int:
    return KINDS.index(action.kind) * max_positions + action.position


def action_from_index(index: int, max_positions: int) -> Action:
    row, position = divmod(int(index), max_positions)
    return Action(kind=KINDS[row], position=position)


def render(tq: TaggedQuery, action: Action) -> str:
    """The text ``action`` makes of ``tq`` (no re-tagging: the cheap path for scoring)."""
    if not is_valid(tq, action):
        raise InvalidAction(f"action {action} is not allowed on {tq.text!r}")
    parts: list[str] = []
    for i, tok in enumerate(tq.tokens):
        if i != action.position:
            parts.append(tok.text + tok.ws)
        elif action.kind is ActionKind.SWAP:
            parts.append(f"{tok.synonym}{tok.ws}")
        elif action.kind is ActionKind.ADD:
            parts.append(f"{tok.text} {tok.synonym}{tok.ws}")
        elif action.kind is ActionKind.PRESENT:
            parts.append(f"{tok.present}{tok.ws}")
        else:  # REMOVE keeps the whitespace, so "autism, doctors" -> "autism doctors"
            parts.append(tok.ws)
    return normalise("".join(parts))


def apply(tq: TaggedQuery, action: Action) -> TaggedQuery:
    """The tagged query after ``action`` (re-tagged, so later positions index its tokens)."""
    return tag(render(tq, action))


def expand(tq: TaggedQuery) -> list[tuple[Action, str]]:
    """Every valid action with the text it makes, deduplicated by text (first action kept)."""
    seen: set[str] = {tq.text}
    out: list[tuple[Action, str]] = []
    for a in valid_actions(tq):
        text = render(tq, a)
        if text not in seen:
            seen.add(text)
            out.append((a, text))
    return out
