"""Test-wide settings.

The rules verdict's shipped numbers (``factseek/models/verdict/rules.json``: confidence maps and
abstention levels fitted on AVeriTeC train claims) would make hand-built stances abstain; the
tests of review, web and pipeline plumbing use the built-in numbers instead, and the shipped
file is tested on its own (``tests/test_verdict_trust.py``)."""

from __future__ import annotations

import os

os.environ.setdefault("FACTSEEK_VERDICT_RULES", "builtin")
