"""The training pieces every factseek trainer shares (the judge, the stance model).

- ``length_batches``: shuffled batches of similar length (sorted within pools of 50 batches),
  in random order, so padding stays small and every epoch sees a new order.
- ``adamw``: AdamW with weight decay on matrices only (biases and norms are not decayed) and the
  linear warm-up then linear decay schedule.
- ``progress_bar``: the rich progress bar the trainers show (description, bar, n/total, elapsed,
  remaining, and a free ``loss`` field).
- ``training_device``: the torch device a trainer's steps run on (``--device``, or ``auto``),
  refused in one line when this torch cannot use it.
- ``read_in_chunks``: a long read over many items (a teacher's probabilities) that a killed run
  continues instead of redoing.
- ``train_step``: one optimiser step (backward, clip at 1.0, step, schedule, zero) returning the
  loss as a float, and ``smooth`` for the running loss the bar shows.

torch is imported by the caller; nothing here imports it at module level.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from factseek.errors import ConfigError

#: Batches per pool of ``length_batches`` (a pool is sorted by length, then cut into batches).
POOL_BATCHES = 50


def length_batches(lengths: Sequence[int], batch_size: int, rng: random.Random) -> list[list[int]]:
    """Indices into ``lengths`` cut into batches of similar length, in a random order.

    The order is shuffled, cut into pools of ``POOL_BATCHES`` batches, each pool sorted by
    length (ties by shuffled position) and cut into batches; the batches are shuffled."""
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    order = list(range(len(lengths)))
    rng.shuffle(order)
    pool = batch_size * POOL_BATCHES
    batches: list[list[int]] = []
    for start in range(0, len(order), pool):
        chunk = sorted(order[start : start + pool], key=lambda i: lengths[i])
        batches.extend(chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size))
    rng.shuffle(batches)
    return batches


def adamw(
    params: Sequence[Any], *, lr: float, weight_decay: float, warmup: float, total_steps: int
) -> tuple[Any, Any]:
    """(optimizer, scheduler): AdamW decaying matrices only, linear warm-up over ``warmup`` of
    ``total_steps``, then linear decay to 0."""
    import torch

    decay = [p for p in params if p.ndim >= 2]
    no_decay = [p for p in params if p.ndim < 2]
    optimizer = torch.optim.AdamW(
        [
            {"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ],
        lr=lr,
    )
    warm = int(warmup * total_steps)

    def factor(step: int) -> float:  # linear warm-up to 1, then linear decay to 0
        if step < warm:
            return step / max(1, warm)
        return max(0.0, (total_steps - step) / max(1, total_steps - warm))

    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def train_step(loss: Any, params: Sequence[Any], optimizer: Any, scheduler: Any) -> float:
    """Backward, clip the gradient norm at 1.0, step the optimiser and the schedule, zero."""
    import torch

    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad(set_to_none=True)
    return float(loss.item())


def smooth(running: float, value: float, step: int) -> float:
    """The running loss a progress bar shows: the first value, then an EMA with 0.98."""
    return value if step <= 1 else 0.98 * running + 0.02 * value


def progress_bar(enabled: bool) -> Any:
    """A rich ``Progress`` (a context manager) with a ``loss`` field; silent when not enabled."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[loss]}"),
        disable=not enabled,
        transient=False,
    )


def every_tenth(total: int) -> Callable[[int], bool]:
    """For logging without a bar: true on every ~10% of ``total`` steps."""
    step = max(1, total // 10)
    return lambda i: i % step == 0


def training_device(name: str = "auto") -> Any:
    """The torch device ``name`` (``"cpu"``, ``"cuda"``, ``"cuda:1"``..., or ``"auto"``: a GPU
    when torch sees one, else the CPU); ``ConfigError`` when this torch cannot use it. Every
    trainer's ``--device`` goes through here (stance, judge, rewriter)."""
    import torch

    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError):
        raise ConfigError(f"unknown torch device {name!r} (cpu, cuda, cuda:N, mps)") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device {name!r}: this torch build sees no CUDA GPU (a CPU wheel?)")
    if device.type == "mps" and not torch.backends.mps.is_available():
        raise ConfigError(f"device {name!r}: this machine has no MPS GPU")
    return device


def read_in_chunks(
    items: Sequence[Any],
    read: Callable[[Sequence[Any]], Any],
    chunk: int,
    keep: Path,
    done: Callable[[int], None] = lambda _: None,
) -> np.ndarray:
    """``read(items[i : i + chunk])`` (one row per item) for every chunk, stacked in order as a
    float64 array. After each chunk the rows so far are saved to ``keep`` (``.npy``, atomically);
    a rerun with the same ``keep`` starts after them. ``done(n)`` gets the items read so far
    (resumed ones included); the caller removes ``keep`` once it has kept the result."""
    from factseek.files import atomic_path

    try:
        rows = np.load(keep) if keep.is_file() else None
    except (OSError, ValueError, EOFError):  # a file cut short: read everything again
        rows = None
    if rows is not None and (rows.ndim != 2 or len(rows) > len(items) or (len(rows) % chunk and len(rows) != len(items))):  # fmt: skip
        rows = None  # not this read's: start again
    parts = [] if rows is None else [rows]
    start = 0 if rows is None else len(rows)
    done(start)
    for i in range(start, len(items), chunk):
        parts.append(np.asarray(read(items[i : i + chunk]), dtype=np.float64))
        with atomic_path(keep, suffix=".npy") as tmp:
            np.save(tmp, np.concatenate(parts))
        done(min(i + chunk, len(items)))
    return np.concatenate(parts) if parts else np.zeros((0, 0))
