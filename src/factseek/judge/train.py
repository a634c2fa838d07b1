"""Fine-tune a veracity classifier (the paper's last stage) and save it as a judge folder.

One plain training loop (AdamW, linear decay after a short warm-up, cross-entropy), run for
several seeds; each seed keeps its best epoch by dev MAE (dev accuracy for nominal label sets),
and the best seed is saved. ``PRESETS["paper"]`` is the paper's setting (batch 32, max length 512,
lr 3e-5, linear decay, 25 epochs, 5 seeds) for a GPU; ``PRESETS["cpu"]`` fine-tunes the top two
layers of the default MiniLM, and ``PRESETS["cpu-fast"]`` only its head on cached encoder states
(see docs/judge.md for what each costs and scores).

Resuming: every finished seed writes ``<out>/.work/seed-<n>.json`` and, when it is the best so
far, its weights to ``<out>/.work/best/``; rerunning the same command skips finished seeds
(a killed seed restarts from its first epoch). The folder is completed atomically at the end.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from factseek.datasets.claims import LabeledClaim
from factseek.errors import ConfigError, InputError
from factseek.judge.classifier import (
    CONFIG_FILE,
    FORMAT_VERSION,
    KIND,
    MODEL_DIR,
    encode_pairs,
    import_torch_transformers,
    pick_device,
    predict_proba,
    resolve_backbone,
)
from factseek.judge.inputs import Example, Mode, ReportSummaries, build_examples, check_mode
from factseek.labels import LabelSet
from factseek.metrics.veracity import VeracityMetrics, veracity_metrics
from factseek.ml.training import adamw, length_batches, progress_bar, smooth, train_step

WORK_DIR = ".work"
ALL_LAYERS = -1  # freeze_layers value: freeze the whole encoder, train the head on cached states


@dataclass(frozen=True, kw_only=True)
class TrainConfig:
    """Hyperparameters. ``seeds`` is how many seeds (0, 1, ...) to train; the best by dev is kept."""

    backbone: str = "minilm"
    mode: Mode = "claim"
    max_length: int = 128
    batch_size: int = 32
    lr: float = 1e-4
    weight_decay: float = 0.01
    warmup: float = 0.06  # fraction of steps with a linear warm-up, then linear decay to 0
    epochs: int = 3
    seeds: int = 1
    freeze_layers: int = 0  # freeze the embeddings and this many lower layers; -1: all (head only)
    device: str = "auto"
    max_train: int | None = (
        None  # keep this many training examples (first ones after a seeded shuffle)
    )

    def __post_init__(self) -> None:
        check_mode(self.mode)
        for name in ("max_length", "batch_size", "epochs", "seeds"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be at least 1")
        if not (0 < self.lr < 1):
            raise ConfigError("lr must be in (0, 1)")
        if not 0 <= self.warmup < 1:
            raise ConfigError("warmup must be a fraction in [0, 1)")
        if self.freeze_layers < ALL_LAYERS:
            raise ConfigError("freeze_layers must be -1 (all), 0 (none) or a number of layers")


#: The paper's GPU setting, and a CPU setting measured on two cores (see docs/judge.md).
PRESETS: dict[str, TrainConfig] = {
    "paper": TrainConfig(max_length=512, batch_size=32, lr=3e-5, warmup=0.0, epochs=25, seeds=5),
    "cpu": TrainConfig(
        max_length=128, batch_size=32, lr=2e-4, warmup=0.06, epochs=2, seeds=1, freeze_layers=4
    ),
    "cpu-fast": TrainConfig(
        max_length=128, batch_size=32, lr=1e-3, warmup=0.06, epochs=20, seeds=1, freeze_layers=-1
    ),
}


def preset(name: str, **overrides: Any) -> TrainConfig:
    """A preset with some fields replaced (``None`` values are ignored)."""
    if name not in PRESETS:
        raise ConfigError(f"unknown preset {name!r} (one of: {', '.join(PRESETS)})")
    return replace(PRESETS[name], **{k: v for k, v in overrides.items() if v is not None})


@dataclass(frozen=True, kw_only=True)
class SeedResult:
    seed: int
    epoch: int  # best epoch, 1-based
    dev: VeracityMetrics
    seconds: float
    history: tuple[VeracityMetrics, ...] = ()


@dataclass(frozen=True, kw_only=True)
class TrainResult:
    path: Path
    best: SeedResult
    seeds: tuple[SeedResult, ...]
    seconds: float
    n_train: int
    n_dev: int
    notes: tuple[str, ...] = field(default_factory=tuple)


# ----------------------------------------------------------------------------- helpers


def _selection_key(m: VeracityMetrics) -> tuple[float, float]:
    """Smaller is better: dev MAE (then -accuracy); -accuracy first for nominal label sets."""
    if m.mae is not None:
        return (m.mae, -m.accuracy)
    return (-m.accuracy, -m.macro_f1)


def _fingerprint(
    config: TrainConfig, labels: LabelSet, train: Sequence[Example], dev: Sequence[Example]
) -> str:
    h = hashlib.blake2b(digest_size=16)
    h.update(json.dumps({**asdict(config), "labels": labels.labels}, sort_keys=True).encode())
    for ex in (*train, None, *dev):
        h.update(
            b"\x00"
            if ex is None
            else f"{ex.id}\x1f{ex.label}\x1f{ex.first}\x1f{ex.second}\x1e".encode()
        )
    return h.hexdigest()


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _metrics_from(d: dict[str, Any]) -> VeracityMetrics:
    return VeracityMetrics(**d)


def _freeze(model: Any, n_layers: int) -> bool:
    """Freeze the embeddings and the ``n_layers`` lowest layers (-1: all). True when all are."""
    if n_layers == 0:
        return False
    base = model.base_model
    layers = getattr(getattr(base, "encoder", None), "layer", None)
    if layers is None or not hasattr(base, "embeddings"):
        raise ConfigError(
            "freeze_layers works for BERT-like backbones (embeddings + encoder.layer) only"
        )
    if n_layers == ALL_LAYERS:
        n_layers = len(layers)
    if n_layers > len(layers):
        raise ConfigError(f"freeze_layers={n_layers} but the backbone has {len(layers)} layers")
    for module in (base.embeddings, *layers[:n_layers]):
        for p in module.parameters():
            p.requires_grad_(False)
    return n_layers == len(layers)


def _bert_head(model: Any) -> Callable[[Any], Any] | None:
    """``cls_state (batch, hidden) -> logits`` for a BERT classifier (pooler, dropout, linear);
    None for other architectures."""
    bert = getattr(model, "bert", None)
    pooler = getattr(bert, "pooler", None)
    if pooler is None or not hasattr(model, "classifier") or not hasattr(model, "dropout"):
        return None
    return lambda h: model.classifier(model.dropout(pooler(h[:, None, :])))  # pooler reads [:, 0]


def _cls_states(
    model: Any, tokenizer: Any, examples: Sequence[Example], config: TrainConfig, device: str
) -> Any:
    """Final-layer [CLS] states (len(examples), hidden) of the frozen encoder, computed once."""
    torch, _ = import_torch_transformers()
    out = []
    model.eval()
    with torch.inference_mode():
        for start in range(0, len(examples), 64):
            batch = encode_pairs(
                tokenizer, examples[start : start + 64], config.mode, config.max_length
            )
            hidden = model.base_model(**batch.to(device)).last_hidden_state  # (batch, seq, hidden)
            out.append(hidden[:, 0].float().cpu())
    return torch.cat(out)


def _load_backbone(config: TrainConfig, labels: LabelSet) -> tuple[Any, Any]:
    _, transformers = import_torch_transformers()
    source = resolve_backbone(config.backbone)
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(source, local_files_only=True)
        model = transformers.AutoModelForSequenceClassification.from_pretrained(
            source,
            num_labels=len(labels),
            id2label=dict(enumerate(labels.labels)),
            label2id={x: i for i, x in enumerate(labels.labels)},
            local_files_only=True,
            ignore_mismatched_sizes=True,  # the classification head is always new
        )
    except (OSError, ValueError) as e:
        raise ConfigError(
            f"cannot load backbone {config.backbone!r} ({str(e).splitlines()[0]})"
        ) from None
    return tokenizer, model


# ----------------------------------------------------------------------------- one seed


def _train_seed(
    seed: int,
    config: TrainConfig,
    labels: LabelSet,
    train: Sequence[Example],
    dev: Sequence[Example],
    device: str,
    progress: Any,
    log: Callable[[str], None],
) -> tuple[SeedResult, Any, Any]:
    """Train one seed; returns its result and (tokenizer, model) restored to the best epoch."""
    torch, _ = import_torch_transformers()
    random.seed(seed)
    torch.manual_seed(seed)
    rng = random.Random(seed)
    tokenizer, model = _load_backbone(config, labels)
    all_frozen = _freeze(model, config.freeze_layers)
    model.to(device)
    head = _bert_head(model) if all_frozen else None
    if head is not None:  # the encoder never changes: run it once, train the head on its output
        log(f"seed {seed}: encoding {len(train) + len(dev)} examples once with the frozen encoder")
        train_states = _cls_states(model, tokenizer, train, config, device)
        dev_states = _cls_states(model, tokenizer, dev, config, device)
    params = [p for p in model.parameters() if p.requires_grad]
    steps_per_epoch = math.ceil(len(train) / config.batch_size)
    optimizer, scheduler = adamw(
        params,
        lr=config.lr,
        weight_decay=config.weight_decay,
        warmup=config.warmup,
        total_steps=steps_per_epoch * config.epochs,
    )
    lengths = [len(e.first) + len(e.second) for e in train]
    targets = torch.tensor([labels.index(e.label) for e in train], dtype=torch.long)  # type: ignore[arg-type]
    gold_dev = [e.label for e in dev]
    amp = device.startswith("cuda") and torch.cuda.is_bf16_supported()

    best_state: dict[str, Any] | None = None
    best: VeracityMetrics | None = None
    best_epoch = 0
    history: list[VeracityMetrics] = []
    started = time.perf_counter()
    for epoch in range(1, config.epochs + 1):
        model.train()
        batches = length_batches(lengths, config.batch_size, rng)
        task = (
            progress.add_task(
                f"seed {seed} epoch {epoch}/{config.epochs}", total=len(batches), loss=""
            )
            if progress
            else None
        )
        running = 0.0
        for step, idx in enumerate(batches, start=1):
            if head is not None:
                logits = head(train_states[idx].to(device))  # (batch, n_labels)
            else:
                batch = encode_pairs(
                    tokenizer, [train[i] for i in idx], config.mode, config.max_length
                ).to(device)
                with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
                    logits = model(**batch).logits  # (batch, n_labels)
            loss = torch.nn.functional.cross_entropy(logits.float(), targets[idx].to(device))
            running = smooth(running, train_step(loss, params, optimizer, scheduler), step)
            if task is not None:
                progress.update(task, advance=1, loss=f"loss {running:.3f}")
            elif step % max(1, len(batches) // 10) == 0:  # no progress bar: a line every ~10%
                log(f"seed {seed} epoch {epoch}: {step}/{len(batches)} batches, loss {running:.3f}")
        if head is not None:
            model.eval()
            with torch.inference_mode():
                probs = torch.softmax(head(dev_states.to(device)).float(), dim=-1).cpu().numpy()
        else:
            probs = predict_proba(model, tokenizer, dev, config.mode, config.max_length, device)
        pred = [labels.labels[int(i)] for i in probs.argmax(axis=1)]
        metrics = veracity_metrics(gold_dev, pred, labels)  # type: ignore[arg-type]
        history.append(metrics)
        if task is None:
            log(f"seed {seed} epoch {epoch}: dev {_describe(metrics)}")
        if task is not None:
            progress.update(
                task,
                loss=f"loss {running:.3f} dev acc {metrics.accuracy:.3f}"
                + (f" mae {metrics.mae:.3f}" if metrics.mae is not None else ""),
            )
        if best is None or _selection_key(metrics) < _selection_key(best):
            best, best_epoch = metrics, epoch
            best_state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
    assert best is not None and best_state is not None
    model.load_state_dict(best_state)
    result = SeedResult(
        seed=seed,
        epoch=best_epoch,
        dev=best,
        seconds=time.perf_counter() - started,
        history=tuple(history),
    )
    return result, tokenizer, model


# ----------------------------------------------------------------------------- public


def train_classifier(
    train: Sequence[LabeledClaim],
    dev: Sequence[LabeledClaim],
    out: str | Path,
    labels: LabelSet,
    config: TrainConfig = PRESETS["cpu"],
    *,
    summaries: ReportSummaries | None = None,
    dev_summaries: ReportSummaries | None = None,
    preset_name: str = "custom",
    name: str | None = None,
    info: dict[str, Any] | None = None,
    progress: bool = True,
    threads: int | None = None,
    log: Callable[[str], None] = lambda _: None,
) -> TrainResult:
    """Train ``config.seeds`` seeds on ``train``, select by ``dev``, save the judge folder ``out``.

    ``info`` (data files, dedup counts...) is stored under ``"train"`` in config.json. ``threads``
    sets torch's CPU threads (on a busy machine one thread per process is often fastest)."""
    started = time.perf_counter()
    out = Path(out)
    train_ex, miss_train = build_examples(train, config.mode, summaries)
    dev_ex, miss_dev = build_examples(
        dev, config.mode, dev_summaries if dev_summaries is not None else summaries
    )
    for what, exs in (("training", train_ex), ("dev", dev_ex)):
        if not exs:
            raise InputError(f"no {what} examples")
        unlabeled = sum(1 for e in exs if e.label is None)
        if unlabeled:
            raise InputError(f"{unlabeled} {what} claims have no label")
        bad = sorted({e.label for e in exs if e.label not in labels})  # type: ignore[misc]
        if bad:
            raise InputError(f"{what} labels {bad} are not {labels.name} labels")
    notes = []
    if config.mode != "claim":
        what = "report" if config.mode == "summaries" else "justification"
        notes.append(
            f"no {what} for {miss_train} training and {miss_dev} dev claims (claim-only input for those)"
        )
        log(notes[-1])
    if config.max_train is not None and config.max_train < len(train_ex):
        random.Random(0).shuffle(train_ex)
        train_ex = train_ex[: config.max_train]

    device = pick_device(config.device)
    if threads is not None:
        torch, _ = import_torch_transformers()
        torch.set_num_threads(threads)
    work = out / WORK_DIR
    work.mkdir(parents=True, exist_ok=True)
    fp = _fingerprint(config, labels, train_ex, dev_ex)
    results: list[SeedResult] = []
    best_dir = work / "best"

    with progress_bar(progress) as bar:
        for seed in range(config.seeds):
            done = work / f"seed-{seed}.json"
            if done.is_file():
                saved = json.loads(done.read_text(encoding="utf-8"))
                if saved.get("fingerprint") == fp:
                    results.append(
                        SeedResult(
                            seed=seed,
                            epoch=saved["epoch"],
                            dev=_metrics_from(saved["dev"]),
                            seconds=saved["seconds"],
                            history=tuple(_metrics_from(h) for h in saved["history"]),
                        )
                    )
                    log(f"seed {seed}: already trained (resumed)")
                    continue
            result, tokenizer, model = _train_seed(
                seed, config, labels, train_ex, dev_ex, device, bar if progress else None, log
            )
            is_best = all(_selection_key(result.dev) < _selection_key(r.dev) for r in results)
            if is_best:
                tmp = work / "best.tmp"
                shutil.rmtree(tmp, ignore_errors=True)
                model.save_pretrained(str(tmp))
                tokenizer.save_pretrained(str(tmp))
                _write_json(tmp / "seed.json", {"seed": seed, "fingerprint": fp})
                shutil.rmtree(best_dir, ignore_errors=True)
                os.replace(tmp, best_dir)
            _write_json(
                done,
                {
                    "fingerprint": fp,
                    "seed": seed,
                    "epoch": result.epoch,
                    "dev": asdict(result.dev),
                    "seconds": result.seconds,
                    "history": [asdict(h) for h in result.history],
                },
            )
            results.append(result)
            log(
                f"seed {seed}: best epoch {result.epoch}, dev {_describe(result.dev)} ({result.seconds:.0f}s)"
            )
            del model

    best = min(results, key=lambda r: (_selection_key(r.dev), r.seed))
    marker = (
        json.loads((best_dir / "seed.json").read_text(encoding="utf-8"))
        if (best_dir / "seed.json").is_file()
        else {}
    )
    if marker.get("seed") != best.seed or marker.get("fingerprint") != fp:
        raise InputError(f"{work} holds weights of another run; delete it and train again")
    cfg = {
        "format_version": FORMAT_VERSION,
        "kind": KIND,
        "name": name or out.resolve().name,
        "label_set": labels.name,
        "labels": list(labels.labels),
        "mode": config.mode,
        "max_length": config.max_length,
        "backbone": {"name": config.backbone, "source": resolve_backbone(config.backbone)},
        "preset": preset_name,
        "hyperparameters": asdict(config),
        "train": {
            "n_train": len(train_ex),
            "n_dev": len(dev_ex),
            "label_counts": {x: sum(1 for e in train_ex if e.label == x) for x in labels.labels},
            "fingerprint": fp,
            **(info or {}),
        },
        "metrics": {
            "selection": "dev MAE" if labels.ordinal else "dev accuracy",
            "best_seed": best.seed,
            "best_epoch": best.epoch,
            "dev": asdict(best.dev),
            "seeds": [
                {
                    "seed": r.seed,
                    "epoch": r.epoch,
                    "dev": asdict(r.dev),
                    "seconds": round(r.seconds, 1),
                    "history": [asdict(h) for h in r.history],
                }
                for r in results
            ],
        },
        "training_seconds": round(sum(r.seconds for r in results), 1),
        "device": device,
        "notes": notes,
    }
    final_model = out / MODEL_DIR
    shutil.rmtree(final_model, ignore_errors=True)
    shutil.copytree(best_dir, final_model)
    (final_model / "seed.json").unlink(missing_ok=True)
    _write_json(out / CONFIG_FILE, cfg)
    shutil.rmtree(work, ignore_errors=True)
    return TrainResult(
        path=out,
        best=best,
        seeds=tuple(results),
        seconds=time.perf_counter() - started,
        n_train=len(train_ex),
        n_dev=len(dev_ex),
        notes=tuple(notes),
    )


def _describe(m: VeracityMetrics) -> str:
    s = f"acc {m.accuracy:.3f} macro-F1 {m.macro_f1:.3f}"
    if m.mae is not None:
        s += f" soft {m.soft_accuracy:.3f} MAE {m.mae:.3f}"
    return s
