"""Rewrite queries with a trained decision transformer (``factseek rewrite run``).

``Rewriter.load(folder).rewrite(texts)`` edits each text autoregressively, all texts of a batch
in step: tag the current queries (action masks), encode them (states), run the model on the
history so far, take the most likely allowed action (greedy; ties: lowest action id), apply it.
A query stops on STOP, after K edits, or, when an environment with relevance judgements is
given, once its reward is at the maximum (it cannot improve).

Conditioning: the first return-to-go is ``target_return`` (default: the one ``factseek rewrite
calibrate`` chose on validation claims, else the median gain of the training sequences). After
each edit it drops by the observed gain when an environment is given, else by the mean per-step
drop seen in training (dense returns; 0 for sparse ones, whose return-to-go is constant). When
calibration found that no target clearly helps, the default is to abstain: queries come back
unchanged (``stopped == "abstain"``) unless a target return or a guard is given. A guard picks
among the model's top edits: ``FeedbackGuard`` by how the results move toward the claim,
an ``EditGuard`` (an edit scorer and its judge) by its own predictions.

The edit actions come from an ``Editor`` (default ``ActionsEditor``: spaCy tags and WordNet,
``factseek.rewrite.environment.actions``); tests plug in simpler ones. Heavy imports happen on load.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from factseek.ml.encode import Encoder, encoder_from_name
from factseek.rewrite.environment.guard import FeedbackGuard
from factseek.rewrite.transformer.editor import ActionsEditor, Editor, WordVectors


@runtime_checkable
class EditGuard(Protocol):
    """A guard that decides among the model's top ``candidates`` edits itself (an edit scorer:
    ``rewrite.edits.guard.ScorerGuard``), instead of estimating each query's results."""

    candidates: int

    def choose(self, original: str, current: str, proposed: Sequence[str]) -> int | None:
        """Index in ``proposed`` (edited texts of ``current``, best first) to take; None: stop."""
        ...


#: A reward function for inference with judgements: ``(input index, query text) -> reward``.
RewardFn = Callable[[int, str], float]
#: AP, recall and RR all top out at 1: a query there cannot improve.
MAX_REWARD = 1.0

__all__ = [
    "ActionsEditor",
    "Editor",
    "RewardFn",
    "RewriteResult",
    "Rewriter",
    "WeighedEdit",
    "WeighedStep",
    "WordVectors",
]


@dataclass(frozen=True, kw_only=True)
class WeighedEdit:
    """One candidate edit an edit scorer weighed (``rewrite run --explain``)."""

    action: str  # "kind@position"
    text: str  # the query the edit makes
    predicted: float  # the scorer's predicted AP@k change
    feedback: tuple[tuple[str, float], ...] = ()  # what the endpoint said: (feature, value)
    backed: bool = True  # False: the scorer's judge does not back it (never taken)


@dataclass(frozen=True, kw_only=True)
class WeighedStep:
    """One greedy step: the query, the threshold, every candidate (best prediction first)."""

    query: str
    threshold: float
    candidates: tuple[WeighedEdit, ...]
    chosen: str = ""  # the action taken ("" when none passed the threshold)


@dataclass(frozen=True, kw_only=True)
class RewriteResult:
    """A rewritten query. ``trace`` names each edit as ``kind@position`` (e.g. ``remove@2``)."""

    text: str
    original: str
    trace: tuple[str, ...] = ()
    path: tuple[str, ...] = ()  # every query from the original to the result: steps + 1 texts
    steps: int = 0
    stopped: str = ""  # "stop" (model), "budget" (K edits), "max-reward" (env), "guard",
    # "threshold" / "judge" / "no-edit" (edit scorers: no edit predicted above the threshold,
    # none the judge backs, none allowed), or "abstain" (calibration found no target return
    # that clearly helps; model not run)
    rewards: tuple[float, ...] = ()  # reward of each successive query, when an env was given
    why: str = ""  # why it stopped, in words (edit scorers)
    weighed: tuple[WeighedStep, ...] = ()  # the edits weighed at each step (``explain=True``)


class Rewriter:
    """A trained rewriter: model + encoder + editor. Build with ``Rewriter.load(folder)``."""

    def __init__(
        self,
        model: Any,
        meta: dict[str, Any],
        *,
        encoder: Encoder,
        editor: Editor,
        device: str = "cpu",
    ) -> None:
        self.model = model
        self.cfg = model.cfg
        self.meta = meta
        self.encoder = encoder
        self.editor = editor
        self.device = device
        self.word_vectors = WordVectors(encoder)
        if self.cfg.word_dim and self.cfg.word_dim != encoder.dim:
            from factseek.errors import ModelError

            raise ModelError(
                f"encoder {encoder.name!r} gives {encoder.dim}-d word vectors; the model wants"
                f" {self.cfg.word_dim}"
            )
        kinds = tuple(meta.get("kinds", editor.kinds))
        if kinds != tuple(editor.kinds):
            from factseek.errors import ModelError

            raise ModelError(f"model trained on actions {kinds}, editor offers {editor.kinds}")
        stats = meta.get("returns", {})
        calibration = meta.get("calibration", {})
        calibrated = calibration.get("target_return")
        #: `rewrite calibrate` found no target that clearly helps: by default, change nothing
        self.abstain = bool(calibration.get("abstain", False))
        self.default_target = float(
            stats.get("target_return", 0.0) if calibrated is None else calibrated
        )
        self.rtg_step = float(stats.get("rtg_step", 0.0))

    @classmethod
    def load(
        cls,
        path: str | Path,
        *,
        encoder: Encoder | None = None,
        editor: Editor | None = None,
        device: str | None = None,
    ) -> Rewriter:
        """Load a checkpoint folder written by ``factseek rewrite train``."""
        from factseek.rewrite.transformer.model import load_checkpoint, pick_device

        device = pick_device(device)
        model, meta = load_checkpoint(path, device=device)
        if encoder is None:
            name = meta["encoder"]
            if meta.get("encoder_in_checkpoint"):  # fine-tuned jointly, saved with the model
                name = str(Path(path) / name)
            encoder = encoder_from_name(name)
        if encoder.dim != model.cfg.state_dim:
            from factseek.errors import ModelError

            raise ModelError(
                f"encoder {encoder.name!r} gives {encoder.dim}-d states; the model wants"
                f" {model.cfg.state_dim}"
            )
        return cls(model, meta, encoder=encoder, editor=editor or ActionsEditor(), device=device)

    def rewrite(
        self,
        queries: Sequence[str],
        *,
        target_return: float | None = None,
        env: RewardFn | None = None,
        guard: FeedbackGuard | EditGuard | None = None,
        batch_size: int = 64,
    ) -> list[RewriteResult]:
        """Rewrite each query; results in input order. ``env(i, text)`` scores query ``i``;
        ``guard`` picks among the model's top edits by endpoint feedback (``rewrite.guard``)."""
        if target_return is None and guard is None and self.abstain:
            return [
                RewriteResult(
                    text=q,
                    original=q,
                    path=(q,),
                    stopped="abstain",
                    rewards=() if env is None else (float(env(i, q)),),
                )
                for i, q in enumerate(queries)
            ]
        out: list[RewriteResult] = []
        for start in range(0, len(queries), batch_size):
            chunk = list(queries[start : start + batch_size])
            scorer = None if env is None else _offset(env, start)
            out.extend(self._rewrite_batch(chunk, target_return, scorer, guard))
        return out

    def _guarded(
        self,
        guard: FeedbackGuard | EditGuard,
        claim: np.ndarray,
        text: str,
        logits: Any,
        best: float,
        original: str,
    ) -> tuple[int, float]:
        """(action id or STOP, new estimate): the guard's pick among the model's top edits."""
        cfg = self.cfg
        order = logits[: cfg.stop_index].argsort(descending=True).tolist()
        allowed = [a for a in order if logits[a] > float("-inf")]
        if guard.candidates:
            allowed = allowed[: guard.candidates]
        if not allowed:
            return cfg.stop_index, best
        edited = [self.editor.apply(text, *divmod(a, cfg.max_positions)) for a in allowed]
        if isinstance(guard, EditGuard):  # an edit scorer decides (``rewrite.edits.guard``)
            pick = guard.choose(original, text, edited)
            return (cfg.stop_index, best) if pick is None else (allowed[pick], best)
        est = guard.estimate(claim, edited)
        j = int(np.argmax(est))  # ties: the model's order
        if est[j] > best + guard.margin:
            return allowed[j], float(est[j])
        return cfg.stop_index, best

    def _rewrite_batch(
        self,
        texts: list[str],
        target: float | None,
        env: RewardFn | None,
        guard: FeedbackGuard | EditGuard | None = None,
    ) -> list[RewriteResult]:
        import torch

        cfg, dev = self.cfg, self.device
        n, k = len(texts), cfg.max_edits
        if n == 0:
            return []
        current = list(texts)
        traces: list[list[str]] = [[] for _ in range(n)]
        paths: list[list[str]] = [[x] for x in texts]
        rewards: list[list[float]] = [[] for _ in range(n)]
        stopped = [""] * n
        rtg = torch.zeros((n, k), device=dev)  # (B, K)
        states = torch.zeros((n, k, cfg.state_dim), device=dev)  # (B, K, state_dim)
        actions = torch.full((n, k), cfg.pad_index, dtype=torch.long, device=dev)  # (B, K)
        masks = torch.zeros((n, k, cfg.n_actions), dtype=torch.bool, device=dev)
        words = (  # (B, K, P, 2 * word_dim): only for word-vector models
            torch.zeros((n, k, cfg.max_positions, 2 * cfg.word_dim), device=dev)
            if cfg.word_dim
            else None
        )
        rtg[:, 0] = self.default_target if target is None else float(target)
        if env is not None:
            for i in range(n):
                rewards[i].append(float(env(i, current[i])))
                if rewards[i][0] >= MAX_REWARD:
                    stopped[i] = "max-reward"
        for t in range(k):
            active = [i for i in range(n) if not stopped[i]]
            if not active:
                break
            idx = torch.tensor(active, device=dev)
            live = [current[i] for i in active]
            m = self.editor.masks(live, cfg.max_positions).reshape(len(live), -1)  # (b, kinds*P)
            m = np.concatenate([m, np.ones((len(live), 1), dtype=bool)], axis=1)  # + STOP
            masks[idx, t] = torch.from_numpy(m).to(dev)
            states[idx, t] = torch.from_numpy(self.encoder.encode(live)).to(dev)
            if words is not None:
                w = self.word_vectors.features(
                    self.editor.words(live, cfg.max_positions), cfg.max_positions
                )
                words[idx, t] = torch.from_numpy(w).to(dev)
            with torch.no_grad():
                logits, _ = self.model(
                    rtg[idx, : t + 1],
                    states[idx, : t + 1],
                    actions[idx, : t + 1],
                    torch.arange(t + 1, device=dev).expand(len(active), t + 1),
                    masks[idx, : t + 1],
                    words=None if words is None else words[idx, : t + 1],
                )
            choice = logits[:, t].argmax(dim=-1).tolist()  # (b,) greedy over allowed actions
            if guard is not None and t == 0:
                claims = states[:, 0].cpu().numpy()  # the originals' embeddings
                estimates = (
                    [0.0] * n
                    if isinstance(guard, EditGuard)
                    else [float(guard.estimate(claims[i], [texts[i]])[0]) for i in range(n)]
                )
            for row, i in enumerate(active):
                a = int(choice[row])
                if guard is not None:
                    a, estimates[i] = self._guarded(
                        guard, claims[i], current[i], logits[row, t], estimates[i], texts[i]
                    )
                actions[i, t] = a
                if a == cfg.stop_index:
                    stopped[i] = "guard" if guard is not None else "stop"
                    continue
                kind, pos = divmod(a, cfg.max_positions)
                current[i] = self.editor.apply(current[i], kind, pos)
                traces[i].append(f"{self.editor.kinds[kind]}@{pos}")
                paths[i].append(current[i])
                drop = self.rtg_step
                if env is not None:
                    rewards[i].append(float(env(i, current[i])))
                    drop = rewards[i][-1] - rewards[i][-2]
                    if rewards[i][-1] >= MAX_REWARD:
                        stopped[i] = "max-reward"
                if t + 1 < k:
                    rtg[i, t + 1] = rtg[i, t] - drop
        return [
            RewriteResult(
                text=current[i],
                original=texts[i],
                trace=tuple(traces[i]),
                path=tuple(paths[i]),
                steps=len(traces[i]),
                stopped=stopped[i] or "budget",
                rewards=tuple(rewards[i]),
            )
            for i in range(n)
        ]


def _offset(env: RewardFn, start: int) -> RewardFn:
    return lambda i, text: env(start + i, text)
