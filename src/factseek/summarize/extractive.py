"""Offline, claim-focused extractive summaries: 1-3 verbatim sentences per document.

For each document that has passages (in ``doc_rank`` order) the summarizer

1. splits the passages into sentences with a fast rule-based splitter (line breaks, and
   ``. ! ?`` before a capital or digit unless the word before is an abbreviation or an initial);
   over-long sentences are cut at word boundaries; the cut-off fragments at a passage's
   edges, very short lines (menus, bylines) and sentences that merely restate the claim are
   not candidates;
2. scores each sentence's relevance as the best, over the claim and its subquestions, of the
   share of the query's terms it contains (``factseek.text.tokenize`` terms, each weighted
   1 to 2 by its IDF over all candidate sentences of the call), blended with the best cosine to a query when an
   ``Encoder`` is given;
3. picks up to ``max_sentences`` sentences whose relevance reaches ``min_relevance`` by maximal
   marginal relevance (relevance minus ``redundancy`` times the similarity to sentences
   already picked; near-duplicates are never picked), and returns them in document order.

Every sentence is a verbatim slice of the document (``SummarySentence.start_char``/``end_char``
index ``Document.text``), so it is supported by construction. A document where no sentence
reaches the threshold gets ``relevant=False`` and the ``NOT_RELEVANT`` text.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from factseek.errors import ConfigError
from factseek.ml.encode import Encoder
from factseek.summarize import NOT_RELEVANT
from factseek.text import tokenize
from factseek.types import Claim, Passage, Question, Summary, SummarySentence

__all__ = ["DEFAULT_EXTRACTIVE", "ExtractiveConfig", "ExtractiveSummarizer", "sentence_spans"]


@dataclass(frozen=True, kw_only=True)
class ExtractiveConfig:
    """How many sentences, how relevant, how different; and bounds on the work per document."""

    max_sentences: int = 3
    min_relevance: float = 0.25  # share of some query's weighted terms (or the blended score)
    redundancy: float = 0.5  # MMR: relevance - redundancy * similarity to picked sentences
    max_similarity: float = 0.7  # never pick a sentence this similar to a picked one
    encoder_weight: float = 0.5  # with an encoder: (1 - w) * lexical + w * cosine
    min_words: int = 4  # shorter sentences are not candidates
    max_words: int = 60  # longer sentences are cut into pieces of at most this many words
    max_chars: int = 100_000  # passage text read per document
    max_candidates: int = 400  # sentences considered per document (the first ones)
    max_encoded: int = 64  # with an encoder: sentences per document sent to it, best lexical first
    restatement: float | None = 0.8  # drop sentences that only restate the claim (None: keep)

    def __post_init__(self) -> None:
        if self.max_sentences < 1:
            raise ConfigError(f"max_sentences must be >= 1, got {self.max_sentences}")
        for name in ("min_relevance", "redundancy", "max_similarity", "encoder_weight"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"{name} must be in [0, 1], got {getattr(self, name)}")
        if not 1 <= self.min_words <= self.max_words:
            raise ConfigError("need 1 <= min_words <= max_words")
        if min(self.max_chars, self.max_candidates, self.max_encoded) < 1:
            raise ConfigError("max_chars, max_candidates and max_encoded must be >= 1")
        if self.restatement is not None and not 0.0 < self.restatement <= 1.0:
            raise ConfigError(f"restatement must be in (0, 1] or None, got {self.restatement}")


DEFAULT_EXTRACTIVE = ExtractiveConfig()

# ----------------------------------------------------------------------------- sentence splitting

# Words that end with a period without ending a sentence (case-sensitive, period removed).
# Single letters and dotted initials ("J", "U.S", "e.g") are recognised by pattern.
_ABBREVIATIONS = """
    Mr Mrs Ms Mx Dr Prof Sen Sens Rep Reps Gov Gen Lt Col Maj Capt Cmdr Adm Sgt Cpl Pvt Rev Hon
    Pres Supt Atty Insp Jr Sr St Mt Ft Inc Corp Co Ltd Bros Assn Dept Univ Ave Blvd Rd Hwy
    No Nos Vol Vols Fig Figs pp Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec
    Ala Ariz Ark Calif Colo Conn Fla Ga Kan Kans Ky Md Mich Minn Neb Nev Okla Tenn Tex Va Vt Wis Wyo
    etc vs al approx est cf ca viz
"""
ABBREVIATIONS = frozenset(_ABBREVIATIONS.split())
_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s+(?:[\"'“‘(\[]*[A-Z0-9]|[-–—]\s))")
_INITIALS = re.compile(r"(?:[A-Za-z]\.)*[A-Za-z]")  # "J", "U.S", "e.g"
_LINE = re.compile(r"[^\n\r\v\f\x1c-\x1e\x85\u2028\u2029]+")  # str.splitlines' breaks
_WORD = re.compile(r"\S+")


def _is_abbreviation(text: str, end: int) -> bool:
    """Whether the period at ``text[end]`` closes an abbreviation or an initial."""
    start = end
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    word = text[start:end].lstrip("\"'“‘([")
    return word in ABBREVIATIONS or _INITIALS.fullmatch(word) is not None


def sentence_spans(text: str, max_words: int = 60) -> list[tuple[int, int]]:
    """``(start, end)`` offsets of the sentences of ``text``, stripped of surrounding space.

    Lines are always separate; within a line a sentence ends after ``. ! ?`` (and closing quotes
    or brackets) followed by space and a capital or digit, or by a spaced dash (a signature or a
    list item run into the text: "... $31 million. - Marjorie Tilden, Elm Street"), unless the
    word before a period is an abbreviation or an initial. Sentences over ``max_words`` words
    are cut at word boundaries.
    """
    spans: list[tuple[int, int]] = []
    for line in _LINE.finditer(text):
        start = line.start()
        cuts = [
            m.end()
            for m in _END.finditer(text, line.start(), line.end())
            if not (text[m.start()] == "." and _is_abbreviation(text, m.start()))
        ]
        for end in [*cuts, line.end()]:
            words = list(_WORD.finditer(text, start, end))
            for i in range(0, len(words), max_words):
                piece = words[i : i + max_words]
                spans.append((piece[0].start(), piece[-1].end()))
            start = end
    return spans


# ----------------------------------------------------------------------------- the summarizer


@dataclass(frozen=True, kw_only=True)
class _Sentence:
    text: str
    start: int | None  # document character offsets (None when the passage offsets disagree)
    end: int | None
    terms: frozenset[str]


def _group(passages: Sequence[Passage]) -> list[list[Passage]]:
    """Passages per document, documents in doc_rank order, passages in text order."""
    by_doc: dict[tuple[int, str], list[Passage]] = {}
    for p in passages:
        by_doc.setdefault((p.doc_rank, p.url), []).append(p)
    return [sorted(by_doc[k], key=lambda p: (p.start_word, p.start_char)) for k in sorted(by_doc)]


def _candidates(doc: list[Passage], cfg: ExtractiveConfig) -> list[_Sentence]:
    """A document's candidate sentences in document order (see the module docstring)."""
    out: list[_Sentence] = []
    budget = cfg.max_chars
    for p in doc:
        text = p.text[:budget]
        budget -= len(text)
        exact = len(p.text) == p.end_char - p.start_char  # then text[i] is document[start_char + i]
        spans = sentence_spans(text, cfg.max_words)
        for k, (s, e) in enumerate(spans):
            if k == 0 and p.start_word > 0 and not _opens(text[s]):
                continue  # the passage starts mid-sentence
            if k == len(spans) - 1 and not _closes(text[e - 1]):
                continue  # the passage (or the read budget) ends mid-sentence
            sentence = text[s:e]
            if len(sentence.split()) < cfg.min_words:
                continue
            out.append(
                _Sentence(
                    text=sentence,
                    start=p.start_char + s if exact else None,
                    end=p.start_char + e if exact else None,
                    terms=frozenset(tokenize(sentence)),
                )
            )
            if len(out) >= cfg.max_candidates:
                return out
        if budget <= 0:
            break
    return out


def _opens(ch: str) -> bool:
    return ch.isupper() or ch.isdigit() or ch in "\"'“‘([*•-–—"


def _closes(ch: str) -> bool:
    return ch in ".!?…\"'”’)]"


class ExtractiveSummarizer:
    """Claim-focused extractive summaries (see the module docstring). Offline and deterministic."""

    name = "extractive"

    def __init__(
        self, config: ExtractiveConfig = DEFAULT_EXTRACTIVE, encoder: Encoder | None = None
    ) -> None:
        self.config = config
        self.encoder = encoder

    def summarize(
        self, claim: Claim, questions: Sequence[Question], passages: Sequence[Passage]
    ) -> list[Summary]:
        """One Summary per document in ``passages``, in doc_rank order."""
        docs = _group(passages)
        claim_terms = frozenset(tokenize(claim.text))
        per_doc = [
            [s for s in _candidates(doc, self.config) if not self._restates(s.terms, claim_terms)]
            for doc in docs
        ]
        flat = [s for sentences in per_doc for s in sentences]
        queries = _queries(claim, questions)
        weights = _Weights(flat)
        relevance = [_coverage(s.terms, queries, weights) for s in flat]
        vectors: list[np.ndarray | None] = [None] * len(flat)
        if self.encoder is not None and flat and queries:
            relevance, vectors = self._blend(flat, per_doc, queries, relevance)
        out, i = [], 0
        for doc, sentences in zip(docs, per_doc, strict=True):
            span = range(i, i + len(sentences))
            i += len(sentences)
            picked = self._pick(
                [flat[j] for j in span], [relevance[j] for j in span], [vectors[j] for j in span]
            )
            out.append(self._summary(doc[0], [flat[span[k]] for k in picked], len(sentences)))
        return out

    def _restates(self, terms: frozenset[str], claim: frozenset[str]) -> bool:
        """Whether a sentence only restates the claim: most of its terms are the claim's, and
        it has most of the claim's (the paper's code drops such sentences at ROUGE-1 0.8)."""
        r = self.config.restatement
        if r is None or not terms or not claim:
            return False
        shared = len(terms & claim)
        return shared >= r * len(terms) and shared >= r * len(claim)

    def _blend(
        self,
        flat: list[_Sentence],
        per_doc: list[list[_Sentence]],
        queries: list[tuple[str, frozenset[str]]],
        lexical: list[float],
    ) -> tuple[list[float], list[np.ndarray | None]]:
        """Blend in the encoder: relevance and unit vectors for each document's best few."""
        cfg = self.config
        if self.encoder is None:
            return lexical, [None] * len(flat)
        chosen, i = [], 0
        for sentences in per_doc:
            ranked = sorted(range(i, i + len(sentences)), key=lambda j: (-lexical[j], j))
            chosen.extend(sorted(ranked[: cfg.max_encoded]))
            i += len(sentences)
        mat = self.encoder.encode([q for q, _ in queries] + [flat[j].text for j in chosen])
        qvec, svec = mat[: len(queries)], mat[len(queries) :]
        cosine = np.clip(svec @ qvec.T, 0.0, 1.0).max(axis=1)
        w = cfg.encoder_weight
        relevance = [(1 - w) * x for x in lexical]  # sentences not encoded get no cosine share
        vectors: list[np.ndarray | None] = [None] * len(flat)
        for j, v, c in zip(chosen, svec, cosine.tolist(), strict=True):
            relevance[j] += w * c
            vectors[j] = v
        return relevance, vectors

    def _pick(
        self, sentences: list[_Sentence], relevance: list[float], vectors: list[np.ndarray | None]
    ) -> list[int]:
        """Greedy MMR: best ``relevance - redundancy * max similarity``, while it clears the bar."""
        cfg = self.config
        picked: list[int] = []
        pool = [k for k, r in enumerate(relevance) if r >= cfg.min_relevance and r > 0]
        while pool and len(picked) < cfg.max_sentences:
            best: tuple[float, int] | None = None
            for k in pool:
                overlap = max(
                    (self._similarity(sentences, vectors, k, p) for p in picked), default=0.0
                )
                if overlap >= cfg.max_similarity:
                    continue
                gain = relevance[k] - cfg.redundancy * overlap
                if gain >= cfg.min_relevance and (best is None or (-gain, k) < best):
                    best = (-gain, k)
            if best is None:
                break
            picked.append(best[1])
            pool.remove(best[1])
        return sorted(picked)  # candidates are in document order

    @staticmethod
    def _similarity(
        sentences: list[_Sentence], vectors: list[np.ndarray | None], a: int, b: int
    ) -> float:
        va, vb = vectors[a], vectors[b]
        if va is not None and vb is not None:
            return float(np.clip(va @ vb, 0.0, 1.0))
        if sentences[a].text == sentences[b].text:
            return 1.0
        return _cosine(sentences[a].terms, sentences[b].terms)

    def _summary(self, first: Passage, picked: list[_Sentence], n_candidates: int) -> Summary:
        if not picked:
            return Summary(
                url=first.url,
                title=first.title,
                text=NOT_RELEVANT,
                relevant=False,
                method=self.name,
                note=f"no sentence reached relevance {self.config.min_relevance:g}",
            )
        return Summary(
            url=first.url,
            title=first.title,
            text=" ".join(s.text for s in picked),
            relevant=True,
            method=self.name,
            sentences=tuple(
                SummarySentence(
                    text=s.text, start_char=s.start, end_char=s.end, supported=True, support=1.0
                )
                for s in picked
            ),
            note=f"{len(picked)} of {n_candidates} sentences",
        )


# ----------------------------------------------------------------------------- lexical scores


def _queries(claim: Claim, questions: Sequence[Question]) -> list[tuple[str, frozenset[str]]]:
    """The claim and each subquestion with their terms; duplicates and term-less ones dropped."""
    out: list[tuple[str, frozenset[str]]] = []
    seen: set[frozenset[str]] = set()
    for text in [claim.text, *(q.text for q in questions)]:
        terms = frozenset(tokenize(text))
        if terms and terms not in seen:
            seen.add(terms)
            out.append((text, terms))
    return out


class _Weights(dict[str, float]):
    """Term weights in [1, 2]: 1 + Lucene IDF over the candidate sentences / its df = 0 value.

    A term found in every sentence weighs 1 and one found in none weighs 2, so distinctive
    terms (names, numbers) count up to twice as much as generic ones, and a collection where
    every sentence repeats the claim's words cannot push relevance to zero.
    """

    def __init__(self, sentences: Sequence[_Sentence]) -> None:
        n = len(sentences)
        df = Counter(t for s in sentences for t in s.terms)
        top = math.log(1.0 + (n + 0.5) / 0.5)
        super().__init__(
            (t, 1.0 + math.log(1.0 + (n - f + 0.5) / (f + 0.5)) / top) for t, f in df.items()
        )

    def __missing__(self, term: str) -> float:
        return 2.0


def _coverage(
    terms: frozenset[str], queries: list[tuple[str, frozenset[str]]], weights: _Weights
) -> float:
    """Best share, over the queries, of a query's weighted terms that the sentence contains.
    Sums are ``math.fsum`` (exact, so independent of a set's order, which changes with each
    process's string hashing: a plain sum made a sentence at the threshold flip between runs)."""
    best = 0.0
    for _, q in queries:
        total = math.fsum(weights[t] for t in q)
        best = max(best, math.fsum(weights[t] for t in q & terms) / total)
    return best


def _cosine(a: frozenset[str], b: frozenset[str]) -> float:
    """Cosine of binary term vectors: how much two sentences say with the same words."""
    return len(a & b) / math.sqrt(len(a) * len(b)) if a and b else 0.0
