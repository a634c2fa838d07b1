"""The paper's temporal and site constraints.

- ``hits``: the constraints as data and one pure check per search hit (before the claim's
  date, not from an excluded site);
- ``temporal``: the post-fetch date check of documents (the claim's day, the date basis,
  guessed dates, the safe side across a cut-off) and leakage flags.

``factseek.constraints.X`` still gives the names of ``hits`` (the module's old path).
"""

from __future__ import annotations

from factseek._moved import old_names

__getattr__ = old_names(__name__, "factseek.constraints.hits")
