"""The benchmark corpus: synthetic documents with dates and sites, plus claim-like queries.

Every speed benchmark (``bench_store.py``, ``bench_store_engines.py``, ``bench_bfs.py``) runs on
this corpus, so their figures compare; peers are always measured on it in the same run.

Usage:
    python bench/corpus.py N_DOCS OUT_PREFIX   # -> OUT_PREFIX.jsonl and OUT_PREFIX_queries.txt

1,000,000 documents (the size of the figures in docs/store.md and docs/rewrite-bfs.md) take about
a minute and 150 MB; 200,000 make a quick run.

How it is made (deterministic, seed 12345):

1. Vocabulary, 1,000,000 word types ranked by frequency. The head is English-like: the lower-case
   letter runs (2+ letters) of the Python standard library's own source files (the first 6,000
   ``*.py`` files in sorted path order, installed packages excluded), those seen at least 3 times,
   most frequent first (ties by first appearance), at most 60,000. The tail is pronounceable
   pseudo-words (syllables from the type's rank in base 20, plus "x"), entity-like. The corpus is
   the same wherever the same Python minor version runs this script.
2. Documents: token ranks drawn from a Zipf(1.05) distribution over the 1M types; lengths
   log-normal with median 20 tokens, clipped to 4-80; a publication date uniform over 2000-2024;
   a site uniform over ``SITES`` (fact-checking sites and a video site among them, so date and
   site filters have something to remove). Each line is the store's input JSONL: ``id``, ``url``,
   ``title`` (the text's first 40 characters), ``text``, ``published``, ``domain``.
3. Queries, 1,000, claim-like: a 5-8 token window of a random document plus 2-3 random words
   drawn from the same Zipf distribution, shuffled; one per line.
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import json
import re
import sys
import sysconfig
import time
from pathlib import Path

import numpy as np

SEED = 12345
N_TYPES = 1_000_000
ZIPF_EXPONENT = 1.05
N_QUERIES = 1000
HEAD_FILES = 6000  # standard-library files read for the English-like head
HEAD_MAX = 60_000  # head types at most
HEAD_MIN_COUNT = 3
SITES = (
    "dailyherald.example",
    "metro-news.example",
    "civicwatch.example",
    "www.politifact.com",
    "ledger.example",
    "www.snopes.com",
    "valleytimes.example",
    "statehouse.example",
    "fullfact.org",
    "harbor-gazette.example",
    "blog.example.org",
    "youtube.com",
)
SYLLABLES = ("ka", "lo", "mi", "ren", "sta", "vor", "dun", "pel", "ri", "tas",
             "bo", "nik", "gal", "the", "sor", "mu", "zan", "qui", "fel", "dor")  # fmt: skip
_WORD = re.compile(r"[a-z]{2,}")


def stdlib_files(limit: int = HEAD_FILES) -> list[Path]:
    """The standard library's ``*.py`` files in sorted order, installed packages excluded."""
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(
        p
        for p in root.rglob("*.py")
        if not {"site-packages", "dist-packages"} & set(p.relative_to(root).parts)
    )
    return files[:limit]


def pseudo_word(rank: int) -> str:
    out, i = [], rank + 7
    while i > 0:
        out.append(SYLLABLES[i % len(SYLLABLES)])
        i //= len(SYLLABLES)
    return "".join(out) + "x"


def vocabulary(n_types: int = N_TYPES) -> np.ndarray:
    """``n_types`` word types, most frequent first (see the module docstring, step 1)."""
    counts: collections.Counter[str] = collections.Counter()
    for path in stdlib_files():
        try:
            counts.update(_WORD.findall(path.read_text(encoding="utf-8", errors="ignore").lower()))
        except OSError:
            continue
    head = [w for w, c in counts.most_common(HEAD_MAX) if c >= HEAD_MIN_COUNT]
    seen = set(head)
    tail = (w for w in map(pseudo_word, range(10 * n_types)) if w not in seen)
    words = head + [next(tail) for _ in range(n_types - len(head))]
    return np.array(words, dtype=object)


def generate(n_docs: int, prefix: str, seed: int = SEED) -> dict[str, float]:
    """Write ``prefix.jsonl`` and ``prefix_queries.txt``; return counts and seconds."""
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    vocab = vocabulary()
    p = np.arange(1, len(vocab) + 1, dtype=np.float64) ** -ZIPF_EXPONENT
    cdf = np.cumsum(p / p.sum())

    def draw(n: int) -> np.ndarray:
        return np.minimum(np.searchsorted(cdf, rng.random(n)), len(vocab) - 1)

    lens = np.clip(np.round(rng.lognormal(np.log(20), 0.5, size=n_docs)).astype(int), 4, 80)
    toks = draw(int(lens.sum()))
    offs = np.concatenate([[0], np.cumsum(lens)])
    start = dt.date(2000, 1, 1).toordinal()
    days = rng.integers(0, 25 * 365, size=n_docs)
    sites = rng.integers(0, len(SITES), size=n_docs)
    Path(prefix).parent.mkdir(parents=True, exist_ok=True)
    with open(f"{prefix}.jsonl", "w", encoding="utf-8") as f:
        for i in range(n_docs):
            text = " ".join(vocab[toks[offs[i] : offs[i + 1]]])
            site = SITES[sites[i]]
            record = {
                "id": str(i),
                "url": f"https://{site}/a/{i}",
                "title": text[:40],
                "text": text,
                "published": dt.date.fromordinal(start + int(days[i])).isoformat(),
                "domain": site,
            }
            f.write(json.dumps(record) + "\n")
    with open(f"{prefix}_queries.txt", "w", encoding="utf-8") as f:
        for _ in range(N_QUERIES):
            d = rng.integers(n_docs)
            a, b = offs[d], offs[d + 1]
            width = int(min(rng.integers(5, 9), b - a))
            s = rng.integers(a, b - width + 1)
            query = list(vocab[toks[s : s + width]]) + list(vocab[draw(int(rng.integers(2, 4)))])
            rng.shuffle(query)
            f.write(" ".join(query) + "\n")
    return {"docs": n_docs, "tokens": int(lens.sum()), "seconds": time.perf_counter() - t0}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "n_docs", type=int, help="documents to generate (1000000 for the docs' figures)"
    )
    ap.add_argument("prefix", help="output prefix: writes PREFIX.jsonl and PREFIX_queries.txt")
    ap.add_argument("--seed", type=int, default=SEED, help=f"random seed (default {SEED})")
    args = ap.parse_args()
    stats = generate(args.n_docs, args.prefix, args.seed)
    print(
        " ".join(f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}" for k, v in stats.items())
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
