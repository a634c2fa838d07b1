"""``--ray`` on a real local Ray cluster (slow): 20 claims on the bundled demo store with a worker
killed mid-run (exactly once, the same reports and summaries as a local run), the README's
command killed mid-run with its cluster then run again (it resumes), ``eval pipeline --ray``
scoring as a local run, a worker refusing a corrupt store with its node named, and one rate
limit and one Retry-After pause shared by processes of the cluster.

Each test prints what it saw (``pytest -m slow -s tests/test_distributed_slow.py``)."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes in /proc"),
]
ray = pytest.importorskip("ray")

# One hash seed for every process (Ray workers inherit it), so a difference can only come from
# the distribution. Evidence selection no longer depends on it (its sums run over sorted terms,
# summarize/evidence.py; the demo's report is the same under PYTHONHASHSEED 1, 2 and 3).
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}
N_CLAIMS = 20
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
)
DATES = ("2021-01-01", "2022-06-01", "2023-10-05", "2024-06-01")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The demo store, 20 claims about it, and their local run (the reference)."""
    from factseek.demo import demo_store

    tmp = tmp_path_factory.mktemp("ray-world")
    store = demo_store(tmp / "store")
    rows = [
        {
            "id": f"c{i:02d}",
            "claim": f"{SUBJECTS[i % 4]} {PREDICATES[i % 5]}.",
            "date": DATES[i % 4],
            **({"speaker": "Tom Brannigan"} if i % 2 else {}),
        }
        for i in range(N_CLAIMS)
    ]
    claims = tmp / "claims.jsonl"
    claims.write_text("".join(json.dumps(r) + "\n" for r in rows))
    local = tmp / "local"
    done = subprocess.run(
        batch_args(claims, local, store), env=ENV, capture_output=True, timeout=900
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return {"store": store, "claims": claims, "local": local}


def batch_args(claims: Path, out: Path, store: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "factseek", "batch", str(claims), "--out", str(out),
        "--store", str(store), "-f", "md", *extra,
    ]  # fmt: skip


def journal_ids(out: Path) -> list[str]:
    path = out / "journal.jsonl"
    if not path.exists():
        return []
    ids = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            ids.append(json.loads(line)["id"])
        except ValueError:
            continue  # a torn last line
    return ids


def processes() -> dict[int, tuple[int, int, str]]:
    """pid -> (parent, session, command line) of every process now."""
    out = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        out[int(d.name)] = (int(fields[1]), int(fields[3]), cmd)
    return out


def workers_of(driver: int) -> list[int]:
    """The Ray worker processes that run ClaimWorker actors under ``driver``."""
    procs = processes()
    below, frontier = set(), {driver}
    while frontier:
        frontier = {p for p, (parent, _, _) in procs.items() if parent in frontier} - below
        below |= frontier
    return sorted(p for p in below if "ClaimWorker" in procs[p][2])


def wait_for_journal(proc: subprocess.Popen[bytes], out: Path, n: int, limit: float) -> int:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        done = len(journal_ids(out))
        if done >= n:
            return done
        time.sleep(0.05)
    err = proc.stderr.read().decode()[-2000:] if proc.poll() is not None and proc.stderr else ""
    raise AssertionError(f"the run ended or stalled before {n} claims were journaled: {err}")


def kill_session(sid: int) -> None:
    """SIGKILL every process left in session ``sid`` (a driver started in a new session, and
    the local cluster it started)."""
    for pid, (_, session, _) in processes().items():
        if session == sid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def start(args: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        args, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )


def without_timings(path: Path, store_path: bool = True) -> Any:
    """A report file with its stage timings taken out (they differ between any two runs), and
    the store's path as given on the command line unless ``store_path``."""
    if path.suffix == ".json":
        data = json.loads(path.read_text())
        data.pop("timings")
        if not store_path:
            data["config"].pop("store")
        return data
    text = path.read_text()
    lines = text.splitlines()
    i = lines.index("## Timings (s)") if "## Timings (s)" in lines else None
    return lines[: i + 1] + lines[i + 3 :] if i is not None else lines


def assert_same_as_local(out: Path, local: Path, store_path: bool = True) -> None:
    ids = journal_ids(out)
    assert sorted(ids) == [f"c{i:02d}" for i in range(N_CLAIMS)], ids  # each claim exactly once
    assert not (out / "errors.jsonl").read_text()
    mine = sorted(p.name for p in (out / "reports").iterdir() if not p.name.startswith("."))
    assert {f"{i}.json" for i in ids} <= set(mine)
    for name in mine:  # the local run wrote JSON and Markdown
        assert without_timings(out / "reports" / name, store_path) == without_timings(
            local / "reports" / name, store_path
        ), name
    for name in ("summary.csv", "summary.md"):  # the same but the seconds column, and the
        cut = re.compile(r",[0-9.]+,(reports/)|\| [0-9.]+ \|$|\.(md|json)\b", re.M)  # format
        assert cut.sub(r"\1", (out / name).read_text()) == cut.sub(  # each row links
            r"\1", (local / name).read_text()
        )
    key = lambda line: json.loads(line)["id"]  # noqa: E731
    assert sorted((out / "journal.jsonl").read_text().splitlines(), key=key) == sorted(
        (local / "journal.jsonl").read_text().splitlines(), key=key
    )


def test_a_killed_worker_loses_nothing_and_repeats_nothing(
    world: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "ray"
    proc = start(batch_args(world["claims"], out, world["store"], "--ray", "--ray-workers", "2"))
    try:
        at_kill = wait_for_journal(proc, out, 3, 900)
        workers = workers_of(proc.pid)
        assert len(workers) == 2, workers
        os.kill(workers[0], signal.SIGKILL)
        _, err = proc.communicate(timeout=900)
    finally:
        kill_session(proc.pid)
    stderr = err.decode()
    assert proc.returncode == 0, stderr[-2000:]
    print(f"\nkilled worker {workers[0]} after {at_kill}/{N_CLAIMS} claims; {stderr.strip()}")
    assert at_kill < N_CLAIMS
    assert "1 worker died and was replaced" in stderr
    assert f"{N_CLAIMS} checked, 0 already done, 0 failed" in stderr
    assert_same_as_local(out, world["local"])


def readme_command() -> list[str]:
    """The command of the README's "Checking at scale" example."""
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = text.split("## Checking at scale", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```sh\n(.*?)```", section, flags=re.S)
    (line,) = [x for x in block.splitlines() if x.startswith("factseek batch")]
    return shlex.split(line.split("#", 1)[0])


def test_a_killed_driver_loses_nothing_and_a_rerun_resumes(
    world: dict[str, Path], tmp_path: Path
) -> None:
    """The README's command, killed with its cluster mid-run, then run again."""
    (tmp_path / "claims.jsonl").symlink_to(world["claims"])
    (tmp_path / "my-store").symlink_to(world["store"])
    argv = readme_command()
    assert argv[:2] == ["factseek", "batch"] and "--ray" in argv
    out = tmp_path / argv[argv.index("--out") + 1]
    args = [sys.executable, "-m", "factseek", *argv[1:]]
    proc = subprocess.Popen(
        args, cwd=tmp_path, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    try:
        at_kill = wait_for_journal(proc, out, 3, 900)
    finally:
        kill_session(proc.pid)  # the driver and the local cluster it started, all at once
        proc.wait()
    lines = (out / "journal.jsonl").read_text().splitlines()
    (out / "journal.jsonl").write_text("\n".join(lines) + "\n" + lines[-1][:10])  # torn
    again = subprocess.run(args, cwd=tmp_path, env=ENV, capture_output=True, timeout=900)
    stderr = again.stderr.decode()
    assert again.returncode == 0, stderr[-2000:]
    done = len(lines)
    print(f"\nkilled the driver after {at_kill} claims ({done} journaled); rerun: {stderr.strip()}")
    assert done < N_CLAIMS
    assert f"{N_CLAIMS - done} checked, {done} already done, 0 failed" in stderr
    assert_same_as_local(out, world["local"], store_path=False)  # "my-store" here


def test_eval_pipeline_on_ray_scores_as_a_local_run(tmp_path: Path) -> None:
    """``eval pipeline --ray`` on test_eval_pipeline's 10-claim AVeriTeC-format fixture."""
    sys.path.insert(0, str(Path(__file__).parent))
    from test_eval_pipeline import _fixture

    claims, store = _fixture(tmp_path)
    args = [sys.executable, "-m", "factseek", "eval", "pipeline", "--claims", str(claims),
            "--format", "averitec", "--store", str(store), "--undated", "keep", "-q",
            "--resamples", "200"]  # fmt: skip
    runs = {}
    for name, extra in (("local", []), ("ray", ["--ray", "--ray-workers", "2"])):
        done = subprocess.run(
            [*args, "--out", str(tmp_path / name), *extra], env=ENV, capture_output=True,
            timeout=900,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        runs[name] = done
    print(f"\n{runs['ray'].stderr.decode().strip()}")
    assert runs["ray"].stdout == runs["local"].stdout  # the results table
    for name in ("results.json", "results.md"):
        assert (tmp_path / "ray" / name).read_text() == (tmp_path / "local" / name).read_text()
    predictions = sorted(p.name for p in (tmp_path / "local").glob("predictions-*.jsonl"))
    assert predictions
    for name in predictions:
        assert (tmp_path / "ray" / name).read_text() == (tmp_path / "local" / name).read_text()
    assert sorted(journal_ids(tmp_path / "ray")) == sorted(journal_ids(tmp_path / "local"))


def test_a_worker_refuses_a_corrupt_store_naming_its_node(
    world: dict[str, Path], tmp_path: Path
) -> None:
    store = tmp_path / "store"
    shutil.copytree(world["store"], store)
    postings = next(store.glob("index-*/postings_doc.npy"))
    data = bytearray(postings.read_bytes())
    data[-3] ^= 0xFF  # deep in a large file: the driver's open does not read it
    postings.write_bytes(bytes(data))
    args = batch_args(world["claims"], tmp_path / "out", store, "--ray", "--ray-workers", "1")
    done = subprocess.run(args, env=ENV, capture_output=True, timeout=900)
    stderr = done.stderr.decode()
    print(f"\n{stderr.strip()}")
    assert done.returncode == 1
    assert re.search(
        r"error: worker on node \S+ \([0-9.]+\): store \S+ is corrupt: postings_doc\.npy does "
        r"not match its checksum \(block 0\); rebuild it with: factseek index build",
        stderr,
    ), stderr
    assert journal_ids(tmp_path / "out") == []


def hammer(limits: Any, key: str, n: int, pause: float = 0.0, at: float = 0.0) -> list[float]:
    """In a Ray process: from wall time ``at``, ``n`` requests to ``key`` under the run's shared
    limits; their start times (the key paused for ``pause`` seconds first, when given)."""
    from factseek.net import ratelimit
    from factseek.runs.distributed import RayLimits

    ratelimit.install(RayLimits(limits))
    time.sleep(max(0.0, at - time.time()))
    if pause:
        ratelimit.pause(key, pause)
    stamps = []
    for _ in range(n):
        ratelimit.hold(key)
        stamps.append(time.time())
    return stamps


def test_one_rate_and_one_pause_for_every_process_of_the_cluster() -> None:
    from factseek.runs.distributed import LOCAL, SharedLimits

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.init(address=LOCAL, num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        limits = ray.remote(num_cpus=0)(SharedLimits).remote({"brave": 5.0})
        task = ray.remote(num_cpus=1)(hammer)
        ray.get([task.remote(limits, "warm", 1) for _ in range(2)])  # both processes up
        at = time.time() + 2.0  # both start together
        parts = ray.get([task.remote(limits, "brave", 6, 0.0, at) for _ in range(2)])
        ray.get(task.remote(limits, "llm", 0, 3.0))  # one process is told Retry-After: 3
        paused_at = time.time()
        after = ray.get(task.remote(limits, "llm", 1))[0]
    finally:
        ray.shutdown()
    stamps = sorted(s for part in parts for s in part)
    gaps = [b - a for a, b in itertools.pairwise(stamps)]
    print(
        f"\n12 requests at 5/s from 2 processes starting together: span "
        f"{stamps[-1] - stamps[0]:.2f} s, smallest gap {min(gaps):.3f} s; the paused key's next "
        f"request {after - paused_at:.2f} s later"
    )
    assert max(parts[0]) > min(parts[1]) and max(parts[1]) > min(parts[0])  # they overlapped
    assert min(gaps) >= 0.1  # one rate for both (5/s each would start pairs together)
    assert stamps[-1] - stamps[0] >= 11 * 0.2 * 0.9
    assert after - paused_at >= 2.5
