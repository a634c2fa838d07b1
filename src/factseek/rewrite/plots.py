"""Figures for the rewriter: loss curve, per-step mAP (paper Fig. 4), actions by outcome
(Fig. 5), mean change per action (Fig. 6). matplotlib (Agg) is imported inside each function;
every figure is written atomically as a PNG.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from factseek.files import atomic_path


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: str | Path) -> Path:
    path = Path(path)
    try:
        with atomic_path(path, suffix=".png") as tmp:
            fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    finally:
        _plt().close(fig)
    return path


def plot_loss(log: str | Path, out: str | Path) -> Path:
    """Training (and validation, when logged) loss against step, from ``loss.jsonl``."""
    rows = [json.loads(x) for x in Path(log).read_text().splitlines() if x.strip()]
    train = [(r["step"], r["loss"]) for r in rows if "loss" in r]
    val = [(r["step"], r["val_loss"]) for r in rows if "val_loss" in r]
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5, 3.2))
    if train:
        ax.plot(*zip(*train, strict=True), label="train", lw=1.2)
    if val:
        ax.plot(*zip(*val, strict=True), "o-", label="validation", lw=1.2)
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy")
    ax.set_title("decision transformer: loss")
    ax.legend()
    ax.grid(alpha=0.3)
    return _save(fig, out)


def plot_step_curves(
    curves: Mapping[str, Sequence[float]], out: str | Path, metric: str, title: str = ""
) -> Path:
    """``metric`` after each edit step for each system (paper Fig. 4); step 0 = the claim."""
    from matplotlib.ticker import MaxNLocator

    plt = _plt()
    fig, ax = plt.subplots(figsize=(5, 3.2))
    for name, ys in curves.items():
        ax.plot(range(len(ys)), ys, "o-", label=name, lw=1.2)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("edit step")
    ax.set_ylabel(metric)
    ax.set_title(title or f"{metric} per edit step", fontsize=10)
    ax.legend()
    ax.grid(alpha=0.3)
    return _save(fig, out)


OUTCOMES = ("better", "same", "worse")
COLORS = {"better": "#4c9a2a", "same": "#b0b0b0", "worse": "#c0392b"}


def plot_action_outcomes(
    counts: Mapping[str, Mapping[str, int]], out: str | Path, title: str = ""
) -> Path:
    """Stacked bars: for each action kind, how many edits made the reward better/same/worse."""
    plt = _plt()
    kinds = list(counts)
    fig, ax = plt.subplots(figsize=(5, 3.2))
    bottom = [0] * len(kinds)
    for outcome in OUTCOMES:
        ys = [counts[k].get(outcome, 0) for k in kinds]
        ax.bar(kinds, ys, bottom=bottom, label=outcome, color=COLORS[outcome])
        bottom = [b + y for b, y in zip(bottom, ys, strict=True)]
    ax.set_ylabel("edits")
    ax.set_title(title or "model edits by outcome")
    ax.legend()
    return _save(fig, out)


def plot_mean_change(
    changes: Mapping[str, float], out: str | Path, metric: str, title: str = ""
) -> Path:
    """Bars: mean change in ``metric`` caused by each action kind."""
    plt = _plt()
    kinds = list(changes)
    ys = [changes[k] for k in kinds]
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.bar(kinds, ys, color=[COLORS["better"] if y >= 0 else COLORS["worse"] for y in ys])
    ax.axhline(0, color="black", lw=0.8)
    ax.set_ylabel(f"mean change in {metric}")
    ax.set_title(title or "mean change per action")
    return _save(fig, out)


def plot_system_gains(
    rows: Mapping[str, tuple[float, float, float]], out: str | Path, metric: str, title: str = ""
) -> Path:
    """Horizontal bars: each system's mean change of ``metric`` against the claim, with its 95%
    CI as an error bar (``rows``: name -> (mean change, CI low, CI high))."""
    plt = _plt()
    names = list(rows)[::-1]
    means = [rows[n][0] for n in names]
    err = [[rows[n][0] - rows[n][1] for n in names], [rows[n][2] - rows[n][0] for n in names]]
    fig, ax = plt.subplots(figsize=(6, 0.45 * len(names) + 1.2))
    colors = [COLORS["better"] if rows[n][1] > 0 else COLORS["worse"] if rows[n][2] < 0 else COLORS["same"] for n in names]  # fmt: skip
    ax.barh(names, means, xerr=err, color=colors, capsize=3)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_xlabel(f"change in {metric} against the claim (95% CI)")
    ax.set_title(title or f"{metric}: change against the claim", fontsize=10)
    ax.grid(alpha=0.3, axis="x")
    return _save(fig, out)
