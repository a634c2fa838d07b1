"""The on-disk contract between BFS data generation and decision-transformer training.

A trajectory folder holds three plain files:

``config.json``
    ``{"format_version": 1, "retriever": "bm25", "reward": "ap@50", "k": 50, "depth": 4,
    "min_gain": 0.03, "prune_fraction": 0.05, "top_sequences": 50, "negatives": false,
    "seed": 0, "corpus": {"documents": N, "fingerprint": "..."}, "counts": {"claims": ...,
    "skipped_at_max": ..., "skipped_no_relevant": ..., "no_improvement": ..., "improvable": ...,
    "sequences": ..., "negative_sequences": ...}, "seconds": ...}``. Written atomically.
``trajectories.jsonl``
    One line per claim that has at least one sequence::

        {"claim_id": "c1", "claim": "...", "relevant": ["d3", "d9"], "reward0": 0.21,
         "sequences": [{"queries": [q0, ..., qn], "actions": [["swap", 3], ...],
                        "rewards": [r0, ..., rn], "negative": false}, ...]}

    ``actions[i]`` turns ``queries[i]`` into ``queries[i + 1]``; its position indexes the tokens
    of ``factseek.rewrite.environment.actions.tag(queries[i])``. ``rewards[0] == reward0`` is the claim's own
    reward. Positive sequences have ``rewards`` strictly increasing; negative ones (optional, for
    the ablation) end lower than they start. Sequences are sorted by gain, best first.
``journal``
    One JSON line per finished claim, flushed and fsynced after its trajectories line:
    ``{"claim_id": "c1", "status": "improvable"|"at_max"|"no_relevant"|"no_improvement",
    "reward0": 0.21, "sequences": 7}``. A resumed run skips claims in the journal; lines of
    ``trajectories.jsonl`` whose claim is not in the journal (a crash between the two writes) are
    dropped by ``repair``.

Rewards for training are derived, not stored: ``returns_to_go(rewards, "dense")`` gives, for each
action ``t``, the gain still to come (``r_n - r_t``); ``"sparse"`` gives the whole sequence's gain
(``r_n - r_0``) at every step, as if only the end were rewarded.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from factseek.errors import DataError, InputError
from factseek.files import atomic_write
from factseek.rewrite.environment.actions import Action

FORMAT_VERSION = 1
CONFIG = "config.json"
TRAJECTORIES = "trajectories.jsonl"
JOURNAL = "journal"
STATUSES = ("improvable", "at_max", "no_relevant", "no_improvement")


@dataclass(frozen=True, kw_only=True)
class Trajectory:
    """One edit sequence: ``len(queries) == len(rewards) == len(actions) + 1``."""

    queries: tuple[str, ...]
    actions: tuple[Action, ...]
    rewards: tuple[float, ...]
    negative: bool = False

    def __post_init__(self) -> None:
        if not (len(self.queries) == len(self.rewards) == len(self.actions) + 1):
            raise InputError(
                f"trajectory needs n+1 queries and rewards for n actions, got "
                f"{len(self.queries)}/{len(self.rewards)}/{len(self.actions)}"
            )

    @property
    def gain(self) -> float:
        return self.rewards[-1] - self.rewards[0]

    def to_dict(self) -> dict[str, Any]:
        return {
            "queries": list(self.queries),
            "actions": [a.to_json() for a in self.actions],
            "rewards": [float(r) for r in self.rewards],
            "negative": self.negative,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Trajectory:
        return cls(
            queries=tuple(str(q) for q in d["queries"]),
            actions=tuple(Action.from_json(a) for a in d["actions"]),
            rewards=tuple(float(r) for r in d["rewards"]),
            negative=bool(d.get("negative", False)),
        )


@dataclass(frozen=True, kw_only=True)
class ClaimTrajectories:
    """All sequences found for one claim."""

    claim_id: str
    claim: str
    relevant: tuple[str, ...]
    reward0: float
    sequences: tuple[Trajectory, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "claim_id": self.claim_id,
            "claim": self.claim,
            "relevant": list(self.relevant),
            "reward0": float(self.reward0),
            "sequences": [s.to_dict() for s in self.sequences],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ClaimTrajectories:
        return cls(
            claim_id=str(d["claim_id"]),
            claim=str(d["claim"]),
            relevant=tuple(str(r) for r in d["relevant"]),
            reward0=float(d["reward0"]),
            sequences=tuple(Trajectory.from_dict(s) for s in d["sequences"]),
        )


def returns_to_go(
    rewards: Sequence[float], mode: Literal["dense", "sparse"] = "dense"
) -> list[float]:
    """One return-to-go per action of a sequence with rewards ``r_0..r_n``.

    dense: ``r_n - r_t`` (each edit is rewarded by its own gain); sparse: ``r_n - r_0`` at every
    step (only the final result is rewarded).

    >>> returns_to_go([0.1, 0.3, 0.4])
    [0.30000000000000004, 0.10000000000000003]
    >>> returns_to_go([0.1, 0.3, 0.4], "sparse")
    [0.30000000000000004, 0.30000000000000004]
    """
    if len(rewards) < 2:
        return []
    final = rewards[-1]
    if mode == "dense":
        return [final - r for r in rewards[:-1]]
    if mode == "sparse":
        return [final - rewards[0]] * (len(rewards) - 1)
    raise InputError(f"unknown reward mode {mode!r}; choose dense or sparse")


# ----------------------------------------------------------------------------- files


def _atomic_write(path: Path, text: str) -> None:
    atomic_write(path, text, fsync=True)  # the journal and trajectories must survive a crash


def _append_line(path: Path, obj: Any) -> None:
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(obj, ensure_ascii=False) + "\n")
        f.flush()
        os.fsync(f.fileno())


def write_config(folder: str | Path, config: Mapping[str, Any]) -> None:
    data = {"format_version": FORMAT_VERSION, **config}
    _atomic_write(Path(folder) / CONFIG, json.dumps(data, indent=2, sort_keys=True) + "\n")


def read_config(folder: str | Path) -> dict[str, Any]:
    from factseek.files import SIDE_LIMIT, read_json

    path = Path(folder) / CONFIG
    if not path.exists():
        raise DataError("no config.json: not a trajectory folder", str(folder))
    data = read_json(path, "trajectory config", limit=SIDE_LIMIT)
    if not isinstance(data, dict):
        raise DataError("config.json is not an object", str(path))
    if data.get("format_version") != FORMAT_VERSION:
        raise DataError(
            f"format_version {data.get('format_version')!r}, expected {FORMAT_VERSION}", str(path)
        )
    return data


def append(
    folder: str | Path,
    record: ClaimTrajectories,
    status: str,
    stats: Mapping[str, Any] | None = None,
) -> None:
    """Record one finished claim: its trajectories line (if any sequences), then its journal line
    (with ``stats``, e.g. queries expanded, candidates scored, seconds, when given)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if status not in STATUSES:
        raise InputError(f"unknown claim status {status!r}; choose one of: {', '.join(STATUSES)}")
    if record.sequences:
        _append_line(folder / TRAJECTORIES, record.to_dict())
    _append_line(
        folder / JOURNAL,
        {
            "claim_id": record.claim_id,
            "status": status,
            "reward0": float(record.reward0),
            "sequences": len(record.sequences),
            **(stats or {}),
        },
    )


def read_journal(folder: str | Path) -> dict[str, dict[str, Any]]:
    """claim id -> journal entry; a torn last line (a crash mid-write) is ignored."""
    path = Path(folder) / JOURNAL
    if not path.exists():
        return {}
    out: dict[str, dict[str, Any]] = {}
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines, 1):
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            if i == len(lines):
                break
            raise DataError("invalid JSON line", str(path), i) from None
        out[str(entry["claim_id"])] = entry
    return out


def repair(folder: str | Path) -> dict[str, dict[str, Any]]:
    """Make ``trajectories.jsonl`` agree with the journal before resuming; returns the journal."""
    folder = Path(folder)
    journal = read_journal(folder)
    path = folder / TRAJECTORIES
    if path.exists():
        kept: dict[str, str] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                claim_id = str(json.loads(line)["claim_id"])
            except (json.JSONDecodeError, KeyError, TypeError):
                continue
            if claim_id in journal:
                kept[claim_id] = line
        _atomic_write(path, "".join(line + "\n" for line in kept.values()))
    # rewrite the journal without a torn last line
    if (folder / JOURNAL).exists():
        _atomic_write(
            folder / JOURNAL,
            "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in journal.values()),
        )
    return journal


def read(folder: str | Path) -> Iterator[ClaimTrajectories]:
    """The claims of a trajectory folder, in file order (checks the format version)."""
    read_config(folder)
    path = Path(folder) / TRAJECTORIES
    if not path.exists():
        return
    with path.open(encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield ClaimTrajectories.from_dict(json.loads(line))
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
                raise DataError(f"bad trajectory record: {e}", str(path), i) from None


def write(
    folder: str | Path, records: Iterable[ClaimTrajectories], config: Mapping[str, Any]
) -> None:
    """Write a whole folder at once (tests, conversions): config, trajectories and journal."""
    folder = Path(folder)
    records = list(records)
    _atomic_write(
        folder / TRAJECTORIES,
        "".join(json.dumps(r.to_dict(), ensure_ascii=False) + "\n" for r in records if r.sequences),
    )
    _atomic_write(
        folder / JOURNAL,
        "".join(
            json.dumps(
                {
                    "claim_id": r.claim_id,
                    "status": "improvable" if r.sequences else "no_improvement",
                    "reward0": float(r.reward0),
                    "sequences": len(r.sequences),
                }
            )
            + "\n"
            for r in records
        ),
    )
    write_config(folder, config)


def summarize(folder: str | Path) -> dict[str, Any]:
    """The numbers a trajectory folder is judged by (the paper's Table 2 and more).

    Gains are per claim, from its best sequence; action statistics count every edit of every
    kept positive sequence (a prefix shared by several sequences counts once per sequence).
    ``claim_reward`` is the mean reward of the claims as written (every claim of the journal)
    and ``oracle_reward`` the same with each claim's best sequence where one improves it. The
    claim counts are the journal's, so a run stopped before its end is summarised as far as it
    got; ``claim_seconds`` is the time spent on those claims (the journal's, summed), beside the
    run's own ``seconds`` (its config, written when a run ends).
    """
    config = read_config(folder)
    journal = read_journal(folder)
    start = {cid: float(e.get("reward0", 0.0)) for cid, e in journal.items()}
    status = Counter(str(e.get("status", "")) for e in journal.values())
    oracle = dict(start)
    best: list[float] = []
    lengths: list[int] = []
    per_action: dict[str, list[float]] = {}
    n_seq = 0
    for rec in read(folder):
        pos = [s for s in rec.sequences if not s.negative]
        if not pos:
            continue
        best.append(max(s.gain for s in pos))
        if rec.claim_id in oracle:
            oracle[rec.claim_id] = max(oracle[rec.claim_id], max(s.rewards[-1] for s in pos))
        for s in pos:
            n_seq += 1
            lengths.append(len(s.actions))
            for a, r0, r1 in zip(s.actions, s.rewards, s.rewards[1:], strict=False):
                per_action.setdefault(a.kind.value, []).append(r1 - r0)
    n_edits = sum(len(v) for v in per_action.values())
    return {
        "claims": len(journal),
        "at_max": status["at_max"],
        "no_improvement": status["no_improvement"],
        "improvable": len(best),
        "sequences": n_seq,
        "mean_gain": sum(best) / len(best) if best else None,
        "max_gain": max(best) if best else None,
        "mean_edits": sum(lengths) / len(lengths) if lengths else None,
        "claim_reward": sum(start.values()) / len(start) if start else None,
        "oracle_reward": sum(oracle.values()) / len(oracle) if oracle else None,
        "actions": {
            kind: {
                "share": len(v) / n_edits,
                "mean_improvement": sum(v) / len(v),
            }
            for kind, v in sorted(per_action.items())
        },
        "seconds": config.get("seconds"),
        "claim_seconds": sum(float(e.get("seconds", 0.0)) for e in journal.values()),
    }
