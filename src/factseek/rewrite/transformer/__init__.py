"""The decision transformer that learns edits from BFS trajectories.

- ``trajectories``: BFS training data on disk;
- ``model``: the decision transformer;
- ``editor``: what training and inference share (``Editor``, ``ActionsEditor``, ``WordVectors``);
- ``tables``: cached per-text training rows;
- ``train``, ``infer``: training, and greedy batched rewriting.
"""
