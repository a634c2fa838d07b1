"""`factseek index ...`."""

from __future__ import annotations

from factseek.cli import make_app

app = make_app("index commands.")
