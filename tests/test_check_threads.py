"""Torch threads per web worker: each concurrent check gets its share of the cores (ml.threads)."""

from __future__ import annotations

import os
import threading
import types

import pytest

from factseek.ml.threads import check_threads, use_threads
from factseek.review.history import History
from factseek.web.jobs import Runner
from web_fixtures import CLAIM, fake_parts


class FakeTorch(types.ModuleType):
    """Stands in for torch in sys.modules: records which thread asked for how many threads."""

    def __init__(self, start: int = 8) -> None:
        super().__init__("torch")
        self.threads: dict[str, int] = {}
        self.start = start
        self.calls: list[tuple[str, int]] = []

    def get_num_threads(self) -> int:
        return self.threads.get(threading.current_thread().name, self.start)

    def set_num_threads(self, n: int) -> None:
        name = threading.current_thread().name
        self.threads[name] = n
        self.calls.append((name, n))


def test_check_threads_shares_the_cores_and_omp_num_threads_wins(monkeypatch) -> None:
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert check_threads(2, cores=2) == 1
    assert check_threads(2, cores=8) == 4
    assert check_threads(3, cores=8) == 2
    assert check_threads(4, cores=2) == 1  # never 0
    assert check_threads(0, cores=4) == 4  # a pool of at least one
    assert check_threads(2) >= 1  # the CPUs this process may use
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert check_threads(2, cores=2) == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "lots")  # not a number: ignored
    assert check_threads(2, cores=8) == 4


def test_use_threads_never_imports_torch(monkeypatch) -> None:
    monkeypatch.delitem(__import__("sys").modules, "torch", raising=False)
    assert use_threads(1) is False
    assert "torch" not in __import__("sys").modules


def test_use_threads_sizes_the_calling_threads_pool_once(monkeypatch) -> None:
    fake = FakeTorch(start=8)
    monkeypatch.setitem(__import__("sys").modules, "torch", fake)
    assert use_threads(2) is True
    assert use_threads(2) is True  # already 2: not set again
    assert fake.calls == [(threading.current_thread().name, 2)]


@pytest.mark.parametrize("workers", [1, 2])
def test_the_runner_runs_checks_and_the_warm_up_on_its_workers_with_their_share(
    tmp_path, monkeypatch, workers: int
) -> None:
    fake = FakeTorch(start=64)
    monkeypatch.setitem(__import__("sys").modules, "torch", fake)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    runner = Runner(History(tmp_path / "h.sqlite"), workers=workers, build=fake_parts)
    try:
        assert runner.threads == check_threads(workers)
        runner.warm(None, CLAIM)  # type: ignore[arg-type]
        ids = [runner.submit(CLAIM, None, user="ana", shown_options={}) for _ in range(4)]  # type: ignore[arg-type]
        for rid in ids:
            for _ in range(500):
                job = runner.job(rid)
                if job is not None and job.status in ("done", "failed"):
                    break
                threading.Event().wait(0.01)
            assert job is not None and job.status == "done", job
    finally:
        runner.close()
    assert fake.calls, "no worker sized torch's pool"
    assert {name for name, _ in fake.calls} <= {f"check_{i}" for i in range(workers)}
    assert {n for _, n in fake.calls} <= {runner.threads, check_threads(1)}
    assert threading.current_thread().name not in fake.threads  # the caller's pool untouched


def test_a_check_alone_gets_every_core_and_one_beside_others_its_share(
    tmp_path, monkeypatch
) -> None:
    fake = FakeTorch(start=64)
    monkeypatch.setitem(__import__("sys").modules, "torch", fake)
    monkeypatch.setenv("OMP_NUM_THREADS", "")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(4)), raising=False)
    runner = Runner(History(tmp_path / "h.sqlite"), workers=2, build=fake_parts)
    inside, release = threading.Event(), threading.Event()
    seen: dict[str, int] = {}

    def first() -> None:
        with runner.sized_threads() as n:
            seen["first"] = n
            inside.set()
            release.wait(10)

    try:
        t = threading.Thread(target=first, name="check_a")
        t.start()
        assert inside.wait(10)
        with runner.sized_threads() as n:  # starts while the first still runs
            seen["second"] = n
        release.set()
        t.join(10)
        with runner.sized_threads() as n:  # alone again
            seen["third"] = n
    finally:
        runner.close()
    assert seen == {"first": 4, "second": 2, "third": 4}
    assert fake.threads["check_a"] == 4


def test_spread_keeps_order_and_runs_on_one_torch_thread_each(monkeypatch) -> None:
    from factseek.ml import threads as ml_threads

    fake = FakeTorch(start=8)
    monkeypatch.setitem(__import__("sys").modules, "torch", fake)

    def work(x: int) -> tuple[int, int]:
        return x * x, fake.get_num_threads()

    out = ml_threads.spread(work, [3, 1, 2])
    assert [v for v, _ in out] == [9, 1, 4] and {n for _, n in out} == {1}
    assert ml_threads.spread(work, [5]) == [(25, 8)]  # one item: on the caller, as it is
