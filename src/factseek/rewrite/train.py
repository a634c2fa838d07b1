"""Train the decision transformer on BFS trajectories (``factseek rewrite train``).

Data: a BFS folder (``config.json`` + ``trajectories.jsonl``, see ``factseek.rewrite.trajectories``).
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
import hashlib
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from factseek.encode import Encoder, encoder_from_name
from factseek.errors import DataError, InputError
from factseek.files import atomic_path
from factseek.rewrite.infer import ActionsEditor, Editor, WordVectors

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
    max_sequences_per_claim: int | None = None  # the first N of each claim (BFS order: best first)
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
    from factseek.rewrite import trajectories

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
    from factseek.rewrite import trajectories

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
        if max_sequences_per_claim is not None:
            seqs = seqs[:max_sequences_per_claim]
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


def is_held_out(claim_id: str, fraction: float, seed: int = 0) -> bool:
    """Deterministic split by claim: True for about ``fraction`` of ids (hash of seed + id)."""
    h = hashlib.blake2b(f"{seed}:{claim_id}".encode(), digest_size=8).digest()
    return int.from_bytes(h) / 2**64 < fraction


def _cache_dir() -> Path:
    root = os.environ.get("FACTSEEK_CACHE") or Path.home() / ".cache" / "factseek"
    return Path(root) / "rewrite-dt"


def _atomic_save_npy(path: Path, arr: np.ndarray) -> None:
    with atomic_path(path) as tmp, tmp.open("wb") as f:
        np.save(f, arr)


class RowCache:
    """Rows keyed by text, on disk: ``<name>.keys.npy`` (16-byte digests) + ``<name>.rows.npy``.

    Rows computed for one trajectory folder are reused for any other that shares texts (the
    ablation's runs, a run with extra STOP claims); both files are rewritten atomically.
    """

    def __init__(self, name: str, width: int, dtype: Any) -> None:
        self.keys_path = _cache_dir() / f"{name}.keys.npy"
        self.rows_path = _cache_dir() / f"{name}.rows.npy"
        self.width, self.dtype = width, np.dtype(dtype)
        self.keys = np.zeros(0, dtype="S16")
        self.rows = np.zeros((0, width), dtype=self.dtype)
        if self.keys_path.is_file() and self.rows_path.is_file():
            keys, rows = np.load(self.keys_path), np.load(self.rows_path)
            if rows.shape == (len(keys), width) and rows.dtype == self.dtype:
                self.keys, self.rows = keys, rows

    @staticmethod
    def digest(text: str) -> bytes:
        return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()

    def lookup(self, texts: Sequence[str], use: bool = True) -> tuple[np.ndarray, list[int]]:
        """(len(texts), width) rows (zeros where missing) and the indices of the missing texts;
        ``use=False`` ignores the cache (everything missing)."""
        out = np.zeros((len(texts), self.width), dtype=self.dtype)
        if not use:
            return out, list(range(len(texts)))
        where = {k: i for i, k in enumerate(self.keys.tolist())}
        missing = []
        for i, t in enumerate(texts):
            j = where.get(self.digest(t))
            if j is None:
                missing.append(i)
            else:
                out[i] = self.rows[j]
        return out, missing

    def add(self, texts: Sequence[str], rows: np.ndarray) -> None:
        if not len(texts):
            return
        self.keys = np.concatenate([self.keys, np.array([self.digest(t) for t in texts], "S16")])
        self.rows = np.concatenate([self.rows, rows.astype(self.dtype)])
        _atomic_save_npy(self.rows_path, self.rows)
        _atomic_save_npy(self.keys_path, self.keys)


def state_table(
    texts: Sequence[str],
    encoder: Encoder,
    *,
    batch_size: int = 256,
    cache: bool = True,
    progress: bool = True,
) -> np.ndarray:
    """(len(texts), dim) float32 embeddings; only texts not in the disk cache are encoded."""
    store = RowCache(_key("states", encoder.name, str(encoder.dim)), encoder.dim, np.float32)
    out, todo = store.lookup(texts, use=cache)
    with _progress(progress) as bar:
        task = bar.add_task("encoding queries", total=len(todo))
        for i in range(0, len(todo), batch_size):
            idx = todo[i : i + batch_size]
            out[idx] = encoder.encode([texts[j] for j in idx])
            bar.update(task, advance=len(idx))
    if cache:
        store.add([texts[j] for j in todo], out[todo])
    return out.astype(np.float32)


def mask_table(
    texts: Sequence[str],
    editor: Editor,
    max_positions: int,
    *,
    batch_size: int = 512,
    cache: bool = True,
    progress: bool = True,
) -> np.ndarray:
    """(len(texts), n_kinds * max_positions + 1) bool: allowed actions, STOP last (always)."""
    n_actions = len(editor.kinds) * max_positions + 1
    store = RowCache(_key("masks", editor.name, str(max_positions)), n_actions, bool)
    out, todo = store.lookup(texts, use=cache)
    with _progress(progress) as bar:
        task = bar.add_task("tagging queries", total=len(todo))
        for i in range(0, len(todo), batch_size):
            idx = todo[i : i + batch_size]
            m = editor.masks([texts[j] for j in idx], max_positions)  # (b, kinds, P)
            out[idx, :-1] = m.reshape(len(idx), -1)
            bar.update(task, advance=len(idx))
    out[:, -1] = True
    if cache:
        store.add([texts[j] for j in todo], out[todo])
    return out


def word_table(
    texts: Sequence[str],
    editor: Editor,
    encoder: Encoder,
    max_positions: int,
    *,
    cache: bool = True,
    progress: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Word vectors of every text, as ``(ids, vectors)``: ``ids`` (len(texts), max_positions, 2)
    int64 rows of ``vectors`` (V + 1, dim) float32, whose last row (zeros) stands for "no word".
    Pairs are ``Editor.words``: the word at each position, the word SWAP/ADD would write."""
    pairs: list[list[tuple[str, str]]] = []
    with _progress(progress) as bar:
        task = bar.add_task("reading words", total=len(texts))
        for i in range(0, len(texts), 512):
            chunk = texts[i : i + 512]
            pairs.extend(editor.words(chunk, max_positions))
            bar.update(task, advance=len(chunk))
    vocab = sorted({w for row in pairs for pair in row for w in pair if w})
    row_of = {w: j for j, w in enumerate(vocab)}
    none = len(vocab)
    ids = np.full((len(texts), max_positions, 2), none, dtype=np.int64)
    for i, row in enumerate(pairs):
        for p, pair in enumerate(row[:max_positions]):
            ids[i, p] = [row_of.get(w, none) for w in pair]
    store = RowCache(_key("words", encoder.name, str(encoder.dim)), encoder.dim, np.float32)
    vectors, todo = store.lookup(vocab, use=cache)
    if todo:
        vectors[todo] = WordVectors(encoder).vectors([vocab[j] for j in todo])
        if cache:
            store.add([vocab[j] for j in todo], vectors[todo])
    return ids, np.concatenate([vectors, np.zeros((1, encoder.dim), np.float32)])


def _key(*parts: str) -> str:
    h = hashlib.blake2b(digest_size=16)
    for p in parts:
        h.update(p.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


def _progress(enabled: bool) -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    return Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        disable=not enabled,
        transient=True,
    )


@dataclass(frozen=True, kw_only=True)
class Tensors:
    """Episodes as padded arrays indexing the per-text tables. Shapes (N, K) unless noted."""

    text_idx: np.ndarray  # int64, row of states/masks (0 on padding)
    targets: np.ndarray  # int64, IGNORE on padding
    rtg: np.ndarray  # float32, 0 on padding
    lengths: np.ndarray  # (N,) steps per episode


def to_tensors(episodes: Sequence[Episode], text_index: Mapping[str, int], k: int) -> Tensors:
    from factseek.rewrite.model import IGNORE

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


def pick_device(requested: str | None = None) -> str:
    import torch

    if requested:
        return requested
    return "cuda" if torch.cuda.is_available() else "cpu"


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
        from factseek.rewrite import trajectories as tj

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
        bfs={k: bfs[k] for k in ("retriever", "reward", "k", "depth", "negatives") if k in bfs},
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

    from factseek.rewrite.model import SMALL, DecisionTransformer, save_checkpoint

    t0 = time.perf_counter()
    if pick_device(config.device) == "cpu" and config.threads:
        torch.set_num_threads(config.threads)  # before encoding: the encoder runs on torch too
    encoder = encoder or encoder_from_name(config.encoder)
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
    with _progress(progress) as bar, log_path.open("a") as log:
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
