"""Evaluate rewriters on held-out claims (``factseek rewrite eval``).

Three systems on the same claims, the same retriever and the same cut-off k (50 by default):

- ``claim``: the claim itself as the query;
- ``model``: the decision transformer's rewrite (greedy, conditioned on the checkpoint's target
  return, no relevance judgements at inference: what a user would get);
- ``random``: as many uniformly random valid edits as the model made on a claim drawn at random
  (the model's edit-length distribution), seeded.

Metrics per claim, averaged: AP@k (mAP), recall@k and reciprocal rank of the first relevant
document within the top k (MRR; 0 when none is there). Also the per-step mAP curve (step s =
the query after ``min(s, steps)`` edits; paper Fig. 4), and for every edit of the model, how it
changed AP@k, by action kind (Figs. 5 and 6). Several models make the ablation table
(retriever x reward x returns x negatives; paper Table 4).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from factseek.files import cache_root
from factseek.metrics.retrieval import average_precision, recall_at_k, reciprocal_rank
from factseek.rewrite.environment.env import Retriever

SYSTEMS = ("claim", "model", "random")


@dataclass(frozen=True, kw_only=True)
class EvalClaim:
    id: str
    text: str
    relevant: frozenset[str]


@dataclass(frozen=True, kw_only=True)
class Scores:
    """Mean metrics of one system over the claims, and its mAP after each edit step."""

    map: float
    recall: float
    mrr: float
    steps_map: tuple[float, ...]  # index s: mAP after min(s, steps) edits; [0] is the claim
    mean_steps: float = 0.0


@dataclass(frozen=True, kw_only=True)
class EvalResult:
    model: str
    retriever: str
    k: int
    n_claims: int
    systems: dict[str, Scores]
    #: kind -> {"better": n, "same": n, "worse": n} over the model's edits (AP@k before/after)
    outcomes: dict[str, dict[str, int]] = field(default_factory=dict)
    #: kind -> mean change in AP@k caused by the model's edits of that kind
    mean_change: dict[str, float] = field(default_factory=dict)
    #: the training setting: bfs retriever/reward, returns, negatives
    setting: dict[str, Any] = field(default_factory=dict)
    #: paired bootstrap 95% CI of the mean AP@k change, model minus claim, over the claims
    gain_ci: tuple[float, float] = (0.0, 0.0)
    #: the same for recall@k
    recall_ci: tuple[float, float] = (0.0, 0.0)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _metrics(rankings: list[list[str]], claims: Sequence[EvalClaim], k: int) -> np.ndarray:
    """(n, 3): AP@k, recall@k, RR@k per claim."""
    return np.array(
        [
            (
                average_precision(r, c.relevant, k),
                recall_at_k(r, c.relevant, k),
                reciprocal_rank(r, c.relevant, k),
            )
            for r, c in zip(rankings, claims, strict=True)
        ],
        dtype=np.float64,
    ).reshape(len(claims), 3)


def score_paths(
    paths: Sequence[Sequence[str]],
    claims: Sequence[EvalClaim],
    ranker: Retriever,
    k: int,
    n_steps: int,
) -> tuple[Scores, np.ndarray, np.ndarray]:
    """Scores of the final queries, AP@k per claim per step (n, n_steps + 1), and the final
    queries' AP@k, recall@k and RR@k per claim (n, 3)."""
    ap = np.zeros((len(claims), n_steps + 1))
    finals = None
    # rank each distinct text once
    texts = sorted({t for p in paths for t in p})
    ranked = dict(zip(texts, ranker.rank(texts, k), strict=True))
    for s in range(n_steps + 1):
        at_s = [ranked[p[min(s, len(p) - 1)]] for p in paths]
        ap[:, s] = _metrics(at_s, claims, k)[:, 0]
    finals = _metrics([ranked[p[-1]] for p in paths], claims, k)
    mean = finals.mean(axis=0) if len(claims) else np.zeros(3)
    return (
        Scores(
            map=float(mean[0]),
            recall=float(mean[1]),
            mrr=float(mean[2]),
            steps_map=tuple(float(x) for x in ap.mean(axis=0)) if len(claims) else (),
            mean_steps=float(np.mean([len(p) - 1 for p in paths])) if paths else 0.0,
        ),
        ap,
        finals,
    )


def random_paths(
    texts: Sequence[str], lengths: Sequence[int], editor: Any, seed: int, max_positions: int
) -> list[list[str]]:
    """For each text, a length drawn from ``lengths`` and that many uniformly random valid edits."""
    rng = np.random.default_rng(seed)
    drawn = (
        rng.choice(np.asarray(lengths), size=len(texts))
        if len(lengths)
        else np.zeros(len(texts), int)
    )
    paths = [[t] for t in texts]
    for step in range(int(drawn.max()) if len(drawn) else 0):
        live = [i for i in range(len(texts)) if drawn[i] > step]
        masks = editor.masks([paths[i][-1] for i in live], max_positions)  # (b, kinds, P)
        for row, i in enumerate(live):
            allowed = np.argwhere(masks[row])
            if not len(allowed):
                drawn[i] = step  # nothing left to edit
                continue
            kind, pos = allowed[rng.integers(len(allowed))]
            paths[i].append(editor.apply(paths[i][-1], int(kind), int(pos)))
    return paths


def evaluate(
    rewriter: Any,
    claims: Sequence[EvalClaim],
    ranker: Retriever,
    *,
    k: int = 50,
    seed: int = 0,
    target_return: float | None = None,
    name: str = "model",
    guard: Any = None,
) -> EvalResult:
    """Claim vs model vs random edits on ``claims``; see the module doc. ``guard``: a
    ``FeedbackGuard`` for the model's rewrites (the random edits never get one)."""
    texts = [c.text for c in claims]
    extra: dict[str, Any] = {} if guard is None else {"guard": guard}
    if target_return is not None:
        extra["target_return"] = target_return
    results = rewriter.rewrite(texts, **extra)
    n_steps = rewriter.cfg.max_edits
    model_paths = [list(r.path) for r in results]
    claim_scores, claim_ap, claim_end = score_paths([[t] for t in texts], claims, ranker, k, n_steps)  # fmt: skip
    model_scores, model_ap, model_end = score_paths(model_paths, claims, ranker, k, n_steps)
    gain_ci = paired_ci(model_ap[:, -1] - claim_ap[:, -1], seed=seed)
    recall_ci = paired_ci(model_end[:, 1] - claim_end[:, 1], seed=seed)
    lengths = [r.steps for r in results]
    rand = random_paths(texts, lengths, rewriter.editor, seed, rewriter.cfg.max_positions)
    rand_scores, _, _ = score_paths(rand, claims, ranker, k, n_steps)
    outcomes: dict[str, dict[str, int]] = {
        kind: {"better": 0, "same": 0, "worse": 0} for kind in rewriter.editor.kinds
    }
    changes: dict[str, list[float]] = {kind: [] for kind in rewriter.editor.kinds}
    for i, r in enumerate(results):
        for s, action in enumerate(r.trace):
            kind = action.split("@", 1)[0]
            delta = float(model_ap[i, s + 1] - model_ap[i, s])
            changes[kind].append(delta)
            outcome = "better" if delta > 1e-12 else "worse" if delta < -1e-12 else "same"
            outcomes[kind][outcome] += 1
    meta = getattr(rewriter, "meta", {})
    train_cfg = meta.get("train", {})
    setting = {
        **{f"bfs_{k_}": v for k_, v in meta.get("bfs", {}).items()},
        "returns": train_cfg.get("returns"),
        # trained on negative sequences: asked for, and the BFS wrote some
        "negatives": bool(train_cfg.get("negatives"))
        and meta.get("bfs", {}).get("negatives", 1) != 0,
        "target_return": getattr(rewriter, "default_target", None)
        if target_return is None
        else target_return,
    }
    return EvalResult(
        model=name,
        retriever=ranker.name,
        k=k,
        n_claims=len(claims),
        systems={"claim": claim_scores, "model": model_scores, "random": rand_scores},
        outcomes=outcomes,
        mean_change={kd: float(np.mean(v)) if v else math.nan for kd, v in changes.items()},
        setting=setting,
        gain_ci=gain_ci,
        recall_ci=recall_ci,
    )


#: Target returns ``calibrate`` tries besides the checkpoint's own (median and 90th percentile).
CALIBRATION_GRID = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3)


@dataclass(frozen=True, kw_only=True)
class Calibration:
    """A metric@k of the model's rewrites per target return, on claims it was not trained on."""

    target_return: float  # the best target when its gain is clearly above 0, else 0
    abstain: bool  # no target clearly helps: by default the rewriter leaves queries alone
    claims: int
    metric: str  # map, recall or mrr (@k)
    claim_score: float  # the claims themselves as queries
    grid: tuple[tuple[float, float, float], ...]  # (target, metric, mean edits)
    best: float  # the target with the best mAP@k (ties: the smaller)
    gain_ci: tuple[float, float]  # its paired bootstrap 95% CI of mean AP gain over the claims

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def paired_ci(diff: np.ndarray, *, resamples: int = 1000, seed: int = 0) -> tuple[float, float]:
    """Bootstrap 95% CI of ``diff.mean()``, resampling claims (seeded)."""
    if not len(diff):
        return (0.0, 0.0)
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, len(diff), size=(resamples, len(diff)))].mean(axis=1)
    return (float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975)))


#: What ``calibrate`` can optimise: column of ``_metrics``.
CALIBRATION_METRICS = {"map": 0, "recall": 1, "mrr": 2}


def calibrate(
    rewriter: Any,
    claims: Sequence[EvalClaim],
    ranker: Retriever,
    *,
    k: int = 50,
    grid: Sequence[float] | None = None,
    seed: int = 0,
    metric: str = "map",
) -> Calibration:
    """Choose the default target return on ``claims`` the model never saw (the checkpoint's
    ``validation_claims``, or a dev split; never the test claims).

    Every target of the grid (plus the checkpoint's median and 90th-percentile gains, plus 0)
    is run; the best by ``metric`` (``map``: AP@k, ``recall``: recall@k, ``mrr``) is chosen only
    if the paired bootstrap 95% CI of its mean gain over the claims themselves is above 0.
    Otherwise the calibration says ``abstain``: by default the rewriter then returns queries
    unchanged (the model is not run; an explicit target return or a guard still runs it).
    """
    from factseek.errors import ConfigError, InputError

    if not claims:
        raise InputError("no claims to calibrate on")
    if metric not in CALIBRATION_METRICS:
        raise ConfigError(f"unknown metric {metric!r}; choose one of: map, recall, mrr")
    col = CALIBRATION_METRICS[metric]
    stats = getattr(rewriter, "meta", {}).get("returns", {})
    own = [stats.get("target_return"), stats.get("target_return_q90")]
    targets = sorted({0.0, *(grid or CALIBRATION_GRID), *(float(x) for x in own if x is not None)})
    texts = [c.text for c in claims]

    def per_claim(finals: list[str]) -> np.ndarray:
        return _metrics(ranker.rank(finals, k), claims, k)[:, col]

    base = per_claim(texts)
    rows, scores = [], {}
    for target in targets:
        results = rewriter.rewrite(texts, target_return=target)
        scores[target] = per_claim([r.text for r in results])
        steps = float(np.mean([r.steps for r in results]))
        rows.append((target, float(scores[target].mean()), steps))
    best = max(rows, key=lambda r: (r[1], -r[0]))[0]
    ci = paired_ci(scores[best] - base, seed=seed)
    return Calibration(
        target_return=best if ci[0] > 0 else 0.0,
        abstain=ci[0] <= 0,
        claims=len(claims),
        metric=metric,
        claim_score=float(base.mean()),
        grid=tuple(rows),
        best=best,
        gain_ci=ci,
    )


def run_calibrate(
    *,
    model: str | Path,
    claims: str | Path,
    corpus: str | Path | Sequence[str | Path] | None,
    data_format: str = "jsonl",
    retriever: str = "bm25",
    k: int = 50,
    validation_only: bool = True,
    write: bool = True,
    metric: str = "map",
    split: str = "all",
) -> Calibration:
    """The ``factseek rewrite calibrate`` command: pick the target return on validation claims
    and (``write``) store it (or the advice to abstain) in ``config.json`` for inference.
    ``split``: only the claims of that side (``factseek.rewrite.splits``)."""
    from factseek.datasets.retrieval import load_retrieval
    from factseek.errors import InputError
    from factseek.rewrite.splits import check_disjoint, claims_fingerprint, select_split
    from factseek.rewrite.transformer.infer import Rewriter
    from factseek.rewrite.transformer.model import update_config

    rw = Rewriter.load(model)
    data = load_retrieval(claims, corpus, data_format)
    if not validation_only:
        check_disjoint(rw.meta, split, "calibrate", claims_fingerprint(data.claims))
    keep = set(rw.meta.get("validation_claims", ())) if validation_only else None
    if keep is not None and not keep:
        raise InputError(f"{model} records no validation claims; pass --all with a dev split")
    items = [
        EvalClaim(id=c.id, text=c.text, relevant=frozenset(c.relevant))
        for c in select_split(data.claims, split)
        if keep is None or c.id in keep
    ]
    if not items:
        raise InputError(f"none of the model's validation claims are in {claims}")
    result = calibrate(rw, items, build_retriever(retriever, data.pairs()), k=k, metric=metric)
    if write:
        update_config(
            model,
            {
                "calibration": {
                    **result.to_dict(),
                    "source": str(claims),
                    "split": split,
                    "retriever": retriever,
                }
            },
        )
    return result


def _num(x: float | None) -> str:
    return "?" if x is None else f"{x:.3f}"


def _rel(new: float, old: float) -> str:
    return f"{100 * (new - old) / old:+.1f}%" if old > 0 else "n/a"


def ablation_table(results: Sequence[EvalResult]) -> str:
    """Markdown: one row per (model, retriever), claim / model / random on mAP, recall, MRR."""
    k = results[0].k if results else 50
    head = (
        f"| model | eval retriever | BFS reward | returns | negatives | target R | claims "
        f"| mAP@{k} claim | mAP@{k} model | rel. | AP change 95% CI | mAP@{k} random "
        f"| R@{k} claim | R@{k} model | recall change 95% CI | R@{k} random | MRR claim "
        f"| MRR model | MRR random | mean edits |\n"
    )
    sep = "|" + "---|" * 20 + "\n"
    rows = []
    for r in results:
        c, m, x = (r.systems[s] for s in SYSTEMS)
        st = r.setting
        rows.append(
            f"| {r.model} | {r.retriever} | {st.get('bfs_retriever', '?')} {st.get('bfs_reward', '?')}"
            f" | {st.get('returns', '?')} | {'yes' if st.get('negatives') else 'no'}"
            f" | {_num(st.get('target_return'))} | {r.n_claims}"
            f" | {c.map:.3f} | {m.map:.3f} | {_rel(m.map, c.map)}"
            f" | [{r.gain_ci[0]:+.3f}, {r.gain_ci[1]:+.3f}] | {x.map:.3f}"
            f" | {c.recall:.3f} | {m.recall:.3f}"
            f" | [{r.recall_ci[0]:+.3f}, {r.recall_ci[1]:+.3f}] | {x.recall:.3f}"
            f" | {c.mrr:.3f} | {m.mrr:.3f} | {x.mrr:.3f} | {m.mean_steps:.2f} |\n"
        )
    return head + sep + "".join(rows)


def write_results(results: Sequence[EvalResult], out: str | Path) -> str:
    """``results.jsonl``, ``table.md`` and the figures (per model) into ``out``; returns the table."""
    from factseek.rewrite.plots import plot_action_outcomes, plot_mean_change, plot_step_curves

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.jsonl").write_text(
        "".join(json.dumps(r.to_dict()) + "\n" for r in results), encoding="utf-8"
    )
    table = ablation_table(results)
    (out / "table.md").write_text(table, encoding="utf-8")
    for r in results:
        stem = f"{_slug(r.model)}-{r.retriever}"
        plot_step_curves(
            {s: r.systems[s].steps_map for s in SYSTEMS},
            out / f"{stem}-steps.png",
            f"mAP@{r.k}",
            title=f"{r.model}, {r.retriever}, {r.n_claims} claims: mAP@{r.k} per edit step",
        )
        plot_action_outcomes(r.outcomes, out / f"{stem}-outcomes.png", title=r.model)
        plot_mean_change(
            {kd: v for kd, v in r.mean_change.items() if not math.isnan(v)},
            out / f"{stem}-change.png",
            f"AP@{r.k}",
        )
    return table


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in text).strip("-") or "model"


def run_eval(
    *,
    models: Sequence[str | Path],
    claims: str | Path,
    corpus: str | Path | Sequence[str | Path] | None,
    data_format: str = "jsonl",
    retriever: str = "bm25",
    out: str | Path,
    k: int = 50,
    seed: int = 0,
    holdout: float = 0.0,
    target_return: float | None = None,
    limit: int | None = None,
    progress: bool = True,
    guard_candidates: int | None = None,
    guard_scorer: str | Path | None = None,
    split: str = "all",
) -> str:
    """The ``factseek rewrite eval`` command: load data, build the retriever, evaluate each
    model, write results, table and figures to ``out``; returns the Markdown table. A model is
    a folder or a shipped scorer's name (``default``, ``mpnet``, ``small``).
    ``guard_candidates`` (None: no guard): also evaluate each decision transformer with a guard
    over the same retriever, picking among its top N edits (0: all): a ``FeedbackGuard``, or,
    with ``guard_scorer`` (an edit scorer's folder or shipped name), that scorer and its judge
    (``rewrite.edits.guard.ScorerGuard``)."""
    from factseek.datasets.retrieval import load_retrieval
    from factseek.errors import InputError
    from factseek.rewrite.edits.model import is_edit_scorer
    from factseek.rewrite.edits.shipped import model_path
    from factseek.rewrite.splits import (
        check_disjoint,
        claims_fingerprint,
        is_held_out,
        select_split,
    )
    from factseek.rewrite.transformer.infer import Rewriter

    data = load_retrieval(claims, corpus, data_format)
    data_claims = claims_fingerprint(data.claims)
    items = [
        EvalClaim(id=c.id, text=c.text, relevant=frozenset(c.relevant))
        for c in select_split(data.claims, split)
        if holdout <= 0 or is_held_out(c.id, holdout)
    ][:limit]
    if not items:
        raise InputError("no claims to evaluate (check --holdout and the data)")
    ranker = build_retriever(retriever, data.pairs())
    results = []
    guards: dict[str, Any] = {}  # one per encoder: the corpus is embedded (or loaded) once
    deciding: Any = None  # the --guard-scorer's rewriter
    for path in map(model_path, models):
        if is_edit_scorer(path):
            rw: Any = load_edit_rewriter(path, ranker, data.pairs(), k=k)
        else:
            rw = Rewriter.load(path)
        check_disjoint(rw.meta, split, "be evaluated", data_claims)
        name = Path(path).name + ("" if target_return is None else f" R={target_return:g}")
        kw = dict(k=k, seed=seed, target_return=target_return)
        results.append(evaluate(rw, items, ranker, name=name, **kw))
        if guard_candidates is not None and not is_edit_scorer(path):
            top = f"top-{guard_candidates or 'all'}"
            if guard_scorer is not None:
                from factseek.rewrite.edits.guard import ScorerGuard

                scorer_path = model_path(guard_scorer)
                if deciding is None:  # loaded once for every model evaluated
                    deciding = load_edit_rewriter(scorer_path, ranker, data.pairs(), k=k)
                guard: Any = ScorerGuard(deciding, guard_candidates)
                label = f"{name} +{scorer_path.name} {top}"
            else:
                from factseek.rewrite.environment.guard import FeedbackGuard

                if rw.encoder.name not in guards:
                    guards[rw.encoder.name] = FeedbackGuard.from_docs(
                        ranker, data.pairs(), rw.encoder, cache_dir=cache_root() / "rewrite-eval",
                        k=k, candidates=guard_candidates,
                    )  # fmt: skip
                guard = guards[rw.encoder.name]
                label = f"{name} +guard {top}"
            results.append(evaluate(rw, items, ranker, name=label, guard=guard, **kw))
    return write_results(results, out)


def load_edit_rewriter(
    path: str | Path, ranker: Retriever, docs: Sequence[tuple[str, str]], *, k: int = 50
) -> Any:
    """An ``EditRewriter`` from ``path`` whose endpoint is ``ranker`` over ``docs`` (embedded
    once with the scorer's encoder, cached on disk)."""
    from factseek.ml.encode import encoder_from_name
    from factseek.rewrite.edits.features import Endpoint
    from factseek.rewrite.edits.model import EditRewriter, load
    from factseek.rewrite.environment.env import KNNRetriever

    scorer, policy = load(path)
    encoder = encoder_from_name(policy.encoder)
    vectors = KNNRetriever.build(list(docs), encoder, cache_dir=cache_root())  # as `rewrite bfs`
    endpoint = Endpoint.from_corpus(ranker, docs, vectors.embeddings, encoder, k=k)
    return EditRewriter(scorer, policy, endpoint, encoder)


RETRIEVERS = ("bm25", "knn")


def build_retriever(name: str, docs: Sequence[tuple[str, str]]) -> Retriever:
    """``bm25`` (exact, factseek's tokenizer) or ``knn`` (MiniLM, embeddings cached on disk)."""
    from factseek.errors import ConfigError
    from factseek.rewrite.environment.env import BM25Retriever, KNNRetriever

    if name == "bm25":
        return BM25Retriever.from_docs(docs)
    if name == "knn":
        return KNNRetriever.build(list(docs), cache_dir=cache_root() / "rewrite-eval")
    raise ConfigError(f"unknown retriever {name!r}; choose one of: {', '.join(RETRIEVERS)}")
