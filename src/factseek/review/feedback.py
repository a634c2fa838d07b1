"""A fact-checker's corrections of a run, kept with who made them, when, and the run they changed.

Six kinds, each a ``Correction`` whose ``value`` has a fixed shape:

- ``questions``: the subquestions were edited and the claim rerun from search onward;
  ``{"before": [...], "after": [...], "rerun_id": N}`` (``run_id`` is the run that was edited).
- ``relevance``: an evidence card (``target`` = its id) marked ``{"relevant": false}`` (or back).
- ``stance``: an evidence card's stance set to ``{"label": "supports" | "refutes" | "nei"}``.
  Both may carry ``"carried_from": {"run": N, "card": "E4"}`` when a rerun brought them forward.
- ``verdict``: the reviewer set the verdict: ``{"label": ..., "scale": ..., "note": ...}``, a
  label of the organisation's rating scale (``factseek.review.ratings``; its ``name`` as the scale) or
  of a machine scale ("politifact", "averitec").
- ``approve``: the reviewer approved the machine's verdict as it stood: ``{"label": ...,
  "scale": ..., "judge": ..., "note": ...}`` (the machine's label, scale and judge).
- ``carry``: what a rerun brought forward from the run it reran: ``{"from_run": N, "carried":
  [...], "not_carried": [...]}`` (``factseek.review.apply.carry_forward``).

Corrections are appended, never edited: the latest one per (kind, target) is in force
(``in_force``), the earlier ones stay as the record of what happened; of ``verdict`` and
``approve``, the later one is the reviewer's decision. They live in the history database
(``factseek.review.history``), in a table of their own.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from factseek.errors import InputError
from factseek.review.history import connect, now
from factseek.review.ratings import DEFAULT_RATINGS, MACHINE_SCALES, RatingScale
from factseek.types import STANCE_LABELS

CorrectionKind = Literal["questions", "relevance", "stance", "verdict", "approve", "carry"]
KINDS: tuple[str, ...] = get_args(CorrectionKind)
VERDICT_SCALES = MACHINE_SCALES
MAX_NOTE_CHARS = 2000
MAX_USER_CHARS = 80
MAX_CARRIED = 500  # items one carry record lists
ANONYMOUS = "anonymous"  # the name of a reviewer who gave none

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
    """A user name fit to store and show; every name a reviewer gives passes through here.

    NFKC-normalised (full-width ``Ｍａｒｉａ`` is ``Maria``), without control or format
    characters (zero-width spaces, direction marks), one line of at most ``MAX_USER_CHARS``.
    A name that is empty then, or that reads "anonymous" in any case or width, is
    ``ANONYMOUS``: the name of no one in particular."""
    name = unicodedata.normalize("NFKC", str(user))
    name = "".join(" " if ch.isspace() else ch for ch in name if _shown(ch))
    name = " ".join(name.split())[:MAX_USER_CHARS].strip()
    return ANONYMOUS if not name or is_anonymous(name) else name


def _shown(ch: str) -> bool:
    """Whether a character of a name is kept: not a control, format, surrogate or unassigned
    code point (spaces and line breaks are kept, then collapsed)."""
    return ch.isspace() or unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Co", "Cn")


def is_anonymous(user: str) -> bool:
    """Whether ``user`` names no one: empty, or "anonymous" in any case, width or with
    invisible characters (``ANONYMOUS``, ``Ａｎｏｎｙｍｏｕｓ``, ``anon\u200bymous``)."""
    name = unicodedata.normalize("NFKC", str(user))
    key = "".join(ch for ch in name if _shown(ch) and not ch.isspace()).casefold()
    return not key or key == ANONYMOUS


def _line(value: Any, n: int) -> str:
    return " ".join(str(value if value is not None else "").split())[:n]


def _carried_from(value: Mapping[str, Any]) -> dict[str, Any]:
    src = value.get("carried_from")
    if not isinstance(src, Mapping):
        return {}
    return {"carried_from": {"run": int(src.get("run", 0)), "card": _line(src.get("card"), 40)}}


def _items(value: Any, keys: tuple[str, ...]) -> list[dict[str, str]]:
    if not isinstance(value, list):
        return []
    return [
        {k: _line(item.get(k), 300) for k in keys}
        for item in value[:MAX_CARRIED]
        if isinstance(item, Mapping)
    ]


CARRIED_KEYS = ("kind", "card", "from_card", "what", "user")
NOT_CARRIED_KEYS = ("kind", "card", "url", "quote", "what", "user", "why")


def validate(
    kind: str, value: Mapping[str, Any], ratings: RatingScale = DEFAULT_RATINGS
) -> dict[str, Any]:
    """The value in its canonical shape, or InputError with one line."""
    if kind not in KINDS:
        raise InputError(f"unknown correction {kind!r}; choose one of: {', '.join(KINDS)}")
    if kind == "relevance":
        return {"relevant": bool(value.get("relevant")), **_carried_from(value)}
    if kind == "stance":
        label = str(value.get("label", ""))
        if label not in STANCE_LABELS:
            raise InputError(f"unknown stance {label!r}; choose one of: {', '.join(STANCE_LABELS)}")
        return {"label": label, **_carried_from(value)}
    note = _line(value.get("note", ""), MAX_NOTE_CHARS)
    if kind == "verdict":
        scale = str(value.get("scale", ""))
        label = str(value.get("label", ""))
        if scale == ratings.name:
            ratings.get(label)  # InputError listing the scale's labels
        elif scale in VERDICT_SCALES:
            labels = VERDICT_SCALES[scale]
            if label not in labels.labels:
                raise InputError(
                    f"unknown {scale} label {label!r}; choose one of: {', '.join(labels.labels)}"
                )
        else:
            scales = ", ".join(dict.fromkeys([ratings.name, *VERDICT_SCALES]))
            raise InputError(f"unknown scale {scale!r}; choose one of: {scales}")
        return {"label": label, "scale": scale, "note": note}
    if kind == "approve":
        label = _line(value.get("label"), 80)
        if not label:
            raise InputError("nothing to approve: the pipeline gave no verdict")
        return {
            "label": label,
            "scale": _line(value.get("scale"), 40),
            "judge": _line(value.get("judge"), 200),
            "note": note,
        }
    if kind == "carry":
        return {
            "from_run": int(value.get("from_run", 0)),
            "carried": _items(value.get("carried"), CARRIED_KEYS),
            "not_carried": _items(value.get("not_carried"), NOT_CARRIED_KEYS),
        }
    before = [str(q) for q in value.get("before", ())]
    after = [str(q) for q in value.get("after", ())]
    return {"before": before, "after": after, "rerun_id": int(value.get("rerun_id", 0))}


class FeedbackLog:
    """Corrections in the history database (same file as ``History``)."""

    def __init__(self, path: str | Path, *, ratings: RatingScale = DEFAULT_RATINGS) -> None:
        self.path = Path(path).expanduser()
        self.ratings = ratings  # the scale a reviewer's verdict is checked against
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with connect(self.path) as conn:
            conn.executescript(_SCHEMA)

    def add(
        self, run_id: int, kind: str, value: Mapping[str, Any], *, user: str, target: str = ""
    ) -> Correction:
        """Append a correction (validated) and return it."""
        clean = validate(kind, value, self.ratings)
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


def decision(corrections: Iterable[Correction]) -> Correction | None:
    """The reviewer's decision in force: the later of the latest ``verdict`` and ``approve``."""
    force = in_force(corrections)
    made = [c for c in (force.get(("verdict", "")), force.get(("approve", ""))) if c is not None]
    return max(made, key=lambda c: c.id) if made else None


def by_run(corrections: Sequence[Correction]) -> dict[int, list[Correction]]:
    out: dict[int, list[Correction]] = {}
    for c in corrections:
        out.setdefault(c.run_id, []).append(c)
    return out
