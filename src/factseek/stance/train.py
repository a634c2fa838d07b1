"""Train a stance cross-encoder (``stance.model``) and save it as a stance folder.

One plain loop on the shared training pieces (``factseek.ml.training``): batches of similar length,
AdamW with linear warm-up and decay, cross-entropy, ``epochs`` passes. After the last epoch the
validation pairs fit the calibration map (``stance.calibrate``) and then pick the thresholds
(``stance.thresholds.tune_thresholds``, macro-F1) on calibrated probabilities; what they score
with and without thresholds, and the expected calibration error before and after the map, are
stored in config.json under ``"metrics"``.

Resuming: every ``CHECKPOINT_STEPS`` steps and at the end of each epoch the trained tensors,
the optimiser's moments and the step are written to ``<out>/.work/`` (safetensors + JSON, never
pickles); rerunning the same command with the same data and configuration continues from there
(the batch order of an epoch is a function of the seed and the epoch, so it is replayed exactly).
A different configuration or data starts afresh. The folder is completed at the end and
``.work/`` removed.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import shutil
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from factseek.errors import ConfigError, InputError, ModelError
from factseek.files import atomic_write
from factseek.ml.training import (
    adamw,
    every_tenth,
    length_batches,
    progress_bar,
    read_in_chunks,
    smooth,
    train_step,
    training_device,
)
from factseek.stance.calibrate import Calibration, fit_calibration
from factseek.stance.checkpoint import load_checkpoint, save_checkpoint, start_from
from factseek.stance.crossencoder import QUANTIZE, WEIGHTS_FILE, encode, save_model
from factseek.stance.data import StancePair, label_counts
from factseek.stance.evaluate import StanceMetrics, label_ece, stance_metrics
from factseek.stance.netconfig import BASES
from factseek.stance.thresholds import decide_many, tune_thresholds
from factseek.types import STANCE_LABELS

WORK_DIR = ".work"
CHECKPOINT_STEPS = 100
TEACHER_CHUNK = 512  # pairs the teacher reads between progress updates


@dataclass(frozen=True, kw_only=True)
class StanceTrainConfig:
    """Hyperparameters of ``train_stance`` (the defaults train the shipped model)."""

    base: str = "minilm"
    layers: int = 6
    ffn: int = 0  # feed-forward units kept per layer (0: the base's width)
    train_layers: int = 6
    lora_rank: int = 16
    lora_alpha: float = 32.0
    dropout: float = 0.1
    lora_dropout: float = 0.0
    max_length: int = 128
    batch_size: int = 16
    lr: float = 1e-3
    weight_decay: float = 0.01
    warmup: float = 0.06
    epochs: int = 2
    seed: int = 0
    quantize: str = "int8"  # how the saved model runs by default ("int8" or "none")
    calibrate: bool = True  # fit a calibration map on the validation side (stance.calibrate)
    weigh_sources: bool = True  # every source weighs the same in calibration and thresholds
    init: str = ""  # a stance folder of the same network to start from (pre-trained), or ""
    teacher: str = ""  # stance model(s) as soft targets: "small", a folder, or "a,b" (their mean)
    distill: float = 0.5  # with a teacher: weight of its soft targets (the rest: the gold labels)
    temperature: float = 2.0  # with a teacher: both sides' logits are divided by it
    stop_at_chance: bool = (
        True  # stop after epoch 1 when the loss is still the prior's (chance_stop)
    )

    def __post_init__(self) -> None:
        for name in ("layers", "train_layers", "lora_rank", "max_length", "batch_size", "epochs"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be at least 1")
        if self.max_length < 8:
            raise ConfigError("max_length must be at least 8 tokens")
        if not 0 < self.lr < 1:
            raise ConfigError("lr must be in (0, 1)")
        if not 0 <= self.warmup < 1:
            raise ConfigError("warmup must be a fraction in [0, 1)")
        if self.quantize not in QUANTIZE:
            raise ConfigError(f"quantize must be one of {', '.join(QUANTIZE)}")
        if not 0 <= self.distill <= 1:
            raise ConfigError("distill must be a weight in [0, 1]")
        if self.temperature <= 0:
            raise ConfigError("temperature must be above 0")
        if self.init and not (Path(self.init) / WEIGHTS_FILE).is_file():
            raise ConfigError(f"--init {self.init}: not a stance model folder (no {WEIGHTS_FILE})")


@dataclass(frozen=True, kw_only=True)
class StanceTrainResult:
    path: Path
    seconds: float
    n_train: int
    n_dev: int
    thresholds: dict[str, float]
    dev_argmax: StanceMetrics
    dev_tuned: StanceMetrics
    resumed_from: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)


def _fingerprint(
    config: StanceTrainConfig, train: Sequence[StancePair], dev: Sequence[StancePair]
) -> str:
    h = hashlib.blake2b(digest_size=16)
    what = {k: v for k, v in asdict(config).items() if k != "stop_at_chance"}  # not the work
    h.update(json.dumps(what, sort_keys=True).encode())
    if config.init:  # the starting weights themselves, not only their folder's name
        with (Path(config.init) / WEIGHTS_FILE).open("rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    for p in (*train, None, *dev):
        h.update(
            b"\x00" if p is None else f"{p.question}\x1f{p.evidence}\x1f{p.label}\x1e".encode()
        )
    return h.hexdigest()


#: A first epoch shorter than this says too little about whether the network learns.
CHANCE_MIN_STEPS = 200
#: A running loss within this of the label prior's entropy is a network that learned nothing.
CHANCE_MARGIN = 0.02


def prior_entropy(labels: Sequence[str]) -> float:
    """The cross-entropy (nats) of always answering the training labels' shares: the loss of a
    network that has fallen back to the label prior (ln 3 for balanced labels)."""
    counts = np.bincount([STANCE_LABELS.index(x) for x in labels], minlength=len(STANCE_LABELS))
    p = counts[counts > 0] / max(1, counts.sum())
    return float(-(p * np.log(p)).sum())


def chance_stop(running: float, entropy: float, steps: int, lr: float) -> str | None:
    """Why training should stop after its first epoch of ``steps`` steps, or None: the running
    loss is still within ``CHANCE_MARGIN`` of the label prior's entropy (a run at LoRA rank 32 and
    learning rate 1e-3 sat there for 2,900 steps: docs/stance.md)."""
    if steps < CHANCE_MIN_STEPS or running < entropy - CHANCE_MARGIN:
        return None
    return (
        f"the training loss after epoch 1 ({running:.3f}) is the label prior's entropy "
        f"({entropy:.3f}): the network has learned nothing beyond the label shares. Try a lower "
        f"--lr (this run: {lr:g}) with a new --out, or --no-stop-at-chance to go on anyway"
    )


def _net_config(config: StanceTrainConfig) -> Any:
    from factseek.stance.model import NetConfig

    return NetConfig(
        base=config.base,
        layers=config.layers,
        ffn=config.ffn,
        train_layers=config.train_layers,
        lora_rank=config.lora_rank,
        lora_alpha=config.lora_alpha,
        dropout=config.dropout,
        lora_dropout=config.lora_dropout,
    )


def predict_probs(
    net: Any, tokenizer: Any, pairs: Sequence[StancePair], batch_size: int = 64
) -> Any:
    """(len(pairs), 3) probabilities from a training-time network (eval mode, no adapters merged)."""
    from factseek.stance.crossencoder import read_probabilities, tokenize

    net.eval()
    ids, types = tokenize(tokenizer, [(p.question, p.evidence) for p in pairs])
    return read_probabilities(net, ids, types, batch_size)


# ----------------------------------------------------------------------------- the frozen part, once


@dataclass(frozen=True)
class LowerCache:
    """The frozen layers' output for every training pair, unpadded fp16 rows (``states``) with
    each pair's first row in ``offsets`` (``len(pairs) + 1`` entries)."""

    states: Any  # torch.float16 (total tokens, hidden)
    offsets: Any  # torch.int64 (n + 1,)

    @property
    def lengths(self) -> list[int]:
        return (self.offsets[1:] - self.offsets[:-1]).tolist()

    def batch(self, idx: Sequence[int]) -> tuple[Any, Any]:
        """Padded float32 states (b, t, hidden) and the mask (b, t) of pairs ``idx``."""
        import torch

        lengths = [int(self.offsets[i + 1] - self.offsets[i]) for i in idx]
        width = max(lengths)
        x = torch.zeros((len(idx), width, self.states.shape[1]))
        mask = torch.zeros((len(idx), width), dtype=torch.long)
        for row, (i, n) in enumerate(zip(idx, lengths, strict=True)):
            x[row, :n] = self.states[int(self.offsets[i]) : int(self.offsets[i]) + n].float()
            mask[row, :n] = 1
        return x, mask


def _lower_cache(
    net: Any,
    tokenizer: Any,
    pairs: Sequence[StancePair],
    work: Path,
    fp: str,
    bar: Any,
    log: Callable[[str], None],
) -> LowerCache:
    """Run the frozen layers once per pair (or read a matching cache from ``work``)."""
    import torch
    from safetensors.torch import load_file, save_file

    from factseek.files import atomic_path

    path = work / f"lower-{fp}.safetensors"
    if path.is_file():
        saved = load_file(str(path))
        log("frozen-layer states read from the previous run")
        return LowerCache(states=saved["states"], offsets=saved["offsets"])
    order = sorted(
        range(len(pairs)), key=lambda i: (len(pairs[i].question) + len(pairs[i].evidence), i)
    )
    rows: list[Any] = [None] * len(pairs)
    task = bar.add_task("frozen layers, once", total=len(pairs), loss="")
    tick = every_tenth(math.ceil(len(pairs) / 64))
    net.eval()
    at = next(net.parameters()).device
    with torch.inference_mode():
        for start in range(0, len(order), 64):
            idx = order[start : start + 64]
            ids, mask, types = encode(
                tokenizer, [(pairs[i].question, pairs[i].evidence) for i in idx]
            )
            states = net.lower(ids.to(at), mask.to(at), types.to(at)).half().cpu()  # (b, t, hidden)
            for row, i in enumerate(idx):
                rows[i] = states[row, : int(mask[row].sum())].clone()
            bar.update(task, advance=len(idx))
            if bar.disable and tick(start // 64 + 1):
                log(f"frozen layers: {start + len(idx)}/{len(pairs)} pairs")
    lengths = torch.tensor([0] + [r.shape[0] for r in rows])
    cache = LowerCache(states=torch.cat(rows), offsets=torch.cumsum(lengths, 0))
    work.mkdir(parents=True, exist_ok=True)
    for old in work.glob("lower-*.safetensors"):
        old.unlink()
    with atomic_path(path, suffix=".safetensors") as tmp:
        save_file(
            {"states": cache.states.contiguous(), "offsets": cache.offsets.contiguous()}, str(tmp)
        )
    return cache


@dataclass(frozen=True)
class TokenCache:
    """Every training pair tokenised once (for training end to end, when no layer is frozen)."""

    ids: list[list[int]]
    types: list[list[int]]

    @property
    def lengths(self) -> list[int]:
        return [len(x) for x in self.ids]

    def batch(self, idx: Sequence[int]) -> tuple[Any, Any, Any]:
        """Padded (b, t) ``input_ids``, ``mask`` and ``token_type_ids`` of pairs ``idx``."""
        from factseek.stance.crossencoder import pad

        return pad([self.ids[i] for i in idx], [self.types[i] for i in idx])


def _token_cache(tokenizer: Any, pairs: Sequence[StancePair]) -> TokenCache:
    from factseek.stance.crossencoder import tokenize

    ids, types = tokenize(tokenizer, [(p.question, p.evidence) for p in pairs])
    return TokenCache(ids=ids, types=types)


# ----------------------------------------------------------------------------- the teacher


def _soft_targets(
    config: StanceTrainConfig,
    pairs: Sequence[StancePair],
    work: Path,
    fp: str,
    bar: Any,
    log: Callable[[str], None],
) -> Any:
    """The teacher's probabilities for every training pair (the mean of several teachers'),
    softened by ``temperature`` (``softmax(log p / T)``), as a float32 (n, 3) tensor; computed
    once and kept in ``work``."""
    import torch
    from safetensors.torch import load_file, save_file

    from factseek.files import atomic_path
    from factseek.stance import load_stance

    path = work / f"teacher-{fp}.safetensors"
    if path.is_file():
        log("teacher probabilities read from the previous run")
        return load_file(str(path))["soft"]
    names = teacher_names(config.teacher)
    if not names:
        raise ConfigError(f"--teacher {config.teacher!r} names no stance model")
    readers = [getattr(load_stance(name), "probabilities", None) for name in names]
    if None in readers:
        raise ConfigError(f"teacher {names[readers.index(None)]!r} gives no probabilities (a trained folder or a shipped model)")  # fmt: skip
    which = f"teacher {names[0]}" if len(names) == 1 else f"{len(names)} teachers (their mean)"
    partial = work / f"teacher-{fp}.partial.npy"  # the pairs read so far: a killed run goes on
    log(f"{which}: reading {len(pairs)} training pairs" + (" (going on)" if partial.is_file() else ""))  # fmt: skip
    task = bar.add_task("teacher, once", total=len(pairs), loss="")
    tick = every_tenth(math.ceil(len(pairs) / TEACHER_CHUNK))

    def done(n: int) -> None:
        bar.update(task, completed=n)
        if bar.disable and n and tick(math.ceil(n / TEACHER_CHUNK)):
            log(f"teacher: {n}/{len(pairs)} pairs")

    def mean(chunk: Sequence[StancePair]) -> Any:
        texts = [(p.question, p.evidence) for p in chunk]
        return sum(np.asarray(read(texts), dtype=np.float64) for read in readers) / len(readers)

    work.mkdir(parents=True, exist_ok=True)
    probs = torch.as_tensor(read_in_chunks(pairs, mean, TEACHER_CHUNK, partial, done))  # (n, 3)
    soft = torch.softmax(probs.clamp(min=1e-8).log() / config.temperature, -1).float()
    for old in [*work.glob("teacher-*.safetensors"), *work.glob("teacher-*.partial.npy")]:
        old.unlink()
    with atomic_path(path, suffix=".safetensors") as tmp:
        save_file({"soft": soft.contiguous()}, str(tmp))
    return soft


def teacher_names(teacher: str) -> list[str]:
    """The stance models of a ``--teacher`` value: one name or folder, or several separated by
    commas (an ensemble whose mean probability is the target); none for ``""``."""
    return [t.strip() for t in teacher.split(",") if t.strip()]


def distill_loss(logits: Any, targets: Any, soft: Any | None, config: StanceTrainConfig) -> Any:
    """Cross-entropy on the gold labels, mixed with ``distill`` x the temperature-scaled KL
    divergence from the teacher's softened probabilities ``soft`` (when there is a teacher)."""
    from torch.nn import functional as F

    ce = F.cross_entropy(logits, targets)
    if soft is None:
        return ce
    t = config.temperature
    kl = F.kl_div(F.log_softmax(logits / t, -1), soft, reduction="batchmean") * (t * t)
    return (1 - config.distill) * ce + config.distill * kl


# ----------------------------------------------------------------------------- public


def train_stance(
    train: Sequence[StancePair],
    dev: Sequence[StancePair],
    out: str | Path,
    config: StanceTrainConfig = StanceTrainConfig(),
    *,
    name: str | None = None,
    info: dict[str, Any] | None = None,
    progress: bool = True,
    threads: int | None = None,
    device: str = "cpu",
    log: Callable[[str], None] = lambda _: None,
) -> StanceTrainResult:
    """Train on ``train``, tune thresholds on ``dev``, save the stance folder ``out``.

    ``info`` goes under ``"train"`` in config.json; ``threads``: torch's CPU threads; ``device``:
    where the training steps and the validation reading run ("cpu", "cuda"); saving is on the
    CPU."""
    import torch

    from factseek.stance.model import StanceNet, load_tokenizer

    if not train or not dev:
        raise InputError("stance training needs training and validation pairs")
    started = time.perf_counter()
    out = Path(out)
    at = training_device(device)  # before any work: a device torch cannot use is one line
    if threads is not None:
        torch.set_num_threads(threads)
    random.seed(config.seed)
    torch.manual_seed(config.seed)
    net = StanceNet.from_base(_net_config(config))
    if config.init:
        start_from(net, config.init)
    net = net.to(at)
    tokenizer = load_tokenizer(config.base, config.max_length)
    params = net.trainable()
    steps_per_epoch = math.ceil(len(train) / config.batch_size)
    total = steps_per_epoch * config.epochs
    optimizer, scheduler = adamw(
        params,
        lr=config.lr,
        weight_decay=config.weight_decay,
        warmup=config.warmup,
        total_steps=total,
    )
    targets = torch.tensor([STANCE_LABELS.index(p.label) for p in train], dtype=torch.long).to(at)
    entropy = prior_entropy([p.label for p in train])
    fp = _fingerprint(config, train, dev)
    work = out / WORK_DIR
    with progress_bar(progress) as bar:
        cache: LowerCache | TokenCache
        if net.frozen:  # run the frozen layers once, train the rest on their cached output
            cache = _lower_cache(net, tokenizer, train, work, fp, bar, log)
        else:  # every layer learns: the whole network runs at each step
            cache = _token_cache(tokenizer, train)
        soft = _soft_targets(config, train, work, fp, bar, log) if config.teacher else None
        soft = None if soft is None else soft.to(at)
        done = load_checkpoint(work, net, optimizer, fp)
        if done:
            log(f"resuming after step {done} of {total}")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "scheduler.step() before optimizer.step()"
                for _ in range(done):
                    scheduler.step()
        step = 0
        for epoch in range(1, config.epochs + 1):
            batches = length_batches(
                cache.lengths, config.batch_size, random.Random(config.seed * 1000 + epoch)
            )
            if step + len(batches) <= done:
                step += len(batches)
                continue
            task = bar.add_task(
                f"stance epoch {epoch}/{config.epochs}", total=len(batches), loss=""
            )
            tick = every_tenth(len(batches))
            net.train()
            running = 0.0
            for i, idx in enumerate(batches, start=1):
                step += 1
                if step <= done:
                    bar.update(task, advance=1)
                    continue
                if isinstance(cache, LowerCache):
                    states, mask = cache.batch(idx)  # (b, t, hidden), (b, t)
                    logits, _ = net.upper(states.to(at), mask.to(at))
                else:
                    ids, mask, types = cache.batch(idx)  # (b, t) each
                    logits, _ = net(ids.to(at), mask.to(at), types.to(at))  # (b, 3)
                loss = distill_loss(
                    logits, targets[idx], None if soft is None else soft[idx], config
                )
                running = smooth(running, train_step(loss, params, optimizer, scheduler), i)
                bar.update(task, advance=1, loss=f"loss {running:.3f}")
                if not progress and tick(i):
                    log(f"epoch {epoch}: {i}/{len(batches)} batches, loss {running:.3f}")
                if step % CHECKPOINT_STEPS == 0 or i == len(batches):
                    save_checkpoint(work, net, optimizer, step, fp)
            if epoch == 1 and not config.teacher and step > done:
                why = chance_stop(running, entropy, len(batches), config.lr)
                if why and config.stop_at_chance:
                    raise ModelError(f"stopped: {why}")
                if why:
                    log(f"warning: {why}")
    log("scoring the validation pairs")
    raw = predict_probs(net, tokenizer, dev)  # on the training device
    net.to("cpu")
    fitted = fit_on_validation(raw, dev, config)
    # teacher folders by their names only: no machine paths in a model that may be shared
    teachers = ",".join(Path(t).name for t in teacher_names(config.teacher))
    init = Path(config.init).name if config.init else ""
    cfg = {
        "name": name or out.resolve().name,
        "net": _net_config(config).to_dict(),
        "base_source": BASES.get(config.base, Path(config.base).name),
        "max_length": config.max_length,
        "quantize": config.quantize,
        "thresholds": fitted["thresholds"],
        "calibration": fitted["calibration"],
        "hyperparameters": {**asdict(config), "teacher": teachers, "init": init},
        "train": {
            "n_train": len(train),
            "n_dev": len(dev),
            "label_counts": label_counts(train),
            "fingerprint": fp,
            **(info or {}),
        },
        "metrics": fitted["metrics"],
        "training_seconds": round(time.perf_counter() - started, 1),
    }
    save_model(net, out, cfg)
    shutil.rmtree(work, ignore_errors=True)
    return StanceTrainResult(
        path=out,
        seconds=time.perf_counter() - started,
        n_train=len(train),
        n_dev=len(dev),
        thresholds=fitted["thresholds"],
        dev_argmax=fitted["dev_argmax"],
        dev_tuned=fitted["dev_tuned"],
        resumed_from=done,
    )


def fit_on_validation(
    raw: Any, dev: Sequence[StancePair], config: StanceTrainConfig
) -> dict[str, Any]:
    """The calibration map, then the thresholds on calibrated probabilities, fitted on the
    validation pairs' raw readings; every source weighs the same when ``weigh_sources``."""
    gold = [p.label for p in dev]
    groups = [p.source for p in dev] if config.weigh_sources else None
    where = f"validation side, {len(dev)} pairs" + (
        ", each source weighing the same" if groups else ""
    )
    calibration = (
        fit_calibration(raw, gold, groups=groups, fitted_on=where)
        if config.calibrate
        else Calibration()
    )
    probs = calibration.apply(raw)
    thresholds, _ = tune_thresholds(probs, gold, groups)
    dev_argmax = stance_metrics(gold, [STANCE_LABELS[k] for k in decide_many(probs, None)])
    dev_tuned = stance_metrics(gold, [STANCE_LABELS[k] for k in decide_many(probs, thresholds)])
    ece = {n: label_ece(p, gold, thresholds) for n, p in (("raw", raw), ("calibrated", probs))}
    selection = "thresholds tuned for validation macro-F1" + (
        " (the mean over sources)" if groups else ""
    )
    return {
        "calibration": calibration.to_dict(),
        "thresholds": thresholds,
        "dev_argmax": dev_argmax,
        "dev_tuned": dev_tuned,
        "metrics": {
            "selection": selection,
            "dev_argmax": dev_argmax.to_dict(),
            "dev_tuned": dev_tuned.to_dict(),
            "dev_ece": ece,
        },
    }


def recalibrate(
    model: str | Path, dev: Sequence[StancePair], out: str | Path, *, weigh_sources: bool = True
) -> dict[str, Any]:
    """A copy of a stance folder with its calibration map and thresholds fitted anew on
    ``dev`` (the network is untouched); returns what was fitted."""
    from factseek.stance import engine_for_many
    from factseek.stance.crossencoder import CONFIG_FILE, CrossEncoderStance

    src = Path(model)
    stance = CrossEncoderStance.load(src, engine=engine_for_many())  # thousands of pairs
    raw = stance.raw_probabilities([(p.question, p.evidence) for p in dev])
    fitted = fit_on_validation(raw, dev, StanceTrainConfig(weigh_sources=weigh_sources))
    out = Path(out)
    if out.resolve() != src.resolve():
        shutil.copytree(src, out, dirs_exist_ok=True)
    cfg = json.loads((out / CONFIG_FILE).read_text(encoding="utf-8"))
    cfg.update(
        thresholds=fitted["thresholds"],
        calibration=fitted["calibration"],
        metrics={**cfg.get("metrics", {}), **fitted["metrics"]},
    )
    atomic_write(out / CONFIG_FILE, json.dumps(cfg, indent=2, ensure_ascii=False) + "\n")
    return fitted
