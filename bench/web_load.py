"""Web-app latency of `factseek serve` on the demo store: a warm check end to end, quiet and under
a parallel load, with the pipeline alone as the peer; plus a burst of N concurrent checks.

Starts the app on a free loopback port (uvicorn in a thread, the server's own worker pool),
warms it with one check (model loading, JIT), then measures, in this order and in one process:

1. **peer** -- the pipeline alone on the same built parts, on a server worker thread as a web
   check runs (``Runner.warm``: ``pipeline.run``, no HTTP, no history): ``--warm`` checks, wall
   and process CPU seconds each;
2. **quiet** -- ``--warm`` checks one after another through HTTP like a browser: POST the form,
   follow the progress stream (``/runs/N/events``) until "done", GET the review page
   (``submit -> report``); wall and process CPU seconds (server and client share this process);
3. **loaded** -- the same ``--warm`` checks while ``--load`` other clients each submit checks in
   a loop (so the server's ``--workers`` are busy and the probe may queue);
4. **burst** -- ``--n`` checks submitted at once from ``--n`` threads, each with its own claim
   text: every one must complete and carry its own claim (none mixed up); p50/p95/max.

The machine's load average is printed with the numbers: on a busy machine absolute times drift,
the web layer's overhead over the peer holds better. Traffic goes to 127.0.0.1 only; every loop
is bounded in count and time.

    python bench/web_load.py [--warm 10] [--load 2] [--n 20] [--workers 2] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from factseek.demo import demo_claim, demo_store
from factseek.web.app import WebSettings, check_options
from factseek.web.server import LocalServer

TIMEOUT_S = 240


def one_check(url: str, text: str, date: str) -> tuple[int, float, float, str]:
    """Submit a check through the form and follow it as the browser does (the progress event
    stream until "done", then the review page); return (run id, seconds to done, seconds to the
    review page, status)."""
    with httpx.Client(base_url=url, timeout=TIMEOUT_S, follow_redirects=False) as c:
        token = re.search(r'name="csrf_token" value="([^"]+)"', c.get("/").text).group(1)
        t0 = time.perf_counter()
        r = c.post("/check", data={"csrf_token": token, "claim": text, "date": date})
        run_url = r.headers["location"]
        rid = int(run_url.rsplit("/", 1)[1])
        status = "timeout"
        with c.stream("GET", run_url + "/events") as events:
            for line in events.iter_lines():
                if line.startswith("event: ") and line[7:] in ("done", "failed"):
                    status = line[7:]
                    break
        done = time.perf_counter() - t0
        if status != "done":
            return rid, done, done, status
        page = c.get(run_url)
        shown = time.perf_counter() - t0
        ok = page.status_code == 200 and 'id="verdict"' in page.text
        return rid, done, shown, "done" if ok else "no page"


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p * (len(xs) - 1)))]


def summary(walls: list[float], cpu: float | None = None) -> dict:
    out = {
        "median": round(statistics.median(walls), 3),
        "p90": round(pct(walls, 0.9), 3),
        "max": round(max(walls), 3),
        "n": len(walls),
    }
    if cpu is not None:
        out["cpu_per_check"] = round(cpu / len(walls), 3)
    return out


def sequential(srv_url: str, text: str, date: str, n: int) -> tuple[dict, dict]:
    """``n`` checks one after another: (submit -> report page, submit -> done) summaries."""
    cpu0 = time.process_time()
    results = [one_check(srv_url, text, date) for _ in range(n)]
    cpu = time.process_time() - cpu0
    bad = [r for r in results if r[3] != "done"]
    if bad:
        raise SystemExit(f"error: {len(bad)} warm checks did not finish: {bad[:3]}")
    return summary([r[2] for r in results], cpu), summary([r[1] for r in results])


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warm", type=int, default=10, help="warm checks per measurement")
    ap.add_argument("--load", type=int, default=2, help="clients checking in a loop meanwhile")
    ap.add_argument("--n", type=int, default=20, help="concurrent checks of the burst (max 50)")
    ap.add_argument("--workers", type=int, default=2, help="server check workers")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    n, warm_n = max(1, min(args.n, 50)), max(1, min(args.warm, 100))
    load_n = max(0, min(args.load, 16))
    tmp = Path(tempfile.mkdtemp(prefix="factseek-load-"))
    store = demo_store(tmp / "store")
    claim = demo_claim()
    date = claim.date.isoformat() if claim.date else ""
    settings = WebSettings(db=tmp / "h.sqlite", store=store, workers=args.workers)
    out: dict = {
        "n": n,
        "workers": args.workers,
        "cpus": os.cpu_count(),
        "loadavg_before": [round(x, 2) for x in os.getloadavg()],
    }
    with LocalServer(settings) as srv:
        runner = srv.app.state.runner
        t0 = time.perf_counter()
        runner.warm(check_options(settings, {}), claim)
        out["cold_s"] = round(time.perf_counter() - t0, 3)

        # 1. the peer: the pipeline alone, same parts, same process
        options = check_options(settings, {})
        cpu0 = time.process_time()
        walls = [runner.warm(options, claim) for _ in range(warm_n)]
        out["pipeline_s"] = summary(walls, time.process_time() - cpu0)

        # 2. quiet: one check at a time through HTTP
        out["warm_check_s"], out["warm_done_s"] = sequential(srv.url, claim.text, date, warm_n)

        # 3. loaded: the same while other clients keep the workers busy
        stop = threading.Event()
        background: list[tuple[int, float, float, str]] = []

        def loop(i: int) -> None:
            k = 0
            while not stop.is_set() and k < 200:
                background.append(one_check(srv.url, f"{claim.text} (background {i}.{k})", date))
                k += 1

        threads = [threading.Thread(target=loop, args=(i,)) for i in range(load_n)]
        for t in threads:
            t.start()
        time.sleep(0.5 if load_n else 0)  # let the load start
        out["loaded_check_s"], _ = sequential(srv.url, claim.text, date, warm_n)
        stop.set()
        for t in threads:
            t.join(TIMEOUT_S)
        out["load_clients"] = load_n
        out["load_checks_done"] = sum(r[3] == "done" for r in background)

        # 4. burst: n checks at once, none lost or mixed up
        results: dict[int, tuple[int, float, float, str]] = {}

        def worker(i: int) -> None:
            results[i] = one_check(srv.url, f"{claim.text} (load test {i})", date)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT_S)
        out["wall_s"] = round(time.perf_counter() - t0, 3)
        history = srv.app.state.history
        done = [i for i, r in results.items() if r[3] == "done"]
        mixed = [
            i
            for i in done
            if history.get(results[i][0]).report.claim.text != f"{claim.text} (load test {i})"
        ]
        secs = [results[i][2] for i in done]
        out.update(
            completed=len(done),
            mixed_up=len(mixed),
            p50_s=round(pct(secs, 0.5), 3) if secs else None,
            p95_s=round(pct(secs, 0.95), 3) if secs else None,
            max_s=round(max(secs), 3) if secs else None,
        )
    out["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    out["web_overhead_s"] = round(out["warm_check_s"]["median"] - out["pipeline_s"]["median"], 3)
    if args.json:
        print(json.dumps(out))
    else:
        p, q, ld = out["pipeline_s"], out["warm_check_s"], out["loaded_check_s"]
        print(
            f"machine: {out['cpus']} CPUs, load average {out['loadavg_before'][0]} before,"
            f" {out['loadavg_after'][0]} after; server workers {args.workers}\n"
            f"peer, pipeline alone (no HTTP): median {p['median']} s, p90 {p['p90']} s,"
            f" CPU {p['cpu_per_check']} s/check ({p['n']} checks)\n"
            f"warm check, quiet, submit -> report page: median {q['median']} s, p90 {q['p90']} s,"
            f" max {q['max']} s, CPU {q['cpu_per_check']} s/check; web overhead over the peer"
            f" {out['web_overhead_s']} s\n"
            f"warm check under a load of {load_n} clients checking in a loop: median"
            f" {ld['median']} s, p90 {ld['p90']} s, max {ld['max']} s"
            f" ({out['load_checks_done']} background checks done meanwhile)\n"
            f"burst: {out['completed']}/{n} checks completed, {out['mixed_up']} mixed up;"
            f" submit -> report p50 {out['p50_s']} s, p95 {out['p95_s']} s, max {out['max_s']} s"
            f" (wall {out['wall_s']} s)\n"
            f"cold first check {out['cold_s']} s"
        )
    return out


if __name__ == "__main__":
    result = main()
    sys.exit(0 if result["completed"] == result["n"] and not result["mixed_up"] else 1)
