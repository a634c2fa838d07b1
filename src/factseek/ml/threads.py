"""Torch's CPU threads when several checks run at once (the web app's worker pool).

Torch's OpenMP pool is per calling thread: each worker thread that runs a model gets its own pool,
sized to every core by default (``torch.set_num_threads`` sizes the calling thread's pool and
also becomes the default of threads that first use torch after it). Two workers on a 2-core machine then run four busy threads that
fight over two cores (measured on one machine: a warm check took 1.3 s instead of 0.45 s). The
web app's workers therefore give torch every core when a check starts alone, and
``cores // workers`` threads (at least 1) when it starts beside others (``web.jobs``).
``OMP_NUM_THREADS``, when set, is the user's choice and wins.

Nothing here imports torch: a worker whose parts never loaded it has nothing to size. Models read
with numpy (the stance network, ``stance.npnet``) take the same count from ``current_threads``.

``spread`` runs many small independent passes (one stance pair per int8 pass) on threads side by
side, each with one torch thread, which uses the cores better than splitting every small matrix
product across them.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def check_threads(workers: int, cores: int | None = None) -> int:
    """Torch threads for each of ``workers`` concurrent checks on ``cores`` CPUs (default: the
    CPUs this process may use); ``OMP_NUM_THREADS`` wins when it is a positive integer."""
    env = os.environ.get("OMP_NUM_THREADS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    return max(1, (cores or usable_cores()) // max(1, workers))


def usable_cores() -> int:
    """The CPUs this process may run on (its affinity where the OS says, else every CPU)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


_local = threading.local()


def use_threads(n: int) -> bool:
    """Size torch's thread pool for the calling thread to ``n`` (and the default of threads that
    first use torch later), when torch is already loaded, and record ``n`` as the calling
    thread's count for models read without torch (``current_threads``).

    Returns whether torch was there to size (it is never imported here)."""
    _local.n = n
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)
    return True


def current_threads() -> int:
    """Threads the calling thread's model reading may use: what ``use_threads`` last set on
    this thread, else torch's count when torch is loaded, else ``check_threads(1)``."""
    n = getattr(_local, "n", None)
    if n:
        return int(n)
    torch = sys.modules.get("torch")
    return int(torch.get_num_threads()) if torch is not None else check_threads(1)


_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _one_thread(fn: Callable[[T], R], item: T) -> R:
    use_threads(1)
    return fn(item)


def spread(fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """``[fn(x) for x in items]``, each call on a thread of a shared pool whose torch uses one
    thread (results in order). For many small independent model passes (one stance pair per
    int8 pass), threads reading pairs side by side use the cores better than one thread whose
    every small matrix product is split across them (docs/stance.md: 67 against 44 pairs per
    second on 2 cores). The caller decides how many items (threads) it may use. Afterwards the
    caller's thread count is torch's default again (a pool thread's "1" would otherwise be what
    threads starting later get)."""
    global _pool
    if len(items) <= 1:
        return [fn(x) for x in items]
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(
                max_workers=max(2, usable_cores()), thread_name_prefix="torch-spread"
            )
        pool = _pool
    try:
        return list(pool.map(_one_thread, [fn] * len(items), items))
    finally:
        torch = sys.modules.get("torch")
        if torch is not None:
            torch.set_num_threads(torch.get_num_threads())  # the caller's count, as the default
