"""Retrieval data for query rewriting: claims, the ids of their relevant documents, a corpus.

``load_retrieval(claims, corpus=None, format=...) -> RetrievalData``; ``FORMATS`` lists them:

- ``fever``: JSONL, one claim a line with ``claim``, ``label`` (or ``gold_label``) and its
  evidence sentence(s) (``evidence``/``evidence_sentence`` string, or ``evidences`` list of
  strings). NOT ENOUGH INFO claims are dropped. The corpus is every distinct evidence sentence of
  the file (id ``s<n>`` in first-seen order); a claim is relevant to its own sentences.
- ``checkthat``: CLEF CheckThat! 2020 task 2. ``claims`` is a split folder (``tweets.queries.tsv``:
  id, tweet; ``tweet-vclaim-pairs.qrels``: TREC qrels ``qid 0 docid rel``) or the TSV itself with
  the qrels beside it; ``corpus`` is ``verified_claims.docs.tsv`` (id, vclaim, title; default:
  found in the split folder's parent). Documents are ``vclaim`` + title.
- ``climate-fever``: Climate-FEVER JSONL; the corpus is all evidence sentences (by
  ``evidence_id``); a claim's relevant documents are its evidences labelled SUPPORTS or REFUTES
  (NOT_ENOUGH_INFO ones are not relevant); claims left with none are dropped.
- ``fever-dev``: a FEVER folder with evidence text (``claims.jsonl`` + ``evidence.jsonl``: FEVER
  dev or FEVER train); ``corpus`` optionally names distractors, one path or several: other FEVER
  folders (their evidence texts) and Fool Me Twice data (its sentences). See
  ``factseek.datasets.fever`` (which also has the group split).
- ``jsonl``: ``claims`` is a claims file (``docs/formats.md``, ``factseek.datasets.claimsfile``)
  whose lines all have ``id`` and ``relevant`` (a list of document ids; the claim may be given
  as ``claim``, ``text`` or ``query``); ``corpus`` is JSONL with ``text`` and ``id`` (default: the
  ``url``), ``title`` prepended when present: the knowledge store's own input JSONL works as is.

Claims whose relevant documents are all missing from the corpus are dropped and counted
(``RetrievalData.dropped``). Malformed input raises ``DataError`` naming the file and line.
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from factseek.datasets.guard import MAX_LINE_BYTES, as_paths, at, jsonl_objects, loader
from factseek.datasets.records import CorpusDoc, RetrievalClaim, RetrievalData
from factseek.errors import ConfigError, DataError, InputError

#: Longest claim or document text kept (characters); longer ones are cut.
MAX_TEXT = 20_000
NEI = {"NOT ENOUGH INFO", "NOT_ENOUGH_INFO", "NEI"}


def _tsv(path: Path) -> Iterator[tuple[int, list[str]]]:
    from factseek.files import input_lines

    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))

    def lines() -> Iterator[str]:  # streamed with the input caps (factseek.files)
        for i, raw in input_lines(path, "data file", max_line=MAX_LINE_BYTES):
            at(path, i)
            yield raw.decode("utf-8")  # a UnicodeDecodeError names the line (@loader)

    for i, row in enumerate(csv.reader(lines(), delimiter="\t", quoting=csv.QUOTE_NONE), 1):
        at(path, i)
        if row:
            yield i, row


def _text(value: Any) -> str:
    return " ".join(str(value).split())[:MAX_TEXT]


def _unquote(value: Any) -> str:
    s = str(value).strip()
    return s[1:-1] if len(s) >= 2 and s[0] == s[-1] == "'" else s


def _finish(claims: list[RetrievalClaim], corpus: list[CorpusDoc], dropped: dict[str, int]):
    ids = {d.id for d in corpus}
    kept = []
    for c in claims:
        rel = tuple(r for r in c.relevant if r in ids)
        if not rel:
            dropped["relevant not in corpus"] = dropped.get("relevant not in corpus", 0) + 1
            continue
        kept.append(RetrievalClaim(id=c.id, text=c.text, relevant=rel))
    return RetrievalData(claims=tuple(kept), corpus=tuple(corpus), dropped=dropped)


# ----------------------------------------------------------------------------- loaders


@loader
def load_fever(claims: Path, corpus: Path | None = None) -> RetrievalData:
    sentence_ids: dict[str, str] = {}
    out: list[RetrievalClaim] = []
    dropped: dict[str, int] = {}
    for i, row in jsonl_objects(claims):
        label = _unquote(row.get("label", row.get("gold_label", ""))).upper()
        if label in NEI:
            dropped["not enough info"] = dropped.get("not enough info", 0) + 1
            continue
        text = _text(_unquote(row.get("claim", "")))
        ev = row.get("evidences", row.get("evidence", row.get("evidence_sentence")))
        sentences = [ev] if isinstance(ev, str) else list(ev or [])
        sentences = [_text(_unquote(s)) for s in sentences if isinstance(s, str) and s.strip()]
        if not text or not sentences:
            raise DataError("needs a claim and its evidence sentence(s)", str(claims), i)
        rel = tuple(sentence_ids.setdefault(s, f"s{len(sentence_ids)}") for s in sentences)
        out.append(RetrievalClaim(id=str(row.get("id", i)), text=text, relevant=rel))
    docs = [CorpusDoc(id=sid, text=s) for s, sid in sentence_ids.items()]
    return _finish(_dedup_ids(out, claims), docs, dropped)


@loader
def load_climate_fever(claims: Path, corpus: Path | None = None) -> RetrievalData:
    docs: dict[str, CorpusDoc] = {}
    out: list[RetrievalClaim] = []
    dropped: dict[str, int] = {}
    for i, row in jsonl_objects(claims):
        try:
            evidences = row["evidences"]
            text = _text(row["claim"])
            claim_id = str(row["claim_id"])
        except KeyError as e:
            raise DataError(f"missing field {e}", str(claims), i) from None
        rel = []
        for ev in evidences:
            eid, sentence = str(ev["evidence_id"]), _text(ev["evidence"])
            docs.setdefault(eid, CorpusDoc(id=eid, text=sentence))
            if str(ev.get("evidence_label", "")).upper() not in NEI:
                rel.append(eid)
        if not rel:
            dropped["no supporting or refuting evidence"] = (
                dropped.get("no supporting or refuting evidence", 0) + 1
            )
            continue
        out.append(RetrievalClaim(id=claim_id, text=text, relevant=tuple(dict.fromkeys(rel))))
    return _finish(out, list(docs.values()), dropped)


@loader
def load_checkthat(claims: Path, corpus: Path | None = None) -> RetrievalData:
    folder = claims if claims.is_dir() else claims.parent
    queries = folder / "tweets.queries.tsv" if claims.is_dir() else claims
    qrels = folder / "tweet-vclaim-pairs.qrels"
    corpus = corpus or folder.parent / "verified_claims.docs.tsv"
    for p in (queries, qrels, corpus):
        if not p.exists():
            raise DataError("not found (CheckThat 2020 task 2 layout expected)", str(p))
    docs = []
    for i, row in _tsv(corpus):
        if i == 1 and not row[0].strip():  # header: "\tvclaim\ttitle"
            continue
        if len(row) < 2:
            raise DataError("expected id, vclaim[, title]", str(corpus), i)
        title = row[2] if len(row) > 2 else ""
        docs.append(CorpusDoc(id=row[0].strip(), text=_text(f"{row[1]} {title}")))
    rel: dict[str, list[str]] = {}
    for i, row in _tsv(qrels):
        if len(row) != 4:
            raise DataError("expected TREC qrels: qid 0 docid relevance", str(qrels), i)
        if row[3].strip() not in ("0", ""):
            rel.setdefault(row[0].strip(), []).append(row[2].strip())
    out = []
    dropped: dict[str, int] = {}
    for i, row in _tsv(queries):
        if i == 1 and not row[0].strip():
            continue
        if len(row) < 2:
            raise DataError("expected id, tweet", str(queries), i)
        qid = row[0].strip()
        if qid not in rel:
            dropped["no qrels"] = dropped.get("no qrels", 0) + 1
            continue
        out.append(RetrievalClaim(id=qid, text=_text(row[1]), relevant=tuple(rel[qid])))
    return _finish(out, docs, dropped)


@loader
def load_corpus_jsonl(corpus: Path) -> list[CorpusDoc]:
    """Corpus JSONL: ``text`` and ``id`` (default: ``url``, as in the store's input), ``title``
    prepended when present; other fields ignored. A repeated id is a ``DataError``."""
    docs = []
    seen: dict[str, int] = {}
    for i, row in jsonl_objects(corpus):
        doc_id = row.get("id") if row.get("id") not in (None, "") else row.get("url")
        text, title = row.get("text"), row.get("title") or ""
        if not isinstance(doc_id, str | int) or isinstance(doc_id, bool) or not str(doc_id).strip():
            raise DataError("corpus lines need an id (or a url)", str(corpus), i)
        if not isinstance(text, str) or not isinstance(title, str):
            raise DataError("corpus lines need a text string (and title, if any, a string)", str(corpus), i)  # fmt: skip
        doc_id = str(doc_id).strip()
        if doc_id in seen:
            raise DataError(f"id {doc_id!r} repeats line {seen[doc_id]}", str(corpus), i)
        seen[doc_id] = i
        docs.append(CorpusDoc(id=doc_id, text=_text(f"{title} {text}" if title else text)))
    return docs


@loader
def load_jsonl(claims: Path, corpus: Path | None = None) -> RetrievalData:
    from factseek.datasets.claimsfile import read_claims_file

    if corpus is None:
        raise InputError("the jsonl format needs --corpus (JSONL with id or url, and text)")
    docs = load_corpus_jsonl(corpus)
    out = [
        RetrievalClaim(id=r.claim.id or "", text=_text(r.claim.text), relevant=r.relevant or ())
        for r in read_claims_file(claims, require=("id", "relevant"))
    ]
    return _finish(out, docs, {})


def _dedup_ids(claims: list[RetrievalClaim], path: Path) -> list[RetrievalClaim]:
    seen: dict[str, int] = {}
    out = []
    for c in claims:
        n = seen.get(c.id, 0)
        seen[c.id] = n + 1
        out.append(c if n == 0 else RetrievalClaim(id=f"{c.id}#{n}", text=c.text, relevant=c.relevant))  # fmt: skip
    return out


def load_fever_dev(claims: Path, corpus: Path | Sequence[Path] | None = None) -> RetrievalData:
    from factseek.datasets.fever import load_fever_dev_retrieval

    return load_fever_dev_retrieval(claims, corpus)


#: Formats whose ``corpus`` may name several paths.
MULTI_CORPUS = frozenset({"fever-dev"})


FORMATS: dict[str, Callable[[Path, Any], RetrievalData]] = {
    "fever": load_fever,
    "fever-dev": load_fever_dev,
    "checkthat": load_checkthat,
    "climate-fever": load_climate_fever,
    "jsonl": load_jsonl,
}


@loader
def load_retrieval(
    claims: str | Path,
    corpus: str | Path | Sequence[str | Path] | None = None,
    format: str = "jsonl",
) -> RetrievalData:
    """Load claims with relevance judgements and their corpus (see the module docstring);
    ``corpus`` may be several paths where the format takes them (``MULTI_CORPUS``)."""
    try:
        loader = FORMATS[format]
    except KeyError:
        raise ConfigError(
            f"unknown retrieval format {format!r}; choose one of: {', '.join(FORMATS)}"
        ) from None
    paths = as_paths(corpus)
    if format in MULTI_CORPUS:
        return loader(Path(claims), paths or None)
    if len(paths) > 1:
        raise ConfigError(f"the {format} format takes one --corpus, got {len(paths)}")
    return loader(Path(claims), paths[0] if paths else None)
