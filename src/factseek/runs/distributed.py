"""Batch checking and ``eval pipeline`` on a Ray cluster (``--ray [ADDRESS]``): the same run
folder as a local run, claims spread over workers.

Roles:

1. **The driver** (the process running ``factseek batch`` or ``eval pipeline``) owns the run
   folder. It skips the claims already in the journal (``factseek.runs.batch``'s rules), hands the
   others out, and writes each result as it comes back: the report files (atomically, the bytes
   the worker rendered) and then its journal line (flushed), or an ``errors.jsonl`` line, in the
   formats of a local run. Workers never write into the run folder.
2. **Workers** (``ClaimWorker``, one Ray actor per CPU unless ``workers`` says otherwise, one
   CPU and one thread each): each opens the store read-only, verifies every block of it and
   checks that it is the driver's store (the same ``Store.fingerprint``: a stale copy on a node
   is refused, not searched), builds the parts (models) once, then checks claims one at a time
   and returns each report rendered in every format asked for. A worker that cannot start, or
   runs another factseek version than the driver, stops the run with one line that names its
   node (``ClusterError``).
3. **Shared limits** (``SharedLimits``, one small actor per run, no CPU): the
   ``factseek.net.ratelimit`` buckets that every worker's HTTP clients consult, so the cluster
   keeps one rate (``$FACTSEEK_RATE_LIMITS`` of the driver) and one ``Retry-After`` back-off
   per search provider and for the LLM.

**Exactly once.** Only the driver journals a claim, once, after its report files are written.
Each worker has at most ``IN_FLIGHT`` claims queued. A worker that dies (killed, out of memory,
its node lost) loses only unjournaled work: its claims go back to the front of the queue and a
new worker replaces it (at most ``max(4, 2 * workers)`` replacements per run, then
``ClusterError``). The claim a worker was running when it died counts an attempt; after
``MAX_ATTEMPTS`` it is recorded in ``errors.jsonl`` instead (it may be what kills them; a rerun
tries it again, like any failed claim). A driver that dies loses its in-flight claims only; a
rerun skips the journaled ones, like a local rerun.

**Same results.** Workers render with the code of a local run, so reports are the bytes a local
run writes, except the stage ``timings`` (measurements; two local runs differ there too), given
one ``PYTHONHASHSEED`` for both (evidence selection's float sums follow a set's order; see
docs/scale.md). The journal holds the same lines in the order claims finished; the summaries
list claims in the claims file's order (``factseek.runs.summary``), so they match a local run's.
A local cluster runs its workers at the driver's priority, as a local run would be.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factseek.errors import ClusterError, ConfigError, FactseekError, MissingDependency, StoreError
from factseek.net import ratelimit

if TYPE_CHECKING:
    from factseek.api import CheckOptions
    from factseek.pipeline import CheckConfig
    from factseek.types import Claim

LOCAL = "local"  # the address that starts a cluster on this machine
IN_FLIGHT = 2  # claims queued per worker: the next one is there when the last one returns
MAX_ATTEMPTS = 3  # a claim whose worker died this often is recorded as failed
OBJECT_STORE_BYTES = 256 * 2**20  # a local cluster's object store: reports are small


@dataclass(frozen=True, kw_only=True)
class RaySettings:
    """Where the claims run. ``address``: ``"local"`` starts a cluster on this machine (stopped
    at the end); ``"auto"``, ``HOST:PORT`` or ``ray://HOST:PORT`` joins a running one.
    ``workers``: Ray workers (default: one per CPU of the cluster)."""

    address: str = LOCAL
    workers: int | None = None

    def __post_init__(self) -> None:
        if self.workers is not None and self.workers < 1:
            raise ConfigError(f"--ray-workers must be at least 1, got {self.workers}")
        if not self.address.strip():
            raise ConfigError("--ray needs an address: local, auto, HOST:PORT or ray://HOST:PORT")


@dataclass(frozen=True, kw_only=True)
class WorkerStats:
    """One worker of a run: where it ran, its start-up (seconds, CPU seconds in the worker:
    imports, the store's checks, the parts) and the claims it returned."""

    node: str
    pid: int
    startup_s: float  # from the driver asking for it to the worker being ready
    startup_cpu_s: float
    claims: int = 0
    claim_cpu_s: float = 0.0  # the claims' CPU seconds in the worker, the first one included
    first_claim_cpu_s: float = 0.0  # the first one pays for what parts load lazily
    process_cpu_s: float = 0.0  # the worker process's CPU time at the end (0: it died)
    died: bool = False


@dataclass(frozen=True, kw_only=True)
class ClusterStats:
    """What ``run_claims_ray`` measured: the cluster's start (0 when it was running already),
    each worker (replacements included), and the workers that died."""

    cluster_start_s: float
    workers: tuple[WorkerStats, ...] = ()
    died: int = 0
    driver_cpu_s: float = 0.0
    claims_wall_s: float = 0.0  # from the first worker ready to the last result

    def line(self) -> str:
        """One line for the console."""
        ws = [w for w in self.workers if not w.died]
        nodes = len({w.node for w in ws})
        startup = max((w.startup_s for w in self.workers), default=0.0)
        text = (
            f"ray: {len(ws)} worker{'s' * (len(ws) != 1)} on {nodes} node{'s' * (nodes != 1)}, "
            f"each ready within {startup:.1f} s"
        )
        if self.cluster_start_s:
            text += f" (local cluster started in {self.cluster_start_s:.1f} s)"
        if self.died:
            were = "worker died and was" if self.died == 1 else "workers died and were"
            text += f"; {self.died} {were} replaced"
        return text


# ----------------------------------------------------------------------------- inside Ray


def node_name() -> str:
    """This machine as an error message names it: ``node HOST (IP)``."""
    host = socket.gethostname()
    try:
        import ray

        return f"node {host} ({ray.util.get_node_ip_address()})"
    except Exception:  # not inside Ray, or no address yet: the host name is enough
        return f"node {host}"


def check_store(path: str | Path, expected: str | None) -> None:
    """Refuse a store that fails its integrity check (every block) or is not the driver's."""
    from factseek.store.reader import Store

    store = Store.open(path)
    store.verify()
    if expected is not None and store.fingerprint() != expected:
        raise StoreError(
            f"store {path} is not the driver's (another build, or an outdated copy): copy the "
            f"driver's store to this node or put it on storage every node shares"
        )


def claim_error(e: BaseException) -> str:
    """A failed claim's message as ``errors.jsonl`` stores it (as a local batch does)."""
    from factseek.redact import redact_text
    from factseek.sanitize import clean_text

    message = str(e) if isinstance(e, FactseekError) else f"{type(e).__name__}: {e}"
    return redact_text(clean_text(message))[:2000]


class ClaimWorker:
    """One Ray worker (a plain class: ``ray.remote`` wraps it in ``run_claims_ray``): the store
    checked and the parts built once, at start; then ``check`` one claim at a time."""

    def __init__(
        self,
        options: CheckOptions,
        config: CheckConfig,
        formats: Sequence[str],
        store_fingerprint: str | None,
        limits: Any = None,
    ) -> None:
        t0, c0 = time.perf_counter(), time.process_time()
        self.node = node_name()
        self.config = config
        self.formats = sorted(set(formats) - {"json"})
        self.error = ""
        self.parts: Any = None
        self.claims = 0
        try:
            if limits is not None:
                ratelimit.install(RayLimits(limits))
            if options.store is not None and options.search == "local" and not options.replay:
                check_store(Path(options.store).expanduser(), store_fingerprint)
            from factseek.api import build_parts

            self.parts = build_parts(options)
        except Exception as e:  # reported by ready(): the driver stops the run with it
            self.error = f"worker on {self.node}: {claim_error(e)}"
        self.startup_s = time.perf_counter() - t0
        self.startup_cpu_s = time.process_time() - c0

    def ready(self) -> dict[str, Any]:
        from factseek import __version__

        return {
            "version": __version__,
            "error": self.error,
            "node": self.node,
            "pid": os.getpid(),
            "startup_cpu_s": self.startup_cpu_s,
        }

    def check(self, claim: Claim) -> dict[str, Any]:
        """``{"texts": {format: report}}`` or ``{"error": message}``, and ``cpu_s``."""
        from factseek.pipeline import run
        from factseek.report import render

        c0 = time.process_time()
        result: dict[str, Any]
        try:
            report = run(claim, self.parts, self.config)
            texts = {"json": render(report, "json")}
            for fmt in self.formats:
                texts[fmt] = render(report, fmt)
            result = {"texts": texts}
        except Exception as e:  # one claim never stops the batch (as run_claims)
            result = {"error": claim_error(e)}
        self.claims += 1
        result["cpu_s"] = time.process_time() - c0
        return result

    def stats(self) -> dict[str, Any]:
        return {"claims": self.claims, "process_cpu_s": time.process_time()}

    def pid(self) -> int:
        return os.getpid()


class SharedLimits:
    """The run's ``ratelimit.Buckets`` in one actor, on the actor's clock."""

    def __init__(self, rates: dict[str, float]) -> None:
        self._buckets = ratelimit.Buckets(rates)

    def reserve(self, key: str) -> float:
        return self._buckets.reserve(key)

    def pause(self, key: str, seconds: float) -> None:
        self._buckets.pause(key, seconds)


class RayLimits:
    """``ratelimit.Limits`` over the run's ``SharedLimits`` actor (installed in each worker)."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    def reserve(self, key: str) -> float:
        import ray

        try:
            return float(ray.get(self._handle.reserve.remote(key), timeout=60))
        except ray.exceptions.RayError:  # the limits are gone: each client still honours the
            return 0.0  # Retry-After it is sent, as without a cluster

    def pause(self, key: str, seconds: float) -> None:
        self._handle.pause.remote(key, seconds)  # ordered before this worker's next reserve


# ----------------------------------------------------------------------------- the driver


def _ray() -> Any:
    try:
        import ray
    except ImportError as e:
        raise MissingDependency("ray", "dist", "--ray") from e
    return ray


@contextmanager
def cluster(settings: RaySettings) -> Iterator[float]:
    """Connected to the cluster of ``settings`` for the block (a local one started and stopped
    with it; a driver already connected stays so); yields the seconds the start took."""
    ray = _ray()
    if ray.is_initialized():
        yield 0.0
        return
    t0 = time.perf_counter()
    tries = 2 if settings.address == LOCAL else 1  # a busy machine can time out Ray's start
    for attempt in range(tries):
        try:
            if settings.address == LOCAL:
                ray.init(
                    address=LOCAL,  # a new cluster, never one another run left on this machine
                    num_cpus=settings.workers or os.cpu_count() or 1,
                    object_store_memory=OBJECT_STORE_BYTES,
                    include_dashboard=False,
                    log_to_driver=False,
                    logging_level="ERROR",
                    # the workers do the run's work: at the driver's priority, as a local run
                    # (Ray would run them 15 nice levels lower, starved on a busy machine)
                    _system_config={"worker_niceness": 0},
                )
            else:
                ray.init(address=settings.address, log_to_driver=False, logging_level="ERROR")
            break
        except Exception as e:  # Ray raises ConnectionError, RuntimeError, ValueError...
            ray.shutdown()
            if attempt + 1 < tries:
                continue
            where = "a local Ray cluster" if settings.address == LOCAL else settings.address
            raise ClusterError(f"cannot start or reach {where}: {_first_line(e)}") from None
    started = time.perf_counter() - t0 if settings.address == LOCAL else 0.0
    try:
        yield started
    finally:
        ray.shutdown()


def store_fingerprint(options: CheckOptions) -> str | None:
    """The driver's store fingerprint, which every worker's copy must match (None: no store)."""
    if options.store is None or options.search != "local" or options.replay:
        return None
    from factseek.store.reader import Store

    return Store.open(Path(options.store).expanduser()).fingerprint()


@dataclass
class _Worker:
    handle: Any
    asked: float  # perf_counter when the driver asked for it
    stats: dict[str, Any] = field(default_factory=dict)
    inflight: deque[Any] = field(default_factory=deque)  # refs, oldest (running) first


def run_claims_ray(
    claims: Sequence[tuple[int, Claim]],
    out: Path,
    options: CheckOptions,
    config: CheckConfig,
    settings: RaySettings,
    *,
    progress: bool = True,
    formats: Sequence[str] = (),
    on_stats: Callable[[ClusterStats], None] | None = None,
) -> tuple[int, int, int]:
    """``batch.run_claims`` on a Ray cluster (see the module docstring): check the ``(line,
    claim)`` pairs not yet in ``out``'s journal. Returns (checked, skipped, failed)."""
    from factseek.runs.resume import prepare_run

    if options.record:
        raise ConfigError(
            "--record cannot be used with --ray (a bundle is one folder written by one process): "
            "record a local run, then replay it anywhere"
        )
    todo = prepare_run(out, claims)  # the same resume checks as a local run
    if not todo:
        return 0, len(claims), 0
    fingerprint = store_fingerprint(options)  # the driver's store must open: fail before Ray
    c0 = time.process_time()
    with cluster(settings) as started:
        stats, counts = _drive(todo, out, options, config, settings, fingerprint, progress, formats)
    stats = replace(stats, cluster_start_s=started, driver_cpu_s=time.process_time() - c0)
    if progress:
        import sys

        print(stats.line(), file=sys.stderr)
    if on_stats is not None:
        on_stats(stats)
    checked, failed = counts
    return checked, len(claims) - len(todo), failed


def _drive(
    todo: list[tuple[int, Claim]],
    out: Path,
    options: CheckOptions,
    config: CheckConfig,
    settings: RaySettings,
    fingerprint: str | None,
    progress: bool,
    formats: Sequence[str],
) -> tuple[ClusterStats, tuple[int, int]]:
    from rich.progress import Progress

    from factseek import __version__
    from factseek.files import atomic_write
    from factseek.runs.resume import claim_id, report_name

    ray = _ray()
    n_workers = settings.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    remote_worker = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(ClaimWorker)
    limits = (
        ray.remote(num_cpus=0)(SharedLimits)
        .options(name=f"factseek-limits-{uuid.uuid4().hex[:12]}")
        .remote(ratelimit.rates_from_env())
    )
    starting: dict[Any, _Worker] = {}  # ready() ref -> worker

    def start_worker() -> None:
        handle = remote_worker.options(scheduling_strategy="SPREAD").remote(
            options, config, tuple(formats), fingerprint, limits
        )
        starting[handle.ready.remote()] = _Worker(handle=handle, asked=time.perf_counter())

    for _ in range(n_workers):
        start_worker()
    ready: list[_Worker] = []
    finished: list[WorkerStats] = []
    pending: dict[Any, tuple[_Worker, int, Claim]] = {}
    queue = deque(todo)
    attempts: dict[str, int] = {}
    died = 0
    replacements = max(4, 2 * n_workers)
    checked = failed = 0
    formats = sorted(set(formats) - {"json"})
    first_ready = 0.0

    def record_error(ef: Any, n: int, claim: Claim, message: str) -> None:
        ef.write(json.dumps({"id": claim_id(claim), "line": n, "error": message}) + "\n")
        ef.flush()

    with (
        Progress(disable=not progress, transient=True) as bar,
        open(out / "journal.jsonl", "a", encoding="utf-8") as jf,
        open(out / "errors.jsonl", "a", encoding="utf-8") as ef,
    ):
        task = bar.add_task("checking claims (ray)", total=len(todo))
        try:
            while queue or pending:
                for w in ready:
                    while queue and len(w.inflight) < IN_FLIGHT:
                        n, claim = queue.popleft()
                        ref = w.handle.check.remote(claim)
                        w.inflight.append(ref)
                        pending[ref] = (w, n, claim)
                if not pending and not starting:
                    raise ClusterError("no Ray worker is left to check the remaining claims")
                (ref,), _ = ray.wait([*starting, *pending], num_returns=1)  # starts first
                if ref in starting:
                    w = starting.pop(ref)
                    try:
                        info = ray.get(ref)
                    except ray.exceptions.RayError as e:  # died while starting: try another
                        died += 1
                        if died > replacements:
                            raise ClusterError(
                                f"Ray workers keep dying at start: {_first_line(e)}"
                            ) from None
                        start_worker()
                        continue
                    if info["error"]:
                        raise ClusterError(info["error"])
                    if info["version"] != __version__:
                        raise ClusterError(
                            f"worker on {info['node']} runs factseek {info['version']}, the "
                            f"driver {__version__}: install the same version on every node"
                        )
                    w.stats = {**info, "startup_s": time.perf_counter() - w.asked}
                    ready.append(w)
                    first_ready = first_ready or time.perf_counter()
                    continue
                w, n, claim = pending.pop(ref)
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayTaskError as e:  # the pipeline's own errors are caught
                    cause = getattr(e, "cause", None) or e
                    result = {"error": _first_line(Exception(claim_error(cause))), "cpu_s": 0.0}
                except ray.exceptions.RayError:  # the worker died
                    died += 1
                    ready.remove(w)
                    finished.append(_worker_stats(w, died=True))
                    ray.kill(w.handle, no_restart=True)
                    lost = [(n, claim) if r == ref else pending.pop(r)[1:] for r in w.inflight]
                    running = claim_id(lost[0][1])  # the oldest call was the one running
                    attempts[running] = attempts.get(running, 0) + 1
                    if attempts[running] >= MAX_ATTEMPTS:
                        message = f"a Ray worker died {MAX_ATTEMPTS} times while checking it"
                        record_error(ef, *lost.pop(0), message)
                        failed += 1
                        bar.advance(task)
                    queue.extendleft(reversed(lost))  # first again, in their order
                    if died > replacements:
                        raise ClusterError(
                            f"{died} Ray workers died; stopping (finished claims are journaled: "
                            "rerun to resume)"
                        ) from None
                    start_worker()
                    continue
                w.inflight.remove(ref)
                if not w.stats.get("claims"):  # lazy loads (spaCy, numba, first forward pass)
                    w.stats["first_claim_cpu_s"] = result["cpu_s"]
                w.stats["claims"] = w.stats.get("claims", 0) + 1
                w.stats["claim_cpu_s"] = w.stats.get("claim_cpu_s", 0.0) + result["cpu_s"]
                if "error" in result:
                    record_error(ef, n, claim, result["error"])
                    failed += 1
                else:
                    name = report_name(claim_id(claim))
                    path = out / name
                    try:
                        atomic_write(path, result["texts"]["json"])
                        for fmt in formats:
                            atomic_write(path.with_suffix(f".{fmt}"), result["texts"][fmt])
                    except OSError as e:  # the output folder failed: stop, as a local batch does
                        raise FactseekError(f"cannot write {path}: {e.strerror or e}") from None
                    jf.write(json.dumps({"id": claim_id(claim), "line": n, "report": name}) + "\n")
                    jf.flush()
                    checked += 1
                bar.advance(task)
        finally:
            try:  # each worker's whole CPU time (Ray's start of the process included)
                totals = ray.get([w.handle.stats.remote() for w in ready], timeout=30)
            except ray.exceptions.RayError:
                totals = [{} for _ in ready]
            for w, total in zip(ready, totals, strict=True):
                w.stats["process_cpu_s"] = total.get("process_cpu_s", 0.0)
                finished.append(_worker_stats(w))
            for w in [*ready, *starting.values()]:
                ray.kill(w.handle, no_restart=True)
            ray.kill(limits, no_restart=True)
    stats = ClusterStats(
        cluster_start_s=0.0,
        workers=tuple(finished),
        died=died,
        claims_wall_s=time.perf_counter() - first_ready if first_ready else 0.0,
    )
    return stats, (checked, failed)


def _worker_stats(w: _Worker, *, died: bool = False) -> WorkerStats:
    s = w.stats
    return WorkerStats(
        node=str(s.get("node", "")),
        pid=int(s.get("pid", 0)),
        startup_s=float(s.get("startup_s", 0.0)),
        startup_cpu_s=float(s.get("startup_cpu_s", 0.0)),
        claims=int(s.get("claims", 0)),
        claim_cpu_s=float(s.get("claim_cpu_s", 0.0)),
        first_claim_cpu_s=float(s.get("first_claim_cpu_s", 0.0)),
        process_cpu_s=float(s.get("process_cpu_s", 0.0)),
        died=died,
    )


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
