"""A trained stance cross-encoder: one folder on disk, the ``StanceModel`` protocol in memory.

A stance folder holds::

    config.json          {"format_version": 1, "kind": "factseek-stance-crossencoder",
                          "labels": ["supports", "refutes", "nei"], "net": {...NetConfig},
                          "max_length": 96, "quantize": QUANTIZE (below),
                          "thresholds": {"supports": ts, "refutes": tr} | null,
                          "calibration": {"temperature": t, "bias": {...}} (optional),
                          "train": {...}, "metrics": {...}}
    adapter.safetensors  the trained tensors only (fp16), applied on top of the pip base model

``CrossEncoderStance.load(path)`` opens it offline: the base's first layers, the adapter folded
in, and (``quantize: "int8"``) dynamic int8 quantisation of the linear maps. ``classify`` reads
pairs in order of token count (``read_probabilities``; in batches without int8, below); each text
is cut to ``MAX_QUESTION_CHARS`` / ``MAX_EVIDENCE_CHARS`` characters and the pair to
``max_length`` tokens (the longer side is cut first), so empty and huge inputs are both fine.
Probabilities go through the folder's calibration map (``stance.calibrate``; none: the raw
softmax), then labels come from ``stance.thresholds.decide``.

With int8, each forward pass quantises its activations with that pass's own range, so pairs read
together would change each other's probabilities (1,000 AVeriTeC dev candidate pairs read in
batches of 32 with other batch mates: 0.041 on average, up to 0.39, 3.8% of labels changed;
``experiments/probe_int8_batching.py``). An int8 model therefore reads **one pair per pass**
(``INT8_BATCH_SIZE``): a pair's reading depends on that pair alone, for 35% fewer pairs per
second on those pairs than batches of 32 (still faster than fp32, the other reading that does
not depend on its company). With ``"none"`` pairs are read ``BATCH_SIZE`` at a time and agree
with one-by-one reading to float precision. With ``"int8-rows"`` (``stance.rowint8``) each token
gets its own activation scale and pairs are read ``BATCH_SIZE`` at a time packed, without
padding: a pair's reading is the one it gets alone, bit for bit.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
import threading
import warnings
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from factseek.errors import MissingDependency, ModelError
from factseek.files import atomic_path, atomic_write
from factseek.ml.folder import read_model_config
from factseek.ml.npbert import blas_threads
from factseek.ml.threads import current_threads, spread
from factseek.stance.calibrate import Calibration
from factseek.stance.readings import ReadingCache
from factseek.stance.thresholds import Thresholds, check_thresholds, decide_many
from factseek.types import STANCE_LABELS, StanceResult

FORMAT_VERSION = 1
KIND = "factseek-stance-crossencoder"
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "adapter.safetensors"
MAX_QUESTION_CHARS = 1_000
MAX_EVIDENCE_CHARS = 4_000
BATCH_SIZE = 32
INT8_BATCH_SIZE = 1  # activations are quantised per pass: one pair per pass, read on its own
#: How a folder's network runs: int8 (every linear map), int8-mixed (every map but each layer's
#: feed-forward output, whose input has outliers that one scale per pass cannot hold: an MPNet
#: base read with every map int8 agrees with its fp32 self on 67% of labels; docs/stance.md),
#: both one pair per pass; int8-rows (every map of every layer, one activation scale per token,
#: pairs read in packed batches: ``stance.rowint8``); or none (fp32).
QUANTIZE = ("int8", "int8-mixed", "int8-rows", "none")
INT8_MODES = ("int8", "int8-mixed")  # torch's dynamic int8: one scale per pass
ROWS = "int8-rows"
ENGINES = ("numpy", "torch")

Pair = tuple[str, str]


def bound(pairs: Sequence[Pair]) -> tuple[list[str], list[str]]:
    """Questions and evidence texts cut to their character limits (``None`` reads as empty)."""
    questions = [
        " ".join((q or "")[: MAX_QUESTION_CHARS * 2].split())[:MAX_QUESTION_CHARS] for q, _ in pairs
    ]
    evidence = [
        " ".join((e or "")[: MAX_EVIDENCE_CHARS * 2].split())[:MAX_EVIDENCE_CHARS] for _, e in pairs
    ]
    return questions, evidence


def tokenize(tokenizer: Any, pairs: Sequence[Pair]) -> tuple[list[list[int]], list[list[int]]]:
    """Token ids and type ids of ``[CLS] question [SEP] evidence [SEP]`` for each pair, the texts
    bounded first (``bound``) and the pair cut to the tokenizer's truncation length."""
    questions, evidence = bound(pairs)
    batch = getattr(tokenizer, "encode_batch_fast", tokenizer.encode_batch)  # fast: no offsets
    encodings = batch(list(zip(questions, evidence, strict=True)))
    return [e.ids for e in encodings], [e.type_ids for e in encodings]


def encode(tokenizer: Any, pairs: Sequence[Pair]) -> tuple[Any, Any, Any]:
    """``(input_ids, mask, token_type_ids)``, each a padded (len(pairs), tokens) long tensor
    (``tokenize``, then ``pad``)."""
    return pad(*tokenize(tokenizer, pairs))


def pad(ids: Sequence[Sequence[int]], types: Sequence[Sequence[int]]) -> tuple[Any, Any, Any]:
    """Token ids and type ids of several pairs -> padded (n, longest) ``input_ids``, ``mask``
    and ``token_type_ids`` long tensors."""
    import torch

    width = max((len(x) for x in ids), default=0)
    out = np.zeros((len(ids), width), dtype=np.int64)
    mask = np.zeros_like(out)
    type_ids = np.zeros_like(out)
    for i, (row, kinds) in enumerate(zip(ids, types, strict=True)):
        n = len(row)
        out[i, :n] = row
        mask[i, :n] = 1
        type_ids[i, :n] = kinds
    return torch.from_numpy(out), torch.from_numpy(mask), torch.from_numpy(type_ids)


def read_probabilities(
    net: Any, ids: Sequence[Sequence[int]], types: Sequence[Sequence[int]], batch_size: int
) -> np.ndarray:
    """float64 (len(ids), net.config.n_labels) softmax of a ``StanceNet`` (torch) or a
    ``NumpyStanceNet`` over tokenised pairs (``tokenize``), in input order, read ``batch_size``
    at a time in order of token count (inference mode; the caller puts a training network in
    eval mode)."""
    from factseek.stance.npnet import NumpyStanceNet

    out = np.zeros((len(ids), net.config.n_labels))
    order = sorted(range(len(ids)), key=lambda i: (len(ids[i]), i))
    own = batch_size == 1  # each pair's reading is its own: threads may share them out
    if isinstance(net, NumpyStanceNet):
        read = partial(net.read, ids, types, out, batch_size=batch_size)
        threads = current_threads()
        context = blas_threads(1)  # the threads below are the parallelism, not BLAS's
    else:
        read = partial(_read_in_order, net, ids, types, out, batch_size)
        threads = sys.modules["torch"].get_num_threads()
        context = nullcontext()
        own = own or getattr(net, "read_packed", False)  # stance.rowint8: packed batches
    with context:
        if own and threads > 1 and len(order) >= 2 * threads:
            # read the pairs on `threads` threads of one torch thread each (one pair per pass,
            # or packed batches: a pair's reading is its own, so the result is the same bit
            # for bit)
            spread(read, [order[k::threads] for k in range(threads)])
        else:
            read(order)
    return out


def _read_in_order(
    net: Any,
    ids: Sequence[Sequence[int]],
    types: Sequence[Sequence[int]],
    out: np.ndarray,
    batch_size: int,
    order: Sequence[int],
) -> None:
    """Fill ``out``'s rows of the pairs in ``order``, ``batch_size`` pairs per pass."""
    import torch

    at = next(net.parameters()).device  # a training network may be on a GPU
    packed = getattr(net, "read_packed", False)
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            idx = list(order[start : start + batch_size])
            if packed:  # stance.rowint8: no padding, each pair's reading its own
                from factseek.stance.rowint8 import packed_logits

                logits = packed_logits(net, [ids[i] for i in idx], [types[i] for i in idx])
                out[idx] = torch.softmax(logits.float(), dim=-1).double().numpy()
                continue
            batch = pad([ids[i] for i in idx], [types[i] for i in idx])
            logits, _ = net(*(x.to(at) for x in batch))
            out[idx] = torch.softmax(logits.float(), dim=-1).double().cpu().numpy()


def read_config(path: str | Path) -> dict[str, Any]:
    """A stance folder's config.json, checked for kind, version and required keys."""
    cfg_path = Path(path) / CONFIG_FILE
    cfg = read_model_config(
        path,
        kind=KIND,
        version=FORMAT_VERSION,
        what="stance model",
        required=("labels", "net", "max_length", "quantize"),
    )
    if list(cfg["labels"]) != list(STANCE_LABELS):
        raise ModelError(f"{cfg_path}: labels {cfg['labels']} are not {list(STANCE_LABELS)}")
    if cfg["quantize"] not in QUANTIZE:
        raise ModelError(f"{cfg_path}: quantize must be one of {', '.join(QUANTIZE)}")
    if not (path / WEIGHTS_FILE).is_file():
        raise ModelError(f"{path}: missing {WEIGHTS_FILE}")
    return cfg


def save_model(net: Any, out: str | Path, config: dict[str, Any]) -> Path:
    """Write ``config`` (completed with kind, version and labels) and ``net``'s adapter (fp16)."""
    from safetensors.torch import save_file

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    state = {k: v.half().contiguous() for k, v in net.adapter_state().items()}
    with atomic_path(out / WEIGHTS_FILE, suffix=".safetensors") as tmp:
        save_file(state, str(tmp), metadata={"format": "pt", "kind": KIND})
    cfg = {
        "format_version": FORMAT_VERSION,
        "kind": KIND,
        "labels": list(STANCE_LABELS),
        **config,
        "n_parameters": int(sum(v.numel() for v in state.values())),
    }
    atomic_write(out / CONFIG_FILE, json.dumps(cfg, indent=2, ensure_ascii=False) + "\n")
    return out


def quantize_int8(net: Any, mode: str = "int8") -> Any:
    """Dynamic int8 quantisation of every linear map (``mode="int8"``) or of every one but the
    layers' feed-forward output maps (``"int8-mixed"``), in place (``net`` itself is changed:
    no copy of the embeddings): weights int8 with one scale per output channel (per-tensor
    scales cost accuracy, per-channel nothing measurable: docs/stance.md), activations
    quantised per batch."""
    import torch
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    from factseek.stance.kept_net import int8_maps

    spec = dict.fromkeys(int8_maps(net, mode), per_channel_dynamic_qconfig)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return quantize_dynamic(net, spec, dtype=torch.qint8, inplace=True)


def _torch_net(config: Any, weights: Path, mode: str) -> Any:
    """The torch ``StanceNet`` of ``config`` with the adapter in ``weights`` folded in (and
    quantised to int8 when ``mode`` says so), in eval mode."""
    try:
        import torch  # noqa: F401
        from safetensors.torch import load_file
    except ImportError as e:
        raise MissingDependency(e.name or "torch", "dense", "the stance model") from None

    from factseek.stance.model import StanceNet

    net = StanceNet.from_base(config)
    try:
        state = load_file(str(weights))
    except Exception as e:  # safetensors raises its own error types
        raise ModelError(f"{weights}: unreadable ({e})") from None
    net.load_adapter(state)
    net.merge().eval()
    if mode == ROWS:
        from factseek.stance.rowint8 import quantize_rows_net

        return quantize_rows_net(net)
    return quantize_int8(net, mode) if mode in INT8_MODES else net


class Deferred:
    """A network built on its first use, once, whichever copy of a model asks first (a model
    whose every pair is in its reading cache never builds it: ``stance.readings``)."""

    def __init__(self, build: Callable[[], Any]) -> None:
        self._build: Callable[[], Any] | None = build
        self._net: Any = None
        self._lock = threading.Lock()

    @classmethod
    def ready(cls, net: Any) -> Deferred:
        made = cls(lambda: net)
        made.get()
        return made

    @property
    def built(self) -> bool:
        return self._build is None

    def get(self) -> Any:
        with self._lock:
            if self._build is not None:
                self._net = self._build()  # an error leaves it unbuilt: the next use retries
                self._build = None
            return self._net


class CrossEncoderStance:
    """``StanceModel`` over a trained stance folder (see the module docstring)."""

    def __init__(
        self,
        *,
        net: Any,
        tokenizer: Any,
        max_length: int,
        thresholds: Thresholds | None,
        name: str,
        config: dict[str, Any] | None = None,
        batch_size: int = BATCH_SIZE,
        calibration: Calibration | None = None,
        readings: ReadingCache | None = None,
        folder: Path | None = None,
    ) -> None:
        self._net = net if isinstance(net, Deferred) else Deferred.ready(net)
        self.readings = readings
        self.folder = folder
        self.tokenizer = tokenizer
        self.max_length = int(max_length)
        self.thresholds = check_thresholds(thresholds)
        self.name = name
        self.config = dict(config or {})
        self.batch_size = batch_size
        self.calibration = calibration or Calibration()

    @classmethod
    def load(
        cls,
        path: str | Path,
        *,
        quantize: str | None = None,
        name: str | None = None,
        engine: str = "numpy",
    ) -> CrossEncoderStance:
        """Open a stance folder offline; ``quantize`` (``QUANTIZE``) overrides its config.
        ``engine``: "numpy" (default; ``stance.npnet``, no torch import) or "torch" (the
        network training uses). Raises ``MissingDependency`` when the ``dense`` extra (the
        MiniLM base, tokenizers, safetensors; torch for the torch engine) is absent."""
        from factseek.stance.netconfig import NetConfig, base_kind, load_tokenizer

        if engine not in ENGINES:
            raise ModelError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
        path = Path(path)
        cfg = read_config(path)
        mode = quantize or cfg["quantize"]
        if mode not in QUANTIZE:
            raise ModelError(f"quantize must be one of {', '.join(QUANTIZE)}, got {mode!r}")
        try:
            net_config = NetConfig(**cfg["net"])
        except TypeError as e:
            raise ModelError(f"{path}: bad 'net' section ({e})") from None
        from factseek.stance.npnet import NumpyStanceNet, reads  # numpy only: no torch import

        if engine == "numpy" and not reads(base_kind(net_config.base), mode):
            engine = "torch"  # an MPNet base, or int8-mixed maps
        if engine == "numpy":
            net: Any = NumpyStanceNet.load(net_config, path / WEIGHTS_FILE, quantize=mode)
        else:  # built on the first pair it must read (2-3 s with torch's import, for MPNet)
            for module in ("torch", "safetensors"):
                if importlib.util.find_spec(module) is None:
                    raise MissingDependency(module, "dense", "the stance model")
            build = partial(_torch_net, net_config, path / WEIGHTS_FILE, mode)
            if mode in INT8_MODES:  # kept on disk once built (stance.kept_net)
                from factseek.stance.kept_net import built

                build = partial(built, net_config, path / WEIGHTS_FILE, mode, build)
            net = Deferred(build)
        tokenizer = load_tokenizer(net_config.base, int(cfg["max_length"]))
        return cls(
            net=net,
            tokenizer=tokenizer,
            max_length=int(cfg["max_length"]),
            thresholds=cfg.get("thresholds"),
            name=name or f"stance:{cfg.get('name') or path.name}",
            config={**cfg, "quantize": mode, "engine": engine},
            batch_size=INT8_BATCH_SIZE if mode in INT8_MODES else BATCH_SIZE,
            calibration=Calibration.from_dict(cfg.get("calibration")),
            folder=path,
        )

    @property
    def net(self) -> Any:
        """The network (built now if it was not yet: ``Deferred``)."""
        return self._net.get()

    def with_readings(self, directory: str | Path | None) -> CrossEncoderStance:
        """The same model keeping its readings under ``directory`` (``stance.readings``; None:
        none kept). A model not loaded from a folder has no key to keep them under: itself."""
        if directory is None:
            return self._copy(readings=None) if self.readings is not None else self
        if self.folder is None:
            return self
        from factseek.stance.readings import kept_readings

        return self._copy(readings=kept_readings(directory, self._reading_key))

    @functools.cached_property
    def _reading_key(self) -> str:
        """``readings.model_key`` of this model, hashed once (a server asks at every check)."""
        from factseek.stance.netconfig import NetConfig, resolve_base
        from factseek.stance.readings import model_key

        assert self.folder is not None
        base = resolve_base(NetConfig(**self.config["net"]).base)
        return model_key(self.folder, self.config, base, str(self.config.get("engine", "")))

    def _copy(self, **changes: Any) -> CrossEncoderStance:
        kwargs: dict[str, Any] = {
            "net": self._net,
            "tokenizer": self.tokenizer,
            "max_length": self.max_length,
            "thresholds": self.thresholds,
            "name": self.name,
            "config": self.config,
            "batch_size": self.batch_size,
            "calibration": self.calibration,
            "readings": self.readings,
            "folder": self.folder,
        }
        return CrossEncoderStance(**{**kwargs, **changes})

    def with_thresholds(
        self, thresholds: Thresholds | None, calibration: Calibration | None = None
    ) -> CrossEncoderStance:
        """The same network with other thresholds (None: arg-max) and, when given, another
        calibration map."""
        return self._copy(thresholds=thresholds, calibration=calibration or self.calibration)

    def raw_probabilities(self, pairs: Sequence[Pair]) -> np.ndarray:
        """float64 (len(pairs), 3) softmax of (supports, refutes, nei) before calibration."""
        if not pairs:
            return np.zeros((0, len(STANCE_LABELS)))
        ids, types = tokenize(self.tokenizer, pairs)
        if self.readings is None:
            return read_probabilities(self.net, ids, types, self.batch_size)
        keys = self.readings.keys(ids, types)
        kept = self.readings.get(keys)
        todo = list({key: k for k, key in enumerate(keys) if key not in kept}.values())
        if todo:
            read = read_probabilities(
                self.net, [ids[k] for k in todo], [types[k] for k in todo], self.batch_size
            )
            new = {keys[k]: row for k, row in zip(todo, read, strict=True)}
            self.readings.put(new)
            kept.update(new)
        return np.stack([kept[key] for key in keys])

    def probabilities(self, pairs: Sequence[Pair]) -> np.ndarray:
        """float64 (len(pairs), 3) calibrated probabilities of (supports, refutes, nei), in
        input order (``stance.calibrate``; the raw softmax for a model without a map)."""
        return self.calibration.apply(self.raw_probabilities(pairs))

    def classify(self, pairs: Sequence[Pair]) -> list[StanceResult]:
        probs = self.probabilities(pairs)
        labels = decide_many(probs, self.thresholds) if len(pairs) else []
        return [
            StanceResult(
                label=STANCE_LABELS[int(k)],
                probs={lab: round(float(p), 6) for lab, p in zip(STANCE_LABELS, row, strict=True)},
                model=self.name,
            )
            for k, row in zip(labels, probs, strict=True)
        ]
