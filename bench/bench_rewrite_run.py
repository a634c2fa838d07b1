"""How long one `factseek rewrite run` takes on the demo store, cold and warm, beside a peer.

    python bench/bench_rewrite_run.py [--runs 3] [--store DIR] [--baseline-src DIR] [--profile]

Each measurement is a fresh process, as a user runs the command: ``python -m factseek rewrite
run CLAIM --store STORE`` with the shipped rewriter (``--model default``). CPU seconds are the
child's user + system time (``resource.getrusage``), the number to read on a busy machine; wall
seconds are printed beside them. Rows:

- ``cold``: an empty ``$FACTSEEK_CACHE`` (the WordNet files not yet normalised, no cached
  vectors of search results); the operating system's file cache is whatever it is.
- ``warm, same claim``: the cache the cold run left, the same claim again.
- ``warm, new claim``: the same cache, a claim not seen before (the usual case).
- ``warm, N new claims in one process: per claim``: the same cache, one ``rewrite run`` of the
  claims the rows above did not use, its CPU and wall seconds divided by N (Python, the models
  and the store load once; what a batch of claims costs each).
- peer: ``python -m factseek index search CLAIM --store STORE -k 10`` in the same run (Python,
  the CLI, opening the store and one BM25 search: what any command on the store pays).

Each row is the median of ``--runs`` runs, claims taken in turn from ``CLAIMS``. The store is the
bundled demo store (72 documents) built once in a temporary folder, or ``--store``.
``--baseline-src DIR`` measures the same rows with another checkout's ``src`` folder (e.g. the
code before a change, from ``git archive``) in the same run. ``--profile`` adds where the CPU
seconds of one warm run go (cProfile with a CPU-time clock; cumulative seconds of the stages);
``--compare-encoders`` runs the rewriter on every claim with the numpy MiniLM it uses and with
sentence-transformers' and prints the largest difference of any predicted AP change.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLAIMS = (
    "Mayor Delia Fairhurst said the Northside water plant would cost $31 million, but it ended"
    " up costing taxpayers $62 million and water bills have risen 40 percent since it opened.",
    "Water bills have risen 40 percent since the Northside plant opened.",
    "The Northside water plant cost taxpayers $62 million.",
    "The council approved the water plant budget in 2019.",
    "Delia Fairhurst promised the plant would cost $31 million.",
    "The plant's contractor went over budget because of delays.",
    "Residents complained about the taste of the water after the plant opened.",
)
STAGES = (  # (label, file name, function name) as cProfile records them
    ("spaCy: import and model load", "nlp.py", "load_spacy"),
    ("tagging the queries (spaCy, WordNet, inflections)", "actions.py", "tag_many"),
    ("lemminflect: inflection tables", "InflectionLUCodec.py", "load"),
    ("WordNet lookups", "wordnet.py", "synonyms"),
    ("MiniLM: load (numpy)", "npencoder.py", "__init__"),
    ("MiniLM: encoding (after the disk cache)", "vectorcache.py", "encode"),
    ("store: open", "base.py", "make_backend"),
    ("store: searches (first one loads the BM25 kernel)", "backend.py", "search"),
    (
        "edit features of all candidates (incl. searches and the judge)",
        "features.py",
        "step_features",
    ),
    ("the judge's reader: load and read (stance model)", "judge.py", "relevance"),
    ("the reader's network: mpnet (torch and its kept network)", "kept_net.py", "built"),
    ("the reader's network: small (numpy)", "npnet.py", "load"),
    ("scorer MLP", "model.py", "predict"),
)


#: The row of a warm process that rewrites several new claims, per claim.
BATCH_ROW = "warm, {n} new claims in one process: per claim"


def child(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(CPU seconds, wall seconds, stdout) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:5])} failed ({p.returncode}): {p.stderr[-400:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, p.stdout


def env_for(src: Path, cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(PYTHONPATH=str(src), FACTSEEK_CACHE=str(cache), HF_HUB_OFFLINE="1")
    return env


def measure(src: Path, store: Path, runs: int, tmp: Path) -> dict[str, list[tuple[float, float]]]:
    rows: dict[str, list[tuple[float, float]]] = {}
    run = [sys.executable, "-m", "factseek", "rewrite", "run"]
    for i in range(runs):
        cache = Path(tempfile.mkdtemp(prefix="cache-", dir=tmp))
        env = env_for(src, cache)
        claim, other = CLAIMS[i % len(CLAIMS)], CLAIMS[(i + 1 + runs) % len(CLAIMS)]
        for name, cmd in (
            ("cold", [*run, claim, "--store", str(store)]),
            ("warm, same claim", [*run, claim, "--store", str(store)]),
            ("warm, new claim", [*run, other, "--store", str(store)]),
            ("peer: index search", [sys.executable, "-m", "factseek", "index", "search", claim,
                                    "--store", str(store), "-k", "10"]),
        ):  # fmt: skip
            cpu, wall, _ = child(cmd, env)
            rows.setdefault(name, []).append((cpu, wall))
        # one process, the other claims (none read before in this cache): per claim
        rest = [c for c in CLAIMS if c not in (claim, other)]
        cpu, wall, _ = child([*run, *rest, "--store", str(store)], env)
        rows.setdefault(BATCH_ROW.format(n=len(rest)), []).append((cpu / len(rest), wall / len(rest)))  # fmt: skip
    return rows


def measure_check(
    src: Path, store: Path, runs: int, tmp: Path
) -> dict[str, list[tuple[float, float]]]:
    """``factseek check`` of the demo claim with and without ``--rewrite default`` (warm cache)."""
    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=tmp))
    env = env_for(src, cache)
    base = [sys.executable, "-m", "factseek", "check", CLAIMS[0], "--date", "2023-10-05",
            "--store", str(store), "-q", "-f", "json", "-o", str(tmp / "r.json")]  # fmt: skip
    child([*base, "--rewrite", "default"], env)  # fills the caches
    rows: dict[str, list[tuple[float, float]]] = {}
    for _ in range(runs):
        for name, cmd in (("check --rewrite default", [*base, "--rewrite", "default"]),
                          ("peer: check alone", base)):  # fmt: skip
            cpu, wall, _ = child(cmd, env)
            rows.setdefault(name, []).append((cpu, wall))
    return rows


def profile(src: Path, store: Path, tmp: Path) -> list[tuple[str, float]]:
    """Cumulative CPU seconds of the stages in one warm run (after a run that filled the cache)."""
    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=tmp))
    env = env_for(src, cache)
    child([sys.executable, "-m", "factseek", "rewrite", "run", CLAIMS[0], "--store", str(store)], env)  # fmt: skip
    out = tmp / "run.prof"
    code = (
        "import cProfile, sys, time\n"
        "pr = cProfile.Profile(time.process_time)\n"
        "pr.enable()\n"
        "from factseek.cli import main\n"
        "sys.argv = ['factseek', 'rewrite', 'run', sys.argv[1], '--store', sys.argv[2]]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"pr.disable(); pr.dump_stats({str(out)!r})\n"
    )
    child([sys.executable, "-c", code, CLAIMS[1], str(store)], env)
    import pstats

    stats = pstats.Stats(str(out)).stats  # type: ignore[attr-defined]
    total = max(v[3] for v in stats.values())
    got = [("everything (profiled, so slower than unprofiled)", total)]
    for label, file, fn in STAGES:
        cum = [v[3] for (f, _, name), v in stats.items() if Path(f).name == file and name == fn]
        got.append((label, max(cum, default=0.0)))
    return got


def compare_encoders(store: Path, tmp: Path) -> str:
    """The rewriter with the numpy MiniLM and with sentence-transformers' on ``CLAIMS``: the
    largest difference of any candidate's predicted AP change, and whether any decision differs."""
    import numpy as np

    os.environ["FACTSEEK_CACHE"] = str(tempfile.mkdtemp(prefix="cache-", dir=tmp))
    sys.path.insert(0, str(REPO / "src"))
    from factseek.ml.encode import SentenceTransformerEncoder, minilm_path
    from factseek.rewrite.edits.npencoder import NumpyBertEncoder
    from factseek.rewrite.edits.shipped import load_rewriter
    from factseek.search.base import make_backend

    backend = make_backend("local", store=store)
    runs = {}
    for name, enc in (
        ("numpy", NumpyBertEncoder(minilm_path(), name="minilm")),
        ("sentence-transformers", SentenceTransformerEncoder(minilm_path(), name="minilm")),
    ):
        runs[name] = load_rewriter("default", search=backend, encoder=enc).rewrite(
            list(CLAIMS), explain=True
        )
    worst, n, same = 0.0, 0, True
    for a, b in zip(runs["numpy"], runs["sentence-transformers"], strict=True):
        same &= (a.text, a.trace, a.stopped) == (b.text, b.trace, b.stopped)
        for sa, sb in zip(a.weighed, b.weighed, strict=True):
            pa = {c.action: c.predicted for c in sa.candidates}
            pb = {c.action: c.predicted for c in sb.candidates}
            same &= pa.keys() == pb.keys()
            worst = max(worst, max(abs(pa[k] - pb[k]) for k in pa))
            n += len(pa)
    gap = min(
        abs(c.predicted - s.threshold)
        for r in runs["numpy"]
        for s in r.weighed
        for c in s.candidates
    )
    return (
        f"numpy vs sentence-transformers MiniLM on {len(CLAIMS)} claims, {n} candidate edits:"
        f" largest prediction difference {worst:.2e}; closest prediction to the threshold"
        f" {gap:.2e} away; same rewrites and stops: {bool(same)}"
        + ("" if np.isfinite(worst) else " (no candidates)")
    )


def table(
    title: str, rows: dict[str, list[tuple[float, float]]], peer_row: str = "peer: index search"
) -> str:
    peer = statistics.median(c for c, _ in rows[peer_row])
    out = [f"{title}", "| what | CPU s (median) | wall s (median) | CPU vs peer |", "|---|---|---|---|"]  # fmt: skip
    for name, vals in rows.items():
        cpu = statistics.median(c for c, _ in vals)
        wall = statistics.median(w for _, w in vals)
        out.append(f"| {name} | {cpu:.2f} | {wall:.2f} | {cpu / peer:.2f}x |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--store", type=Path, default=None, help="default: the demo store")
    ap.add_argument("--baseline-src", type=Path, default=None, help="another checkout's src/")
    ap.add_argument("--profile", action="store_true", help="where a warm run's CPU goes")
    ap.add_argument("--check", action="store_true", help="check with and without --rewrite")
    ap.add_argument(
        "--compare-encoders", action="store_true", help="numpy vs sentence-transformers MiniLM"
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-rewrite-run-") as tmpdir:
        tmp = Path(tmpdir)
        store = args.store
        if store is None:
            sys.path.insert(0, str(REPO / "src"))
            from factseek.demo import demo_store

            store = demo_store(tmp / "demo-store")
        load = os.getloadavg()
        print(f"machine: {os.cpu_count()} CPUs, load average {load[0]:.1f} at start", flush=True)
        srcs = [("this checkout", REPO / "src")]
        if args.baseline_src:
            srcs.append((f"baseline ({args.baseline_src})", args.baseline_src))
        for label, src in srcs:
            print(table(f"\n{label}, {args.runs} runs:", measure(src, store, args.runs, tmp)), flush=True)  # fmt: skip
        if args.profile:
            print("\nwhere a warm run's CPU goes (this checkout, cumulative CPU s, profiled):")
            for label, sec in profile(REPO / "src", store, tmp):
                print(f"  {label}: {sec:.2f}")
        if args.check:
            rows = measure_check(REPO / "src", store, args.runs, tmp)
            print(table("\ncheck with and without the rewriter (warm):", rows, "peer: check alone"))
        if args.compare_encoders:
            print("\n" + compare_encoders(store, tmp))
        print(f"load average {os.getloadavg()[0]:.1f} at the end (busy above {os.cpu_count()})")


if __name__ == "__main__":
    main()
