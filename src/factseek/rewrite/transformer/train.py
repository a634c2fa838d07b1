"""Train the decision transformer on BFS trajectories (``factseek rewrite train``).

Data: a BFS folder (``config.json`` + ``trajectories.jsonl``, see ``factseek.rewrite.transformer.trajectories``).
Each sequence ``q0 -a0-> q1 ... -> qn`` becomes one training episode of ``min(n + 1, K)`` steps:
state ``s_t`` = embedding of ``q_t``, target ``a_t`` (STOP after the last edit when ``n < K``),
return-to-go ``R_t`` from the per-query rewards (dense: the gain still ahead,
``r_n - r_t``; sparse: the final gain, given at the end). Negative sequences (edits that lower
the reward) are kept or dropped (the paper's ablation). Sequences with more than K edits or an
edit outside the model's action space (position >= max_positions, or one the mask forbids) are
dropped and counted.

Every distinct query is encoded once, in batches, and tagged once for its action mask; both are
cached on disk per text (``$FACTSEEK_CACHE/rewrite-dt``, ``RowCache``), so training is neither
encoder- nor spaCy-bound and runs on overlapping trajectories share the work.

Checkpoint: a folder with ``config.json`` (``format_version``, model config, encoder name, step,
training config, data counts, return statistics), ``model.safetensors``, ``loss.jsonl`` (one
line per logged step, plus validation loss per epoch) and ``loss.png``.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from factseek.errors import DataError, InputError
from factseek.ml.encode import Encoder, encoder_from_name
from factseek.rewrite.splits import is_held_out
from factseek.rewrite.transformer.editor import ActionsEditor, Editor
from factseek.rewrite.transformer.tables import mask_table, progress_bar, state_table, word_table

LOSS_FILE = "loss.jsonl"
LOSS_PLOT = "loss.png"
JOINT_ENCODER = "encoder"  # subfolder holding a jointly fine-tuned sentence encoder

Returns = Literal["dense", "sparse"]


@dataclass(frozen=True, kw_only=True)
class TrainConfig:
    """How to train. The model's shape is a separate ``DTConfig`` (``model.PRESETS``)."""

    returns: Returns = "dense"
    negatives: bool = True
    epochs: int = 5
    batch_size: int = 64
    lr: float = 6e-4
    weight_decay: float = 0.1
    warmup_steps: int = 50
    grad_clip: float = 1.0
    seed: int = 0
    encoder: str = "minilm"
    val_fraction: float = 0.05  # of claims, for the validation loss
    max_sequences_per_claim: int | None = None  # the first N positive and N negative ones
    holdout: float = 0.0  # claims held out for evaluation (``is_held_out``), never trained on
    finetune_encoder: bool = False  # train the sentence encoder jointly (slow on a CPU)
    encoder_lr: float = 2e-5
    log_every: int = 10
    checkpoint_every: int = 1  # epochs; the last epoch is always saved
    device: str | None = None  # None: cuda when available, else cpu
    threads: int | None = 1  # torch CPU threads; 1 avoids spin-waiting on a busy machine


DEFAULT_TRAIN = TrainConfig()


@dataclass(frozen=True, kw_only=True)
class Episode:
    """One training sequence: ``len(texts) == len(targets) == len(rtg)`` steps."""

    claim_id: str
    texts: tuple[str, ...]
    targets: tuple[int, ...]  # class ids; the last is STOP when the sequence ends early
    rtg: tuple[float, ...]


@dataclass(frozen=True, kw_only=True)
class Counts:
    claims: int = 0
    sequences: int = 0
    episodes: int = 0
    negatives_dropped: int = 0
    too_long: int = 0
    out_of_space: int = 0  # an edit past max_positions or forbidden by the mask
    stop_only: int = 0  # claims no edit improves, taught to STOP at once (``stop_claims``)


@dataclass(frozen=True, kw_only=True)
class TrainResult:
    out: Path
    steps: int
    final_loss: float
    val_loss: float | None
    counts: Counts
    seconds: float
    extra: dict[str, Any] = field(default_factory=dict)


# ----------------------------------------------------------------------------- data


def read_records(folder: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``(bfs config, claim records as dicts)`` from a BFS trajectories folder."""
    from factseek.rewrite.transformer import trajectories

    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"no trajectories folder at {folder}")
    meta = trajectories.read_config(folder)
    return meta, [r.to_dict() for r in trajectories.read(folder)]


def returns_to_go(rewards: Sequence[float], mode: Returns) -> list[float]:
    """Return-to-go at each of the ``n + 1`` queries of a sequence (the last one: at STOP).

    Per action as ``trajectories.returns_to_go``; at the final query nothing is left to gain
    (dense: 0) or, with sparse rewards, the whole gain is still only promised (constant).
    """
    from factseek.rewrite.transformer import trajectories

    rtg = [float(x) for x in trajectories.returns_to_go(list(rewards), mode)]
    return [*rtg, 0.0 if mode == "dense" or not rtg else rtg[-1]]


def build_episodes(
    records: Iterable[Mapping[str, Any]],
    *,
    kinds: Sequence[str],
    max_edits: int,
    max_positions: int,
    returns: Returns = "dense",
    negatives: bool = True,
    max_sequences_per_claim: int | None = None,
) -> tuple[list[Episode], Counts]:
    """Turn claim records into episodes; actions as class ids (mask validity checked later)."""
    kind_index = {k: i for i, k in enumerate(kinds)}
    stop = len(kinds) * max_positions
    episodes: list[Episode] = []
    n = dict(claims=0, sequences=0, negatives_dropped=0, too_long=0, out_of_space=0, stop_only=0)
    for rec in records:
        n["claims"] += 1
        cid = str(rec["claim_id"])
        seqs = list(rec.get("sequences", ()))
        if max_sequences_per_claim is not None:  # the first N of each kind (BFS: best first)
            pos = [s for s in seqs if not s.get("negative", False)]
            neg = [s for s in seqs if s.get("negative", False)]
            seqs = pos[:max_sequences_per_claim] + neg[:max_sequences_per_claim]
        for seq in seqs:
            n["sequences"] += 1
            if seq.get("negative", False) and not negatives:
                n["negatives_dropped"] += 1
                continue
            queries, acts, rewards = seq["queries"], seq["actions"], seq["rewards"]
            if len(queries) != len(acts) + 1 or len(rewards) != len(queries):
                raise DataError(f"claim {cid}: queries, actions and rewards do not line up")
            if len(acts) > max_edits:
                n["too_long"] += 1
                continue
            n["stop_only"] += not acts
            ids: list[int] = []
            for kind, pos in acts:
                k = kind_index.get(str(kind).lower())
                if k is None:
                    raise DataError(f"claim {cid}: unknown action kind {kind!r}")
                if not 0 <= int(pos) < max_positions:
                    break
                ids.append(k * max_positions + int(pos))
            if len(ids) < len(acts):
                n["out_of_space"] += 1
                continue
            rtg = returns_to_go(rewards, returns)
            steps = min(len(acts) + 1, max_edits)
            targets = [*ids, stop][:steps]
            episodes.append(
                Episode(
                    claim_id=cid,
                    texts=tuple(queries[:steps]),
                    targets=tuple(targets),
                    rtg=tuple(rtg[:steps]),
                )
            )
    return episodes, Counts(episodes=len(episodes), **n)


@dataclass(frozen=True, kw_only=True)
class Tensors:
    """Episodes as padded arrays indexing the per-text tables. Shapes (N, K) unless noted."""

    text_idx: np.ndarray  # int64, row of states/masks (0 on padding)
    targets: np.ndarray  # int64, IGNORE on padding
    rtg: np.ndarray  # float32, 0 on padding
    lengths: np.ndarray  # (N,) steps per episode


def to_tensors(episodes: Sequence[Episode], text_index: Mapping[str, int], k: int) -> Tensors:
    from factseek.rewrite.transformer.model import IGNORE

    n = len(episodes)
    text_idx = np.zeros((n, k), dtype=np.int64)
    targets = np.full((n, k), IGNORE, dtype=np.int64)
    rtg = np.zeros((n, k), dtype=np.float32)
    lengths = np.zeros(n, dtype=np.int64)
    for i, ep in enumerate(episodes):
        t = len(ep.texts)
        text_idx[i, :t] = [text_index[x] for x in ep.texts]
        targets[i, :t] = ep.targets
        rtg[i, :t] = ep.rtg
        lengths[i] = t
    return Tensors(text_idx=text_idx, targets=targets, rtg=rtg, lengths=lengths)


def drop_forbidden(tensors: Tensors, masks: np.ndarray) -> tuple[Tensors, np.ndarray]:
    """Remove episodes with a target the mask forbids (the tagger and the BFS disagree).

    Returns the kept episodes and the (N,) bool array of which were kept.
    """
    t = tensors
    valid = t.targets >= 0
    safe = np.where(valid, t.targets, 0)
    ok = masks[t.text_idx, safe] | ~valid  # (N, K)
    keep = ok.all(axis=1)
    kept = Tensors(
        text_idx=t.text_idx[keep], targets=t.targets[keep], rtg=t.rtg[keep], lengths=t.lengths[keep]
    )
    return kept, keep


# ----------------------------------------------------------------------------- training


def batch_tensors(
    t: Tensors,
    idx: np.ndarray,
    states: Any,
    masks: Any,
    pad_index: int,
    device: str,
    words: tuple[Any, Any] | None = None,
) -> dict[str, Any]:
    """One training batch as the model's keyword arguments (tables already on ``device``);
    ``words`` is ``word_table``'s ``(ids, vectors)`` as tensors, for word-vector models."""
    import torch

    text_idx = torch.from_numpy(t.text_idx[idx]).to(device)  # (B, K)
    targets = torch.from_numpy(t.targets[idx]).to(device)  # (B, K)
    actions = targets.clone()
    actions[actions < 0] = pad_index  # the action taken, as an input token (pad after the end)
    b, k = text_idx.shape
    return dict(
        rtg=torch.from_numpy(t.rtg[idx]).to(device),
        states=states[text_idx],  # (B, K, state_dim)
        actions=actions,
        timesteps=torch.arange(k, device=device).expand(b, k),
        masks=masks[text_idx],  # (B, K, n_actions)
        targets=targets,
        words=None if words is None else words[1][words[0][text_idx]].flatten(-2),  # (B, K, P, 2D)
    )


def train(
    trajectories: str | Path,
    out: str | Path,
    *,
    model_config: Any = None,
    config: TrainConfig = DEFAULT_TRAIN,
    encoder: Encoder | None = None,
    editor: Editor | None = None,
    progress: bool = True,
    stop_claims: Mapping[str, str] | None = None,
) -> TrainResult:
    """Train on a BFS folder and write a checkpoint folder to ``out``; see the module doc.

    ``stop_claims`` (claim id -> text): the claims the BFS journal marks ``at_max`` or
    ``no_improvement`` become one-step episodes that take STOP (return-to-go 0). The BFS writes
    no sequence for them, so without these the model never learns to leave a query alone.
    """
    bfs, records = read_records(trajectories)
    if stop_claims:
        from factseek.rewrite.transformer import trajectories as tj

        for cid, entry in sorted(tj.read_journal(trajectories).items()):
            if entry["status"] in ("at_max", "no_improvement") and cid in stop_claims:
                text = " ".join(stop_claims[cid].split())
                seq = {"queries": [text], "actions": [], "rewards": [float(entry["reward0"])]}
                records.append({"claim_id": cid, "sequences": [seq]})
    return train_on_records(
        records,
        out,
        model_config=model_config,
        config=config,
        encoder=encoder,
        editor=editor,
        progress=progress,
        source=str(trajectories),
        bfs={
            k: bfs[k]
            for k in ("retriever", "reward", "k", "depth", "negatives", "split", "claims")
            if k in bfs
        },
    )


def train_on_records(
    records: Sequence[Mapping[str, Any]],
    out: str | Path,
    *,
    model_config: Any = None,
    config: TrainConfig = DEFAULT_TRAIN,
    encoder: Encoder | None = None,
    editor: Editor | None = None,
    progress: bool = True,
    source: str = "",
    bfs: Mapping[str, Any] | None = None,
) -> TrainResult:
    import time

    import torch

    from factseek.rewrite.transformer.model import (
        SMALL,
        DecisionTransformer,
        pick_device,
        save_checkpoint,
    )

    t0 = time.perf_counter()
    where = pick_device(config.device)
    if where == "cpu" and config.threads:
        torch.set_num_threads(config.threads)  # before encoding: the encoder runs on torch too
    # on a GPU the states are encoded there too (the embeddings are the same up to float error)
    encoder = encoder or encoder_from_name(config.encoder, where)
    editor = editor or ActionsEditor()
    base = model_config or SMALL
    cfg = dataclasses.replace(
        base,
        state_dim=encoder.dim,
        n_kinds=len(editor.kinds),
        word_dim=encoder.dim if base.word_dim else 0,  # any word_dim > 0 asks for word vectors
    )
    if config.holdout > 0:
        records = [r for r in records if not is_held_out(str(r["claim_id"]), config.holdout)]
    episodes, counts = build_episodes(
        records,
        kinds=editor.kinds,
        max_edits=cfg.max_edits,
        max_positions=cfg.max_positions,
        returns=config.returns,
        negatives=config.negatives,
        max_sequences_per_claim=config.max_sequences_per_claim,
    )
    if not episodes:
        raise InputError("no usable training sequences in the trajectories")
    texts = sorted({x for ep in episodes for x in ep.texts})
    text_index = {x: i for i, x in enumerate(texts)}
    states_np = None if config.finetune_encoder else state_table(texts, encoder, progress=progress)
    masks_np = mask_table(texts, editor, cfg.max_positions, progress=progress)
    words_np = (
        word_table(texts, editor, encoder, cfg.max_positions, progress=progress)
        if cfg.word_dim
        else None
    )
    tensors, keep = drop_forbidden(to_tensors(episodes, text_index, cfg.max_edits), masks_np)
    counts = dataclasses.replace(
        counts,
        episodes=len(tensors.lengths),
        out_of_space=counts.out_of_space + int((~keep).sum()),
    )
    if not len(tensors.lengths):
        raise InputError("every training sequence has an edit the action mask forbids")

    # split by claim, seeded
    rng = np.random.default_rng(config.seed)
    claims = sorted({ep.claim_id for ep in episodes})
    rng.shuffle(claims)
    n_val = int(len(claims) * config.val_fraction) if len(claims) >= 20 else 0
    val_claims = set(claims[:n_val])
    kept_claims = np.array([ep.claim_id for ep in episodes], dtype=object)[keep]
    is_val = np.array([c in val_claims for c in kept_claims], dtype=bool)
    train_rows, val_rows = np.flatnonzero(~is_val), np.flatnonzero(is_val)

    # return statistics used at inference: default target, and the step decrement without env
    first_rtg = tensors.rtg[train_rows, 0]
    steps_rtg = tensors.rtg[train_rows]
    lens = tensors.lengths[train_rows]
    drops = [  # per-step drop of the return-to-go along the positive sequences
        float(r[i] - r[i + 1])
        for r, n in zip(steps_rtg, lens, strict=True)
        if r[0] > 0
        for i in range(int(n) - 1)
    ]
    positive = first_rtg[first_rtg > 0]
    rtg_stats = {
        "target_return": float(np.median(positive)) if len(positive) else 0.0,
        "target_return_q90": float(np.quantile(positive, 0.9)) if len(positive) else 0.0,
        "rtg_step": float(np.mean(drops)) if drops else 0.0,
        "max_return": float(first_rtg.max()) if len(first_rtg) else 0.0,
    }

    device = pick_device(config.device)
    torch.manual_seed(config.seed)
    model = DecisionTransformer(cfg).to(device)
    masks = torch.from_numpy(masks_np).to(device)
    words = None if words_np is None else tuple(torch.from_numpy(a).to(device) for a in words_np)
    opt = _optimizer(model, config)
    joint = None
    if states_np is None:
        joint = JointStates(_sentence_transformer(encoder), texts, device)
        opt.add_param_group(
            {"params": list(joint.model.parameters()), "weight_decay": 0.0,
             "lr_scale": config.encoder_lr / config.lr}
        )  # fmt: skip
        states: Any = joint
    else:
        states = torch.from_numpy(states_np).to(device)
    steps_per_epoch = max(1, math.ceil(len(train_rows) / config.batch_size))
    total = steps_per_epoch * config.epochs
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    log_path = out / LOSS_FILE
    log_path.write_text("")
    step, last_loss, val_loss = 0, float("nan"), None
    with progress_bar(progress) as bar, log_path.open("a") as log:
        task = bar.add_task("training", total=total)
        for epoch in range(config.epochs):
            model.train()
            order = rng.permutation(train_rows)
            for i in range(0, len(order), config.batch_size):
                lr = _lr(step, total, config)
                for g in opt.param_groups:
                    g["lr"] = lr * g.get("lr_scale", 1.0)
                batch = batch_tensors(
                    tensors,
                    order[i : i + config.batch_size],
                    states,
                    masks,
                    cfg.pad_index,
                    device,
                    words,
                )
                _, loss = model(**batch)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                params = [p for g in opt.param_groups for p in g["params"]]
                torch.nn.utils.clip_grad_norm_(params, config.grad_clip)
                opt.step()
                step += 1
                last_loss = float(loss.item())
                if step % config.log_every == 0 or step == total:
                    log.write(
                        json.dumps({"step": step, "epoch": epoch, "loss": last_loss, "lr": lr})
                    )
                    log.write("\n")
                    log.flush()
                bar.update(task, advance=1, description=f"training (loss {last_loss:.3f})")
            if len(val_rows):
                val_loss = evaluate_loss(
                    model, tensors, val_rows, states, masks, config.batch_size, words
                )
                log.write(json.dumps({"step": step, "epoch": epoch, "val_loss": val_loss}) + "\n")
                log.flush()
            if (epoch + 1) % config.checkpoint_every and epoch + 1 < config.epochs:
                continue
            meta = {
                "epoch": epoch + 1,
                "train": {**dataclasses.asdict(config), "source": source},
                "bfs": dict(bfs or {}),
                "counts": dataclasses.asdict(counts),
                "returns": rtg_stats,
                "kinds": list(editor.kinds),
                "editor": editor.name,
                # never trained on: `rewrite calibrate` picks the target return on these
                "validation_claims": sorted(val_claims),
            }
            encoder_name = encoder.name
            if joint is not None:  # the fine-tuned encoder travels with the model
                joint.model.save(str(out / JOINT_ENCODER))
                encoder_name, meta["encoder_in_checkpoint"] = JOINT_ENCODER, True
            save_checkpoint(out, model, encoder_name=encoder_name, step=step, meta=meta)
    try:
        from factseek.rewrite.plots import plot_loss

        plot_loss(log_path, out / LOSS_PLOT)
    except ImportError:  # matplotlib missing: the JSONL log is the record
        pass
    return TrainResult(
        out=out,
        steps=step,
        final_loss=last_loss,
        val_loss=val_loss,
        counts=counts,
        seconds=time.perf_counter() - t0,
        extra={"returns": rtg_stats, "params": model.n_params(), "device": device},
    )


class JointStates:
    """State embeddings computed inside the graph, for joint fine-tuning of the encoder.

    Indexed like the frozen table: ``states[text_idx]`` -> (..., dim), each distinct text of
    the batch encoded once (mean pooling + L2 norm, as sentence-transformers does).
    """

    def __init__(self, st_model: Any, texts: Sequence[str], device: str) -> None:
        self.model = st_model.to(device).train()
        self.texts = list(texts)
        self.device = device

    def __getitem__(self, text_idx: Any) -> Any:
        import torch

        uniq, inverse = torch.unique(text_idx, return_inverse=True)
        prep = getattr(self.model, "preprocess", None) or self.model.tokenize
        feats = prep([self.texts[i] for i in uniq.tolist()])
        feats = {k: v.to(self.device) if torch.is_tensor(v) else v for k, v in feats.items()}
        emb = self.model(feats)["sentence_embedding"]  # (U, dim)
        emb = torch.nn.functional.normalize(emb, dim=-1)
        return emb[inverse]  # (*text_idx.shape, dim)


def _sentence_transformer(encoder: Encoder) -> Any:
    """The torch module behind an encoder (unwrapping the cache), for joint fine-tuning."""
    inner = getattr(encoder, "inner", encoder)
    model = getattr(inner, "model", None)
    if model is None or not hasattr(model, "tokenize"):
        raise InputError(
            f"encoder {encoder.name!r} cannot be fine-tuned (not sentence-transformers)"
        )
    return model


def evaluate_loss(
    model: Any,
    t: Tensors,
    rows: np.ndarray,
    states: Any,
    masks: Any,
    batch_size: int,
    words: tuple[Any, Any] | None = None,
) -> float:
    import torch

    device = states.device
    model.eval()
    total, n = 0.0, 0
    with torch.no_grad():
        for i in range(0, len(rows), batch_size):
            idx = rows[i : i + batch_size]
            batch = batch_tensors(t, idx, states, masks, model.cfg.pad_index, str(device), words)
            _, loss = model(**batch)
            w = int((batch["targets"] >= 0).sum())
            total += float(loss) * w
            n += w
    model.train()
    return total / max(n, 1)


def _optimizer(model: Any, config: TrainConfig) -> Any:
    import torch

    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    groups = [
        {"params": decay, "weight_decay": config.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=config.lr, betas=(0.9, 0.95))


def _lr(step: int, total: int, config: TrainConfig) -> float:
    """Linear warm-up, then cosine decay to a tenth."""
    if step < config.warmup_steps:
        return config.lr * (step + 1) / config.warmup_steps
    frac = (step - config.warmup_steps) / max(1, total - config.warmup_steps)
    return config.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(frac, 1.0))))
