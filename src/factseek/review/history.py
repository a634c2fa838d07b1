"""The local history of checks: one SQLite file holding each run's claim, options and report.

``History(path)`` opens (and creates) the database. A run is created as ``running`` before the
pipeline starts, then finished with its report or failed with a one-line error, so a page can
show a run while it is in progress and a crash leaves a visible ``failed`` row, not a hole.
Reports are stored as their complete JSON (``types.to_dict``) and read back losslessly, except
that URLs never keep credentials (``factseek.redact.redact_tree``, on the way in and, for rows
written before that, on the way out).

Every call opens its own short connection (SQLite in WAL mode), so one ``History`` is safe to
share between the web server's threads. Corrections live beside runs in the same file, in the
table that ``factseek.review.feedback`` owns. Each run also keeps its reviewed state for the listing
(``set_review``: the verdict of record, whether a reviewer approved or set it, and who), written
whenever a correction changes it; a run no one has corrected lists the pipeline's label.
"""

from __future__ import annotations

import datetime as _dt
import json
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from factseek.errors import DataError, InputError
from factseek.redact import redact_text, redact_tree
from factseek.sanitize import json_loads
from factseek.types import Claim, Report, from_dict, to_dict

RunStatus = Literal["running", "done", "failed"]
MAX_LIST = 200  # most rows one listing returns
INT64 = range(-(2**63), 2**63)  # what SQLite can hold: other ids name no run

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  created TEXT NOT NULL,
  user TEXT NOT NULL DEFAULT '',
  claim TEXT NOT NULL,          -- the claim text, for listing and search
  claim_json TEXT NOT NULL,
  options_json TEXT NOT NULL DEFAULT '{}',
  status TEXT NOT NULL,
  report_json TEXT,
  label TEXT,                   -- the pipeline's verdict label, if judged
  error TEXT NOT NULL DEFAULT '',
  parent_id INTEGER,            -- the run this one reran with edited questions
  seconds REAL,
  review_json TEXT              -- the reviewed state for listing (NULL: the pipeline's label)
);
CREATE INDEX IF NOT EXISTS runs_created ON runs(created);
"""
#: Columns added since the first schema: (name, declaration), added to older files on open.
_ADDED = (("review_json", "TEXT"),)


def now() -> str:
    """The current UTC time as ISO 8601 with seconds (what every stored timestamp uses)."""
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat()


@dataclass(frozen=True, kw_only=True)
class RunSummary:
    """One row of the history list (no report)."""

    id: int
    created: str
    user: str
    claim: str
    status: RunStatus
    label: str | None = None  # the pipeline's verdict label, if judged
    parent_id: int | None = None
    review: ReviewState | None = None  # the reviewed state (None: no correction yet)

    @property
    def shown_label(self) -> str | None:
        """The verdict of record: the reviewed label when there is one, else the pipeline's."""
        return self.review.label if self.review is not None else self.label


@dataclass(frozen=True, kw_only=True)
class ReviewState:
    """What the history list shows of a run's review (see ``factseek.review.apply``)."""

    label: str | None = None  # the verdict of record (None: not judged)
    scale: str = ""
    status: str = "machine"  # machine, approved, set, stale
    reviewer: str = ""
    words: str = ""  # the label in words ("" = the label itself)
    cites: tuple[str, ...] = ()  # the cards a reviewed verdict rests on (ReviewRecord.citations)


@dataclass(frozen=True, kw_only=True)
class RunRecord:
    """A stored run with its report (``None`` while running or when it failed)."""

    id: int
    created: str
    user: str
    claim: Claim
    status: RunStatus
    options: Mapping[str, Any] = field(default_factory=dict)
    report: Report | None = None
    error: str = ""
    parent_id: int | None = None
    seconds: float | None = None


@contextmanager
def connect(path: Path) -> Iterator[sqlite3.Connection]:
    """A short-lived connection to the history database (committed on success)."""
    try:
        conn = sqlite3.connect(path, timeout=30)
    except sqlite3.Error as e:
        raise DataError(f"cannot open the history database: {e}", str(path)) from None
    try:
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA foreign_keys = ON")
        yield conn
        conn.commit()
    except sqlite3.Error as e:
        conn.rollback()
        raise DataError(f"history database error: {e}", str(path)) from None
    finally:
        conn.close()


def _report_json(report: Report) -> str:
    return json.dumps(redact_tree(to_dict(report)), ensure_ascii=False)


def _report(run_id: int, text: str) -> Report:
    """A stored report, checked field by field (``factseek.validate``): a damaged row is one
    ``DataError`` naming the field, not a crash in a page."""
    from factseek.validate import RecordError, record_from

    try:
        return record_from(Report, redact_tree(json_loads(text)))
    except (ValueError, RecordError) as e:
        raise DataError(f"check #{run_id}: the stored report is malformed ({e})") from None


class History:
    """Runs kept in a local SQLite file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with connect(self.path) as conn:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.executescript(_SCHEMA)
            have = {r["name"] for r in conn.execute("PRAGMA table_info(runs)")}
            for name, decl in _ADDED:
                if name not in have:
                    try:
                        conn.execute(f"ALTER TABLE runs ADD COLUMN {name} {decl}")
                    except sqlite3.OperationalError as e:  # another process added it first
                        if "duplicate column" not in str(e):
                            raise

    def create(
        self,
        claim: Claim,
        *,
        options: Mapping[str, Any] | None = None,
        user: str = "",
        parent_id: int | None = None,
    ) -> int:
        """A new run in state ``running``; returns its id."""
        with connect(self.path) as conn:
            cur = conn.execute(
                "INSERT INTO runs (created, user, claim, claim_json, options_json, status, parent_id)"
                " VALUES (?, ?, ?, ?, ?, 'running', ?)",
                (
                    now(),
                    user,
                    claim.text,
                    json.dumps(to_dict(claim)),
                    json.dumps(dict(options or {})),
                    parent_id,
                ),
            )
            return int(cur.lastrowid or 0)

    def finish(self, run_id: int, report: Report, *, seconds: float | None = None) -> None:
        with connect(self.path) as conn:
            conn.execute(
                "UPDATE runs SET status = 'done', report_json = ?, label = ?, seconds = ?"
                " WHERE id = ?",
                (_report_json(report), report.verdict.label, seconds, run_id),
            )

    def fail(self, run_id: int, error: str, *, seconds: float | None = None) -> None:
        line = (redact_text(str(error)).splitlines() or [""])[0][:500]
        with connect(self.path) as conn:
            conn.execute(
                "UPDATE runs SET status = 'failed', error = ?, seconds = ? WHERE id = ?",
                (line, seconds, run_id),
            )

    def set_review(self, run_id: int, state: ReviewState) -> None:
        """Record the run's reviewed state for the listing."""
        data = {
            "label": state.label,
            "scale": state.scale,
            "status": state.status,
            "reviewer": state.reviewer,
            "words": state.words,
            "cites": list(state.cites),
        }
        with connect(self.path) as conn:
            conn.execute("UPDATE runs SET review_json = ? WHERE id = ?", (json.dumps(data), run_id))

    def state(self, run_id: int) -> tuple[RunStatus, str]:
        """The run's status and error line, without reading its report (InputError: no run)."""
        if run_id not in INT64:
            raise InputError(f"no check #{run_id} in the history")
        with connect(self.path) as conn:
            row = conn.execute("SELECT status, error FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise InputError(f"no check #{run_id} in the history")
        return row["status"], row["error"]

    def get(self, run_id: int) -> RunRecord:
        """The run, or InputError when there is none with that id."""
        if run_id not in INT64:
            raise InputError(f"no check #{run_id} in the history")
        with connect(self.path) as conn:
            row = conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise InputError(f"no check #{run_id} in the history")
        return RunRecord(
            id=row["id"],
            created=row["created"],
            user=row["user"],
            claim=from_dict(Claim, json.loads(row["claim_json"])),
            status=row["status"],
            options=json.loads(row["options_json"] or "{}"),
            report=_report(run_id, row["report_json"]) if row["report_json"] else None,
            error=row["error"],
            parent_id=row["parent_id"],
            seconds=row["seconds"],
        )

    def list(self, query: str = "", *, limit: int = 50, offset: int = 0) -> list[RunSummary]:
        """Newest first; ``query`` matches the claim text or the speaker (case-insensitive)."""
        limit = max(1, min(limit, MAX_LIST))
        sql = "SELECT id, created, user, claim, status, parent_id, label, review_json FROM runs"
        args: list[Any] = []
        if query.strip():
            escaped = query.strip().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            pattern = f"%{escaped}%"
            sql += " WHERE claim LIKE ? ESCAPE '\\' OR claim_json LIKE ? ESCAPE '\\'"
            args += [pattern, pattern]
        sql += " ORDER BY id DESC LIMIT ? OFFSET ?"
        args += [limit, min(max(0, offset), INT64.stop - 1)]
        with connect(self.path) as conn:
            rows = conn.execute(sql, args).fetchall()
        return [
            RunSummary(
                id=r["id"],
                created=r["created"],
                user=r["user"],
                claim=r["claim"],
                status=r["status"],
                label=r["label"],
                parent_id=r["parent_id"],
                review=_review_state(r["review_json"]),
            )
            for r in rows
        ]

    def ids(self) -> list[int]:
        """Ids of finished runs, oldest first (what the feedback export walks)."""
        with connect(self.path) as conn:
            rows = conn.execute("SELECT id FROM runs WHERE status = 'done' ORDER BY id").fetchall()
        return [int(r["id"]) for r in rows]

    def delete(self, run_id: int) -> bool:
        """Delete a run and its corrections; False when there was none."""
        if run_id not in INT64:
            return False
        with connect(self.path) as conn:
            has_feedback = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'corrections'"
            ).fetchone()
            if has_feedback:
                conn.execute("DELETE FROM corrections WHERE run_id = ?", (run_id,))
            cur = conn.execute("DELETE FROM runs WHERE id = ?", (run_id,))
            return cur.rowcount > 0


def _review_state(text: str | None) -> ReviewState | None:
    if not text:
        return None
    try:
        data = json.loads(text)
        return ReviewState(
            label=data.get("label"),
            scale=str(data.get("scale") or ""),
            status=str(data.get("status") or "machine"),
            reviewer=str(data.get("reviewer") or ""),
            words=str(data.get("words") or ""),
            cites=tuple(str(x)[:40] for x in (data.get("cites") or ())[:200]),
        )
    except (ValueError, AttributeError):
        return None  # a damaged cell lists the pipeline's label
