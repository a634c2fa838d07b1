"""Test-wide settings.

The rules verdict's shipped numbers (``factseek/models/verdict/rules.json``: confidence maps and
abstention levels fitted on AVeriTeC train claims) would make hand-built stances abstain; the
tests of review, web and pipeline plumbing use the built-in numbers instead, and the shipped
file is tested on its own (``tests/test_verdict_trust.py``).

Caches (stance readings, the demo store, WordNet, rewrite caches) go to a folder of the test
session, removed when it ends, not to the user's ``~/.cache/factseek``; only the unpacked MPNet
base, when the user's cache holds it, is linked there rather than unpacked again (440 MB). Set
``FACTSEEK_CACHE`` to choose the folder yourself.

The default stance model is ``mpnet`` where its base is installed and ``small`` elsewhere
(``stance.default_stance``); the tests read ``small`` by default, so that they ask the same of
every machine (and stay fast). How the default is chosen is tested in
``tests/test_stance_default.py``; ``mpnet`` itself in ``tests/test_stance_mpnet.py``."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

os.environ.setdefault("FACTSEEK_VERDICT_RULES", "builtin")
os.environ["FACTSEEK_STANCE"] = "small"


def _session_cache() -> None:
    if os.environ.get("FACTSEEK_CACHE"):
        return  # the caller chose
    from factseek.files import cache_root
    from factseek.ml.encode import MPNET_FOLDER

    mpnet = cache_root() / MPNET_FOLDER
    folder = Path(tempfile.mkdtemp(prefix="factseek-tests-cache-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    if (mpnet / "model.safetensors").is_file():
        (folder / MPNET_FOLDER).symlink_to(mpnet, target_is_directory=True)
    os.environ["FACTSEEK_CACHE"] = str(folder)


_session_cache()
