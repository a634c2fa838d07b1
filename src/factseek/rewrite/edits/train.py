"""Train and calibrate the edit scorer (``factseek rewrite train-edits``); see ``edit_model``.

1. **Data** (``collect``): for every training claim, every allowed single edit is run on the
   endpoint and described by ``feedback.step_features``; its target is the real change of the
   reward (AP@k against the claim's relevant documents) that the edit causes.
2. **Fit** (``fit_scorer``): the MLP regresses the targets (Huber loss, AdamW, seeded; inputs
   standardised with the training mean and standard deviation). With more than one round, the
   next round's rows also cover the queries the fitted policy reaches (``collect(policy=...)``:
   its best edit while predicted above 0, up to the budget), and the scorer is fit again on
   them: the states it will see, not only the claims.
3. **Calibrate** (``rollout`` + ``choose``): on validation claims (never trained on) the greedy
   policy runs once with no threshold, recording at each step the best prediction and the reward
   after the edit. A threshold ``tau`` and a budget ``K`` only decide where a path stops (the
   greedy choice at each step does not depend on them), so every ``(tau, K)`` of the grid is read
   off the same rollout. The best mean reward wins (ties: the higher threshold, then the smaller
   budget); if the paired bootstrap 95% CI of its gain over the claims is not above 0, the
   threshold is set to +inf: the rewriter then leaves queries alone.

Everything is seeded; the rollout uses judgements only to choose ``(tau, K)``, never per claim.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from factseek.datasets.retrieval import RetrievalClaim
from factseek.errors import InputError
from factseek.files import atomic_path
from factseek.metrics.retrieval import METRICS, parse_metric
from factseek.rewrite.edits.features import Endpoint, feature_names, step_features
from factseek.rewrite.edits.judge import JudgeModel, Reader
from factseek.rewrite.edits.model import EditPolicy, EditScorer, gated

#: -1: always take the best edit (an AP change cannot be below -1); +inf: abstain.
THRESHOLDS = (-1.0, 0.0, 0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.08, 0.12, math.inf)
BUDGETS = (1, 2, 3, 4)


@dataclass(frozen=True, kw_only=True)
class StepData:
    """Rows of single edits: features (n, F), targets (n,), claim index of each row (n,)."""

    x: np.ndarray
    y: np.ndarray
    claim: np.ndarray
    reward0: np.ndarray  # per claim, the claim's own reward


@dataclass(frozen=True, kw_only=True)
class Rollout:
    """Per claim, the greedy path with no threshold: best prediction and reward after each step.
    ``pred[i, s]`` is nan once claim i had no edit left at step s."""

    reward0: np.ndarray  # (n,)
    pred: np.ndarray  # (n, K)
    reward: np.ndarray  # (n, K)


def _reward_fn(reward: str):
    metric, k = parse_metric(reward)
    return k, lambda ranking, rel: METRICS[metric](ranking, rel, k)


def _rows_key(
    claims: Sequence[RetrievalClaim],
    reward: str,
    encoder: object,
    corpus: str,
    policy: EditScorer | None,
    steps: int,
    judge: JudgeModel | None = None,
) -> str:
    h = hashlib.blake2b(digest_size=16)
    names = feature_names(judge is not None)
    reader = f"{judge.reader.name}:{judge.reader.reads}" if judge and judge.reader else ""
    for part in (reward, str(getattr(encoder, "name", "")), corpus, ",".join(names), str(steps), reader):  # fmt: skip
        h.update(part.encode() + b"\0")
    for arrays in (policy.arrays if policy else {}, judge.arrays if judge else {}):
        for name in sorted(arrays):
            h.update(np.ascontiguousarray(arrays[name]).tobytes())
    for c in claims:
        h.update(f"{c.id}\1{c.text}\1{','.join(c.relevant)}\0".encode())
    return h.hexdigest()


def collect(
    claims: Sequence[RetrievalClaim],
    endpoint: Endpoint,
    encoder: object,
    *,
    reward: str = "ap@50",
    progress: bool = False,
    cache: tuple[Path, str] | None = None,
    policy: EditScorer | None = None,
    steps: int = 1,
    judge: JudgeModel | None = None,
) -> StepData:
    """Single-edit rows of every claim (see the module docstring). With a ``policy`` (a scorer
    fit before) and ``steps > 1``, each claim then follows the policy's best edit while its
    prediction is above 0, up to ``steps`` queries, and the edits of every query it reaches are
    rows too (targets: the change from that query's reward), so later rounds learn the states
    the policy itself visits. ``cache``: ``(folder, corpus fingerprint)``: rows are kept in
    ``folder/<key>.npz``, keyed by the claims, the corpus, the reward, the encoder, the feature
    names, the policy and ``steps``, so a second run on the same data reads them."""
    from factseek.rewrite.environment import actions

    path = None
    if cache is not None:
        key = _rows_key(claims, reward, encoder, cache[1], policy, steps, judge)
        path = cache[0] / f"{key}.npz"
        if path.is_file():
            with np.load(path) as z:
                return StepData(x=z["x"], y=z["y"], claim=z["claim"], reward0=z["reward0"])
    k, score = _reward_fn(reward)
    if k != endpoint.k:
        raise InputError(f"reward {reward} needs the endpoint's top-{k}; it gives {endpoint.k}")
    vectors = np.asarray(encoder.encode([c.text for c in claims]), np.float32)  # type: ignore[attr-defined]
    tagged = actions.tag_many([c.text for c in claims])
    xs, ys, gs = [], [], []
    reward0 = np.zeros(len(claims))
    t0 = time.perf_counter()
    for i, (c, tq, v) in enumerate(zip(claims, tagged, vectors, strict=True)):
        rel = frozenset(c.relevant)
        claim_ranking = endpoint.retriever.rank([tq.text], k)[0]
        reward0[i] = current = score(claim_ranking, rel)
        for s in range(steps if policy is not None else 1):
            cands = actions.expand(tq)
            if not cands:
                break
            step = step_features(endpoint, v, tq, cands, claim_ranking, judge=judge, claim=c.text)  # fmt: skip
            rewards = np.array([score(r, rel) for r in step.rankings])
            xs.append(step.features)
            ys.append(rewards - current)
            gs.append(np.full(len(cands), i))
            if policy is None or s + 1 == steps:
                break
            pred = policy.predict(step.features)
            best = int(np.argmax(pred))
            if not pred[best] > 0:
                break
            current = float(rewards[best])
            tq = actions.tag(step.texts[best])
        if progress and (i + 1) % 500 == 0:
            print(f"collect: {i + 1}/{len(claims)} claims, {time.perf_counter() - t0:.0f} s", flush=True)  # fmt: skip
    if not xs:
        raise InputError("no claim has an allowed edit")
    data = StepData(
        x=np.concatenate(xs).astype(np.float32),
        y=np.concatenate(ys).astype(np.float32),
        claim=np.concatenate(gs),
        reward0=reward0,
    )
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path, suffix=".npz") as tmp:
            np.savez(tmp, x=data.x, y=data.y, claim=data.claim, reward0=data.reward0)
    return data


def judge_pools(
    claims: Sequence[RetrievalClaim],
    endpoint: Endpoint,
    encoder: object,
    *,
    progress: bool = False,
    reader: Reader | None = None,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The judge's training pools: for each claim, the pool of its first step (the claim's and
    each single edit's top-k), the ``judge.FEATURES`` of every pooled document and whether it is
    one of the claim's relevant documents (with a ``reader``, its readings too)."""
    from factseek.rewrite.edits.judge import judge_inputs, list_counts
    from factseek.rewrite.environment import actions

    vectors = np.asarray(encoder.encode([c.text for c in claims]), np.float32)  # type: ignore[attr-defined]
    xs, ys = [], []
    t0 = time.perf_counter()
    for i, (c, tq) in enumerate(zip(claims, actions.tag_many([c.text for c in claims]), strict=True)):  # fmt: skip
        current, rankings = endpoint.rank_edits(tq.text, [t for _, t in actions.expand(tq)])
        searched = [current, *rankings]
        pool = list(list_counts(searched))
        cos = endpoint.vectors(pool) @ vectors[i] if pool else np.zeros(0, np.float32)
        terms = [endpoint.terms(d) for d in pool]
        xs.append(judge_inputs(c.text, cos, pool, terms, current, searched, reader=reader, text_of=endpoint.text_of))  # fmt: skip
        rel = set(c.relevant)
        ys.append(np.array([d in rel for d in pool]))
        if progress and (i + 1) % 2000 == 0:
            print(f"judge pools: {i + 1}/{len(claims)} claims, {time.perf_counter() - t0:.0f} s", flush=True)  # fmt: skip
    return xs, ys


def fit_scorer(
    data: StepData,
    *,
    hidden: int = 64,
    epochs: int = 20,
    batch_size: int = 512,
    lr: float = 2e-3,
    weight_decay: float = 1e-4,
    seed: int = 0,
    judge: JudgeModel | None = None,
) -> EditScorer:
    """Fit the MLP to the rows (Huber loss, delta 0.1); returns numpy arrays. ``judge``: the
    judge the rows' ``JUDGE_FEATURES`` came from (kept with the scorer)."""
    import torch

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    mean = data.x.mean(axis=0)
    std = data.x.std(axis=0)
    std = np.where(std > 1e-6, std, 1.0).astype(np.float32)
    x = torch.from_numpy((data.x - mean) / std)
    y = torch.from_numpy(data.y)
    net = torch.nn.Sequential(
        torch.nn.Linear(x.shape[1], hidden), torch.nn.ReLU(),
        torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
        torch.nn.Linear(hidden, 1),
    )  # fmt: skip
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=weight_decay)
    loss_fn = torch.nn.HuberLoss(delta=0.1)
    n = len(y)
    for _ in range(epochs):
        order = torch.from_numpy(rng.permutation(n))
        for s in range(0, n, batch_size):
            idx = order[s : s + batch_size]
            loss = loss_fn(net(x[idx]).squeeze(-1), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    w = [p.detach().numpy().astype(np.float32) for p in net.parameters()]
    arrays = {
        "mean": mean.astype(np.float32), "std": std,
        "w1": w[0].T.copy(), "b1": w[1], "w2": w[2].T.copy(), "b2": w[3],
        "w3": w[4].T.copy(), "b3": w[5],
    }  # fmt: skip
    return EditScorer(arrays=arrays, features=feature_names(judge is not None), judge=judge)


def rollout(
    scorer: EditScorer,
    claims: Sequence[RetrievalClaim],
    endpoint: Endpoint,
    encoder: object,
    *,
    reward: str = "ap@50",
    max_edits: int = max(BUDGETS),
    judge_margin: float | None = None,
) -> Rollout:
    """The greedy path of every claim with no threshold (see the module docstring)."""
    from factseek.rewrite.environment import actions

    k, score = _reward_fn(reward)
    vectors = np.asarray(encoder.encode([c.text for c in claims]), np.float32)  # type: ignore[attr-defined]
    n = len(claims)
    pred = np.full((n, max_edits), np.nan)
    rewards = np.zeros((n, max_edits))
    reward0 = np.zeros(n)
    for i, (c, v) in enumerate(zip(claims, vectors, strict=True)):
        rel = frozenset(c.relevant)
        tq = actions.tag(c.text)
        claim_ranking = endpoint.retriever.rank([tq.text], k)[0]
        reward0[i] = current = score(claim_ranking, rel)
        for s in range(max_edits):
            cands = actions.expand(tq)
            if not cands:
                rewards[i, s:] = current
                break
            step = step_features(
                endpoint, v, tq, cands, claim_ranking, judge=scorer.judge, claim=c.text
            )
            p = gated(scorer, step.features, judge_margin)
            best = int(np.argmax(p))
            pred[i, s] = p[best]
            current = rewards[i, s] = score(step.rankings[best], rel)
            tq = actions.tag(step.texts[best])
    return Rollout(reward0=reward0, pred=pred, reward=rewards)


def finals(r: Rollout, tau: float, budget: int) -> tuple[np.ndarray, np.ndarray]:
    """Per claim: the reward where the path stops under ``(tau, budget)``, and its edits."""
    out = r.reward0.copy()
    edits = np.zeros(len(out), np.int64)
    for i in range(len(out)):
        for s in range(min(budget, r.pred.shape[1])):
            if not (r.pred[i, s] > tau):  # nan (no edit left) stops too
                break
            out[i] = r.reward[i, s]
            edits[i] = s + 1
    return out, edits


@dataclass(frozen=True, kw_only=True)
class Choice:
    threshold: float  # +inf: abstain
    best_threshold: float  # the grid's best, also when abstaining
    max_edits: int
    claim_score: float
    score: float
    gain_ci: tuple[float, float]
    abstain: bool
    grid: tuple[tuple[float, int, float, float], ...]  # (tau, K, mean reward, mean edits)


def choose(
    r: Rollout,
    *,
    thresholds: Sequence[float] = THRESHOLDS,
    budgets: Sequence[int] = BUDGETS,
    seed: int = 0,
) -> Choice:
    """The best ``(tau, K)`` on the rollout's claims; abstain unless its CI is above 0."""
    from factseek.rewrite.evaluate import paired_ci

    grid = []
    for tau in thresholds:
        for budget in budgets:
            got, edits = finals(r, tau, budget)
            grid.append((float(tau), int(budget), float(got.mean()), float(edits.mean())))
    best = max(grid, key=lambda g: (g[2], g[0], -g[1]))
    got, _ = finals(r, best[0], best[1])
    ci = paired_ci(got - r.reward0, seed=seed)
    abstain = not ci[0] > 0
    return Choice(
        threshold=math.inf if abstain else best[0],
        best_threshold=best[0],
        max_edits=best[1],
        claim_score=float(r.reward0.mean()),
        score=best[2],
        gain_ci=ci,
        abstain=abstain,
        grid=tuple(grid),
    )


def calibrated_policy(choice: Choice, *, k: int, encoder: str, meta: dict) -> EditPolicy:
    return EditPolicy(
        threshold=choice.threshold,
        max_edits=choice.max_edits,
        k=k,
        encoder=encoder,
        meta={
            **meta,
            "calibration": {
                "threshold": None if math.isinf(choice.threshold) else choice.threshold,
                "max_edits": choice.max_edits,
                "abstain": choice.abstain,
                "claim_score": choice.claim_score,
                "score": choice.score,
                "gain_ci": list(choice.gain_ci),
            },
        },
    )
