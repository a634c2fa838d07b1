"""`factseek rewrite {bfs,train,train-edits,calibrate,run,eval}`: the learned query rewriter."""

from __future__ import annotations

from factseek.cli import rewrite_bfs, rewrite_edits, rewrite_model
from factseek.cli.common import make_app

app = make_app(
    "Learned query rewriting: BFS training data, decision transformer training, use, evaluation."
)
rewrite_bfs.register(app)
rewrite_model.register(app)
rewrite_edits.register(app)
