"""The in-memory BM25 index the rewriting environment scores against (``IncrementalBM25``).

Impact-ordered postings (per term, documents by ``tf / (tf + norm)`` descending, then doc id) for
the bounded scans, and a forward index (per document, its distinct terms ascending) for exact
scores of single documents; Lucene's BM25 parameters (``k1``, ``b``) and idf, as bm25s. A folder
of ``.npy`` arrays + ``config.json`` (``format_version``) on disk, memory-mapped on load.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from factseek.errors import DataError
from factseek.text import tokenize

INDEX_FORMAT = 1
K1 = 1.5
B = 0.75


@dataclass(frozen=True, kw_only=True, eq=False)
class BM25Index:
    """An in-memory BM25 index: impact-ordered postings plus a forward index (numpy arrays)."""

    doc_ids: tuple[str, ...]
    vocab: dict[str, int]
    idf: np.ndarray  # float64 (n_terms,)
    norm: np.ndarray  # float64 (n_docs,): k1 * (1 - b + b * dl / avgdl)
    post_ptr: np.ndarray  # int64 (n_terms + 1,)
    post_doc: np.ndarray  # int32: documents, each term's run by contribution descending
    post_tf: np.ndarray  # float32 term frequencies, parallel to post_doc
    post_imp: np.ndarray  # float32 tf / (tf + norm), parallel to post_doc (descending per term)
    fwd_ptr: np.ndarray  # int64 (n_docs + 1,)
    fwd_term: np.ndarray  # int32: each document's distinct terms, ascending
    fwd_tf: np.ndarray  # float32, parallel to fwd_term
    max_contribution: np.ndarray  # float64 (n_terms,): idf * max tf/(tf+norm) over postings
    k1: float = K1
    b: float = B
    fingerprint: str = ""

    @property
    def n_docs(self) -> int:
        return len(self.doc_ids)

    def df(self, term_id: int) -> int:
        return int(self.post_ptr[term_id + 1] - self.post_ptr[term_id])

    def term_ids(self, text: str) -> np.ndarray:
        """Query terms as ids (unknown terms dropped), with repetition, in text order."""
        get = self.vocab.get
        return np.array([i for i in (get(t) for t in tokenize(text)) if i is not None], np.int32)

    @classmethod
    def build(
        cls,
        docs: Iterable[tuple[str, str]],
        *,
        k1: float = K1,
        b: float = B,
        analyzer=tokenize,
    ) -> BM25Index:
        """Index ``(doc_id, text)`` pairs with ``analyzer`` (factseek's shared tokenizer)."""
        ids: list[str] = []
        vocab: dict[str, int] = {}
        flat: list[int] = []
        lens: list[int] = []
        digest = hashlib.blake2b(digest_size=16)
        for doc_id, text in docs:
            ids.append(doc_id)
            toks = analyzer(text)
            lens.append(len(toks))
            flat.extend(vocab.setdefault(t, len(vocab)) for t in toks)
            digest.update(doc_id.encode() + b"\0" + text.encode() + b"\1")
        return cls.from_token_ids(
            tuple(ids), vocab, np.array(flat, np.int64), np.array(lens, np.int64), k1=k1, b=b,
            fingerprint=digest.hexdigest(),
        )  # fmt: skip

    @classmethod
    def from_token_ids(
        cls,
        doc_ids: tuple[str, ...],
        vocab: dict[str, int],
        tokens: np.ndarray,
        lengths: np.ndarray,
        *,
        k1: float = K1,
        b: float = B,
        fingerprint: str = "",
    ) -> BM25Index:
        """Index documents given as one flat array of term ids and their lengths."""
        n_docs, n_terms = len(doc_ids), len(vocab)
        if len(lengths) != n_docs or int(lengths.sum()) != len(tokens):
            raise DataError("token ids and document lengths disagree")
        doc_of = np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
        width = max(n_terms, 1)
        key, counts = np.unique(doc_of * width + tokens.astype(np.int64), return_counts=True)
        key_doc = (key // width).astype(np.int32)  # sorted by (doc, term)
        key_term = (key % width).astype(np.int32)
        tf = counts.astype(np.float32)  # exact small integers; arithmetic is float64
        avgdl = float(lengths.mean()) if n_docs and lengths.sum() else 1.0
        norm = k1 * (1.0 - b + b * lengths.astype(np.float64) / avgdl)
        fwd_ptr = np.zeros(n_docs + 1, np.int64)
        np.cumsum(np.bincount(key_doc, minlength=n_docs), out=fwd_ptr[1:])
        df = np.bincount(key_term, minlength=n_terms).astype(np.float64)
        idf = np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
        contrib = tf / (tf + norm[key_doc])
        # postings: by term, then contribution descending, then doc ascending
        order = np.lexsort((key_doc, -contrib, key_term))
        post_ptr = np.zeros(n_terms + 1, np.int64)
        np.cumsum(df.astype(np.int64), out=post_ptr[1:])
        best = np.zeros(n_terms)
        if len(key):
            firsts = post_ptr[:-1][df > 0]
            best[df > 0] = contrib[order][firsts]
        return cls(
            doc_ids=tuple(doc_ids),
            vocab=vocab,
            idf=idf,
            norm=norm,
            post_ptr=post_ptr,
            post_doc=key_doc[order],
            post_tf=tf[order],
            post_imp=contrib[order].astype(np.float32),
            fwd_ptr=fwd_ptr,
            fwd_term=key_term,
            fwd_tf=tf,
            max_contribution=idf * best,
            k1=k1,
            b=b,
            fingerprint=fingerprint,
        )

    # -- persistence: a folder of .npy files + config.json (memory-mappable)

    _ARRAYS = ("idf", "norm", "post_ptr", "post_doc", "post_tf", "post_imp", "fwd_ptr",
               "fwd_term", "fwd_tf", "max_contribution")  # fmt: skip

    def save(self, folder: str | Path) -> None:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        for name in self._ARRAYS:
            np.save(folder / f"{name}.npy", getattr(self, name))
        terms = sorted(self.vocab, key=self.vocab.__getitem__)
        (folder / "vocab.json").write_text(json.dumps(terms), encoding="utf-8")
        (folder / "doc_ids.json").write_text(json.dumps(list(self.doc_ids)), encoding="utf-8")
        config = {"format_version": INDEX_FORMAT, "k1": self.k1, "b": self.b,
                  "fingerprint": self.fingerprint, "n_docs": self.n_docs}  # fmt: skip
        (folder / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")

    @classmethod
    def load(cls, folder: str | Path, mmap: bool = True) -> BM25Index:
        from factseek.errors import InputError
        from factseek.files import SIDE_LIMIT, read_json

        folder = Path(folder)
        try:
            config = read_json(folder / "config.json", "index config", limit=SIDE_LIMIT)
        except InputError as e:
            raise DataError(f"not a BM25 index folder: {e}", str(folder)) from None
        if not isinstance(config, dict):
            raise DataError("not a BM25 index folder: config.json is not an object", str(folder))
        if config.get("format_version") != INDEX_FORMAT:
            raise DataError(f"unknown index format {config.get('format_version')!r}", str(folder))
        arrays = {
            n: np.load(folder / f"{n}.npy", mmap_mode="r" if mmap else None) for n in cls._ARRAYS
        }
        terms = read_json(folder / "vocab.json", "index vocabulary")
        ids = read_json(folder / "doc_ids.json", "index document ids")
        return cls(
            doc_ids=tuple(ids),
            vocab={t: i for i, t in enumerate(terms)},
            k1=config["k1"],
            b=config["b"],
            fingerprint=config.get("fingerprint", ""),
            **arrays,
        )
