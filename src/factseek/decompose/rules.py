"""Offline claim decomposition from a spaCy dependency parse: no LLM, deterministic.

``RuleDecomposer`` turns a claim into the claim itself plus yes/no subquestions:

* ``attribution``: "X said (that) Y" / "according to X, Y" -> "Did X say that Y?"
* ``predicate``: one question per clause (main, conjoined, complement, causal/concessive
  adverbial and non-restrictive relative clauses), made by auxiliary inversion ("Have water
  bills risen ...?", "Is unemployment low ...?") or do-support with the verb's lemma
  ("Did the governor raise taxes ...?"). Conjoined verbs inherit their subject; subject pronouns
  are resolved to the nearest compatible earlier subject; "I/me/my" become the claim's speaker.
* ``number``: for each quantity (CARDINAL/MONEY/PERCENT/QUANTITY entity or bare number), the
  clause that carries it without its circumstances (adverbial clauses, adverbs, dates) unless
  the number sits in them ("Have water bills risen 40 percent?").

Questions are bounded (``RulesConfig.max_words``), exact-deduplicated, claim first.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from factseek.decompose import claim_question, dedup
from factseek.decompose.tokens import (
    CIRCUMSTANCE_DEPS,
    CONTRACTIONS,
    CORE_DEPS,
    DO_SUPPORT,
    FIRST_PERSON,
    FOREIGN_FUNCTION_WORDS,
    NON_NUMBER_ENTS,
    NUMBER_ENTS,
    OPINION_LEMMAS,
    OWN_CLAIM_MARKS,
    REPORTED_MODALS,
    SAY_LEMMAS,
    SUBJECT_DEPS,
    THIRD_PERSON,
    THIRD_PRONOUNS,
    TIME_UNITS,
    ancestors_to,
    aux_text,
    child_of,
    conj_root,
    inside,
    inside_relative,
    is_according_to,
    is_clause_head,
    keep_token,
    lowerable,
    quoted_spans,
    reported,
    trim,
)
from factseek.text import tokenize
from factseek.types import MAX_CLAIM_CHARS, Claim, Question


@dataclass(frozen=True, kw_only=True)
class RulesConfig:
    """Limits of the rule decomposer."""

    max_questions: int = 12  # claim question included
    max_words: int = 40  # longer generated questions are dropped, never cut mid-phrase
    min_content_words: int = 2  # non-stop-word terms a question needs to be worth searching
    max_chars: int = MAX_CLAIM_CHARS  # only this much of the claim text is parsed
    batch_size: int = 64  # nlp.pipe batch size in decompose_many


DEFAULT_RULES = RulesConfig()

_SPACE_BEFORE = re.compile(r"\s+([,.;:%?!]|'s\b|n't\b)")
_SPACE_AFTER = re.compile(r"([$])\s+")
_TRAILING = re.compile(
    r"([\s,.;:!?\-–—\"'“”‘’]|\b(?:that|and|or|but|when|if|of|to|the|a|an|with|for)\b)+$",
    re.IGNORECASE,
)


class RuleDecomposer:
    """Claim -> [claim question, attribution, predicate and number questions], offline.

    ``nlp`` defaults to ``factseek.ml.nlp.load_spacy()``, loaded on first use and shared
    by every instance in the process.
    """

    name = "rules"

    def __init__(self, config: RulesConfig = DEFAULT_RULES, *, nlp: Any = None) -> None:
        self.config = config
        self._nlp = nlp

    @property
    def nlp(self) -> Any:
        if self._nlp is None:
            from factseek.ml.nlp import load_spacy

            self._nlp = load_spacy()
        return self._nlp

    def decompose(self, claim: Claim) -> list[Question]:
        return self.decompose_many([claim])[0]

    def decompose_many(self, claims: Iterable[Claim]) -> list[list[Question]]:
        """``decompose`` for many claims, parsed in batches with ``nlp.pipe``."""
        claims = list(claims)
        texts = [_clean_text(c.text)[: self.config.max_chars] for c in claims]
        docs = self.nlp.pipe(texts, batch_size=self.config.batch_size)
        return [self.from_doc(c, doc) for c, doc in zip(claims, docs, strict=True)]

    def from_doc(self, claim: Claim, doc: Any) -> list[Question]:
        """Questions for ``claim`` from its parsed text ``doc`` (a ``spacy.tokens.Doc``)."""
        first = claim_question(claim)
        if not first.text or not _looks_english(doc):
            return [first] if first.text else []
        found = _Clauses(doc, claim.speaker, self.config).questions()
        out = dedup([first, *found])
        return out[: self.config.max_questions]


def _clean_text(text: str) -> str:
    """Claim text for parsing: NFC, one space, no control characters, no emoji/pictographs."""
    text = unicodedata.normalize("NFC", text).replace("’", "'").replace("‘", "'")
    text = "".join(
        " " if not ch.isprintable() or unicodedata.category(ch) == "So" else ch for ch in text
    )
    return " ".join(text.split())


def _looks_english(doc: Any) -> bool:
    """False for text the English parser should not be trusted with: mostly non-Latin letters,
    or many Spanish/French/German/Italian/Portuguese function words."""
    alpha = [t for t in doc if t.is_alpha]
    if not alpha:
        return False
    letters = [ch for t in alpha for ch in t.text]
    latin = sum(1 for ch in letters if ch.isascii() or "LATIN" in unicodedata.name(ch, ""))
    if latin < 0.5 * len(letters):
        return False
    foreign = sum(t.lower_ in FOREIGN_FUNCTION_WORDS for t in alpha)
    return foreign < 2 or foreign < 0.15 * len(alpha)


# ----------------------------------------------------------------------------- one parsed claim


class _Clauses:
    """Finds the clauses of one parsed claim and renders them as yes/no questions."""

    def __init__(self, doc: Any, speaker: str | None, config: RulesConfig) -> None:
        self.doc = doc
        self.config = config
        self.speaker = " ".join(speaker.split()) if speaker else None
        self.replace = self._replacements()
        self.heads = [t for t in doc if is_clause_head(t)]
        self.head_ids = {t.i for t in self.heads}

    def questions(self) -> list[Question]:
        by_kind: dict[str, list[str]] = {"attribution": [], "predicate": [], "number": []}
        for head in self.heads:
            kind = "predicate"
            if head.lemma_.lower() in SAY_LEMMAS and child_of(head, "ccomp") is not None:
                kind = "attribution"
            elif head.lemma_.lower() in OPINION_LEMMAS and child_of(head, "ccomp") is not None:
                continue
            if not self._wanted(head):
                continue
            if kind == "attribution" and not reported(head):
                continue  # "Says ...": the claim's own speaker, nothing to search for
            q = self.render(head, self.clause_tokens(head), that=kind == "attribution")
            if q:
                by_kind[kind].append(q)
        by_kind["attribution"] += self.according_to()
        by_kind["number"] += self.numbers()
        return [
            Question(text=text, source="rules", kind=kind)
            for kind, texts in by_kind.items()
            for text in texts
            if self._useful(text)
        ]

    # -- which clauses, which tokens

    def _wanted(self, head: Any) -> bool:
        if head.dep_ == "conj":
            root = conj_root(head)
            if any(c.tag_ == "TO" for c in root.children):
                return False  # "to come in ... and take advantage": infinitives, not clauses
            return root.i in self.head_ids and self._wanted(root)
        if head.dep_ == "advcl":
            mark = child_of(head, "mark")
            return mark is not None and mark.lower_ in OWN_CLAIM_MARKS
        if head.dep_ == "relcl":
            return self._relcl_subject(head) is not None
        if head.dep_ == "ccomp" and head.head.lemma_.lower() in SAY_LEMMAS | OPINION_LEMMAS:
            # "X said the plant would cost $31 million": a reported forecast is only checkable
            # as the attribution; "X said 300 officers were hired" is a checkable fact too.
            return not any(c.dep_ == "aux" and c.lower_ in REPORTED_MODALS for c in head.children)
        return head.dep_ in ("ROOT", "conj", "ccomp", "parataxis")

    def clause_tokens(self, head: Any) -> set[int]:
        """Token ids of ``head``'s clause: its subtree minus separate clauses and loose punctuation."""
        keep = {t.i for t in head.subtree}
        for child in head.children:
            separate = (child.dep_ in ("conj", "parataxis") and child.i in self.head_ids) or (
                child.dep_ in ("cc", "punct", "mark", "intj", "discourse")
            )
            if separate or is_according_to(child):
                keep -= {t.i for t in child.subtree}
        for t in head.subtree:  # non-restrictive relative clauses are asked on their own
            left, right = t.left_edge.i - 1, t.right_edge.i + 1
            if t.dep_ == "relcl" and t.i != head.i and left >= 0 and self.doc[left].text == ",":
                keep -= {u.i for u in t.subtree} | {left}
                if right < len(self.doc) and self.doc[right].text == ",":
                    keep.discard(right)
        for tok in [self.doc[i] for i in keep if self.doc[i].dep_ == "cc"]:
            scope = tok.head.head.subtree if tok.head.dep_ == "conj" else tok.head.subtree
            if not any(t.dep_ == "conj" and t.i in keep for t in scope):
                keep.discard(tok.i)  # a conjunction whose conjunct went elsewhere
        return keep

    def short_tokens(self, head: Any, target: Any) -> set[int]:
        """The clause without circumstance (adverbial clauses, adverbs, dates) unless it holds
        ``target``."""
        keep = self.clause_tokens(head)
        for child in head.children:
            sub = {t.i for t in child.subtree}
            if target.i in sub or child.dep_ in SUBJECT_DEPS | CORE_DEPS:
                continue
            dated = any(t.ent_type_ in NON_NUMBER_ENTS for t in child.subtree)
            if child.dep_ in CIRCUMSTANCE_DEPS or (child.dep_ == "prep" and dated):
                keep -= sub
        return keep

    # -- rendering

    def render(self, head: Any, keep: set[int], *, that: bool = False) -> str | None:
        """A yes/no question from the clause ``keep`` headed by ``head`` (None if impossible)."""
        keep = set(keep)
        subj = self._subject(head)
        subj_ids = {t.i for t in subj.subtree} & keep if subj is not None else set()
        subj_text: str | None = None
        agree = subj  # the token the operator agrees with
        if subj is None:  # inherit from a conjoined head, or the speaker for a bare predicate
            agree = self._conj_subject(head)
            if agree is not None:
                if agree.lower_ in THIRD_PRONOUNS and agree.i not in self.replace:
                    return None
                subj_text = self._phrase(agree)
            elif self._bare_predicate(head):
                subj_text = self.speaker
            else:
                return None
        elif subj.lower_ in ("'s", "us"):
            return None  # "Let's ...": a proposal, not a claim
        elif subj.lower_ in THIRD_PRONOUNS and subj.i not in self.replace:
            if subj.lower_ in ("it", "they") and subj.dep_ == "expl":
                pass
            elif subj.lower_ == "it" and child_of(head, "ccomp") is not None:
                pass  # "it is likely that ...": extraposition, not a reference
            else:
                return None  # an unresolved pronoun makes no search query
        op, op_id, verbs = self._operator(head, keep)
        if op is None:  # not a finite clause ("the law giving ...")
            return None
        if op_id is not None:
            keep.discard(op_id)
        if agree is None or (agree.lower_ == "i" and agree.i in self.replace):
            op = THIRD_PERSON.get(op, op)  # "I have" -> "Has <speaker>"
        elif op == "do" and agree.tag_ in ("NN", "NNP"):
            op = "does"
        inserts: dict[int, str] = {}
        ccomp = child_of(head, "ccomp")
        if that and ccomp is not None and child_of(ccomp, "mark") is None:
            inserts[ccomp.left_edge.i] = "that"
        repl = dict(self.replace)
        if head.dep_ == "relcl" and subj is not None and subj.tag_ in ("WDT", "WP"):
            repl[subj.i] = self._phrase_plain(head.head)  # "which" -> "the new bridge"
        repl.update(verbs)
        for c in head.children:
            if c.dep_ == "neg" and c.lower_ in ("n't", "nt"):
                repl[c.i] = "not"
        ordered = sorted(keep)
        if subj_ids:
            start = min(subj_ids)
            pre = [i for i in ordered if i < start]
            body = [i for i in ordered if i >= start]
            items: list[Any] = [op, *body]
            lower_first = {start}
        else:
            pre = [i for i in ordered if i < head.i and self.doc[i].dep_ not in SUBJECT_DEPS]
            body = [i for i in ordered if i not in pre]
            items = [op, subj_text, *body]
            lower_first = set()
        pre = trim(self.doc, pre, marks=False)
        if pre:
            items += pre
            lower_first.add(pre[0])
        return self._join(items, repl, inserts, lower_first)

    def statement(self, keep: set[int]) -> str:
        """The clause as written (for the "Is it true that ..." fallback)."""
        ids = trim(self.doc, sorted(keep))
        text = self._join(ids, dict(self.replace), {}, {ids[0]} if ids else set(), question=False)
        return text or ""

    def _join(
        self,
        items: Sequence[Any],
        repl: dict[int, str],
        inserts: dict[int, str],
        lower_first: set[int],
        *,
        question: bool = True,
    ) -> str | None:
        parts: list[str] = []
        prev: int | None = None
        for item in items:
            if isinstance(item, str):
                parts.append(item + " ")
                prev = None
                continue
            tok = self.doc[item]
            if not keep_token(tok):
                continue
            if item in inserts:
                parts.append(inserts[item] + " ")
            text = repl.get(item, CONTRACTIONS.get(tok.lower_, tok.text))
            if item in lower_first and item not in repl and lowerable(tok):
                text = text[:1].lower() + text[1:]
            if prev is not None and parts and item != prev + 1 and not parts[-1].endswith(" "):
                parts[-1] += " "
            parts.append(text + (tok.whitespace_ or ""))
            prev = item
        text = " ".join("".join(parts).split())
        text = _SPACE_BEFORE.sub(r"\1", text)
        text = _SPACE_AFTER.sub(r"\1", text)
        text = re.sub(r"(,\s*)+,", ",", text)
        text = _TRAILING.sub("", text).strip(" ,;:")
        if not text:
            return None
        if question:
            text = text[:1].upper() + text[1:] + "?"
        if len(text.split()) > self.config.max_words:
            return None
        return text

    def _operator(self, head: Any, keep: set[int]) -> tuple[str | None, int | None, dict[int, str]]:
        """(fronted operator, token id it moves from, verb forms to replace by token id)."""
        auxes = [
            c
            for c in head.children
            if c.dep_ in ("aux", "auxpass") and c.i < head.i and c.tag_ != "TO" and c.i in keep
        ]
        if auxes and auxes[0].lemma_.lower() == "get" and auxes[0].tag_ in DO_SUPPORT:
            return (
                DO_SUPPORT[auxes[0].tag_],
                None,
                {auxes[0].i: "get"},
            )  # "got paid" -> "did get paid"
        if auxes:
            return aux_text(auxes[0]), auxes[0].i, {}
        inherited = self._inherited_aux(head)
        if inherited is not None:
            return inherited, None, {}
        if head.lemma_.lower() == "be" and head.tag_ in ("VBZ", "VBP", "VBD"):
            return aux_text(head), head.i, {}
        if head.tag_ in DO_SUPPORT and (head.tag_ != "VBN" or head.dep_ == "ROOT"):
            return DO_SUPPORT[head.tag_], None, {head.i: head.lemma_.lower()}
        return None, None, {}

    # -- subjects

    def _subject(self, head: Any) -> Any:
        return next((c for c in head.children if c.dep_ in SUBJECT_DEPS), None) or (
            self._relcl_subject(head) if head.dep_ == "relcl" else None
        )

    def _relcl_subject(self, head: Any) -> Any:
        rel = next((c for c in head.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        if rel is not None and rel.tag_ in ("WDT", "WP") and head.head.pos_ in ("NOUN", "PROPN"):
            return rel
        return None

    def _conj_subject(self, head: Any) -> Any:
        """The subject a conjoined verb shares with the verb it is conjoined to."""
        node = head
        while node.dep_ == "conj" and node.head.i != node.i:
            node = node.head
            subj = self._subject(node)
            if subj is not None:
                return subj
        return None

    def _bare_predicate(self, head: Any) -> bool:
        """ "Voted to raise taxes 12 times.": a sentence that starts with its verb, said by the
        claim's speaker."""
        if not self.speaker or head.dep_ != "ROOT" or head.tag_ not in ("VBD", "VBZ", "VBN"):
            return False
        return all(not keep_token(t) or t.is_punct for t in head.doc[head.sent.start : head.i])

    def _inherited_aux(self, head: Any) -> str | None:
        if (
            head.dep_ != "conj"
            or self._subject(head) is not None
            or head.tag_ not in ("VBN", "VBG")
        ):
            return None
        node = head.head
        aux = next(
            (c for c in node.children if c.dep_ in ("aux", "auxpass") and c.tag_ != "TO"), None
        )
        return aux_text(aux) if aux is not None else None

    def _phrase(self, tok: Any) -> str:
        """A subject or antecedent noun phrase, without relative clauses and appositions."""
        drop: set[int] = set()
        for t in tok.subtree:
            if t.dep_ in ("relcl", "acl", "appos", "punct") and t.i != tok.i:
                drop |= {u.i for u in t.subtree}
        ids = [t.i for t in tok.subtree if t.i not in drop]
        text = self._join(ids, dict(self.replace), {}, {ids[0]} if ids else set(), question=False)
        return text or tok.text

    def _replacements(self) -> dict[int, str]:
        """Token id -> text: first person to its owner (the claim's speaker, or the person a
        quotation is attributed to), third-person pronouns to antecedents."""
        out: dict[int, str] = {}
        quotes = quoted_spans(self.doc.text)
        for t in self.doc:
            low = t.lower_
            if low in FIRST_PERSON:
                owner = self._quote_owner(t, quotes) if inside(t.idx, quotes) else None
                who = owner or self.speaker
                if who:
                    out[t.i] = FIRST_PERSON[low].format(s=who)
            elif low in THIRD_PRONOUNS and t.dep_ in ("nsubj", "nsubjpass"):  # subjects only:
                # an object "it" usually refers back to an object, which this does not track
                ante = self._antecedent(t)
                if ante is not None:
                    out[t.i] = ante
        return out

    def _quote_owner(self, tok: Any, quotes: list[tuple[int, int]]) -> str | None:
        """Who says the quotation holding ``tok``: the subject of the nearest verb of saying
        outside the quotation ("X promised that '... my watch'"), unless that subject is the
        claim's own speaker ("I said '...'"), which returns None (the speaker owns it)."""
        node = tok
        while node.head.i != node.i:
            node = node.head
            if inside(node.idx, quotes) or node.lemma_.lower() not in SAY_LEMMAS:
                continue
            subj = next((c for c in node.children if c.dep_ in ("nsubj", "nsubjpass")), None)
            if subj is None or inside(subj.idx, quotes) or subj.lower_ in FIRST_PERSON:
                return None
            if subj.lower_ in ("we", "us", "you") or subj.pos_ == "PRON":
                return None
            return self._phrase_plain(subj)
        return None

    def _antecedent(self, pron: Any) -> str | None:
        """The nearest earlier non-pronoun subject that agrees with ``pron``, as text."""
        low = pron.lower_
        for t in reversed(pron.doc[: pron.i]):
            if t.dep_ not in ("nsubj", "nsubjpass") or t.pos_ == "PRON" or t.tag_ in ("WDT", "WP"):
                continue
            if inside_relative(pron, t.head):
                continue  # "the rate is the lowest it has been": same clause, not a new referent
            person = t.ent_type_ == "PERSON"
            plural = t.tag_ in ("NNS", "NNPS")
            ok = (
                (low == "it" and not person and not plural)
                or (low == "they" and plural)
                or (low in ("he", "she") and person)
            )
            if ok:
                # the phrase without first-person replacement of this very token
                return self._phrase_plain(t)
        return None

    def _phrase_plain(self, tok: Any) -> str:
        ids = [
            t.i
            for t in tok.subtree
            if not any(a.dep_ in ("relcl", "acl", "appos") for a in ancestors_to(t, tok))
            and t.dep_ != "punct"
        ]
        ids = [i for i in ids if keep_token(self.doc[i])]
        words = [self.doc[i].text for i in ids]
        if words and lowerable(self.doc[ids[0]]):
            words[0] = words[0][:1].lower() + words[0][1:]
        return _SPACE_BEFORE.sub(r"\1", " ".join(words))

    # -- the other rules

    def according_to(self) -> list[str]:
        """ "According to X, Y" -> "Did X say that Y?"."""
        out: list[str] = []
        for head in self.heads:
            acc = next((c for c in head.children if is_according_to(c)), None)
            if acc is None:
                continue
            to = next((c for c in acc.children if c.lower_ == "to"), None)
            pobj = child_of(to, "pobj") if to is not None else None
            if pobj is None:
                continue
            source = self._phrase_plain(pobj)
            content = self.statement(self.clause_tokens(head))
            if content:
                q = f"Did {source} say that {content}?"
                if len(q.split()) <= self.config.max_words:
                    out.append(q[:1].upper() + q[1:])
        return out

    def numbers(self) -> list[str]:
        """One short question per quantity, from the clause that holds it."""
        targets = [e.root for e in self.doc.ents if e.label_ in NUMBER_ENTS]
        in_ents = {t.i for e in self.doc.ents for t in e}
        targets += [
            t
            for t in self.doc
            if t.pos_ == "NUM"
            and t.i not in in_ents
            and t.head.ent_type_ not in NON_NUMBER_ENTS
            and t.head.lemma_.lower() not in TIME_UNITS
        ]
        out: list[str] = []
        for target in sorted(targets, key=lambda t: t.i):
            head = target
            while not (head.i in self.head_ids and self._wanted(head) and self._askable(head)):
                if head.head.i == head.i:
                    head = None
                    break
                head = head.head
            if head is None or (head.lemma_.lower() in SAY_LEMMAS and reported(head)):
                continue  # a number inside what someone said is asked by the attribution
            keep = self.short_tokens(head, target)
            if target.i not in keep:
                continue
            q = self.render(head, keep)
            if q:
                out.append(q)
        return out

    def _askable(self, head: Any) -> bool:
        return (
            self._subject(head) is not None
            or self._conj_subject(head) is not None
            or self._bare_predicate(head)
        )

    def _useful(self, text: str) -> bool:
        return len(tokenize(text)) >= self.config.min_content_words
