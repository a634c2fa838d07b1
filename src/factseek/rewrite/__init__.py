"""Query rewriting for misinformation discovery (docs/rewrite-bfs.md, docs/rewrite-model.md).

Three ideas, one subpackage each:

- ``environment``: the search endpoint as an environment (edit actions, retrievers, rewards) and
  the pruned BFS that finds edit sequences worth learning;
- ``transformer``: the decision transformer trained on those sequences, and its inference;
- ``edits``: the learned edit scorer (the shipped default) and its loader.

Beside them: ``evaluate`` (claim vs model vs random), ``plots``, ``baselines`` (RM3-style
expansion), ``splits`` (train/dev/test of retrieval claims) and ``gains`` (what a rewritten query
found that its question did not, for the report).
"""
