"""The search environment and the BFS that finds good edit sequences.

- ``actions``: the four edit actions and their POS permissions (``wordnet``: offline synonyms);
- ``env``: retrievers (BM25, kNN) and rewards (AP@50, recall, reciprocal rank);
- ``bm25_index``, ``scorer``, ``scorer_candidates``, ``scorer_kernels``: the exact incremental
  BM25 of the BFS hot loop;
- ``bfs``: the pruned breadth-first search;
- ``guard``: endpoint feedback that accepts or rejects an edit.
"""
