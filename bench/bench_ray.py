"""Claims per second locally vs on a local Ray cluster with 1 and 2 workers (``--ray``).

Two worlds: the bundled demo store (offline, always there) with claims written from a template,
and the AVeriTeC small world (``experiments/averitec_store.py``: every dev answer is an undated page;
the first ``--claims`` dev claims, ``--undated keep``) when ``--data`` has ``averitec/dev.json``.

Each mode runs in a fresh process (as a user's command would): ``local`` is one process with the
parts built once (``batch.run_claims``, the default stance model: ``FACTSEEK_STANCE=small`` for
docs/scale.md's figures; ``OMP_NUM_THREADS`` as given,
1 in the command below, the thread count of a Ray worker); ``ray-N`` starts a local cluster and
runs ``distributed.run_claims_ray`` with N workers. For each mode it prints:

- wall seconds: the whole command, and the claims phase (local: after the parts are built;
  Ray: from the first worker ready to the last result), and claims per second over that phase;
- CPU seconds: per claim in the pipeline (the workers' own measure), and everything the mode
  spent: the driver process, the worker processes (Ray's process start included) and Ray's own
  processes (GCS, raylet, agents: read from /proc before the cluster stops);
- per-worker start-up: wall (the driver asking for a worker until it is ready) and CPU in the
  worker (imports, the store's full verify, the parts);
- whether every report equals the local run's, stage timings aside.

On a busy machine wall times mean little, so it also projects a quiet machine from CPU seconds
(each process's first claim, which pays for lazy loads, left out): a one-thread local process
does ``1 / (CPU per claim)`` claims per second; N workers on C free cores do at most
``min(N / w, (C - b) / (w + d))`` with ``w`` a worker's CPU per claim, ``d`` the driver's and
``b`` the cores Ray's own processes keep busy; 1M claims on M nodes of C cores are bounded by
the workers (``M * (C - b) / w``) and by the one driver, which receives and writes every report
(``1 / d``). Every child runs with ``PYTHONHASHSEED=0``, so the reports compare across processes
(see docs/scale.md).

    OMP_NUM_THREADS=1 python bench/bench_ray.py --data "$FACTSEEK_DATA" --out ray-bench.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SUBJECTS = (
    "The Northside water plant",
    "Caldmere's new water plant",
    "The Quarry Road plant",
    "The town's water treatment plant",
)
PREDICATES = (
    "cost $31 million",
    "cost taxpayers $62 million",
    "opened 18 months late",
    "raised water bills 40 percent",
    "was approved by the council 6-1",
    "treats 6 million gallons a day",
    "ended the boil-water notices",
)
DATES = ("2021-01-01", "2022-06-01", "2023-10-05", "2024-06-01")
TICK = os.sysconf("SC_CLK_TCK")


# ----------------------------------------------------------------------------- worlds


def demo_world(tmp: Path, n: int) -> dict[str, Any]:
    from factseek.demo import demo_store

    store = demo_store(tmp / "demo-store")
    rows = [
        {
            "id": f"d{i:04d}",
            "claim": f"{SUBJECTS[i % 4]} {PREDICATES[i % 7]}.",
            "date": DATES[i % 4],
        }
        for i in range(n)
    ]
    claims = tmp / "demo-claims.jsonl"
    claims.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return {"name": "demo", "store": store, "claims": claims, "undated": "drop"}


def averitec_world(tmp: Path, data: Path | None, n: int) -> dict[str, Any] | str:
    source = data / "averitec" / "dev.json" if data else None
    if source is None or not source.is_file():
        return f"skipped: AVeriTeC small world ({source or 'no --data'} not found)"
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))
    from averitec_store import corpus
    from factseek.datasets.claims import data_format, with_ids
    from factseek.store import build_store

    records, _ = corpus(source)
    (tmp / "averitec-corpus.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    )
    build_store([tmp / "averitec-corpus.jsonl"], tmp / "averitec-store")
    spec = data_format("averitec", source)
    rows = with_ids(spec.load(source))[:n]
    claims = tmp / "averitec-claims.jsonl"
    with claims.open("w", encoding="utf-8") as f:
        for r in rows:
            c = r.claim
            row = {"id": c.id, "claim": c.text, "date": c.date.isoformat() if c.date else None}
            f.write(json.dumps({k: v for k, v in row.items() if v}, ensure_ascii=False) + "\n")
    return {
        "name": "averitec",
        "store": tmp / "averitec-store",
        "claims": claims,
        "undated": "keep",
    }


# ----------------------------------------------------------------------------- one mode (child)


def descendants_cpu(root: int, skip: set[int]) -> float:
    """CPU seconds of the live processes below ``root`` (but ``skip``), from /proc."""
    procs: dict[int, tuple[int, float]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            procs[int(d.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK)
    below, frontier = set(), {root}
    while frontier:
        frontier = {p for p, (parent, _) in procs.items() if parent in frontier} - below
        below |= frontier
    return sum(procs[p][1] for p in below - skip)


class Sampler:
    """The driver's and Ray's own processes' CPU seconds, sampled every 0.5 s in a thread (the
    ClaimWorker processes are measured by themselves), to cut out the claims phase."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.skip: set[int] = set()
        self.samples: list[tuple[float, float, float]] = []  # (time, driver CPU, Ray CPU)
        self._stop = False

    def _run(self) -> None:
        while not self._stop:
            workers = self.skip or set(claim_workers(self.root))
            t = time.perf_counter()
            ray_cpu = descendants_cpu(self.root, workers)
            driver = self_cpu() - time.thread_time()  # the driver's, less this thread's reads
            self.samples.append((t, driver, ray_cpu))
            time.sleep(0.5)

    def __enter__(self) -> Sampler:
        import threading

        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop = True
        self._thread.join()

    def between(self, a: float, b: float) -> dict[str, float]:
        """CPU seconds of the driver and of Ray's processes from time ``a`` to ``b``."""

        def at(t: float) -> tuple[float, float]:
            before = [s for s in self.samples if s[0] <= t] or self.samples[:1]
            return before[-1][1], before[-1][2]

        (d0, r0), (d1, r1) = at(a), at(b)
        return {"driver": d1 - d0, "ray": max(0.0, r1 - r0)}


def claim_workers(root: int) -> list[int]:
    """Processes below ``root`` that run a ClaimWorker actor."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if b"ClaimWorker" in (d / "cmdline").read_bytes():
                    out.append(int(d.name))
            except OSError:
                continue
    return out


def self_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def child(mode: str, store: Path, claims_path: Path, undated: str, out: Path) -> dict[str, Any]:
    from factseek.api import CheckOptions, build_parts, check_config
    from factseek.runs.batch import read_claims, run_claims

    t0 = time.perf_counter()
    claims = list(read_claims(claims_path))
    options = CheckOptions(store=store)
    config = check_config(undated=undated)
    if mode == "local":
        parts = build_parts(options)
        t1, c1 = time.perf_counter(), self_cpu()
        run_claims(claims[:1], out, parts, config, progress=False)  # pays for the lazy loads
        c_first = self_cpu()
        run_claims(claims, out, parts, config, progress=False)  # the rest (the first is done)
        t2 = time.perf_counter()
        return {
            "wall_s": t2 - t0,
            "claims_wall_s": t2 - t1,
            "startup_s": t1 - t0,
            "startup_cpu_s": c1,
            "claim_cpu_s": self_cpu() - c1,
            "first_claim_cpu_s": c_first - c1,
            "processes": 1,
            "cpu_s": {"driver": self_cpu(), "workers": 0.0, "ray": 0.0},
            "report_bytes": sum(f.stat().st_size for f in (out / "reports").glob("*.json")),
            "workers": [],
        }
    from factseek.runs.distributed import RaySettings, cluster, run_claims_ray

    workers = int(mode.split("-")[1])
    settings = RaySettings(workers=workers)
    got: list[Any] = []
    with cluster(settings) as started, Sampler(os.getpid()) as sampler:
        run_claims_ray(claims, out, options, config, settings, progress=False, on_stats=got.append)
        t_end = time.perf_counter()
        stats = got[0]
        sampler.skip = {w.pid for w in stats.workers}
        time.sleep(1.0)  # the killed workers' processes leave /proc
        ray_cpu = descendants_cpu(os.getpid(), sampler.skip)
    t2 = time.perf_counter()
    # the claims phase alone: from the first worker ready to the last result
    phase = sampler.between(t_end - stats.claims_wall_s, t_end)
    return {
        "wall_s": t2 - t0,
        "claims_wall_s": stats.claims_wall_s,
        "cluster_start_s": started,
        "claim_cpu_s": sum(w.claim_cpu_s for w in stats.workers),
        "first_claim_cpu_s": sum(w.first_claim_cpu_s for w in stats.workers),
        "processes": sum(1 for w in stats.workers if w.claims),
        "report_bytes": sum(f.stat().st_size for f in (out / "reports").glob("*.json")),
        "cpu_s": {
            "driver": self_cpu(),
            "workers": sum(w.process_cpu_s for w in stats.workers),
            "ray": ray_cpu,
        },
        "phase_cpu_s": phase,
        "workers": [
            {
                "startup_s": w.startup_s,
                "startup_cpu_s": w.startup_cpu_s,
                "claims": w.claims,
                "claim_cpu_s": w.claim_cpu_s,
                "first_claim_cpu_s": w.first_claim_cpu_s,
                "process_cpu_s": w.process_cpu_s,
            }
            for w in stats.workers
        ],
    }


# ----------------------------------------------------------------------------- the parent


def run_mode(mode: str, world: dict[str, Any], tmp: Path) -> dict[str, Any]:
    out = tmp / f"{world['name']}-{mode}"
    shutil.rmtree(out, ignore_errors=True)
    cmd = [
        sys.executable, __file__, "--child", mode, "--store", str(world["store"]),
        "--claims-file", str(world["claims"]), "--undated", world["undated"], "--run", str(out),
    ]  # fmt: skip
    env = {**os.environ, "PYTHONHASHSEED": "0"}  # one seed: see "reports_same_as_local"
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=7200, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{mode} on {world['name']} failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["out"] = str(out)
    return result


def same_reports(a: Path, b: Path) -> tuple[int, int]:
    """(reports equal stage timings aside, reports compared)."""
    same = total = 0
    for path in sorted((a / "reports").glob("*.json")):
        other = b / "reports" / path.name
        total += 1
        if other.exists():
            x, y = json.loads(path.read_text()), json.loads(other.read_text())
            x.pop("timings"), y.pop("timings")
            same += x == y
    return same, total


def steady_cpu(r: dict[str, Any], n: int) -> float:
    """CPU seconds per claim once a process is warm: each process's first claim (which loads
    spaCy, numba kernels and the like) left out."""
    return (r["claim_cpu_s"] - r["first_claim_cpu_s"]) / max(1, n - r["processes"])


def summarize(world: dict[str, Any], results: dict[str, dict[str, Any]], n: int) -> dict[str, Any]:
    local = results["local"]
    local_cpu = steady_cpu(local, n)  # one process, one thread
    local_rate = n / local["claims_wall_s"]
    rows = {}
    for mode, r in results.items():
        w_cpu = steady_cpu(r, n)
        row: dict[str, Any] = {
            "wall_s": round(r["wall_s"], 1),
            "claims_per_s": round(n / r["claims_wall_s"], 3),
            "claim_cpu_s": round(w_cpu, 4),
            "first_claim_extra_cpu_s": round(r["first_claim_cpu_s"] / r["processes"] - w_cpu, 2),
            "cpu_s": {k: round(v, 1) for k, v in r["cpu_s"].items()},
            "report_kb": round(r["report_bytes"] / n / 1024, 1),
        }
        if mode == "local":
            row["startup_s"] = round(r["startup_s"], 1)
            row["startup_cpu_s"] = round(r["startup_cpu_s"], 2)
            row["quiet_claims_per_s"] = round(1 / local_cpu, 3)
        else:
            workers = int(mode.split("-")[1])
            phase = r["phase_cpu_s"]  # the claims phase: start-up costs left out
            driver = phase["driver"] / n  # per claim: receiving and writing reports
            background = phase["ray"] / r["claims_wall_s"]  # Ray's processes: cores, all along
            quiet = min(workers / w_cpu, (2 - background) / (w_cpu + driver))  # 2 free cores
            boot = [
                w["process_cpu_s"] - w["startup_cpu_s"] - w["claim_cpu_s"] for w in r["workers"]
            ]
            row.update(
                cluster_start_s=round(r["cluster_start_s"], 1),
                worker_startup_s=[round(w["startup_s"], 1) for w in r["workers"]],
                worker_startup_cpu_s=[round(w["startup_cpu_s"], 2) for w in r["workers"]],
                worker_ray_process_cpu_s=[round(b, 2) for b in boot],
                driver_cpu_per_claim=round(driver, 4),
                ray_background_cores=round(background, 3),
                quiet_claims_per_s_2_cores=round(quiet, 3),
                speedup_measured=round(row["claims_per_s"] / local_rate, 2),
                speedup_quiet_projection=round(quiet * local_cpu, 2),
            )
            same, total = same_reports(Path(r["out"]), Path(local["out"]))
            row["reports_same_as_local"] = f"{same}/{total}"
        rows[mode] = row
    return {"world": world["name"], "claims": n, "modes": rows}


def projection(summary: dict[str, Any], cores: tuple[int, ...] = (2, 16)) -> list[str]:
    """Hours for 1M claims on M nodes of C cores (workers bound, then the one driver bound)."""
    rows = summary["modes"]
    best = rows.get("ray-2") or rows.get("ray-1")
    if best is None:
        return []
    per_claim = best["claim_cpu_s"]  # a worker's CPU per claim
    driver = max(best["driver_cpu_per_claim"], 1e-6)
    free = best["ray_background_cores"]  # per node, taken by Ray's own processes
    lines = []
    for c in cores:
        for m in (1, 4, 16, 64):
            workers = m * (c - free) / per_claim
            rate = min(workers, 1 / driver)
            bound = "driver" if 1 / driver < workers else "workers"
            lines.append(
                f"  1M claims, {m:>2} node(s) x {c:>2} cores: {1e6 / rate / 3600:8.1f} h "
                f"({rate:,.0f} claims/s, {bound}-bound)"
            )
    lines.append(f"  the driver writes {best['report_kb'] * 1e6 / 2**20:,.0f} GB of JSON reports")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=os.environ.get("FACTSEEK_DATA"))
    ap.add_argument("--claims", type=int, default=48, help="AVeriTeC dev claims [48]")
    ap.add_argument("--demo-claims", type=int, default=48, help="demo-store claims [48]")
    ap.add_argument("--modes", default="local,ray-1,ray-2")
    ap.add_argument("--worlds", default="demo,averitec")
    ap.add_argument("--out", type=Path, help="write every figure to this JSON file")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--store", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--claims-file", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--undated", default="drop", help=argparse.SUPPRESS)
    ap.add_argument("--run", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        result = child(args.child, args.store, args.claims_file, args.undated, args.run)
        print(json.dumps(result))
        return 0
    try:
        import ray  # noqa: F401
    except ImportError:
        print("skipped: Ray is not installed (pip install 'factseek[dist]')")
        return 0
    load = os.getloadavg()
    print(
        f"machine: {os.cpu_count()} cores, load average {load[0]:.1f} / {load[1]:.1f} / "
        f"{load[2]:.1f} at the start (wall times on a busy machine are not quiet-machine times)"
    )
    tmp = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    report: dict[str, Any] = {"load_average_start": load, "worlds": []}
    try:
        worlds: list[dict[str, Any]] = []
        for name in args.worlds.split(","):
            w = demo_world(tmp, args.demo_claims) if name == "demo" else None
            if name == "averitec":
                got = averitec_world(tmp, args.data, args.claims)
                if isinstance(got, str):
                    print(got)
                    continue
                w = got
            if w is not None:
                worlds.append(w)
        for world in worlds:
            n = sum(1 for _ in world["claims"].open())
            results = {}
            for mode in args.modes.split(","):
                print(f"{world['name']}: {mode} ...", flush=True)
                results[mode] = run_mode(mode, world, tmp)
            summary = summarize(world, results, n)
            summary["projection_1m"] = projection(summary)
            report["worlds"].append(summary)
            print(f"\n== {world['name']}: {n} claims")
            for mode, row in summary["modes"].items():
                print(f"  {mode}: {json.dumps(row)}")
            print("\n".join(summary["projection_1m"]))
        report["load_average_end"] = os.getloadavg()
        print(f"load average at the end: {report['load_average_end'][0]:.1f}")
        if args.out:
            args.out.write_text(json.dumps(report, indent=2) + "\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
