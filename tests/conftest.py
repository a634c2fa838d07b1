"""Test-wide settings.

The rules verdict's shipped numbers (``factseek/models/verdict/rules.json``: confidence maps and
abstention levels fitted on AVeriTeC train claims) would make hand-built stances abstain; the
tests of review, web and pipeline plumbing use the built-in numbers instead, and the shipped
file is tested on its own (``tests/test_verdict_trust.py``).

The default stance model is ``mpnet`` where its base is installed and ``small`` elsewhere
(``stance.default_stance``); the tests read ``small`` by default, so that they ask the same of
every machine (and stay fast). How the default is chosen is tested in
``tests/test_stance_default.py``; ``mpnet`` itself in ``tests/test_stance_mpnet.py``."""

from __future__ import annotations

import os

os.environ.setdefault("FACTSEEK_VERDICT_RULES", "builtin")
os.environ["FACTSEEK_STANCE"] = "small"
