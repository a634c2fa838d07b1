"""What a run leaves on disk.

- ``batch``: many claims into a run folder with a flushed journal (resumable);
- ``resume``: what a resume may skip (each journaled report checked);
- ``summary``: the run's ``summary.csv`` / ``summary.md``;
- ``distributed``: the same on a Ray cluster (``--ray``);
- ``bundle``: evidence bundles (``--record`` / ``--replay``);
- ``evaluate``: ``eval pipeline`` (batch runs + a judge + metrics);
- ``compare``: run comparison (URL Jaccard).

``factseek.runs.compare_runs`` (the old module's name) still works.
"""

from __future__ import annotations

from factseek._moved import old_names

__getattr__ = old_names(__name__, "factseek.runs.compare")
