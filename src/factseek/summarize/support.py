"""Is a summary sentence supported by the document it summarizes?

Generated text is checked, not trusted. A sentence is supported when

- **lexical**: at least ``lexical`` of its content words (``factseek.text.tokenize``, light
  suffix stripping, 5-letter prefixes) occur in the document,
- **numbers**: every number it states occurs in the document,
- **embedding** (when an encoder is given): its best cosine similarity to a 30-word window of
  the document (stride 15) is at least ``embedding``,
- **no verdict**: it does not pass judgement on the claim ("the claim is true", "Verdict:
  TRUE.", "True.", "This debunks the claim."), which the summarization instructions forbid and
  which a prompt injection would typically ask for, unless a passage states that verdict itself:
  the sentence occurs (case and punctuation aside) inside one document sentence, it keeps that
  sentence's attribution ("the agency *said* the claim was false"), and the document sentence is
  not an instruction ("ignore...", "say...", "output..."). Words of an injected page are in the
  document, so the lexical check alone would accept what the page told the model to write.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from factseek.ml.encode import Encoder
from factseek.text import stem, tokenize


@dataclass(frozen=True, kw_only=True)
class SupportConfig:
    lexical: float = 0.5  # share of content words found in the document
    embedding: float = 0.4  # best MiniLM cosine to a document window
    window: int = 30  # words per document window for the embedding check
    stride: int = 15


DEFAULT_SUPPORT = SupportConfig()


@dataclass(frozen=True, kw_only=True)
class SupportCheck:
    """The verdict on one sentence; ``reasons`` says why it is unsupported (empty when it is)."""

    supported: bool
    score: float  # min of the lexical and embedding scores, in [0, 1]
    lexical: float
    embedding: float | None = None
    reasons: tuple[str, ...] = ()


_SENTENCE_END = re.compile(r"(?<=[.!?])([\"'”’)]*)\s+(?=[\"'“‘(]?[A-Z0-9])")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_VERDICT_WORDS = (
    r"(?:true|untrue|false|accurate|inaccurate|correct|incorrect|misleading|wrong|right|"
    r"verified|unverified|debunked|fake|valid|invalid|a lie|lies|baseless|unfounded|"
    r"unsubstantiated|unproven|a hoax|hoax|misinformation|disinformation|fabricated|bogus|"
    r"pants on fire|half[- ]true|exaggerated)"
)
_REFERENT = r"(?:claim|statement|assertion|allegation|rumou?r)s?"
_JUDGING_VERBS = (
    r"(?:confirm|debunk|refute|disprove|prove|support|contradict|validate|verify|corroborate|"
    r"undermine|back(?:s|ed)? up|bear(?:s)? out|rebut|dispel|discredit)(?:s|es|ed|d)?"
)
_LABELS = r"(?:verdict|rating|rated|label|ruling|conclusion|fact[- ]?check|assessment|answer)"
_BARE = (
    r"(?:(?:mostly|partly|largely|half|completely|entirely|not)[- ])?"
    r"(?:true|false|correct|incorrect|accurate|inaccurate|misleading|pants on fire|fake|real|"
    r"yes|no|right|wrong)"
)
_VERDICT = re.compile(
    "|".join(
        (
            rf"\b{_REFERENT}\b[^.;]{{0,60}}?\b{_VERDICT_WORDS}\b",  # the claim is (mostly) false
            rf"\b{_VERDICT_WORDS}\b[^.;]{{0,30}}?\b{_REFERENT}\b",  # a false claim
            rf"\b{_JUDGING_VERBS}\b[^.;]{{0,30}}?\b{_REFERENT}\b",  # this debunks the claim
            rf"\b{_REFERENT}\b[^.;]{{0,40}}?\b(?:checks? out|holds? (?:up|water)|stands? up)\b",
            rf"^\W*{_LABELS}\s*[:=–—-]",  # Verdict: TRUE / Rating - false
            rf"^\W*{_BARE}\W*$",  # True. / Mostly false.
            rf"\b(?:this|that|it)\s+(?:is|was|seems|appears)\s+(?:(?:not|mostly|partly|largely|"
            rf"completely|entirely|clearly|simply)\s+)?{_VERDICT_WORDS}\s*(?:that\b|[.!]|$)",
        )
    ),
    re.IGNORECASE,
)
_ATTRIBUTION = re.compile(
    r"\b(?:said|says|say|according|told|stated|states|wrote|writes|reported|ruled|rated|found|"
    r"concluded|called|calls|described|denied|argued|added|noted|announced)\b",
    re.IGNORECASE,
)
_INSTRUCTION = re.compile(  # a sentence that tells its reader (or a model) what to write
    r"^\W*(?:please\s+)?(?:say|answer|respond|reply|output|print|write|summari[sz]e)\b"
    r"|\b(?:ignore|disregard)\b[^.;]{0,40}\b(?:instructions?|prompts?|above|previous|rules?)\b"
    r"|\b(?:system|assistant)\s*:",
    re.IGNORECASE,
)
_NON_WORD = re.compile(r"[\W_]+")


def split_sentences(text: str) -> list[str]:
    """Sentences of a short generated text (split after . ! ? before a capital or digit)."""
    parts = _SENTENCE_END.split(" ".join(text.split()))  # [s1, closers1, s2, closers2, ..., sn]
    joined = [
        parts[i] + (parts[i + 1] if i + 1 < len(parts) else "") for i in range(0, len(parts), 2)
    ]
    return [s.strip() for s in joined if s.strip()]


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "").rstrip(".") for n in _NUMBER.findall(text)}


def judges_claim(sentence: str) -> bool:
    """True when the sentence states a verdict on the claim ("the claim is false")."""
    return _VERDICT.search(sentence) is not None


def _norm(text: str) -> str:
    return " " + _NON_WORD.sub(" ", text.lower()).strip() + " "


def states_verdict(sentence: str, source: str) -> bool:
    """True when ``source`` itself states ``sentence``'s verdict: the sentence lies inside one
    document sentence (case and punctuation aside), keeps its attribution ("X said"), and that
    document sentence is not an instruction to the reader or a model."""
    if not _ATTRIBUTION.search(sentence):
        return False
    needle = _norm(sentence)
    for doc_sentence in split_sentences(source):
        if needle in _norm(doc_sentence) and not _INSTRUCTION.search(doc_sentence):
            return True
    return False


def lexical_support(sentence: str, source: str) -> float:
    """Share of the sentence's content words found (by stem) in ``source``; 1.0 if it has none."""
    terms = [stem(t) for t in tokenize(sentence)]
    if not terms:
        return 1.0
    vocab = {stem(t) for t in tokenize(source)}
    return sum(t in vocab for t in terms) / len(terms)


def windows(text: str, size: int, stride: int) -> list[str]:
    ws = text.split()
    if len(ws) <= size:
        return [" ".join(ws)] if ws else []
    return [" ".join(ws[i : i + size]) for i in range(0, len(ws) - stride, stride)]


def check_support(
    sentences: Sequence[str],
    source: str,
    *,
    encoder: Encoder | None = None,
    config: SupportConfig = DEFAULT_SUPPORT,
) -> list[SupportCheck]:
    """One ``SupportCheck`` per sentence against ``source`` (one encoder batch for all)."""
    if not sentences:
        return []
    emb: list[float | None] = [None] * len(sentences)
    wins = windows(source, config.window, config.stride)
    if encoder is not None and wins:
        vecs = encoder.encode([*sentences, *wins])
        sims = vecs[: len(sentences)] @ vecs[len(sentences) :].T  # (n_sentences, n_windows)
        emb = [float(np.clip(row.max(), 0.0, 1.0)) for row in sims]
    elif encoder is not None:
        emb = [0.0] * len(sentences)
    source_numbers = _numbers(source)
    out: list[SupportCheck] = []
    for sentence, e in zip(sentences, emb, strict=True):
        lex = lexical_support(sentence, source)
        reasons: list[str] = []
        if lex < config.lexical:
            reasons.append(f"only {lex:.0%} of its words are in the document")
        missing = sorted(_numbers(sentence) - source_numbers)
        if missing:
            reasons.append(f"number(s) not in the document: {', '.join(missing[:5])}")
        if e is not None and e < config.embedding:
            reasons.append(f"no document passage is similar to it (cosine {e:.2f})")
        if judges_claim(sentence) and not states_verdict(sentence, source):
            reasons.append("it judges the claim, which no passage states")
        score = lex if e is None else min(lex, e)
        out.append(
            SupportCheck(
                supported=not reasons,
                score=round(score, 4),
                lexical=round(lex, 4),
                embedding=None if e is None else round(e, 4),
                reasons=tuple(reasons),
            )
        )
    return out
