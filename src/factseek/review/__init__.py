"""The reviewer's records, used by the web workbench and the CLI alike.

- ``history``: the SQLite history of runs with their reviewed state;
- ``feedback``: corrections and reviewers' decisions with who and when;
- ``apply``: a report with corrections applied (answers and the rules verdict recomputed),
  its ``ReviewRecord``, and the corrections a rerun carries forward;
- ``ratings``: the organisation's rating scale and its schema.org 1-5 mapping;
- ``claimreview``: schema.org ClaimReview (only for a reviewed verdict);
- ``export``: training exports of the feedback.

``factseek.review.reviewed`` and ``carry_forward`` (the old module's names) still work.
"""

from __future__ import annotations


def __getattr__(name: str) -> object:
    """The names of the old ``factseek.review`` module (factseek.review.apply now), imported on first use."""
    import importlib

    module = importlib.import_module("factseek.review.apply")
    try:
        return getattr(module, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
