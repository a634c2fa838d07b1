"""Evidence cards that test a claim: per question, the sentences that take a stance on it.

Selection runs in two steps around a stance model, which this module never imports (the
pipeline calls it between the two):

``evidence_candidates(claim, questions, documents, cfg) -> [Candidate]``

1. **Units.** Each kept document (in the order given, the pipeline's search order; the first
   ``cfg.top_docs`` when set, and every page the summaries quote) is split into sentences
   (``extractive.sentence_spans``) within its first ``cfg.max_chars`` characters. A document of
   at most ``cfg.short_doc`` words is one unit, whole (a short answer, a post, a snippet).
   Sentences under ``cfg.min_words`` words are not units; nor are questions (a sentence ending
   in "?": "What happened to water bills?" asks, it states nothing to support or refute), nor
   exact repeats of an earlier unit's text (a quote of the repeat counts for that unit).
2. **Relevance** of a unit to a question is the share of the question's terms that the unit
   contains, each term weighted 1 to 2 by its IDF over all units of the call (1 + Lucene IDF /
   its value at df = 0): names count more than words every unit has. Terms (``match_terms``,
   ``cfg.terms="quantities"``) are ``factseek.text.tokenize``'s words, stemmed
   (``factseek.text.stem``, the support check's light stem: "bills" matches "bill", "rising"
   matches "rises"), and a number followed by a word is a **quantity slot** (``#`` and the
   word's stem): in a question, "40 percent" is the slot of percent, which any unit with a
   number of percent has ("18 percent" as well as "40 percent"). A number is a value to compare,
   not a word to repeat, so the sentence that gives the actual figure ranks with the ones that
   restate the claim's figure. A year ("since 2019") and a number glued to a word ("COVID-19")
   are not quantities: they match only themselves. ``"stems"`` drops the slots, ``"words"`` the
   stems too (the selection before either; benchmarks' peers).
3. **Candidates.** Each question (the claim itself included) keeps, in this order (a unit
   once), the pairs the stance model reads:

   a. its ``cfg.candidates`` most relevant units with relevance of at least
      ``cfg.min_relevance``, ordered by ``(-relevance, document order, start)``;
   b. up to ``cfg.typed`` more units that **state what the question asks for**
      (``answer_types``: a figure when the question has a number or asks "how many/much",
      "cost", "percent"...; a date when it has a year or month or asks "when", "since"...; a
      name when it asks "who") and share one of the question's rarer word terms (its
      *anchors*: those whose weight is at least the median of its word terms'), whatever their
      relevance: the sentence that gives the actual figure shares few words with a question
      that states another one;
   c. up to ``cfg.quoted`` more units that a **summary quotes** (``quoted`` spans of the kept
      documents; ``deciding.overlaps``: the quote covers half of the unit or the unit holds half
      of the quote, as a short brief's one unit holds its quoted sentence), when they share a
      term with the question; past that cap, every quoted unit *quoted for* the question (the
      question it is most relevant to, ties included: ``Candidate.quoted``); and the **best
      unit of each page the summaries quote** (its most relevant for the question, of relevance
      at least ``cfg.min_relevance``). So a sentence the report's summaries put forward, and
      each summarised page's best sentence, is read for its stance too (``cfg.quoted=0`` turns
      all three off);
   d. up to ``cfg.figures`` more units that **state the question's own figure** (``figures``:
      a number of the same unit within ``FIGURE_TOLERANCE``, 5%, of the question's: "about
      $61.8 million" for "$62 million") in a document that shares one of the question's
      anchors: the sentence that confirms or qualifies the figure may share no word with the
      question but the unit ("If you add every dollar of interest, it's about $61.8 million").
      One per page, the claimant's own words (rule 6) last, so that other pages' figures are
      read before the claimant's repetitions of it.

   Within b, c and d the order is ``(-relevance, document order, start)``.

``select_evidence(claim, candidates, stances, documents, cfg) -> [Evidence]`` (``select_cards``:
the same cards with the readings they were chosen by)

4. **Strength** of a candidate is ``1 - p(nei)``: how strongly it takes a side, either way.
   A candidate *decides* when its stance label is ``supports`` or ``refutes``.
5. **Cards.** Per question, deciding candidates are ranked by ``(-counts, superseded, -score,
   document order, start)``, where ``counts`` is a candidate from an independent page that is
   not a letter, opinion piece or blog (``summarize.genre``), ``superseded`` a plan ("will open
   September 14") of a page that a later-dated page's candidate of the question reports on
   without one ("opened on Monday, September 14": ``deciding.superseded``), with ``score =
   cfg.stance_weight * strength + (1 - cfg.stance_weight) * relevance``; the first ``cfg.cards``
   become cards, and so does every other deciding candidate that a summary quotes for the
   question (rule 3c), so the summaries never quote a deciding sentence that is not a card. A
   question none of whose candidates decides gets no such card: "no evidence found" is an
   explicit state, not four weak cards. Without a stance model (``stances=None``) the
   ``cfg.cards`` most relevant candidates are shown with no stance, and nothing is decided.
   **Figure cards** follow a question's cards: up to ``cfg.figure_cards`` candidates that do not
   decide (read ``nei``), or support only with a figure said of another thing (rule 8), and are
   not already cards, but give the question's own figure (same unit, within
   ``FIGURE_TOLERANCE``: ``gives_figure``), those that count fully first, then the most
   relevant. The sentence that settles a figure ("with interest, about $61.8 million" for "$62
   million") is often read as taking no side; a reviewer sees it, with its ``figures`` note,
   and ``judge.verdict`` never counts it (it cites it as a figure to compare when the question
   stays unanswered). Sentences giving another figure of the unit are not shown: on AVeriTeC
   train they were on a gold page less than a third as often as the cards that take a side
   (docs/verdicts.md).
6. **Independence.** A card is ``independent=False`` (with a ``note``) when it is the claimant's
   own statement: the claim has a speaker whose name looks like a person's (two or more
   capitalised words) and either the document is theirs (their surname is part of the site's
   host name, or the title or first 300 characters carry the byline "by <speaker>"), or the
   sentence names them with a verb of saying or a quotation mark ("Tallis said ...", "... ,"
   Tallis told the council"). A card is also ``independent=False`` when its page says it
   republishes another outlet ("Originally published by the Courier", "Reprinted from ...":
   ``syndication_source``), or when at least ``cfg.duplicate`` of its word triples (three
   words in a row, stop words kept) lie in a card from another site and that card's in it, or
   (a card of ``MIN_COPY_TERMS`` terms or more) in the first ``COPY_WORDS`` words of that card's
   page (so the copy of a short original, which is one
   whole-page card, is caught too): the copy published later (then: later in document order)
   is the syndicated one (``summarize.copies``). Triples, not words, because a page on the same
   story shares a short sentence's words without copying it. Such cards are shown
   but never count as independent confirmation (``judge.verdict`` ignores them for "yes").
7. **Genre.** Each card carries its page's genre (``summarize.genre``: ``letter``,
   ``opinion``, ``blog`` or ``""``); ``judge.verdict`` never lets such a card be a question's
   only support.
8. **A figure said of another thing.** A candidate read as supporting (or a figure card) that
   gives the question's own figure, but only for another thing than the one the question
   measures ("the fixed charge rose 40 percent" for "Have water bills risen 40 percent?",
   ``summarize.measures.elsewhere``, by the dependency parse), is ``figure_of_other`` with a
   ``figures`` note that names both things; it does not count for rule 5's ranking and
   ``judge.verdict`` never counts it as support.
9. **Ids** are ``E1``, ``E2``, ... in question order, then rank. Ties are broken by document
   order, then start offset, everywhere.
10. **Screened.** A reading a cascade's screen gave alone (``StanceResult.screened``) is never
    a card nor a figure card, and figures compared leave it as it is (``stance.cascade``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from factseek.constraints.hits import url_host_path
from factseek.errors import ConfigError
from factseek.summarize.asks import answer_types, states
from factseek.summarize.claimant import Claimant
from factseek.summarize.compare import FIGURES, reread
from factseek.summarize.copies import (  # noqa: F401 (names tests and benches import from here)
    COPY_WORDS,
    MIN_COPY_TERMS,
    mark_copies,
    syndication_source,
)
from factseek.summarize.copies import share as _share  # noqa: F401
from factseek.summarize.copies import triples as _triples  # noqa: F401
from factseek.summarize.deciding import overlaps, superseded
from factseek.summarize.extractive import sentence_spans
from factseek.summarize.figures import (
    QUANTITY,
    YEAR,
    figures,
    gives_figure,
    same_figure,
)
from factseek.summarize.genre import genre
from factseek.summarize.measures import CardFigures, card_figures
from factseek.text import STOPWORDS, WORD_RE, stem, tokenize
from factseek.types import Claim, Document, Evidence, Question, StanceResult

__all__ = [
    "DEFAULT_EVIDENCE",
    "Candidate",
    "EvidenceConfig",
    "Selection",
    "evidence_candidates",
    "match_terms",
    "select_cards",
    "select_evidence",
]


TERMS = ("quantities", "stems", "words")  # what relevance matches (rule 2, ``match_terms``)


@dataclass(frozen=True, kw_only=True)
class EvidenceConfig:
    """How many documents, candidates and cards; when a card counts as a copy."""

    top_docs: int | None = None  # documents searched for evidence (None: every kept document)
    candidates: int = 6  # most relevant units per question sent to the stance model
    typed: int = 2  # more units per question that state a figure, date or name it asks for
    figures: int = 2  # more units per question that state its own figure (rule 3d)
    figure_cards: int = 2  # cards per question shown for their figure, taking no side (rule 5)
    quoted: int = 4  # more units per question that the summaries quote (0: none, rule 3c)
    terms: str = "quantities"  # what relevance matches: "quantities", "stems" or "words"
    cards: int = 3  # cards shown per question
    min_relevance: float = 0.2
    min_words: int = 4
    short_doc: int = 60  # a document this short (in words) is one unit, whole
    max_chars: int = 50_000  # text read per document
    max_words: int = 80  # longer sentences are cut into pieces of at most this many words
    stance_weight: float = 0.7
    duplicate: float = 0.6  # share of a card's word triples in another site's card: a copy
    off_topic: bool = False  # a refuting reading of a unit not about the question takes no side
    compare: bool = True  # figures compared overrule the reader (summarize.compare)
    yielding: bool = True  # off-topic / other-time readings yield to on-topic ones (compare)
    hearsay: bool = True  # a supporting reading of hearsay takes no side (summarize.hearsay)

    def __post_init__(self) -> None:
        if self.top_docs is not None and self.top_docs < 1:
            raise ConfigError(f"top_docs must be >= 1, got {self.top_docs}")
        if min(self.candidates, self.cards, self.min_words, self.max_chars) < 1:
            raise ConfigError("candidates, cards, min_words and max_chars must be >= 1")
        if min(self.typed, self.quoted, self.figures, self.figure_cards) < 0:
            raise ConfigError("typed, quoted, figures and figure_cards must be >= 0")
        if self.terms not in TERMS:
            raise ConfigError(f"terms must be one of {', '.join(TERMS)}, got {self.terms!r}")
        if self.cards > self.candidates:
            raise ConfigError(f"cards ({self.cards}) cannot exceed candidates ({self.candidates})")
        for name in ("min_relevance", "stance_weight", "duplicate"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"{name} must be in [0, 1], got {getattr(self, name)}")
        if self.max_words < self.min_words or self.short_doc < 0:
            raise ConfigError("need max_words >= min_words and short_doc >= 0")


DEFAULT_EVIDENCE = EvidenceConfig()


@dataclass(frozen=True, kw_only=True)
class Candidate:
    """A unit of a document that may answer a question. ``doc`` indexes the documents given;
    ``start``/``end`` are character offsets into that document's text."""

    question: str
    question_index: int
    doc: int
    start: int
    end: int
    text: str
    relevance: float
    quoted: bool = False  # a summary quotes it for this question (rule 3c): a card if it decides


# ----------------------------------------------------------------------------- step 1: candidates


@dataclass(frozen=True)
class _Unit:
    doc: int
    start: int
    end: int
    text: str
    terms: frozenset[str]


def _quantities(text: str) -> list[tuple[list[str], str]]:
    """(number tokens, slot term) of every quantity in ``text`` (lower-cased)."""
    out = []
    for m in QUANTITY.finditer(text):
        number, word = m.group(1), m.group(2)
        if YEAR.fullmatch(number) or word in STOPWORDS:
            continue
        out.append((WORD_RE.findall(number), "#" + stem("percent" if word == "%" else word)))
    return out


def match_terms(text: str, terms: str = "quantities", *, question: bool = False) -> frozenset[str]:
    """The terms relevance matches on (rule 2). ``"words"``: ``tokenize``'s words; ``"stems"``:
    their stems; ``"quantities"``: stems, plus a quantity slot ``#word`` for every number followed
    by a word, a unit keeping its numbers too, a question's numbers replaced by their slots (a
    bare number stays: there is nothing to compare it by)."""
    if terms not in TERMS:
        raise ConfigError(f"terms must be one of {', '.join(TERMS)}, got {terms!r}")
    low = text.lower()
    if terms == "words":
        return frozenset(tokenize(low))
    out = {stem(w) for w in tokenize(low)}
    if terms == "quantities":
        quantities = _quantities(low)
        out.update(slot for _, slot in quantities)
        if question:
            out.difference_update(t for numbers, _ in quantities for t in numbers)
    return frozenset(out)


_CLOSERS = "\"'”’)]» "


def _asks(sentence: str) -> bool:
    """A sentence that is a question: it ends in "?" (before closing quotes or brackets)."""
    return sentence.rstrip(_CLOSERS).endswith(("?", "？"))


def _units(
    documents: Sequence[Document], read: Sequence[int], cfg: EvidenceConfig
) -> tuple[list[_Unit], list[tuple[int, int, int, int]]]:
    """The units of ``documents[d]`` for each ``d`` of ``read`` (rule 1), and the exact repeats
    left out as ``(document, start, end, the unit they repeat)``."""
    out: list[_Unit] = []
    repeats: list[tuple[int, int, int, int]] = []
    seen: dict[str, int] = {}
    for d in read:
        text = documents[d].text[: cfg.max_chars]
        if len(text.split()) <= cfg.short_doc:
            spans = [(0, len(text.rstrip()))] if text.strip() else []
            spans = [(len(text) - len(text.lstrip()), e) for _, e in spans]
        else:
            spans = [
                (s, e)
                for s, e in sentence_spans(text, cfg.max_words)
                if len(text[s:e].split()) >= cfg.min_words and not _asks(text[s:e])
            ]
        for s, e in spans:
            key = " ".join(text[s:e].split())
            if key in seen:
                repeats.append((d, s, e, seen[key]))
                continue
            seen[key] = len(out)
            out.append(_Unit(d, s, e, text[s:e], match_terms(text[s:e], cfg.terms)))
    return out, repeats


def _weights(units: Sequence[_Unit]) -> dict[str, float]:
    n = len(units)
    df = Counter(t for u in units for t in u.terms)
    top = math.log(1.0 + (n + 0.5) / 0.5)
    return {t: 1.0 + math.log(1.0 + (n - f + 0.5) / (f + 0.5)) / top for t, f in df.items()}


def evidence_candidates(
    claim: Claim,
    questions: Sequence[Question],
    documents: Sequence[Document],
    cfg: EvidenceConfig = DEFAULT_EVIDENCE,
    quoted: Sequence[tuple[int, int, int]] = (),
) -> list[Candidate]:
    """Per question, its most relevant units, the units that answer it with a figure, date or
    name, and the units the summaries quote (``quoted``: ``(document index, start, end)``);
    rules 1-3 of the module docstring."""
    docs = documents
    read = set(range(len(docs) if cfg.top_docs is None else min(cfg.top_docs, len(docs))))
    read.update(d for d, _, _ in quoted if 0 <= d < len(docs))  # a quoted page is always read
    units, repeats = _units(docs, sorted(read), cfg)
    if not units:
        return []
    weights = _weights(units)
    cited = _quoted_units(units, repeats, quoted)
    summarised = {units[k].doc for k in cited}
    doc_terms: dict[int, set[str]] = {}
    for u in units:
        doc_terms.setdefault(u.doc, set()).update(u.terms)
    stated: dict[int, list[tuple[float, str]]] = {}  # a unit's figures, parsed once
    claimant = Claimant(claim.speaker)
    asked = [match_terms(q.text, cfg.terms, question=True) for q in questions]
    totals = [math.fsum(weights.get(t, 2.0) for t in sorted(terms)) for terms in asked]
    aim = {  # a quoted unit's relevance to the question it is most relevant to
        k: max(
            (
                _relevance(terms, units[k].terms, weights, total)
                for terms, total in zip(asked, totals, strict=True)
                if terms
            ),
            default=0.0,
        )
        for k in cited
    }
    out: list[Candidate] = []
    for qi, q in enumerate(questions):
        qterms, total = asked[qi], totals[qi]
        if not qterms:
            continue
        anchors = _anchors(qterms, weights)
        kinds = answer_types(q.text)
        own = figures(q.text) if cfg.figures else []
        relevant, typed, quotes, same = [], [], [], []
        aimed: set[int] = set()
        best: dict[int, tuple[float, int]] = {}  # a summarised page's most relevant unit
        for k, u in enumerate(units):
            shared = qterms & u.terms
            if not shared:
                continue
            rel = _relevance(qterms, u.terms, weights, total)
            if rel >= cfg.min_relevance:
                relevant.append((-rel, k))
                if u.doc in summarised and (-rel, k) < best.get(u.doc, (1.0, 0)):
                    best[u.doc] = (-rel, k)
            if kinds and shared & anchors and states(u.text, kinds):
                typed.append((-rel, k))
            if k in cited:
                quotes.append((-rel, k))
                if (
                    rel >= aim[k] - 1e-9
                ):  # quoted for this question (rule 3c): read, whatever the cap
                    aimed.add(k)
            if own and anchors & doc_terms[u.doc]:
                if k not in stated:
                    stated[k] = figures(u.text)
                if same_figure(own, stated[k]):
                    same.append((bool(claimant.note(docs[u.doc], u.text)), -rel, k))
        chosen = sorted(relevant)[: cfg.candidates]
        figured, pages = [], set()  # one per page, the claimant's own words last
        for _, neg, k in sorted(same):
            if units[k].doc not in pages:
                pages.add(units[k].doc)
                figured.append((neg, k))
        pools = (
            (sorted(typed), cfg.typed),
            (sorted(quotes), cfg.quoted),
            ([x for x in sorted(quotes) if x[1] in aimed] if cfg.quoted else [], len(aimed)),
            (sorted(best.values()) if cfg.quoted else [], len(best)),
            (figured, cfg.figures),
        )
        for extra, cap in pools:
            taken = {k for _, k in chosen}
            chosen += [x for x in extra if x[1] not in taken][:cap]
        for neg, k in chosen:
            u = units[k]
            out.append(
                Candidate(
                    question=q.text,
                    question_index=qi,
                    doc=u.doc,
                    start=u.start,
                    end=u.end,
                    text=u.text,
                    relevance=round(-neg, 6),
                    quoted=k in aimed,
                )
            )
    return out


def _relevance(
    qterms: frozenset[str], terms: frozenset[str], weights: dict[str, float], total: float
) -> float:
    """Rule 2: the weighted share of the question's terms that a unit holds (an order-free sum)."""
    return math.fsum(weights[t] for t in sorted(qterms & terms)) / total


def _anchors(qterms: frozenset[str], weights: dict[str, float]) -> set[str]:
    """The question's word terms (not quantity slots) at least as rare as its median one."""
    words = sorted((weights.get(t, 2.0), t) for t in qterms if not t.startswith("#"))
    if not words:
        return set()
    median = words[(len(words) - 1) // 2][0]
    return {t for w, t in words if w >= median}


def _quoted_units(
    units: Sequence[_Unit],
    repeats: Sequence[tuple[int, int, int, int]],
    quoted: Sequence[tuple[int, int, int]],
) -> set[int]:
    """Indices of the units that a quoted span is (``deciding.overlaps``: it covers half of the
    unit, or the unit holds half of it), the unit an exact repeat repeats included."""
    by_doc: dict[int, list[tuple[int, int]]] = {}
    for d, s, e in quoted:
        if e > s:
            by_doc.setdefault(d, []).append((s, e))
    spans = [(u.doc, u.start, u.end, k) for k, u in enumerate(units)]
    return {
        k
        for d, start, end, k in [*spans, *repeats]
        if any(overlaps(q, (start, end)) for q in by_doc.get(d, ()))
    }


# ----------------------------------------------------------------------------- step 2: cards


def _strength(s: StanceResult | None) -> float:
    return 0.0 if s is None else 1.0 - float(s.probs.get("nei", 0.0))


def _decides(s: StanceResult | None) -> bool:
    return s is not None and s.decides


def _screened(s: StanceResult | None) -> bool:  # rule 10
    return s is not None and s.screened


@dataclass(frozen=True)
class Selection:
    """The cards, and every candidate's reading as the cards use it (after figures compared;
    ``None`` without a stance model), in the candidates' order."""

    cards: tuple[Evidence, ...]
    readings: tuple[StanceResult | None, ...]


def select_evidence(
    claim: Claim,
    candidates: Sequence[Candidate],
    stances: Sequence[StanceResult] | None,
    documents: Sequence[Document],
    cfg: EvidenceConfig = DEFAULT_EVIDENCE,
) -> list[Evidence]:
    """Evidence cards from candidates and their stances (rules 4-9 of the module docstring)."""
    return list(select_cards(claim, candidates, stances, documents, cfg).cards)


def select_cards(
    claim: Claim,
    candidates: Sequence[Candidate],
    stances: Sequence[StanceResult] | None,
    documents: Sequence[Document],
    cfg: EvidenceConfig = DEFAULT_EVIDENCE,
) -> Selection:
    """``select_evidence``'s cards with the readings they were chosen by."""
    if stances is not None and len(stances) != len(candidates):
        raise ValueError(f"{len(candidates)} candidates but {len(stances)} stances")
    # candidate index -> why its reading was changed; those a rule set aside (shown, no side)
    compared: dict[int, str] = {}
    aside: set[int] = set()
    claimant = Claimant(claim.speaker)
    genres = {c.doc: genre(documents[c.doc]) for c in candidates}
    own = {id(c): claimant.note(documents[c.doc], c.text) for c in candidates}  # its own words?
    if stances is not None:  # a screened reading (rule 10) is left as it is
        given = stances
        pairs = [(c.question, c.text) for c in candidates]
        # a reading yields only to one that counts fully: not a letter's, not the claimant's
        full = [not genres[c.doc] and not own[id(c)] for c in candidates]
        stances, compared, aside = reread(
            pairs, stances, cfg.compare, cfg.off_topic, cfg.yielding, full, cfg.hearsay
        )
        stances = [g if g.screened else s for g, s in zip(given, stances, strict=True)]
        compared = {i: n for i, n in compared.items() if not given[i].screened}
    by_question: dict[int, list[tuple[Candidate, StanceResult | None]]] = {}
    for i, c in enumerate(candidates):
        by_question.setdefault(c.question_index, []).append(
            (c, stances[i] if stances is not None else None)
        )
    chosen: list[tuple[Candidate, StanceResult | None, str]] = []  # (candidate, stance, note)
    index = {id(c): i for i, c in enumerate(candidates)}
    for qi in sorted(by_question):
        pairs = by_question[qi]
        later = superseded(pairs[0][0].question, [(c.doc, c.text) for c, _ in pairs], documents)
        rows = []
        for (c, s), plan in zip(pairs, later, strict=True):
            yielded = index[id(c)] in aside
            if (stances is not None and not _decides(s) and not yielded) or _screened(s):
                continue
            note = own[id(c)]
            score = cfg.stance_weight * _strength(s) + (1 - cfg.stance_weight) * c.relevance
            figs = card_figures(c.question, c.text, s.label if s is not None else "")
            counts = not note and not genres[c.doc] and not figs.other and not yielded
            rows.append(((-counts, plan, -score, c.doc, c.start), c, s, note))
        if stances is None:
            rows.sort(key=lambda r: (-r[1].relevance, r[1].doc, r[1].start))
        else:
            rows.sort(key=lambda r: r[0])
        # the first ``cards``, then every other deciding one a summary quotes (rule 5)
        top = rows[: cfg.cards] + [r for r in rows[cfg.cards :] if stances and r[1].quoted]
        chosen.extend((c, s, note) for _, c, s, note in top)
        if stances is not None and cfg.figure_cards:
            shown = {id(c) for _, c, _, _ in top}
            rest = [(c, s) for c, s in by_question[qi] if id(c) not in shown]
            chosen.extend(_figure_cards(rest, own, genres, cfg))
    cards = [
        Evidence(
            id=f"E{n}",
            url=documents[c.doc].url,
            text=c.text,
            start_char=c.start,
            end_char=c.end,
            question=c.question,
            title=documents[c.doc].title,
            domain=documents[c.doc].domain or url_host_path(documents[c.doc].url)[0],
            published=documents[c.doc].published,
            stance=s,
            independent=not note,
            note=note,
            genre=genres[c.doc],
            figures=(f := _figures(c, s, index[id(c)], compared, aside)).note,
            figure_of_other=f.other,
        )
        for n, (c, s, note) in enumerate(chosen, start=1)
    ]
    doc_of = [c.doc for c, _, _ in chosen]
    return Selection(
        tuple(mark_copies(cards, doc_of, documents, cfg.duplicate)),
        tuple(stances) if stances is not None else (None,) * len(candidates),
    )


def _figures(
    c: Candidate, s: StanceResult | None, i: int, compared: dict[int, str], aside: set[int]
) -> CardFigures:
    """Candidate ``i``'s figures: the note of figures compared when they overruled the reader,
    or of the rule that set its reading ``aside`` (``summarize.compare``), else
    ``card_figures``'s (its note, or the comparison's)."""
    if i in aside or (s is not None and s.model == FIGURES):
        return CardFigures(compared.get(i, ""))
    f = card_figures(c.question, c.text, s.label if s is not None else "")
    return f if f.note or i not in compared else CardFigures(compared[i], f.other)


def _figure_cards(
    rows: Sequence[tuple[Candidate, StanceResult | None]],
    own: dict[int, str],
    genres: dict[int, str],
    cfg: EvidenceConfig,
) -> list[tuple[Candidate, StanceResult | None, str]]:
    """Rule 5, figure cards: one question's candidates (not already its cards) that take no
    side, or support it only with its figure said of another thing (rule 8), but give its own
    figure, those that count fully first, then the most relevant."""
    ranked = []
    for c, s in rows:
        if _screened(s) or not gives_figure(c.question, c.text):
            continue
        if _decides(s) and not card_figures(c.question, c.text, s.label).other:  # type: ignore[union-attr]
            continue
        note = own[id(c)]  # the claimant's own words, or ""
        ranked.append(((bool(note or genres[c.doc]), -c.relevance, c.doc, c.start), c, s, note))
    ranked.sort(key=lambda r: r[0])
    return [(c, s, note) for _, c, s, note in ranked[: cfg.figure_cards]]
