"""The records of retrieval data: claims with their relevant document ids, and a corpus.

``factseek.datasets.retrieval`` loads them from each format (and re-exports them);
``factseek.datasets.fever`` builds them from FEVER development data.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, kw_only=True)
class RetrievalClaim:
    """A claim with the ids of the documents it should retrieve."""

    id: str
    text: str
    relevant: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class CorpusDoc:
    id: str
    text: str


@dataclass(frozen=True, kw_only=True)
class RetrievalData:
    claims: tuple[RetrievalClaim, ...]
    corpus: tuple[CorpusDoc, ...]
    dropped: dict[str, int] = field(default_factory=dict)  # reason -> claims dropped

    def pairs(self) -> list[tuple[str, str]]:
        """``(doc_id, text)`` for index building."""
        return [(d.id, d.text) for d in self.corpus]
