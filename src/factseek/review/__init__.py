"""The reviewer's records, used by the web workbench and the CLI alike.

- ``history``: the SQLite history of runs with their reviewed state;
- ``feedback``: corrections and reviewers' decisions with who and when;
- ``copies``: how far a card correction reaches (the same sentence for the same question);
- ``apply``: a report with corrections applied (answers and the rules verdict recomputed),
  its ``ReviewRecord``, and the corrections a rerun carries forward;
- ``ratings``: the organisation's rating scale and its schema.org 1-5 mapping;
- ``claimreview``: schema.org ClaimReview (only for a reviewed verdict);
- ``export``: training exports of the feedback.

``factseek.review.reviewed`` and ``carry_forward`` (the old module's names) still work.
"""

from __future__ import annotations

from factseek._moved import old_names

__getattr__ = old_names(__name__, "factseek.review.apply")
