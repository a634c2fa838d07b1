"""Training data for the query rewriter: depth-limited, pruned BFS over token edits (the paper's).

Per claim (``search_claim``):

1. The claim's own reward ``r0``; claims already at the best possible reward, or without relevant
   documents, are skipped (and counted).
2. Level by level up to ``depth`` (K = 4): every valid edit (``actions.expand``) of every frontier
   query is scored as an edit of its parent, the whole level in one call
   (``Environment.group_rewards``: the incremental scorer per parent for BM25, one encoder batch
   for kNN). Only *improving* edits are expanded, and of those the paper prunes two kinds: gains
   under ``min_gain`` (3%, relative to the parent's reward; any gain counts from a reward of 0)
   and a random ``prune_fraction`` (5%) of the rest, drawn from a generator seeded by
   ``(seed, claim id)`` so results do not depend on order or parallelism.
3. A query reached twice is kept once (first at the lowest depth, in frontier order). Beyond
   the paper, a level keeps at most ``max_frontier`` queries (best reward first, ties by text) so
   a claim's cost stays bounded; truncations are counted.
4. Every query reached is a sequence of improving edits from the claim; the ``top_sequences``
   (50) with the highest final reward (then fewer edits, then text) are written. With
   ``negatives > 0`` the same search runs over edits that *lower* the reward (frontier capped at
   ``negatives``) and the ``negatives`` lowest-reward sequences are written too, ``negative=True``.

``generate`` runs it over many claims on a local process pool (default) or a Ray cluster (the
index shared once through the object store), resumable through the folder's journal, with a
progress bar; see ``factseek.rewrite.transformer.trajectories`` for the files.
"""

from __future__ import annotations

import multiprocessing as mp
import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from factseek.datasets.retrieval import RetrievalClaim
from factseek.errors import ConfigError, InputError, MissingDependency
from factseek.rewrite.environment.actions import Action, expand, tag, tag_many
from factseek.rewrite.environment.env import Environment
from factseek.rewrite.transformer import trajectories as tj

DEPTH = 4
MIN_GAIN = 0.03
PRUNE_FRACTION = 0.05
TOP_SEQUENCES = 50
MAX_FRONTIER = 200
TIE = 1e-12


@dataclass(frozen=True, kw_only=True)
class BfsConfig:
    depth: int = DEPTH
    min_gain: float = MIN_GAIN  # relative gain over the parent below which an edit is pruned
    prune_fraction: float = PRUNE_FRACTION  # improving expansions dropped at random
    top_sequences: int = TOP_SEQUENCES  # sequences kept per claim, by final reward
    max_frontier: int = MAX_FRONTIER  # queries kept per level (not in the paper; 0 = no cap)
    negatives: int = 0  # negative sequences kept per claim (0 = none)
    seed: int = 0

    def __post_init__(self) -> None:
        if self.depth < 1:
            raise ConfigError("depth must be at least 1")
        if not 0.0 <= self.prune_fraction < 1.0:
            raise ConfigError("prune_fraction must be in [0, 1)")
        if self.min_gain < 0 or self.top_sequences < 1 or self.negatives < 0:
            raise ConfigError("min_gain >= 0, top_sequences >= 1 and negatives >= 0 are required")


DEFAULT_BFS = BfsConfig()


@dataclass
class ClaimStats:
    expanded: int = 0  # queries whose edits were scored
    candidates: int = 0  # edits scored
    improving: int = 0  # edits that raised the reward
    pruned_gain: int = 0  # improving, but under min_gain
    pruned_random: int = 0  # dropped by the random 5%
    truncated: int = 0  # dropped by max_frontier
    seconds: float = 0.0


@dataclass(frozen=True, kw_only=True)
class ClaimResult:
    record: tj.ClaimTrajectories
    status: str
    stats: ClaimStats
    action_gains: tuple[tuple[str, float], ...] = ()  # (kind, reward gain) of every kept edit


@dataclass(frozen=True)
class _Node:
    text: str
    reward: float
    depth: int
    parent: _Node | None = None
    action: Action | None = None

    def path(self) -> list[_Node]:
        out: list[_Node] = []
        node: _Node | None = self
        while node is not None:
            out.append(node)
            node = node.parent
        return out[::-1]


def _gain_ok(new: float, old: float, min_gain: float) -> bool:
    if new <= old + TIE:
        return False
    return old <= 0.0 or (new - old) >= min_gain * old - TIE


def _search(
    env: Environment,
    root: _Node,
    relevant: tuple[str, ...],
    config: BfsConfig,
    rng: random.Random,
    stats: ClaimStats,
    *,
    improve: bool,
    cap: int,
) -> list[_Node]:
    """Every node reached (root excluded), level by level."""
    frontier = [root]
    seen = {root.text}
    reached: list[_Node] = []
    for depth in range(1, config.depth + 1):
        level: dict[str, _Node] = {}
        tagged = tag_many([n.text for n in frontier])
        expanded = [[(a, t) for a, t in expand(tq) if t not in seen] for tq in tagged]
        groups = [(n.text, [t for _, t in cands]) for n, cands in zip(frontier, expanded, strict=True)]  # fmt: skip
        level_rewards = env.group_rewards(groups, relevant)  # the whole level in one call
        for node, cands, rewards in zip(frontier, expanded, level_rewards, strict=True):
            stats.expanded += 1
            stats.candidates += len(cands)
            for (action, text), r in zip(cands, rewards, strict=True):
                if text in level:
                    continue
                if improve:
                    if r <= node.reward + TIE:
                        continue
                    stats.improving += 1
                    if not _gain_ok(r, node.reward, config.min_gain):
                        stats.pruned_gain += 1
                        continue
                    if rng.random() < config.prune_fraction:
                        stats.pruned_random += 1
                        continue
                elif not r < node.reward - TIE:
                    continue
                level[text] = _Node(text, r, depth, node, action)
        sign = -1.0 if improve else 1.0
        nodes = sorted(level.values(), key=lambda n: (sign * n.reward, n.text))
        if cap and len(nodes) > cap:
            stats.truncated += len(nodes) - cap
            nodes = nodes[:cap]
        seen.update(level)
        reached.extend(nodes)
        frontier = nodes
        if not frontier:
            break
    return reached


def _trajectory(node: _Node, negative: bool) -> tj.Trajectory:
    path = node.path()
    return tj.Trajectory(
        queries=tuple(n.text for n in path),
        actions=tuple(n.action for n in path[1:] if n.action is not None),
        rewards=tuple(n.reward for n in path),
        negative=negative,
    )


def search_claim(
    env: Environment,
    claim_id: str,
    claim: str,
    relevant: Sequence[str],
    config: BfsConfig = DEFAULT_BFS,
) -> ClaimResult:
    """BFS for one claim; the result says why a claim yielded no sequences."""
    t0 = time.perf_counter()
    stats = ClaimStats()
    rel = tuple(dict.fromkeys(relevant))
    q0 = tag(claim).text
    if not rel or not q0:
        record = tj.ClaimTrajectories(claim_id=claim_id, claim=claim, relevant=rel, reward0=0.0)
        return ClaimResult(record=record, status="no_relevant", stats=stats)
    r0 = env.reward_of(q0, rel)
    record = tj.ClaimTrajectories(claim_id=claim_id, claim=claim, relevant=rel, reward0=r0)
    if r0 >= env.max_reward(rel) - TIE:
        stats.seconds = time.perf_counter() - t0
        return ClaimResult(record=record, status="at_max", stats=stats)
    root = _Node(q0, r0, 0)
    rng = random.Random(f"{config.seed}:{claim_id}")
    cap = config.max_frontier
    pos = _search(env, root, rel, config, rng, stats, improve=True, cap=cap)
    pos.sort(key=lambda n: (-n.reward, n.depth, n.text))
    kept = pos[: config.top_sequences]
    seqs = [_trajectory(n, False) for n in kept]
    if config.negatives:
        neg = _search(env, root, rel, config, rng, stats, improve=False, cap=config.negatives)
        neg.sort(key=lambda n: (n.reward, n.depth, n.text))
        seqs += [_trajectory(n, True) for n in neg[: config.negatives]]
    gains = tuple(
        (n.action.kind.value, n.reward - n.parent.reward)
        for n in pos
        if n.action is not None and n.parent is not None
    )
    stats.seconds = time.perf_counter() - t0
    record = tj.ClaimTrajectories(
        claim_id=claim_id, claim=claim, relevant=rel, reward0=r0, sequences=tuple(seqs)
    )
    status = "improvable" if kept else "no_improvement"
    return ClaimResult(record=record, status=status, stats=stats, action_gains=gains)


# ----------------------------------------------------------------------------- many claims

_WORKER_ENV: Environment | None = None


def _init_worker(env: Environment) -> None:
    global _WORKER_ENV
    _WORKER_ENV = env


def _work(args: tuple[RetrievalClaim, BfsConfig]) -> ClaimResult:
    claim, config = args
    assert _WORKER_ENV is not None
    return search_claim(_WORKER_ENV, claim.id, claim.text, claim.relevant, config)


def _ray_results(
    env: Environment, todo: list[RetrievalClaim], config: BfsConfig, address: str
) -> Iterable[ClaimResult]:
    try:
        import ray
    except ImportError as e:
        raise MissingDependency("ray", "dist", "distributed BFS") from e
    started = not ray.is_initialized()
    if started:
        ray.init(address=None if address == "local" else address, ignore_reinit_error=True,
                 include_dashboard=False, log_to_driver=False)  # fmt: skip

    @ray.remote
    def task(env_: Environment, batch: list[RetrievalClaim], cfg: BfsConfig) -> list[ClaimResult]:
        return [search_claim(env_, c.id, c.text, c.relevant, cfg) for c in batch]

    try:
        env_ref = ray.put(env)  # once: workers map the index from the object store
        size = max(1, min(16, len(todo) // 64 or 1))
        pending = [task.remote(env_ref, todo[i : i + size], config) for i in range(0, len(todo), size)]  # fmt: skip
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield from ray.get(done[0])
    finally:
        if started:
            ray.shutdown()


def _settings(
    env: Environment, config: BfsConfig, corpus: dict[str, Any], split: str, data: str | None
) -> dict[str, Any]:
    out = {
        "retriever": env.retriever.name,
        "reward": env.reward,
        "k": env.k,
        **{k: v for k, v in asdict(config).items()},
        "corpus": corpus,
        "split": split,
    }
    return out if data is None else {**out, "claims": data}


def counts_from_journal(journal: dict[str, dict[str, Any]]) -> dict[str, int]:
    counts = {"claims": len(journal), **{s: 0 for s in tj.STATUSES}, "sequences": 0}
    for entry in journal.values():
        counts[entry["status"]] = counts.get(entry["status"], 0) + 1
        counts["sequences"] += int(entry.get("sequences", 0))
    return counts


def generate(
    env: Environment,
    claims: Sequence[RetrievalClaim],
    out: str | Path,
    config: BfsConfig = DEFAULT_BFS,
    *,
    workers: int = 1,
    ray_address: str | None = None,
    corpus: dict[str, Any] | None = None,
    progress: bool = True,
    on_result: Callable[[ClaimResult], None] | None = None,
    split: str = "all",
    data: str | None = None,
) -> dict[str, Any]:
    """Run the BFS over ``claims`` into folder ``out`` (resuming it); returns the config written.
    ``split`` names the side of ``factseek.rewrite.splits`` the claims come from and ``data``
    the claims set they were drawn from (``splits.claims_fingerprint``; both recorded, so models
    trained on them are never evaluated on that side of that set)."""
    out = Path(out)
    settings = _settings(env, config, corpus or {}, split, data)
    if (out / tj.CONFIG).exists():
        old = tj.read_config(out)
        differ = [k for k, v in settings.items() if k in old and old[k] != v]
        if differ:
            raise ConfigError(
                f"{out} holds a run with other settings ({', '.join(differ)}); use another --out"
            )
    ids = [c.id for c in claims]
    if len(set(ids)) != len(ids):
        raise InputError("claim ids must be unique")
    journal = tj.repair(out) if out.exists() else {}
    todo = [c for c in claims if c.id not in journal]
    seconds = float(tj.read_config(out).get("seconds", 0.0)) if (out / tj.CONFIG).exists() else 0.0
    tj.write_config(out, {**settings, "counts": counts_from_journal(journal), "seconds": seconds})
    t0 = time.perf_counter()
    if ray_address:
        results: Iterable[ClaimResult] = _ray_results(env, todo, config, ray_address)
        pool = None
    elif workers > 1 and len(todo) > 1:
        pool = mp.get_context("fork").Pool(workers, initializer=_init_worker, initargs=(env,))
        results = pool.imap_unordered(_work, [(c, config) for c in todo], chunksize=1)
    else:
        pool = None
        results = (search_claim(env, c.id, c.text, c.relevant, config) for c in todo)
    try:
        _consume(results, out, len(todo), progress, on_result)
    finally:
        if pool is not None:
            pool.terminate()
    journal = tj.read_journal(out)
    final = {
        **settings,
        "counts": counts_from_journal(journal),
        "seconds": round(seconds + time.perf_counter() - t0, 3),
    }
    tj.write_config(out, final)
    return {"format_version": tj.FORMAT_VERSION, **final}


def _consume(
    results: Iterable[ClaimResult],
    out: Path,
    total: int,
    progress: bool,
    on_result: Callable[[ClaimResult], None] | None,
) -> None:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    with Progress(
        TextColumn("bfs"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        disable=not progress,
        transient=False,
    ) as bar:
        job = bar.add_task("claims", total=total)
        for res in results:
            tj.append(out, res.record, res.status, asdict(res.stats))
            if on_result is not None:
                on_result(res)
            bar.advance(job)
