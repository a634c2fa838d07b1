"""The edit actions a rewriter model chooses among, and the word vectors word-head models read.

``Editor`` is the protocol between the models (``train``, ``infer``) and the actions: which
edits a text allows (``masks``), what one does (``apply``), which word each position holds
(``words``). ``ActionsEditor`` is the paper's four edits (``factseek.rewrite.environment.actions``: spaCy
tags, WordNet); tests plug in word-level editors. ``WordVectors`` caches the encoder's vector of
each word once. Training and inference both import this module (neither imports the other).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from factseek.ml.encode import Encoder


@runtime_checkable
class Editor(Protocol):
    """The edit actions: which are allowed on a text, and what one does to it."""

    name: str
    kinds: tuple[str, ...]

    def masks(self, texts: Sequence[str], max_positions: int) -> np.ndarray:
        """(len(texts), len(kinds), max_positions) bool, True = allowed."""
        ...

    def apply(self, text: str, kind: int, position: int) -> str:
        """The text after edit ``(kinds[kind], position)``."""
        ...

    def words(self, texts: Sequence[str], max_positions: int) -> list[list[tuple[str, str]]]:
        """For each text, per position (at most ``max_positions``): the word there and the
        word an insertion/replacement would write ("" when none). Read by word-vector models."""
        ...


class ActionsEditor:
    """The paper's four edits via ``factseek.rewrite.environment.actions`` (which caches tagged queries)."""

    name = "actions"

    def __init__(self) -> None:
        from factseek.rewrite.environment import actions

        self._actions = actions
        self.kinds: tuple[str, ...] = tuple(str(k.value) for k in actions.KINDS)

    def masks(self, texts: Sequence[str], max_positions: int) -> np.ndarray:
        tagged = self._actions.tag_many(texts)  # one spaCy batch for the unseen texts
        out = np.zeros((len(texts), len(self.kinds), max_positions), dtype=bool)
        for i, tq in enumerate(tagged):
            out[i] = self._actions.action_mask(tq, max_positions)
        return out

    def apply(self, text: str, kind: int, position: int) -> str:
        act = self._actions.Action(kind=self._actions.KINDS[kind], position=position)
        return self._actions.render(self._actions.tag(text), act)  # tagged already by masks()

    def words(self, texts: Sequence[str], max_positions: int) -> list[list[tuple[str, str]]]:
        return [
            [(t.text, t.synonym or "") for t in tq.tokens[:max_positions]]
            for tq in self._actions.tag_many(texts)
        ]


class WordVectors:
    """Word -> encoder vector (L2-normalised, as the encoder gives), each word encoded once.

    ``features(words, P)`` turns ``Editor.words`` output into the (n, P, 2 * dim) float32 array
    a ``word_dim`` model reads: the vector of the word at each position, then that of the word
    SWAP/ADD would write; zeros for "" and past the end.
    """

    def __init__(self, encoder: Encoder, max_words: int = 200_000) -> None:
        self.encoder = encoder
        self.dim = encoder.dim
        self.max_words = max_words
        self._cache: dict[str, np.ndarray] = {}

    def vectors(self, words: Sequence[str]) -> np.ndarray:
        """(len(words), dim) float32; "" gives zeros."""
        todo = sorted({w for w in words if w and w not in self._cache})
        if todo:
            if len(self._cache) + len(todo) > self.max_words:  # bound memory: start afresh
                self._cache.clear()
                todo = sorted({w for w in words if w})
            for w, v in zip(todo, np.asarray(self.encoder.encode(todo), np.float32), strict=True):
                self._cache[w] = v
        out = np.zeros((len(words), self.dim), np.float32)
        for i, w in enumerate(words):
            if w:
                out[i] = self._cache[w]
        return out

    def features(
        self, words: Sequence[Sequence[tuple[str, str]]], max_positions: int
    ) -> np.ndarray:
        out = np.zeros((len(words), max_positions, 2, self.dim), np.float32)
        flat = [(i, p, w) for i, row in enumerate(words) for p, w in enumerate(row[:max_positions])]
        if flat:
            vec = self.vectors([w for _, _, pair in flat for w in pair]).reshape(len(flat), 2, -1)
            ii, pp = zip(*((i, p) for i, p, _ in flat), strict=True)
            out[list(ii), list(pp)] = vec
        return out.reshape(len(words), max_positions, 2 * self.dim)
