"""One training or evaluation pair of the stance model, the BM25 neighbour finder that
makes "not enough information" pairs (``stance.data`` for the Wikipedia sets, ``stance.realworld``
for the real-world ones), and the pair-set file: the train and validation pairs that
``factseek stance train`` built, written once (``--pairs-out``) and trained on elsewhere
(``--pairs``, e.g. on a GPU machine without the data sets or spaCy).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from factseek.errors import DataError
from factseek.text import tokenize
from factseek.types import STANCE_LABELS, StanceLabel

#: The first line of a pair-set file.
PAIR_SET_KIND = "factseek-stance-pairs"
PAIR_SET_VERSION = 1
PAIR_SET_SPLITS = ("train", "validation")


@dataclass(frozen=True, kw_only=True)
class StancePair:
    """One (claim or question, evidence) pair with its gold stance."""

    question: str
    evidence: str
    label: StanceLabel
    source: str
    group: str  # the claim (or claim group) the pair comes from
    form: Literal["statement", "question"] = "statement"


def bm25_nearest(
    queries: Sequence[str],
    docs: Sequence[str],
    exclude: Sequence[set[int]],
    *,
    k1: float = 1.2,
    b: float = 0.75,
) -> list[int | None]:
    """For each query, the index of the BM25-best document not in its ``exclude`` set (ties by
    index; None when every document is excluded or none shares a term)."""
    import numpy as np
    from scipy import sparse

    if not docs:
        return [None] * len(queries)
    vocab: dict[str, int] = {}
    rows, cols, vals = [], [], []
    lengths = np.zeros(len(docs))
    for d, text in enumerate(docs):
        terms = tokenize(text)
        lengths[d] = len(terms)
        counts: dict[int, int] = {}
        for t in terms:
            j = vocab.setdefault(t, len(vocab))
            counts[j] = counts.get(j, 0) + 1
        rows.extend([d] * len(counts))
        cols.extend(counts)
        vals.extend(counts.values())
    tf = sparse.csr_matrix((vals, (rows, cols)), shape=(len(docs), len(vocab)), dtype=np.float64)
    df = np.bincount(tf.indices, minlength=len(vocab))
    idf = np.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
    norm = k1 * (1 - b + b * lengths / max(lengths.mean(), 1e-9))
    tf.data = tf.data * (k1 + 1) / (tf.data + np.repeat(norm, np.diff(tf.indptr)))
    weights = (tf @ sparse.diags(idf)).T.tocsr()  # (terms, docs)
    out: list[int | None] = []
    for start in range(0, len(queries), 512):
        qr, qc = [], []
        for i, q in enumerate(queries[start : start + 512]):
            ids = {vocab[t] for t in tokenize(q) if t in vocab}
            qr.extend([i] * len(ids))
            qc.extend(ids)
        qm = sparse.csr_matrix(
            (np.ones(len(qr)), (qr, qc)), shape=(min(512, len(queries) - start), len(vocab))
        )
        scores = (qm @ weights).toarray()  # (queries, docs)
        for i, row in enumerate(scores):
            row[list(exclude[start + i])] = -1.0
            best = int(np.argmax(row))  # first index among ties
            out.append(best if row[best] > 0 else None)
    return out


# ----------------------------------------------------------------------------- pair-set files


def write_pair_set(
    path: str | Path, splits: Mapping[str, Sequence[StancePair]], info: Mapping[str, Any]
) -> int:
    """Write the ``train`` and ``validation`` pairs and the training ``info`` as JSON Lines (a
    header line, then one pair per line with its split), atomically; returns the pairs written."""
    from factseek.files import atomic_write

    header = {"kind": PAIR_SET_KIND, "format_version": PAIR_SET_VERSION, "info": dict(info)}
    lines = [json.dumps(header, ensure_ascii=False)]
    for split in PAIR_SET_SPLITS:
        lines += [json.dumps({"split": split, **asdict(p)}, ensure_ascii=False) for p in splits[split]]  # fmt: skip
    atomic_write(path, "\n".join(lines) + "\n")
    return len(lines) - 1


def read_pair_set(path: str | Path) -> tuple[dict[str, list[StancePair]], dict[str, Any]]:
    """``({"train": [...], "validation": [...]}, info)`` from ``write_pair_set``'s file;
    ``DataError`` naming the line for anything else."""
    from factseek.datasets.guard import jsonl_objects

    path = Path(path)
    splits: dict[str, list[StancePair]] = {s: [] for s in PAIR_SET_SPLITS}
    info: dict[str, Any] | None = None
    for i, row in jsonl_objects(path):
        if info is None:
            if row.get("kind") != PAIR_SET_KIND or row.get("format_version") != PAIR_SET_VERSION:
                raise DataError(f"not a stance pair set (version {PAIR_SET_VERSION})", str(path), i)  # fmt: skip
            info = dict(row.get("info") or {})
            continue
        split, label = row.get("split"), row.get("label")
        if split not in splits or label not in STANCE_LABELS:
            raise DataError(f"bad split {split!r} or label {label!r}", str(path), i)
        try:
            fields = {k: row[k] for k in ("question", "evidence", "source", "group")}
        except KeyError as e:
            raise DataError(f"a pair needs {e.args[0]!r}", str(path), i) from None
        if not all(isinstance(v, str) and v for v in fields.values()):
            raise DataError("question, evidence, source and group must be non-empty text", str(path), i)  # fmt: skip
        form = row.get("form", "statement")
        if form not in ("statement", "question"):
            raise DataError(f"bad form {form!r}", str(path), i)
        splits[split].append(StancePair(**fields, label=label, form=form))
    if info is None:
        raise DataError("empty stance pair set", str(path))
    return splits, info
