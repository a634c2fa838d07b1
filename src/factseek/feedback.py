"""A fact-checker's corrections of a run, kept with who made them, when, and the run they changed.

Four kinds, each a ``Correction`` whose ``value`` has a fixed shape:

- ``questions``: the subquestions were edited and the claim rerun from search onward;
  ``{"before": [...], "after": [...], "rerun_id": N}`` (``run_id`` is the run that was edited).
- ``relevance``: an evidence card (``target`` = its id) marked ``{"relevant": false}`` (or back).
- ``stance``: an evidence card's stance set to ``{"label": "supports" | "refutes" | "nei"}``.
- ``verdict``: the verdict overridden: ``{"label": ..., "scale": "politifact" | "averitec",
  "note": ...}``.

Corrections are appended, never edited: the latest one per (kind, target) is in force
(``in_force``), the earlier ones stay as the record of what happened. They live in the history
database (``factseek.history``), in a table of their own.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from factseek.errors import InputError
from factseek.history import connect, now
from factseek.labels import AVERITEC, POLITIFACT
from factseek.types import STANCE_LABELS

CorrectionKind = Literal["questions", "relevance", "stance", "verdict"]
KINDS: tuple[str, ...] = get_args(CorrectionKind)
VERDICT_SCALES = {"politifact": POLITIFACT, "averitec": AVERITEC}
MAX_NOTE_CHARS = 2000
MAX_USER_CHARS = 80

_SCHEMA = """
CREATE TABLE IF NOT EXISTS corrections (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id INTEGER NOT NULL,
  kind TEXT NOT NULL,
  target TEXT NOT NULL DEFAULT '',
  value_json TEXT NOT NULL,
  user TEXT NOT NULL,
  created TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS corrections_run ON corrections(run_id);
"""


@dataclass(frozen=True, kw_only=True)
class Correction:
    """One correction of run ``run_id`` by ``user`` at ``created`` (UTC, ISO 8601)."""

    id: int
    run_id: int
    kind: CorrectionKind
    target: str = ""
    value: Mapping[str, Any] = field(default_factory=dict)
    user: str = ""
    created: str = ""


def clean_user(user: str) -> str:
    """A user name fit to store and show: one line, at most ``MAX_USER_CHARS``."""
    name = " ".join(str(user).split())[:MAX_USER_CHARS]
    return name or "anonymous"


def validate(kind: str, value: Mapping[str, Any]) -> dict[str, Any]:
    """The value in its canonical shape, or InputError with one line."""
    if kind not in KINDS:
        raise InputError(f"unknown correction {kind!r}; choose one of: {', '.join(KINDS)}")
    if kind == "relevance":
        return {"relevant": bool(value.get("relevant"))}
    if kind == "stance":
        label = str(value.get("label", ""))
        if label not in STANCE_LABELS:
            raise InputError(f"unknown stance {label!r}; choose one of: {', '.join(STANCE_LABELS)}")
        return {"label": label}
    if kind == "verdict":
        scale = str(value.get("scale", ""))
        if scale not in VERDICT_SCALES:
            raise InputError(f"unknown scale {scale!r}; choose one of: {', '.join(VERDICT_SCALES)}")
        labels = VERDICT_SCALES[scale]
        label = str(value.get("label", ""))
        if label not in labels.labels:
            raise InputError(
                f"unknown {scale} label {label!r}; choose one of: {', '.join(labels.labels)}"
            )
        note = " ".join(str(value.get("note", "")).split())[:MAX_NOTE_CHARS]
        return {"label": label, "scale": scale, "note": note}
    before = [str(q) for q in value.get("before", ())]
    after = [str(q) for q in value.get("after", ())]
    return {"before": before, "after": after, "rerun_id": int(value.get("rerun_id", 0))}


class FeedbackLog:
    """Corrections in the history database (same file as ``History``)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with connect(self.path) as conn:
            conn.executescript(_SCHEMA)

    def add(
        self, run_id: int, kind: str, value: Mapping[str, Any], *, user: str, target: str = ""
    ) -> Correction:
        """Append a correction (validated) and return it."""
        clean = validate(kind, value)
        user = clean_user(user)
        created = now()
        with connect(self.path) as conn:
            cur = conn.execute(
                "INSERT INTO corrections (run_id, kind, target, value_json, user, created)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (run_id, kind, target[:40], json.dumps(clean), user, created),
            )
            cid = int(cur.lastrowid or 0)
        return Correction(
            id=cid,
            run_id=run_id,
            kind=kind,  # type: ignore[arg-type]
            target=target[:40],
            value=clean,
            user=user,
            created=created,
        )

    def for_run(self, run_id: int) -> list[Correction]:
        """The run's corrections, oldest first."""
        with connect(self.path) as conn:
            rows = conn.execute(
                "SELECT * FROM corrections WHERE run_id = ? ORDER BY id", (run_id,)
            ).fetchall()
        return [_row(r) for r in rows]

    def all(self) -> list[Correction]:
        with connect(self.path) as conn:
            rows = conn.execute("SELECT * FROM corrections ORDER BY id").fetchall()
        return [_row(r) for r in rows]


def _row(r: Any) -> Correction:
    return Correction(
        id=r["id"],
        run_id=r["run_id"],
        kind=r["kind"],
        target=r["target"],
        value=json.loads(r["value_json"]),
        user=r["user"],
        created=r["created"],
    )


def in_force(corrections: Iterable[Correction]) -> dict[tuple[str, str], Correction]:
    """The latest correction per (kind, target): what a review shows and an export uses."""
    out: dict[tuple[str, str], Correction] = {}
    for c in sorted(corrections, key=lambda c: c.id):
        out[(c.kind, c.target)] = c
    return out


def by_run(corrections: Sequence[Correction]) -> dict[int, list[Correction]]:
    out: dict[int, list[Correction]] = {}
    for c in corrections:
        out.setdefault(c.run_id, []).append(c)
    return out
