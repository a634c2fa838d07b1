"""Checks run in the background of the web app, with their progress kept for the page to stream.

``Runner.submit(...)`` stores a ``running`` row in the history, queues the check on a small thread
pool and returns the run id at once; the pipeline's ``progress`` callback appends each stage to
that run's ``Job``; the finished report (or a one-line error) goes to the history, after the
``on_report`` hook (the web app's: a rerun takes over the corrections of the run it reran) has
seen it, so a page told "done" finds everything in place. Parts (stores,
models) are built once per distinct ``CheckOptions`` and reused by every later check, so a warm
check costs only the pipeline's own work. Checks and the warm-up run on the pool's threads; a
check that starts alone gives torch every core, one that starts beside others its share
(``ml.threads``): a torch pool per thread, each as wide as the machine, would make concurrent
checks fight over the cores.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from factseek.api import CheckOptions, build_parts
from factseek.errors import FactseekError
from factseek.ml.threads import check_threads, use_threads
from factseek.pipeline import CheckConfig, Parts, run
from factseek.review.history import History
from factseek.types import Claim, Question, Report

#: The pipeline's stages in order (what the progress list shows before any has started).
STAGES: tuple[str, ...] = (
    "decompose",
    "rewrite",
    "search",
    "documents",
    "passages",
    "summarize",
    "evidence",
    "judge",
)
MAX_FINISHED_JOBS = 500  # progress records kept in memory for finished runs


@dataclass(kw_only=True)
class Job:
    """One run's progress as the page sees it (mutated only under ``Runner._lock``)."""

    run_id: int
    stages: list[str] = field(default_factory=list)
    status: str = "queued"  # queued, running, done, failed
    error: str = ""
    started: float = field(default_factory=time.perf_counter)
    seconds: float | None = None


class Runner:
    """A bounded pool of pipeline workers sharing parts built once per options."""

    def __init__(
        self,
        history: History,
        *,
        workers: int = 2,
        config: CheckConfig | None = None,
        build: Callable[[CheckOptions], Parts] = build_parts,
    ) -> None:
        self.history = history
        self._build = build
        self.config = config or CheckConfig()
        self._pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="check")
        #: torch threads a check uses beside others: its share of the cores (OMP_NUM_THREADS wins)
        self.threads = check_threads(max(1, workers))
        self._alone_threads = check_threads(1)  # ... and when it starts alone
        self._active = 0  # checks running now (under _lock)
        self._lock = threading.Lock()
        self._listeners: set[Callable[[], None]] = set()  # told of every stage and every end
        self._build_lock = threading.Lock()
        self._parts: dict[CheckOptions, Parts] = {}
        self._jobs: dict[int, Job] = {}
        #: called with (run id, report) before the report is stored; returns the report to store
        self.on_report: Callable[[int, Report], Report] | None = None

    def parts(self, options: CheckOptions) -> Parts:
        """Built parts for ``options`` (built on first use, then shared)."""
        with self._build_lock:
            parts = self._parts.get(options)
            if parts is None:
                parts = self._build(options)
                self._parts[options] = parts
            return parts

    def warm(self, options: CheckOptions, claim: Claim) -> float:
        """Build the parts and run one check (JIT, model loading) on a worker, as a user's check
        runs; returns seconds spent (waits for it)."""
        return self._pool.submit(self._warm, options, claim).result()

    def _warm(self, options: CheckOptions, claim: Claim) -> float:
        t0 = time.perf_counter()
        parts = self.parts(options)
        with self.sized_threads():
            run(claim, parts, self.config)
        return time.perf_counter() - t0

    @contextmanager
    def sized_threads(self) -> Iterator[int]:
        """Size torch's pool for the calling worker while its check runs: every core when no
        other check is running, else its share (``cores // workers``); yields the count."""
        with self._lock:
            self._active += 1
            alone = self._active == 1
        n = self._alone_threads if alone else self.threads
        use_threads(n)
        try:
            yield n
        finally:
            with self._lock:
                self._active -= 1

    def submit(
        self,
        claim: Claim,
        options: CheckOptions,
        *,
        user: str,
        shown_options: dict[str, Any],
        parent_id: int | None = None,
        questions: Sequence[Question] | None = None,
        config: CheckConfig | None = None,
    ) -> int:
        """Queue one check (``config``: this run's pipeline settings, else the runner's)."""
        run_id = self.history.create(claim, options=shown_options, user=user, parent_id=parent_id)
        with self._lock:
            self._jobs[run_id] = Job(run_id=run_id)
            self._trim()
        self._pool.submit(self._work, run_id, claim, options, questions, config or self.config)
        return run_id

    def job(self, run_id: int) -> Job | None:
        """A copy of the run's progress (None when this process did not run it)."""
        with self._lock:
            j = self._jobs.get(run_id)
            if j is None:
                return None
            return Job(
                run_id=j.run_id,
                stages=list(j.stages),
                status=j.status,
                error=j.error,
                started=j.started,
                seconds=j.seconds,
            )

    def listen(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` (from a worker thread; it must be quick and thread-safe) whenever a
        run starts a stage or ends, until ``unlisten``: the progress stream waits on this."""
        with self._lock:
            self._listeners.add(callback)

    def unlisten(self, callback: Callable[[], None]) -> None:
        with self._lock:
            self._listeners.discard(callback)

    def _notify(self) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for callback in listeners:
            try:
                callback()
            except Exception:  # a listener gone away (its page closed) never stops a check
                self.unlisten(callback)

    def _stage(self, run_id: int, stage: str) -> None:
        with self._lock:
            j = self._jobs[run_id]
            j.status = "running"
            j.stages.append(stage)
        self._notify()

    def _end(self, run_id: int, t0: float, *, report: Any = None, error: str = "") -> None:
        """Store the outcome, then publish it (a page told "done" finds the report stored)."""
        error = (error.splitlines() or [""])[0]
        if report is not None and self.on_report is not None:
            try:
                report = self.on_report(run_id, report)
            except Exception as e:  # the check itself is done: keep it, say what went wrong
                line = (str(e).splitlines() or [""])[0][:300]
                note = f"after the run: {type(e).__name__}: {line}"
                report = replace(report, notes=(*report.notes, note))
        seconds = round(time.perf_counter() - t0, 4)
        if report is not None:
            self.history.finish(run_id, report, seconds=seconds)
        else:
            self.history.fail(run_id, error, seconds=seconds)
        with self._lock:
            j = self._jobs[run_id]
            j.status = "done" if report is not None else "failed"
            j.error, j.seconds = error, seconds
        self._notify()

    def _work(
        self,
        run_id: int,
        claim: Claim,
        options: CheckOptions,
        questions: Sequence[Question] | None,
        config: CheckConfig,
    ) -> None:
        t0 = time.perf_counter()
        try:
            parts = self.parts(options)
            with self.sized_threads():
                report = run(
                    claim,
                    parts,
                    config,
                    progress=lambda stage: self._stage(run_id, stage),
                    questions=questions,
                )
        except FactseekError as e:
            self._end(run_id, t0, error=str(e))
            return
        except Exception as e:  # a bug or an untranslated library error: a failed run, one line
            self._end(run_id, t0, error=f"unexpected {type(e).__name__}: {e}")
            return
        self._end(run_id, t0, report=report)

    def _trim(self) -> None:
        finished = [i for i, j in self._jobs.items() if j.status in ("done", "failed")]
        for i in finished[: max(0, len(finished) - MAX_FINISHED_JOBS)]:
            del self._jobs[i]

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
