"""What stance and the evidence verdict cost on the demo: `factseek check` with and without them.

Runs the demo claim through the CLI as a user would (a fresh process each time, so model loading
counts), alternating ``--stance none`` and the stance model named by ``--stance`` (default:
``default``, the model a user gets: ``mpnet`` where installed, else ``small``) so both see the
same machine load, and prints the median wall time of each and their difference. Those runs
share one cache folder, so a torch int8 network (``mpnet``) is built by the first of them and
loaded by the rest (``stance.kept_net``); one more run in a fresh cache folder times the first
check after installing, the network built and written. The target
(issues 11 and 23) is at most 1 s more with stance and verdict. These runs keep no stance
readings (``--no-cache``): each one reads every pair, as a first check of a claim does. Then it
times the same check again with the readings of an earlier run kept (``stance.readings``: a
re-check of the claim, e.g. for another format), its cost against the same median of
``--stance none``.

With ``--stance mpnet`` it times, in the same run, mpnet (reading every pair), the cascade
(``--cascade``: the small model's screen before mpnet, ``stance.cascade``) and small, and prints
how many pairs each model read (the report's ``usage.stance_pairs``).

    python bench/demo_stance_timing.py --repeats 5 [--stance small|mpnet]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--stance", default="default", help="the stance model to time")
    args = ap.parse_args(argv)
    from factseek.demo import demo_claim, demo_store
    from factseek.stance import resolve_stance

    args.stance = str(resolve_stance(args.stance))  # timed and printed by the model's own name

    cache = Path(tempfile.mkdtemp(prefix="factseek-timing-"))
    store = demo_store(cache / "demo-store")
    claim = demo_claim()
    base = [sys.executable, "-m", "factseek", "check", claim.text, "--store", str(store)]
    base += ["--date", claim.date.isoformat() if claim.date else "", "-q", "--format", "json"]
    base += ["--no-cache"]
    if claim.speaker:
        base += ["--speaker", claim.speaker]
    env = {**os.environ, "FACTSEEK_CACHE": str(cache)}
    if args.stance == "mpnet":  # its base is unpacked once, not into each run's fresh cache
        from factseek.ml.encode import MPNET_ENV, mpnet_path

        env[MPNET_ENV] = str(mpnet_path())
    variants = {"none": ["--stance", "none"], args.stance: ["--stance", args.stance]}
    if args.stance == "mpnet":  # the cascade beside reading every pair, and small
        variants[f"{args.stance} --cascade"] = ["--stance", args.stance, "--cascade"]
        variants["small"] = ["--stance", "small"]
    times: dict[str, list[float]] = {k: [] for k in variants}
    cpu: dict[str, list[float]] = {k: [] for k in times}
    pairs: dict[str, str] = {}
    for _ in range(args.repeats):
        for stance, extra in variants.items():
            used = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            done = subprocess.run(
                [*base, *extra], env=env, check=True, stdout=subprocess.PIPE, text=True
            )
            times[stance].append(time.perf_counter() - t0)
            now = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[stance].append(now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime)
            counts = json.loads(done.stdout).get("usage", {}).get("stance_pairs", {})
            pairs[stance] = ", ".join(f"{k} {v}" for k, v in counts.items())
    med = {k: statistics.median(v) for k, v in times.items()}
    cpu_med = {k: statistics.median(v) for k, v in cpu.items()}
    for k, v in times.items():
        runs = ", ".join(f"{x:.2f}" for x in v)
        print(
            f"--stance {k:17s} median {med[k]:.2f} s  runs {runs}  CPU {cpu_med[k]:.2f} s"
            + (f"  pairs: {pairs[k]}" if pairs.get(k) else "")
        )
    print(
        f"stance + verdict cost: {med[args.stance] - med['none']:+.2f} s wall (target: at most "
        f"+1 s), {cpu_med[args.stance] - cpu_med['none']:+.2f} s CPU"
    )
    if "small" in med and args.stance != "small":
        print(
            f"{args.stance} against small: {med[args.stance] - med['small']:+.2f} s wall "
            f"(target: at most +2 s); with --cascade: "
            f"{med[f'{args.stance} --cascade'] - med['small']:+.2f} s"
        )
    if args.stance != "none":  # the runs above load the network a first run built and kept
        fresh = Path(tempfile.mkdtemp(prefix="factseek-timing-first-"))
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([*base, "--stance", args.stance], env={**env, "FACTSEEK_CACHE": str(fresh)},
                       check=True, stdout=subprocess.DEVNULL)  # fmt: skip
        wall = time.perf_counter() - t0
        now = resource.getrusage(resource.RUSAGE_CHILDREN)
        print(
            f"first check of a fresh cache (the stance network built, then kept: "
            f"stance.kept_net): {wall:.2f} s  CPU "
            f"{now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime:.2f} s  "
            f"cost {wall - med['none']:+.2f} s wall"
        )
    kept = [x for x in base if x != "--no-cache"] + ["--stance", args.stance]
    subprocess.run(kept, env=env, check=True, stdout=subprocess.DEVNULL)  # keeps the readings
    warm = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        subprocess.run(kept, env=env, check=True, stdout=subprocess.DEVNULL)
        warm.append(time.perf_counter() - t0)
    runs = ", ".join(f"{x:.2f}" for x in warm)
    print(
        f"re-check with the readings kept: median {statistics.median(warm):.2f} s  runs {runs}  "
        f"cost {statistics.median(warm) - med['none']:+.2f} s wall"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
