"""Reading a trained model folder's ``config.json``: the checks every model kind shares.

A model folder written by factseek (a classifier judge, an evidence judge, a stance model) holds a
``config.json`` with ``kind`` and ``format_version``; ``read_model_config`` opens it and raises
``ModelError`` with one line when the folder is not one, is of another kind or version, or lacks a
key its kind needs. Kind-specific checks stay with each kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from factseek.errors import InputError, ModelError
from factseek.files import SIDE_LIMIT, read_json

CONFIG_FILE = "config.json"


def read_model_config(
    path: str | Path, *, kind: str, version: int, what: str, required: Sequence[str] = ()
) -> dict[str, Any]:
    """``path/config.json`` as a dict, checked; ``what`` names the kind in messages
    ("stance model", "classifier judge", ...)."""
    path = Path(path)
    cfg_path = path / CONFIG_FILE
    if not cfg_path.is_file():
        raise ModelError(f"{path} is not a {what} folder (no {CONFIG_FILE})")
    try:
        cfg = read_json(cfg_path, "model config", limit=SIDE_LIMIT)
    except InputError as e:  # a device, too large, not UTF-8 or not JSON
        raise ModelError(f"unreadable model config: {e}") from None
    if not isinstance(cfg, dict) or cfg.get("kind") != kind:
        found = cfg.get("kind") if isinstance(cfg, dict) else None
        raise ModelError(f"{cfg_path}: not a factseek {what} (kind {found!r})")
    if cfg.get("format_version") != version:
        raise ModelError(
            f"{cfg_path}: format_version {cfg.get('format_version')!r}, this factseek reads {version}"
        )
    for key in required:
        if key not in cfg:
            raise ModelError(f"{cfg_path}: missing {key!r}")
    return cfg
