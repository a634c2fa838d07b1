"""A learned edit scorer over endpoint feedback, and the greedy rewriter that uses it.

The scorer predicts how much an edit changes AP@k from the edit's ``feedback.FEATURES`` (what
the edited query retrieves, judged against the claim by a sentence encoder, plus what the edit
touches): a small MLP, ``F -> H -> H -> 1`` with ReLU, on standardised features. It is trained
by ``edit_train`` on the real AP changes of single edits of training claims.

``EditRewriter.rewrite(queries)`` edits each query greedily, at most ``max_edits`` times: run
every allowed edit of the current query on the endpoint (``feedback.Endpoint``), score them,
take the best (ties: the first in ``actions.expand`` order) if its prediction exceeds
``threshold`` (chosen on validation claims), else stop (``stopped == "threshold"``). A threshold
of +inf (calibration found no clear gain) returns queries unchanged (``stopped == "abstain"``).
``RewriteResult.why`` says in words why a query stopped; ``rewrite(..., explain=True)`` also
records every candidate of every step with its prediction and feedback (``RewriteResult.weighed``:
``rewrite run --explain``). No relevance judgements are used; each step costs one search per candidate edit, so the endpoint
should be a local index or a cheap one.

Files: ``config.json`` (``format_version``, ``kind`` = ``factseek-edit-scorer``, features,
hidden size, threshold, max_edits, k, encoder name, training summary) and ``model.safetensors``
(float32 arrays ``mean``, ``std``, ``w1``, ``b1``, ``w2``, ``b2``, ``w3``, ``b3``). Inference is
numpy only; training needs torch.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from factseek.errors import ConfigError, ModelError
from factseek.files import atomic_path, atomic_write
from factseek.rewrite.edits.features import FEATURES, Endpoint, feature_names, step_features
from factseek.rewrite.edits.judge import JudgeModel
from factseek.rewrite.transformer.infer import RewriteResult, WeighedEdit, WeighedStep

FORMAT_VERSION = 1
MODEL_KIND = "factseek-edit-scorer"
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
ARRAYS = ("mean", "std", "w1", "b1", "w2", "b2", "w3", "b3")
JUDGE_PREFIX = "judge."  # the judge's arrays in model.safetensors


@dataclass(frozen=True, kw_only=True)
class EditScorer:
    """The MLP's arrays (float32); ``predict(x)`` maps (n, F) features to (n,) AP changes."""

    arrays: Mapping[str, np.ndarray]
    features: tuple[str, ...] = FEATURES
    judge: JudgeModel | None = None  # the learned judge of the pool (``judge.py``), if any

    def __post_init__(self) -> None:
        missing = [a for a in ARRAYS if a not in self.arrays]
        if missing:
            raise ModelError(f"edit scorer arrays missing: {', '.join(missing)}")
        if self.features != feature_names(self.judge is not None):
            raise ModelError(
                "edit scorer features do not match this version's"
                f" ({'with' if self.judge else 'without'} a judge)"
            )
        if self.arrays["w1"].shape[0] != len(self.features):
            raise ModelError(
                f"edit scorer reads {self.arrays['w1'].shape[0]} features, config names"
                f" {len(self.features)}"
            )

    def predict(self, x: np.ndarray) -> np.ndarray:
        a = self.arrays
        h = (np.asarray(x, np.float32) - a["mean"]) / a["std"]  # (n, F)
        h = np.maximum(h @ a["w1"] + a["b1"], 0.0)  # (n, H)
        h = np.maximum(h @ a["w2"] + a["b2"], 0.0)  # (n, H)
        return (h @ a["w3"] + a["b3"]).reshape(-1)  # (n,)


def average(scorers: Sequence[EditScorer]) -> EditScorer:
    """One scorer whose prediction is the mean of ``scorers``' (fit on the same rows: the same
    features, input scaling and judge, e.g. several seeds): their MLPs side by side, hidden
    layers block-diagonal, the last layer averaged. It is saved and loaded as any scorer."""
    first = scorers[0]
    for s in scorers[1:]:
        same = s.features == first.features and s.judge is first.judge
        if not same or not all(np.array_equal(s.arrays[a], first.arrays[a]) for a in ("mean", "std")):  # fmt: skip
            raise ModelError("only scorers fit on the same rows (features, scaling, judge) average")
    k = len(scorers)
    hidden = [s.arrays["w2"].shape[0] for s in scorers]
    w2 = np.zeros((sum(hidden), sum(hidden)), np.float32)
    at = 0
    for s, h in zip(scorers, hidden, strict=True):
        w2[at : at + h, at : at + h] = s.arrays["w2"]
        at += h
    arrays = {
        "mean": first.arrays["mean"], "std": first.arrays["std"],
        "w1": np.concatenate([s.arrays["w1"] for s in scorers], axis=1),
        "b1": np.concatenate([s.arrays["b1"] for s in scorers]),
        "w2": w2, "b2": np.concatenate([s.arrays["b2"] for s in scorers]),
        "w3": (np.concatenate([s.arrays["w3"] for s in scorers], axis=0) / k).astype(np.float32),
        "b3": (sum(s.arrays["b3"] for s in scorers) / k).astype(np.float32),
    }  # fmt: skip
    return EditScorer(arrays=arrays, features=first.features, judge=first.judge)


def guard_scorer() -> EditScorer:
    """The feedback guard as a scorer: its prediction is the ``dcg_d`` feature itself (the rise
    of the DCG-weighted claim/result similarity, ``guard.FeedbackGuard``), through the MLP as
    ``relu(x) - relu(-x) = x``. No training; a baseline for the learned scorer."""
    f = len(FEATURES)
    w1 = np.zeros((f, 2), np.float32)
    w1[FEATURES.index("dcg_d")] = [1.0, -1.0]
    arrays = {
        "mean": np.zeros(f, np.float32), "std": np.ones(f, np.float32), "w1": w1,
        "b1": np.zeros(2, np.float32), "w2": np.eye(2, dtype=np.float32),
        "b2": np.zeros(2, np.float32), "w3": np.array([[1.0], [-1.0]], np.float32),
        "b3": np.zeros(1, np.float32),
    }  # fmt: skip
    return EditScorer(arrays=arrays)


@dataclass(frozen=True, kw_only=True)
class EditPolicy:
    """How the scorer is used: the threshold an edit's prediction must exceed, the budget."""

    threshold: float = 0.0
    max_edits: int = 4
    k: int = 50  # the endpoint's cut-off the features are computed at
    encoder: str = "minilm"
    #: With a judge: an edit is allowed only when the judge's expected AP@k rises by more than
    #: this (``pje_d``); None: no such condition.
    judge_margin: float | None = None
    meta: dict[str, Any] = field(default_factory=dict)  # training and calibration summary


def save(out: str | Path, scorer: EditScorer, policy: EditPolicy) -> None:
    """Write ``config.json`` + ``model.safetensors`` (atomically)."""
    from safetensors.numpy import save_file

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    arrays = dict(scorer.arrays)
    if scorer.judge is not None:
        arrays.update({JUDGE_PREFIX + k: v for k, v in scorer.judge.arrays.items()})
    with atomic_path(out / WEIGHTS_FILE) as tmp:
        save_file({k: np.ascontiguousarray(v, np.float32) for k, v in arrays.items()}, str(tmp))
    judge = None
    if scorer.judge is not None:
        j = scorer.judge
        reader = _keep_reader(out, j.reader.name) if j.reader else ""
        judge = {"features": list(j.features), "hidden": int(j.arrays["w1"].shape[1]),
                 **({"reader": reader, "reads": j.reader.reads} if j.reader else {})}  # fmt: skip
    doc = {
        "format_version": FORMAT_VERSION,
        "kind": MODEL_KIND,
        "features": list(scorer.features),
        "hidden": int(scorer.arrays["w1"].shape[1]),
        "threshold": _threshold_json(policy.threshold),  # None: abstain (+inf)
        "max_edits": policy.max_edits,
        "k": policy.k,
        "encoder": policy.encoder,
        **({"judge": judge} if judge else {}),
        **({"judge_margin": policy.judge_margin} if policy.judge_margin is not None else {}),
        **policy.meta,
    }
    atomic_write(out / CONFIG_FILE, json.dumps(doc, indent=2))


#: The subfolder of an edit scorer that holds its judge's reader when that is a stance model
#: folder rather than a shipped model's name.
READER_DIR = "judge-reader"


def _keep_reader(out: Path, name: str) -> str:
    """The judge reader's name as the saved model records it: a shipped stance model's name as
    it is; a stance model folder copied into ``out/READER_DIR`` (its config and adapter), so
    the model folder is whole and names no machine path."""
    from factseek.stance import STANCE_MODELS
    from factseek.stance.crossencoder import WEIGHTS_FILE

    source = Path(name)
    if name in STANCE_MODELS or not source.is_dir():
        return name
    keep = out / READER_DIR
    if source.resolve() != keep.resolve():
        keep.mkdir(exist_ok=True)
        for file in ("config.json", WEIGHTS_FILE):
            with atomic_path(keep / file) as tmp:
                shutil.copyfile(source / file, tmp)
    return READER_DIR


def _threshold_json(value: float) -> float | None:
    if math.isnan(value) or value == -math.inf:
        raise ConfigError(f"threshold must be finite or +inf (abstain), got {value}")
    return None if value == math.inf else float(value)


def is_edit_scorer(path: str | Path) -> bool:
    from factseek.errors import FactseekError
    from factseek.files import SIDE_LIMIT, read_json

    try:
        doc = read_json(Path(path) / CONFIG_FILE, "model config", limit=SIDE_LIMIT)
    except FactseekError:
        return False
    return isinstance(doc, dict) and doc.get("kind") == MODEL_KIND


def load(path: str | Path) -> tuple[EditScorer, EditPolicy]:
    """``(scorer, policy)`` from a folder written by ``save``; ``ModelError`` when it is not one."""
    from safetensors.numpy import load_file

    path = Path(path)
    cfg, weights = path / CONFIG_FILE, path / WEIGHTS_FILE
    if not cfg.is_file() or not weights.is_file():
        raise ModelError(f"{path} is not an edit scorer folder (needs {CONFIG_FILE}, {WEIGHTS_FILE})")  # fmt: skip
    from factseek.errors import InputError
    from factseek.files import SIDE_LIMIT, read_json

    try:
        doc = read_json(cfg, "model config", limit=SIDE_LIMIT)
        arrays = load_file(str(weights))
    except (OSError, ValueError, InputError) as e:
        raise ModelError(f"{path}: unreadable ({e})") from None
    if not isinstance(doc, dict):
        raise ModelError(f"{cfg}: not a {MODEL_KIND}")
    if doc.get("kind") != MODEL_KIND or doc.get("format_version") != FORMAT_VERSION:
        raise ModelError(f"{cfg}: not a {MODEL_KIND} of format_version {FORMAT_VERSION}")
    judge = None
    if isinstance(doc.get("judge"), dict):
        from factseek.rewrite.edits.judge import Reader, input_names

        spec = doc["judge"]
        name = str(spec.get("reader") or "")
        if name == READER_DIR:  # kept in the model's folder (_keep_reader)
            name = str(path / READER_DIR)
        reader = Reader(name, int(spec["reads"])) if name else None
        if tuple(spec.get("features", ())) != input_names(reader is not None):
            raise ModelError(f"{cfg}: its judge reads other features than this version computes")
        n = len(JUDGE_PREFIX)
        judge = JudgeModel(
            arrays={k[n:]: v for k, v in arrays.items() if k.startswith(JUDGE_PREFIX)},
            features=input_names(reader is not None),
            reader=reader,
        )
        arrays = {k: v for k, v in arrays.items() if not k.startswith(JUDGE_PREFIX)}
    features = tuple(doc["features"])
    if features != feature_names(judge is not None):
        raise ModelError(f"{cfg}: trained on other features than this version computes")
    known = {"format_version", "kind", "features", "hidden", "threshold", "max_edits", "k", "encoder", "judge", "judge_margin"}  # fmt: skip
    policy = EditPolicy(
        threshold=math.inf if doc["threshold"] is None else float(doc["threshold"]),
        max_edits=int(doc["max_edits"]),
        k=int(doc["k"]),
        encoder=str(doc.get("encoder", "minilm")),
        judge_margin=None if doc.get("judge_margin") is None else float(doc["judge_margin"]),
        meta={k: v for k, v in doc.items() if k not in known},
    )
    return EditScorer(arrays=arrays, features=features, judge=judge), policy


def gated(
    scorer: EditScorer, x: np.ndarray, judge_margin: float | None, pred: np.ndarray | None = None
) -> np.ndarray:
    """The scorer's predictions (``pred`` when already computed), -inf for edits the judge does
    not back: with a ``judge_margin``, those whose expected AP under the judge rises by no more
    than it."""
    pred = scorer.predict(x) if pred is None else pred
    if judge_margin is None or scorer.judge is None:
        return pred
    rise = x[:, scorer.features.index("pje_d")]
    return np.where(rise > judge_margin, pred, -np.inf)


@dataclass(frozen=True, kw_only=True)
class Limits:
    """What evaluation reads off a rewriter: its edit budget and the positions it may touch."""

    max_edits: int
    max_positions: int = 64


class EditRewriter:
    """Greedy rewriting with an ``EditScorer`` against an endpoint; see the module docstring."""

    def __init__(
        self, scorer: EditScorer, policy: EditPolicy, endpoint: Endpoint, encoder: Any
    ) -> None:
        from factseek.rewrite.transformer.editor import ActionsEditor

        if endpoint.k != policy.k:
            raise ConfigError(f"the scorer was trained at k={policy.k}; the endpoint gives {endpoint.k}")  # fmt: skip
        self.scorer, self.policy, self.endpoint, self.encoder = scorer, policy, endpoint, encoder
        self.meta = {"kind": MODEL_KIND, **policy.meta}
        self.cfg = Limits(max_edits=policy.max_edits)
        self.editor = ActionsEditor()  # the same edits, for random-edit baselines
        self.abstain = math.isinf(policy.threshold)

    def weigh(
        self, claim: str, vector: np.ndarray, tq: Any, claim_ranking: Sequence[str] | None
    ) -> tuple[Any, np.ndarray, np.ndarray] | None:
        """One step: every allowed edit of the tagged query ``tq`` run on the endpoint, as
        ``(step, raw, pred)``: its ``step_features``, the scorer's predictions, and the same
        with -inf where the judge does not back the edit (``gated``); None when ``tq`` allows
        no edit. ``claim``/``vector``: the original claim and its embedding; ``claim_ranking``:
        its top-k (None at the first step: ``tq`` is the claim)."""
        from factseek.rewrite.environment import actions

        cands = actions.expand(tq)
        if not cands:
            return None
        step = step_features(
            self.endpoint, vector, tq, cands, claim_ranking, judge=self.scorer.judge, claim=claim
        )
        raw = self.scorer.predict(step.features)
        return step, raw, gated(self.scorer, step.features, self.policy.judge_margin, raw)

    def rewrite(
        self, queries: Sequence[str], *, threshold: float | None = None, explain: bool = False
    ) -> list[RewriteResult]:
        """Rewrite each query (input order); ``threshold`` overrides the policy's. ``explain``
        records every candidate edit with its prediction and feedback (``RewriteResult.weighed``).
        """
        from factseek.rewrite.environment import actions

        tau = self.policy.threshold if threshold is None else float(threshold)
        if math.isinf(tau) and tau > 0:  # calibration found no clear gain: leave queries alone
            why = "calibration found no clear gain from this model's edits: queries are left alone"
            return [
                RewriteResult(text=q, original=q, path=(q,), stopped="abstain", why=why)
                for q in queries
            ]
        claims = np.asarray(self.encoder.encode(list(queries)), np.float32)
        k, budget = self.policy.k, self.policy.max_edits
        out = []
        for text, vector in zip(queries, claims, strict=True):
            tq = actions.tag(text)
            path, trace, stopped = [tq.text], [], "budget"
            why = f"made {budget} edit{'s' if budget != 1 else ''}, this model's budget"
            weighed: list[WeighedStep] = []
            claim_ranking = None
            for step_no in range(budget):
                weighed_step = self.weigh(text, vector, tq, claim_ranking)
                if weighed_step is None:
                    stopped = "no-edit"
                    why = "the query allows no edit (nothing to remove, no WordNet synonym, no verb to put in the present)"  # fmt: skip
                    break
                step, raw, pred = weighed_step
                claim_ranking = claim_ranking or step.current
                best = int(np.argmax(pred))  # ties: the first in expand order
                passed = bool(pred[best] > tau)
                if explain:
                    weighed.append(_weighed(step, raw, pred, tau, step.actions[best] if passed else ""))  # fmt: skip
                if not np.isfinite(pred[best]):
                    stopped = "judge"
                    why = (
                        f"none of the {len(step.texts)} edits raises the AP@{k} the judge expects"
                        f" (which result is the evidence) by more than {self.policy.judge_margin:g}"
                    )
                    break
                if not passed:
                    stopped = "threshold"
                    why = (
                        f"the best of {len(step.texts)} edits ({step.actions[best]}) is predicted to"
                        f" change AP@{k} by {pred[best]:+.3f}, not above the threshold {tau:+.3f}"
                    )
                    break
                trace.append(step.actions[best])
                path.append(step.texts[best])
                if step_no + 1 < budget:  # tag only a query that will be edited again
                    tq = actions.tag(step.texts[best])
            out.append(
                RewriteResult(
                    text=path[-1],
                    original=text,
                    trace=tuple(trace),
                    path=tuple(path),
                    steps=len(trace),
                    stopped=stopped,
                    why=why,
                    weighed=tuple(weighed),
                )
            )
        return out


#: Feedback features ``--explain`` shows beside each prediction.
EXPLAIN_FEATURES: tuple[str, ...] = ("dcg_d", "prf1_d", "ov10")
#: With a judge: the change of the expected AP@k under the judge's probabilities.
EXPLAIN_JUDGE: tuple[str, ...] = ("pje_d",)


def _weighed(step: Any, raw: np.ndarray, pred: np.ndarray, tau: float, chosen: str) -> WeighedStep:
    """The step's candidates for ``--explain``, best first: ``raw`` the scorer's predictions,
    ``pred`` the same with -inf where the judge does not back the edit."""
    judged = step.features.shape[1] > len(FEATURES)
    names = feature_names(judged)
    shown = EXPLAIN_FEATURES + (EXPLAIN_JUDGE if judged else ())
    cols = [names.index(f) for f in shown]
    order = sorted(range(len(pred)), key=lambda i: (-float(pred[i]), -float(raw[i]), i))
    return WeighedStep(
        query=step.query,
        threshold=tau,
        chosen=chosen,
        candidates=tuple(
            WeighedEdit(
                action=step.actions[i],
                text=step.texts[i],
                predicted=float(raw[i]),
                backed=bool(np.isfinite(pred[i])),
                feedback=tuple(
                    (f, float(step.features[i, c])) for f, c in zip(shown, cols, strict=True)
                ),
            )
            for i in order
        ),
    )
