"""Bounded local load test of `factseek serve`: N concurrent checks on the demo store.

Starts the app on a free loopback port (uvicorn in a thread), warms it with one check, times
``--warm`` sequential checks (the warm latency a user sees), then submits ``--n`` checks at once
from ``--n`` client threads, each with its own claim text, and waits for all of them. It checks
that every run completed and that every stored report carries its own claim (none mixed up), and
prints p50/p95/max of submit-to-done seconds. Traffic goes to 127.0.0.1 only; every loop is
bounded in count and time.

    python bench/web_load.py --n 20 [--workers 2] [--json]
"""

from __future__ import annotations

import argparse
import json
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


def one_check(url: str, text: str, date: str) -> tuple[int, float, str]:
    """Submit a check through the form like a browser; return (run id, seconds, status)."""
    with httpx.Client(base_url=url, timeout=30, follow_redirects=False) as c:
        token = re.search(r'name="csrf_token" value="([^"]+)"', c.get("/").text).group(1)
        t0 = time.perf_counter()
        r = c.post("/check", data={"csrf_token": token, "claim": text, "date": date})
        run = r.headers["location"]
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            status = c.get(run + "/status").json()["status"]
            if status != "running":
                return int(run.rsplit("/", 1)[1]), time.perf_counter() - t0, status
            time.sleep(0.02)
        return int(run.rsplit("/", 1)[1]), time.perf_counter() - t0, "timeout"


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p * (len(xs) - 1)))]


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20, help="concurrent checks (at most 50)")
    ap.add_argument("--warm", type=int, default=5, help="sequential warm checks to time")
    ap.add_argument("--workers", type=int, default=2, help="server check workers")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    n = max(1, min(args.n, 50))
    tmp = Path(tempfile.mkdtemp(prefix="factseek-load-"))
    store = demo_store(tmp / "store")
    claim = demo_claim()
    date = claim.date.isoformat() if claim.date else ""
    settings = WebSettings(db=tmp / "h.sqlite", store=store, workers=args.workers)
    out: dict = {"n": n, "workers": args.workers}
    with LocalServer(settings) as srv:
        t0 = time.perf_counter()
        srv.app.state.runner.warm(check_options(settings, {}), claim)
        out["cold_s"] = round(time.perf_counter() - t0, 3)
        warm = [one_check(srv.url, claim.text, date)[1] for _ in range(args.warm)]
        out["warm_check_s"] = {
            "median": round(statistics.median(warm), 3),
            "max": round(max(warm), 3),
        }
        results: dict[int, tuple[int, float, str]] = {}

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
        done = [i for i, r in results.items() if r[2] == "done"]
        mixed = [
            i
            for i in done
            if history.get(results[i][0]).report.claim.text != f"{claim.text} (load test {i})"
        ]
        secs = [results[i][1] for i in done]
        out.update(
            completed=len(done),
            mixed_up=len(mixed),
            p50_s=round(pct(secs, 0.5), 3) if secs else None,
            p95_s=round(pct(secs, 0.95), 3) if secs else None,
            max_s=round(max(secs), 3) if secs else None,
        )
    if args.json:
        print(json.dumps(out))
    else:
        print(
            f"{out['completed']}/{n} checks completed, {out['mixed_up']} mixed up;"
            f" submit-to-done p50 {out['p50_s']} s, p95 {out['p95_s']} s, max {out['max_s']} s"
            f" (wall {out['wall_s']} s, {args.workers} workers); warm single check median"
            f" {out['warm_check_s']['median']} s (cold first check {out['cold_s']} s)"
        )
    return out


if __name__ == "__main__":
    result = main()
    sys.exit(0 if result["completed"] == result["n"] and not result["mixed_up"] else 1)
