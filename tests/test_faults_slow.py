"""The fault suite of issue 14 (slow): hostile pages and redirects on a local server through the
whole pipeline, ``kill -9`` of a batch at random points plus a torn journal line, and corruption
of every file of a store. Targets: 0 lost, 0 duplicated, 0 crashes, 0 wrong silent results.

Each test prints its counts (``pytest -m slow -s tests/test_faults_slow.py`` shows them); the
numbers in docs/web.md and docs/store.md come from these lines.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_fetch import (
    MALFORMED_LOCATIONS,
    PAGE,
    Site,
    drip_for,
    huge,
    redirect,
    send,
)

pytestmark = pytest.mark.slow

ENV = {**os.environ, "NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}

# ----------------------------------------------------------------------------- hostile web pages

FORBIDDEN = [
    "http://127.0.0.2:{port}/page", "http://[::1]/", "http://10.0.0.1/", "http://169.254.169.254/",
    "http://[::ffff:169.254.169.254]/", "http://[2002:a9fe:a9fe::1]/", "http://[2002:7f00:1::1]/",
    "http://[fec0::1]/", "http://[fd00::1]/", "http://[64:ff9b::7f00:1]/", "http://0.0.0.0/",
    "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "http://metadata.google.internal/",
    "http://100.64.0.1/", "http://[::127.0.0.1]/", "http://2130706433/", "http://0x7f.1/",
]  # fmt: skip


def hostile_routes(site: Site) -> dict[str, Any]:
    gz_bomb = __import__("gzip").compress(b"\0" * 20_000_000, compresslevel=9)
    routes: dict[str, Any] = {
        "/bomb": lambda h: send(h, 200, gz_bomb, Content_Encoding="gzip"),
        "/huge": huge,
        "/drip": drip_for(8.0),
        "/binary": lambda h: send(h, 200, os.urandom(20_000)),
        "/deep": lambda h: send(h, 200, b"<div>" * 100_000),
        "/loop": redirect("/loop"),
        "/pdf": lambda h: send(h, 200, b"%PDF-1.4", "application/pdf"),
        "/empty": lambda h: send(h, 200, b""),
        "/escapes": lambda h: send(
            h, 200, PAGE.replace(b"Housing bill", b"\x1b]0;pwned\x07Housing \x1b[2Jbill")
        ),
        "/script-url": redirect("/page?<script>alert(1)</script>"),
        "/bad-encoding": lambda h: send(h, 200, PAGE, Content_Encoding="br"),
        "/corrupt-gzip": lambda h: send(h, 200, b"\x1f\x8b\x08garbage", Content_Encoding="gzip"),
    }
    for i, location in enumerate(MALFORMED_LOCATIONS):
        routes[f"/malformed-{i}"] = redirect(location)
    for i, target in enumerate(FORBIDDEN):
        routes[f"/ssrf-{i}"] = redirect(target.format(port=site.port))
    return routes


def test_hostile_pages_through_the_pipeline(tmp_path: Path) -> None:
    from factseek.fetch import make_fetcher
    from factseek.pipeline import CheckConfig, Parts, run
    from factseek.report import render
    from factseek.search.base import FunctionSearch
    from factseek.summarize.extractive import ExtractiveSummarizer
    from factseek.types import Claim, Hit, Question

    site = Site()
    try:
        site.routes.update(hostile_routes(site))
        site.routes["/page"] = lambda h: send(h, 200, PAGE)
        good = [f"/page?good={i}" for i in range(6)]
        hostile = [p for p in site.routes if p != "/page"]
        urls = [site.base + p for p in hostile + good]
        hits = [Hit(url=u, title="t", rank=i + 1) for i, u in enumerate(urls)]

        class Decompose:
            name = "fixed"

            def decompose(self, claim: Claim) -> list[Question]:
                return [Question(text=claim.text, source="claim", kind="claim")]

        fetcher = make_fetcher(
            allow_hosts=["127.0.0.1"],
            max_bytes=200_000,
            total_timeout=2.0,
            read_timeout=1.5,
            connect_timeout=1.0,
            host_delay=0.0,
            per_host=4,
            deadline=30.0,
        )
        parts = Parts(
            search=FunctionSearch(lambda q, k: hits[:k]),
            decomposer=Decompose(),
            summarizer=ExtractiveSummarizer(),
            fetcher=fetcher,
        )
        t0 = time.monotonic()
        report = run(
            Claim(text="The mayor signed the housing bill.", date=dt.date(2024, 1, 1)),
            parts,
            CheckConfig(k=len(hits), undated="keep"),
        )
        seconds = time.monotonic() - t0
    finally:
        site.close()
    fetched = {d.url for d in report.documents}
    failed = {f.url for f in report.failures}
    lost_good = [u for u in urls if "good=" in u and u not in fetched]
    unaccounted = [u for u in urls if u not in fetched and u not in failed]
    escaped = [u for u in urls if "/ssrf-" in u and u in fetched]
    for fmt in ("json", "md", "html"):
        assert "\x1b" not in render(report, fmt)
    print(
        f"\nhostile pages: {len(hostile)} hostile + {len(good)} good URLs in {seconds:.1f}s; "
        f"good fetched {len(good) - len(lost_good)}/{len(good)}; failures recorded "
        f"{len(failed)}; unaccounted {len(unaccounted)}; SSRF escapes {len(escaped)}"
    )
    assert not lost_good and not unaccounted and not escaped
    assert all(f.error and "\n" not in f.error for f in report.failures)
    assert seconds < 40


# ----------------------------------------------------------------------------- kill -9 a batch

DOCS = [
    {
        "url": f"https://news{i % 5}.example/{i}",
        "title": f"Story {i}",
        "published": f"2022-0{1 + i % 9}-1{i % 9}",
        "text": f"The council approved {i} new buses for route {i % 7} after a vote of {i % 9} to 2.",
    }
    for i in range(200)
]


@pytest.fixture(scope="module")
def batch_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from factseek.store import build_store

    tmp = tmp_path_factory.mktemp("kill-store")
    (tmp / "d.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    build_store([tmp / "d.jsonl"], tmp / "s")
    return tmp / "s"


def start_batch(claims: Path, out: Path, store: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "factseek", "batch", str(claims), "--out", str(out),
         "--store", str(store), "-q"],
        env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip


def journal_lines(out: Path) -> list[str]:
    path = out / "journal.jsonl"
    return path.read_text(errors="replace").split("\n") if path.exists() else []


def test_kill_9_at_random_points_then_a_torn_line(batch_store: Path, tmp_path: Path) -> None:
    rng = random.Random(14)
    n_claims = 120  # enough that 20 kills of 0-2 claims each never finish the batch
    rows = [
        {"id": f"c{i:02d}", "text": f"The council approved {i} new buses for route {i % 7}.",
         "date": "2023-06-01"}
        for i in range(n_claims)
    ]  # fmt: skip
    claims = tmp_path / "claims.jsonl"
    claims.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "run"
    kills = 0
    while kills < 20:
        proc = start_batch(claims, out, batch_store)
        before = len([x for x in journal_lines(out) if x.strip()])
        target = before + rng.randint(0, 2)
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if len([x for x in journal_lines(out) if x.strip()]) >= target:
                time.sleep(rng.uniform(0.0, 0.15))  # somewhere inside the next claim
                break
            time.sleep(0.01)
        if proc.poll() is not None:
            break  # finished before the kill: the batch is done
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += 1
    # a torn last line, as a kill in the middle of a write leaves it
    lines = [x for x in journal_lines(out) if x.strip()]
    if lines:
        (out / "journal.jsonl").write_text(
            "\n".join(lines) + "\n" + lines[-1][: len(lines[-1]) // 2]
        )
    proc = start_batch(claims, out, batch_store)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err.decode()[-500:]

    records = [json.loads(x) for x in journal_lines(out) if x.strip()]
    ids = [r["id"] for r in records]
    lost = sorted({r["id"] for r in rows} - set(ids))
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    wrong = []
    for r in records:
        report = json.loads((out / r["report"]).read_text())
        row = rows[int(r["id"][1:])]
        if report["claim"]["text"] != row["text"] or report["claim"]["id"] != row["id"]:
            wrong.append(r["id"])
    print(
        f"\nkill -9: {kills} kills + 1 torn line over {n_claims} claims: lost {len(lost)}, "
        f"duplicated {len(duplicated)}, wrong reports {len(wrong)}, "
        f"journal lines valid {len(records)}/{len(records)}"
    )
    assert kills >= 10, f"only {kills} kills landed before the batch finished"
    assert not lost and not duplicated and not wrong
    assert len(records) == n_claims


# ----------------------------------------------------------------------------- store corruption

CORRUPTIONS = ("garble-second-half", "zero-length", "truncate-half", "flip-middle-byte", "delete")
CHILD = r"""
import datetime as dt, json, os, shutil, sys
import numpy as np
from factseek.constraints.hits import Constraints
from factseek.errors import StoreError
from factseek.store import StoreBackend

src, work, cases = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
queries = ["council buses route", "vote approved", "story 7 buses", "route 3"]

def answers(path):
    b = StoreBackend.open(path)
    out = []
    for q in queries:
        hits = b.search(q, 10, Constraints(before=dt.date(2022, 6, 1)))
        docs = b.documents(hits)
        out.append([[h.url, h.title, h.score, h.published and h.published.isoformat(), d.text]
                    for h, d in zip(hits, docs)])
    return out

expected = answers(src)
for i, (rel, how) in enumerate(cases):
    copy = os.path.join(work, f"case{i}")
    shutil.copytree(src, copy)
    path = os.path.join(copy, rel)
    data = bytearray(open(path, "rb").read())
    if how == "garble-second-half":
        half = len(data) // 2
        data[half:] = np.random.default_rng(i).integers(0, 256, len(data) - half, dtype=np.uint8).tobytes()
    elif how == "zero-length":
        data = bytearray()
    elif how == "truncate-half":
        data = data[: len(data) // 2]
    elif how == "flip-middle-byte" and data:
        data[len(data) // 2] ^= 0x5A
    if how == "delete":
        os.remove(path)
    else:
        open(path, "wb").write(bytes(data))
    print(f"START {i}", flush=True)
    try:
        got = answers(copy)
        print(f"RESULT {i} {'same' if got == expected else 'WRONG'}", flush=True)
    except StoreError as e:
        one = "\n" not in str(e) and "corrupt" in str(e) or "knowledge store" in str(e)
        print(f"RESULT {i} {'error' if one else 'BAD-ERROR'}", flush=True)
    except Exception as e:
        print(f"RESULT {i} UNCONVERTED {type(e).__name__}", flush=True)
    shutil.rmtree(copy, ignore_errors=True)
"""


def test_corruption_of_every_store_file(batch_store: Path, tmp_path: Path) -> None:
    files = sorted(
        str(p.relative_to(batch_store))
        for p in batch_store.rglob("*")
        if p.is_file() and p.name != ".lock"
    )
    cases = [(f, how) for f in files for how in CORRUPTIONS]
    outcomes: dict[int, str] = {}
    todo = list(range(len(cases)))
    while todo:  # one child runs the cases in order; a crash is recorded and the rest go on
        batch = [cases[i] for i in todo]
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, str(batch_store), str(tmp_path), json.dumps(batch)],
            capture_output=True, text=True, env=ENV, timeout=900,
        )  # fmt: skip
        started = None
        for line in proc.stdout.splitlines():
            kind, number, *rest = line.split()
            if kind == "START":
                started = todo[int(number)]
            else:
                outcomes[todo[int(number)]] = " ".join(rest)
                started = None
        if proc.returncode != 0:
            assert started is not None, proc.stderr[-800:]
            outcomes[started] = f"CRASH {proc.returncode}"
        todo = [i for i in todo if i not in outcomes]
        if proc.returncode == 0:
            assert not todo, proc.stderr[-800:]
    counts: dict[str, int] = {}
    for outcome in outcomes.values():
        counts[outcome.split()[0]] = counts.get(outcome.split()[0], 0) + 1
    bad = {cases[i]: o for i, o in outcomes.items() if o.split()[0] not in ("same", "error")}
    print(
        f"\nstore corruption: {len(files)} files x {len(CORRUPTIONS)} kinds = {len(cases)} cases: "
        f"{counts.get('error', 0)} clear 'store is corrupt' errors, {counts.get('same', 0)} "
        f"unchanged answers (the damage was in a part the queries never read), crashes "
        f"{sum(o.startswith('CRASH') for o in outcomes.values())}, wrong results "
        f"{counts.get('WRONG', 0)}, unconverted {counts.get('UNCONVERTED', 0)}"
    )
    assert not bad, bad
