"""Which engine for the knowledge store: the same filtered top-10 workload on four candidates.

Engines: factseek's own numba kernel (CSR impacts, gate per posting, exact MaxScore pruning);
bm25s (numba backend, filter as ``weight_mask``); tantivy (1 writer thread; date as a fast-field
range query and excluded hosts as MUST_NOT terms); SQLite FTS5 (``bm25()``, filters by join).
Each prints build docs/s (tokenize + index, from texts already in memory) and single-thread
filtered q/s, both per CPU second of this process (tantivy's merge threads count too). The filter: published before 2020-01-01 and none of the default fact-check/video
hosts (the corpus has 4 of them among 12 sites).

Usage: python bench/bench_store_engines.py PREFIX [--engines ours,bm25s,tantivy,sqlite] [--queries N]
PREFIX is a corpus made by ``python bench/corpus.py N PREFIX`` (skips if it is absent).
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse
import datetime as dt
import json
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from factseek.constraints.hits import Constraints, site_reason
from factseek.text import tokenize

CLOCK = time.process_time  # CPU seconds of this process: robust to other load on a shared machine
BEFORE = dt.date(2020, 1, 1)


def load(prefix: str) -> tuple[list[dict], list[str]]:
    with open(f"{prefix}.jsonl") as f:
        docs = [json.loads(line) for line in f]
    return docs, Path(f"{prefix}_queries.txt").read_text().splitlines()


def allowed_mask(docs: list[dict]) -> np.ndarray:
    c = Constraints(before=BEFORE)
    ok_site = {d["domain"]: site_reason(d["url"], c) is None for d in docs[:1000]}
    return np.array(
        [ok_site.get(d["domain"], True) and d["published"] < BEFORE.isoformat() for d in docs]
    )


def run_ours(docs: list[dict], queries: list[str], workdir: Path) -> dict:
    from factseek.store import StoreBackend, write_documents
    from factseek.types import Document

    records = [
        Document(
            url=d["url"],
            text=d["text"],
            title=d["title"],
            published=dt.date.fromisoformat(d["published"]),
            id=d["id"],
        )
        for d in docs
    ]
    write_documents(workdir / "warm", records[:50])  # JIT
    t = CLOCK()
    write_documents(workdir / "ours", records)
    build = len(docs) / (CLOCK() - t)
    backend = StoreBackend.open(workdir / "ours")
    c = Constraints(before=BEFORE)
    backend.bm25(queries[0], 10, c)
    t = CLOCK()
    for q in queries:
        backend.bm25(q, 10, c)
    return {
        "build_docs_per_s": build,
        "qps": len(queries) / (CLOCK() - t),
        "note": "build incl. writing documents",
    }


def run_bm25s(docs: list[dict], queries: list[str], mask: np.ndarray) -> dict:
    import bm25s
    from bm25s.tokenization import Tokenizer

    texts = [d["text"] for d in docs]
    tok = Tokenizer(stopwords="en", stemmer=None)
    t = CLOCK()
    ids = tok.tokenize(texts, return_as="ids", show_progress=False)
    r = bm25s.BM25(backend="numba")
    r.index((ids, tok.get_vocab_dict()), show_progress=False)
    build = len(texts) / (CLOCK() - t)
    q = tok.tokenize(queries, update_vocab=False, return_as="ids", show_progress=False)
    q = [x if x else [r.vocab_dict[""]] for x in q]
    w = mask.astype(np.float32)
    r.retrieve(q[:3], k=10, show_progress=False, n_threads=1, weight_mask=w)
    t = CLOCK()
    for x in q:
        r.retrieve([x], k=10, show_progress=False, n_threads=1, weight_mask=w)
    return {"build_docs_per_s": build, "qps": len(q) / (CLOCK() - t)}


def run_tantivy(docs: list[dict], queries: list[str]) -> dict:
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_text_field("body", stored=False)
    sb.add_integer_field("day", fast=True, indexed=True)
    sb.add_text_field("host", stored=False, tokenizer_name="raw")
    schema = sb.build()
    index = tantivy.Index(schema, path=tempfile.mkdtemp())
    t = CLOCK()
    w = index.writer(heap_size=500_000_000, num_threads=1)
    for d in docs:
        day = dt.date.fromisoformat(d["published"]).toordinal()
        w.add_document(tantivy.Document(body=d["text"], day=day, host=d["domain"]))
    w.commit()
    w.wait_merging_threads()
    build = len(docs) / (CLOCK() - t)
    index.reload()
    s = index.searcher()
    c = Constraints(before=BEFORE)
    bad_hosts = sorted({d["domain"] for d in docs[:1000] if site_reason(d["url"], c)})
    date_q = tantivy.Query.range_query(
        schema, "day", tantivy.FieldType.Integer, None, BEFORE.toordinal(), include_upper=False
    )
    parsed = []
    for x in queries:
        terms = tokenize(x)
        if not terms:
            continue
        clauses = [
            (tantivy.Occur.Must, index.parse_query(" ".join(terms), ["body"])),
            (tantivy.Occur.Must, date_q),
        ]
        clauses += [
            (tantivy.Occur.MustNot, tantivy.Query.term_query(schema, "host", h)) for h in bad_hosts
        ]
        parsed.append(tantivy.Query.boolean_query(clauses))
    t = CLOCK()
    for x in parsed:
        _ = s.search(x, 10).hits
    return {"build_docs_per_s": build, "qps": len(parsed) / (CLOCK() - t)}


def run_sqlite(docs: list[dict], queries: list[str], mask: np.ndarray, n_queries: int) -> dict:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(body)")
    db.execute("CREATE TABLE meta(rowid INTEGER PRIMARY KEY, ok INTEGER)")
    t = CLOCK()
    db.executemany(
        "INSERT INTO docs(rowid, body) VALUES (?, ?)", ((i, d["text"]) for i, d in enumerate(docs))
    )
    db.executemany("INSERT INTO meta VALUES (?, ?)", ((i, int(m)) for i, m in enumerate(mask)))
    db.commit()
    build = len(docs) / (CLOCK() - t)
    sql = (
        "SELECT docs.rowid, bm25(docs) AS s FROM docs JOIN meta ON meta.rowid = docs.rowid "
        "WHERE docs MATCH ? AND meta.ok = 1 ORDER BY s LIMIT 10"
    )
    qs = [" OR ".join(f'"{w}"' for w in tokenize(x)) for x in queries[:n_queries]]
    qs = [q for q in qs if q]
    t = CLOCK()
    for q in qs:
        db.execute(sql, (q,)).fetchall()
    return {"build_docs_per_s": build, "qps": len(qs) / (CLOCK() - t), "queries_timed": len(qs)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("prefix")
    ap.add_argument("--engines", default="ours,bm25s,tantivy,sqlite")
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--sqlite-queries", type=int, default=100)
    args = ap.parse_args()
    if not Path(f"{args.prefix}.jsonl").exists():
        print(
            f"skipped: {args.prefix}.jsonl not found (make it with python bench/corpus.py N PREFIX)"
        )
        return 0
    docs, queries = load(args.prefix)
    queries = queries[: args.queries]
    mask = allowed_mask(docs)
    out = {"docs": len(docs), "allowed_fraction": round(float(mask.mean()), 3)}
    with tempfile.TemporaryDirectory() as tmp:
        for engine in args.engines.split(","):
            if engine == "ours":
                res = run_ours(docs, queries, Path(tmp))
            elif engine == "bm25s":
                res = run_bm25s(docs, queries, mask)
            elif engine == "tantivy":
                res = run_tantivy(docs, queries)
            elif engine == "sqlite":
                res = run_sqlite(docs, queries, mask, args.sqlite_queries)
            else:
                sys.exit(f"unknown engine {engine}")
            out[engine] = {k: round(v) if isinstance(v, float) else v for k, v in res.items()}
            print(engine, json.dumps(out[engine]), flush=True)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
