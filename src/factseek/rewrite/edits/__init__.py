"""The learned edit scorer: what the endpoint returns for an edit -> keep it or not.

- ``features``: features of candidate edits from the endpoint's results;
- ``model``: the MLP over them and its greedy rewriter;
- ``train``: training and threshold calibration;
- ``npencoder``: the MiniLM it reads, in numpy (no torch);
- ``vectorcache``: search-result vectors cached on disk between runs;
- ``shipped``: ``load_rewriter`` (the shipped default, or a folder of either kind).
"""
