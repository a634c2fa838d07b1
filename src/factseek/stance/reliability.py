"""How often a stance reading was right on real-world evidence, for reports to say beside cards.

A model's probabilities are calibrated on its validation side, which Wikipedia sources dominate;
on real-world evidence (news, web articles, fact-checkers' answers) the same reading is right
less often (docs/stance.md). So a model folder may carry, in its ``config.json``, what a reader of
a card needs: of the readings it gave as ``supports`` (and ``refutes``) on the evaluation sides
of real-world sets, how many were right.

``from_results(results)`` pools the confusion matrices of ``factseek stance eval``'s results
(statement form) over ``REALWORLD`` sources: a reading counts for the label it predicted, and
is right when the gold label is that label. Two-way sides count as they are scored (WiCE:
supported vs not, so it has no "refutes" readings; AVeriTeC dev: supports vs refutes).
``record(folder, reliability)`` writes it into a model folder's config (``stance eval
--reliability-to FOLDER``); ``words(reliability)`` is the sentence reports show.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factseek.errors import InputError
from factseek.types import STANCE_LABELS

#: Real-world evaluation sides pooled, in this order (``stance/data.py`` source names).
REALWORLD: tuple[str, ...] = ("wice", "checkcovid", "averitec-dev")
NAMES = {"wice": "WiCE", "checkcovid": "Check-COVID", "averitec-dev": "AVeriTeC dev"}
DECIDING = ("supports", "refutes")
CONFIG_KEY = "reliability"


@dataclass(frozen=True)
class Reliability:
    """Per deciding label, ``(right, read)``: readings of that label and how many were right."""

    counts: Mapping[str, tuple[int, int]]
    sources: tuple[str, ...]
    split: str = "test"

    def precision(self, label: str) -> float | None:
        right, read = self.counts.get(label, (0, 0))
        return right / read if read else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "counts": {k: list(v) for k, v in self.counts.items()},
            "sources": list(self.sources),
            "split": self.split,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Reliability:
        try:
            counts = {
                str(k): (int(v[0]), int(v[1]))
                for k, v in dict(d["counts"]).items()
                if str(k) in DECIDING
            }
            return cls(counts=counts, sources=tuple(map(str, d["sources"])), split=str(d["split"]))
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise InputError(f"bad stance reliability record: {e}") from None


def from_results(results: Mapping[str, Mapping[str, Any]], split: str = "test") -> Reliability:
    """Pool the statement-form confusion matrices (rows gold, columns predicted, in
    ``STANCE_LABELS`` order) of the ``REALWORLD`` sources in ``results``."""
    found = [s for s in REALWORLD if f"{s}/statement" in results]
    if not found:
        raise InputError(
            "stance eval scored none of " + ", ".join(REALWORLD) + " in statement form: "
            "run it with --sources " + ",".join(REALWORLD) + " --form statement"
        )
    counts: dict[str, tuple[int, int]] = {}
    for label in DECIDING:
        j = STANCE_LABELS.index(label)
        right = read = 0
        for s in found:
            cm = results[f"{s}/statement"]["confusion"]
            right += int(cm[j][j])
            read += sum(int(row[j]) for row in cm)
        counts[label] = (right, read)
    return Reliability(counts=counts, sources=tuple(found), split=split)


def record(folder: str | Path, rel: Reliability) -> Path:
    """Write ``rel`` into ``folder/config.json`` (key ``reliability``), atomically; the folder
    must hold a stance model (``crossencoder.read_config``'s checks)."""
    from factseek.files import atomic_write
    from factseek.stance.crossencoder import CONFIG_FILE, read_config

    cfg = read_config(folder)
    cfg[CONFIG_KEY] = rel.to_dict()
    path = Path(folder) / CONFIG_FILE
    atomic_write(path, json.dumps(cfg, indent=2, ensure_ascii=False) + "\n")
    return path


def of_model(config: Mapping[str, Any]) -> Reliability | None:
    """The reliability a model's config carries; None when it has none."""
    raw = config.get(CONFIG_KEY)
    return Reliability.from_dict(raw) if isinstance(raw, Mapping) else None


def words(rel: Reliability) -> str:
    """ "on real-world evidence it never trained on (WiCE, ...), a “supports” reading was right
    63% of the time (192 of 305) and a “refutes” reading 54% (54 of 100)"."""
    parts = []
    for label in DECIDING:
        right, read = rel.counts.get(label, (0, 0))
        if read:
            first = not parts
            share = f"{100 * right / read:.0f}%" + (" of the time" if first else "")
            parts.append(
                f"a “{label}” reading {'was right ' if first else ''}{share} ({right} of {read})"
            )
    if not parts:
        return ""
    where = ", ".join(NAMES.get(s, s) for s in rel.sources)
    return f"on real-world evidence it never trained on ({where}), " + " and ".join(parts)
