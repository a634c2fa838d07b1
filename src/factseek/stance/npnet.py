"""The stance network read with numpy alone: torch's readings, without importing torch.

``NumpyStanceNet.load(net_config, adapter_file, quantize=...)`` builds the network a stance folder
describes (``stance.netconfig.NetConfig``) from the pip-shipped base checkpoint and the folder's
adapter, folds each LoRA update into its map (``W + (alpha / r) B A``, as ``StanceNet.merge``) and
reads tokenised pairs (``read``) into softmax probabilities.

With ``quantize="int8"`` it computes what torch's dynamic int8 linear maps compute on x86
(``torch.ao`` ``quantize_dynamic`` with per-channel weights, the fbgemm engine), so the
thresholds and calibration map fitted on torch's readings keep their meaning:

- weights: int8, symmetric, one scale per output channel, ``scale = max|w| / 127.5``;
- activations: each map's input is quantised per pass to 7-bit unsigned integers (0..127,
  torch's ``reduce_range``) with a scale and zero point chosen from that input's range as
  PyTorch's ``ChooseQuantizationParams`` does, rounded as fbgemm's fused multiply-add rounds
  (a product rounded before the zero point is added moves values that lie near a half);
- the integer products are summed in float32, exact below 2^24 (a map's sums stay far below
  it but for extreme activations), then scaled back and the bias added in float32.

The query, key and value maps share one input, hence one activation range, and are applied as
one product. One pair is read per pass, as the torch engine does (``crossencoder``): a pair's
reading depends on that pair alone. What remains different from torch is the order of float
additions outside the maps (layer norms, attention, GELU): an activation within such a rounding
error of a half rounds the other way and moves the rest of its pass. On 1,200 test pairs the
calibrated probabilities moved by 0.005 on average and 0.25% of the labels differed
(docs/stance.md, "Two engines"; ``experiments/probe_npnet_agreement.py``).

Why: importing torch and building its network cost 2-4 CPU-s on a small 2-core machine, more than
numpy takes to read a one-claim check's few dozen pairs, though numpy reads each pair about
three times slower than torch's int8 kernels (docs/stance.md, "Two engines" and "Speed").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from factseek.errors import MissingDependency, ModelError
from factseek.ml.npbert import embed, layer, mask_bias
from factseek.stance.netconfig import LORA_TARGETS, NetConfig, kind_of, read_base

#: torch.finfo(torch.float32).eps: the smallest weight scale torch's observers allow.
_EPS = np.float32(np.finfo(np.float32).eps)
#: torch's dynamic int8 maps quantise activations to 0..127 on x86 (reduce_range).
_QMIN, _QMAX = 0, 127
_SMALL_SCALE = 6.1e-5
#: (our name, the checkpoint's name) of each linear map of a layer.
_MAPS = {
    "query": "attention.self.query",
    "key": "attention.self.key",
    "value": "attention.self.value",
    "attn_out": "attention.output.dense",
    "ffn_in": "intermediate.dense",
    "ffn_out": "output.dense",
}
_NORMS = {"attn_norm": "attention.output.LayerNorm", "ffn_norm": "output.LayerNorm"}


def activation_qparams(lo: float, hi: float) -> tuple[np.float32, int]:
    """Scale and zero point of a tensor whose values lie in [lo, hi], for 0..127 unsigned
    integers, as PyTorch's ``quant_utils::ChooseQuantizationParams`` chooses them for a dynamic
    int8 map: the range always holds 0, a scale under 6.1e-5 is raised to it, and of the zero
    points implied by either end the one with the smaller error is taken, rounded half to even (the scale is
    computed in double precision and stored as a float)."""
    lo, hi = min(float(np.float32(lo)), 0.0), max(float(np.float32(hi)), 0.0)
    scale = (hi - lo) / (_QMAX - _QMIN)
    if np.float32(scale) == 0 or not np.isfinite(np.float32(1) / np.float32(scale)):
        scale = 0.1
    if scale < _SMALL_SCALE:
        if lo == 0:
            hi = _SMALL_SCALE * (_QMAX - _QMIN)
        elif hi == 0:
            lo = -_SMALL_SCALE * (_QMAX - _QMIN)
        else:
            lo, hi = lo * (_SMALL_SCALE / scale), hi * (_SMALL_SCALE / scale)
        scale = _SMALL_SCALE
    from_min, from_max = _QMIN - lo / scale, _QMAX - hi / scale
    err_min, err_max = abs(_QMIN) - abs(lo / scale), abs(_QMAX) - abs(hi / scale)
    zp = from_min if err_min < err_max else from_max
    return np.float32(scale), int(min(max(np.rint(zp), _QMIN), _QMAX))


class Int8Map:
    """A linear map read as torch's dynamic int8 ``Linear`` reads it (module docstring)."""

    def __init__(self, weight: np.ndarray, bias: np.ndarray) -> None:
        w = weight.astype(np.float32)  # (out, in)
        amax = np.maximum(-w.min(1, initial=0.0), w.max(1, initial=0.0))  # (out,)
        scale = np.maximum(amax / np.float32(127.5), _EPS).astype(np.float32)
        q = np.clip(np.rint(w * (np.float32(1) / scale)[:, None]), -128, 127)
        self.q = np.ascontiguousarray(q.T, dtype=np.float32)  # (in, out), integer values
        self.scale = scale
        self.bias = bias.astype(np.float32)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        rows = x.reshape(-1, x.shape[-1])  # one 2-D product: numpy loops over a 3-D stack
        scale, zp = activation_qparams(rows.min(), rows.max())
        # fbgemm computes x * (1 / scale) + zp as one fused multiply-add rounded once to float32:
        # in float64 the product is exact and the sum far finer than float32, so the cast rounds
        # as it does (but for double-rounding ties)
        wide = rows.astype(np.float64)
        wide *= np.float64(np.float32(1) / scale)
        wide += zp
        qx = wide.astype(np.float32)
        np.rint(qx, out=qx)
        np.maximum(qx, _QMIN, out=qx)
        np.minimum(qx, _QMAX, out=qx)
        qx -= zp  # in -127..127
        acc = qx @ self.q  # sums of integer products (exact below 2^24)
        acc *= scale * self.scale
        acc += self.bias
        return acc.reshape(*x.shape[:-1], acc.shape[-1])


class NumpyStanceNet:
    """The stance cross-encoder over numpy arrays (module docstring)."""

    def __init__(
        self,
        config: NetConfig,
        base: dict[str, Any],
        tensors: dict[str, np.ndarray],
        adapter: dict[str, np.ndarray],
        *,
        quantize: str,
    ) -> None:
        if not reads(kind_of(base), quantize):
            raise ModelError(f"the numpy engine reads BERT bases only, with int8 or fp32 maps (not a {kind_of(base)} base, {quantize}): read it with torch")  # fmt: skip
        self.config = config
        self.heads = int(base["num_attention_heads"])
        self.eps = float(base.get("layer_norm_eps", 1e-12))
        self.int8 = quantize == "int8"
        t = {k.removeprefix("bert."): v.astype(np.float32) for k, v in tensors.items()}
        a = {k: v.astype(np.float32) for k, v in adapter.items()}
        if config.layers > int(base["num_hidden_layers"]):
            raise ModelError(f"layers={config.layers} but the base has {base['num_hidden_layers']}")  # fmt: skip
        check_adapter(a, adapter_shapes(config, base))
        try:
            self._emb = tuple(
                t[f"embeddings.{n}"]
                for n in (
                    "word_embeddings.weight",
                    "position_embeddings.weight",
                    "token_type_embeddings.weight",
                    "LayerNorm.weight",
                    "LayerNorm.bias",
                )
            )
            self._layers = [self._layer(i, t, a) for i in range(config.layers)]
            head = [(a[f"head.{j}.weight"], a[f"head.{j}.bias"]) for j in (1, 4)]
        except KeyError as e:
            raise ModelError(f"the stance base or adapter has no tensor {e.args[0]}") from None
        self._head = [self._map(w, b) for w, b in head]

    def _map(self, weight: np.ndarray, bias: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        if self.int8:
            return Int8Map(weight, bias)
        wt, b = np.ascontiguousarray(weight.T), bias
        return lambda x: x @ wt + b

    def _layer(self, i: int, t: dict[str, np.ndarray], a: dict[str, np.ndarray]) -> dict[str, Any]:
        """Layer ``i``'s maps with their adapters folded in (``StanceNet.merge``), its feed-forward
        narrowed as ``prune_ffn`` does, and its norms (the adapter's, when trained)."""
        cfg = self.config
        p = f"encoder.layer.{i}."
        w = {ours: t[p + theirs + ".weight"] for ours, theirs in _MAPS.items()}
        b = {ours: t[p + theirs + ".bias"] for ours, theirs in _MAPS.items()}
        if cfg.ffn and cfg.ffn != w["ffn_in"].shape[0]:
            kept = prune_ffn_units(w["ffn_in"], w["ffn_out"], cfg.ffn)
            w["ffn_in"], b["ffn_in"], w["ffn_out"] = w["ffn_in"][kept], b["ffn_in"][kept], w["ffn_out"][:, kept]  # fmt: skip
        trained = i >= cfg.layers - cfg.train_layers
        if trained:
            scale = np.float32(cfg.lora_alpha / cfg.lora_rank)
            for target in LORA_TARGETS:
                q = f"layers.{i}.{target}."
                w[target] = w[target] + scale * (a[q + "lora_b"] @ a[q + "lora_a"])
        norms = {}
        for j, (ours, theirs) in enumerate(_NORMS.items(), start=1):
            for k, short in (("weight", "w"), ("bias", "b")):
                norms[f"n{j}_{short}"] = a[f"layers.{i}.{ours}.{k}"] if trained else t[f"{p}{theirs}.{k}"]  # fmt: skip
        qkv_w = np.concatenate([w["query"], w["key"], w["value"]])  # (3h, h)
        qkv_b = np.concatenate([b["query"], b["key"], b["value"]])
        maps = {
            "qkv": self._map(qkv_w, qkv_b),
            "o": self._map(w["attn_out"], b["attn_out"]),
            "i": self._map(w["ffn_in"], b["ffn_in"]),
            "f": self._map(w["ffn_out"], b["ffn_out"]),
        }
        return {**norms, "maps": maps}

    @classmethod
    def load(cls, config: NetConfig, adapter_file: str | Path, *, quantize: str) -> NumpyStanceNet:
        """The network of ``config`` over its base checkpoint, with the adapter in ``adapter_file``."""
        try:
            from safetensors.numpy import load_file
        except ImportError as e:
            raise MissingDependency("safetensors", "dense", "the stance model") from e
        base, tensors = read_base(config.base, load_file)
        try:
            adapter = load_file(str(adapter_file))
        except Exception as e:  # safetensors raises its own error types
            raise ModelError(f"{adapter_file}: unreadable ({e})") from None
        return cls(config, base, tensors, adapter, quantize=quantize)

    def logits(self, ids: np.ndarray, type_ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(b, t) padded token ids, token type ids and 0/1 mask -> (b, n_labels) logits.
        With int8 every map quantises its input over the whole batch: read one pair per call."""
        x = embed(self._emb, ids, type_ids, self.eps)
        bias = None if mask.all() else mask_bias(mask)
        for w in self._layers:
            maps = w["maps"]
            x = layer(x, w, lambda v, name, maps=maps: maps[name](v), self.heads, self.eps, bias)
        m = mask[..., None].astype(np.float32)  # (b, t, 1)
        pooled = (x * m).sum(1) / np.maximum(m.sum(1), np.float32(1.0))  # (b, h)
        first, last = self._head
        return last(np.tanh(first(pooled)))

    def read(self, ids: Sequence[Sequence[int]], types: Sequence[Sequence[int]], out: np.ndarray, order: Sequence[int], batch_size: int) -> None:  # fmt: skip
        """Fill ``out``'s rows (float64 softmax) of the pairs in ``order``, ``batch_size`` per pass."""
        for start in range(0, len(order), batch_size):
            idx = list(order[start : start + batch_size])
            width = max(len(ids[i]) for i in idx)
            tok = np.zeros((len(idx), width), np.int64)
            typ = np.zeros_like(tok)
            mask = np.zeros_like(tok)
            for row, i in enumerate(idx):
                n = len(ids[i])
                tok[row, :n], typ[row, :n], mask[row, :n] = ids[i], types[i], 1
            z = self.logits(tok, typ, mask).astype(np.float64)
            z = np.exp(z - z.max(-1, keepdims=True))
            out[idx] = z / z.sum(-1, keepdims=True)


def reads(kind: str, quantize: str) -> bool:
    """Whether this engine reads a model of a ``kind`` of base (``netconfig.kind_of``) with
    maps ``quantize``: BERT bases, int8 or fp32 (torch reads the rest)."""
    return kind == "bert" and quantize in ("int8", "none")


def adapter_shapes(config: NetConfig, base: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """Name -> shape of every tensor a trained adapter of ``config`` holds (``StanceNet``'s
    trainable parameters: adapters and norms of the trained layers, the head)."""
    h, r = int(base["hidden_size"]), config.lora_rank
    ffn = config.ffn or int(base["intermediate_size"])
    sizes = {t: (h, h) for t in ("query", "key", "value", "attn_out")} | {"ffn_in": (h, ffn), "ffn_out": (ffn, h)}  # fmt: skip
    out: dict[str, tuple[int, ...]] = {}
    for i in range(config.layers - config.train_layers, config.layers):
        for target, (n_in, n_out) in sizes.items():
            out[f"layers.{i}.{target}.lora_a"] = (r, n_in)
            out[f"layers.{i}.{target}.lora_b"] = (n_out, r)
        for norm in _NORMS:
            out[f"layers.{i}.{norm}.weight"] = out[f"layers.{i}.{norm}.bias"] = (h,)
    out |= {"head.1.weight": (h, h), "head.1.bias": (h,)}
    out |= {"head.4.weight": (config.n_labels, h), "head.4.bias": (config.n_labels,)}
    return out


def check_adapter(adapter: dict[str, np.ndarray], shapes: dict[str, tuple[int, ...]]) -> None:
    """``ModelError`` unless ``adapter`` holds exactly the tensors of ``shapes``, shaped so."""
    missing, extra = sorted(set(shapes) - set(adapter)), sorted(set(adapter) - set(shapes))
    if missing or extra:
        raise ModelError(
            f"adapter does not fit this network (missing {missing[:3]}, unexpected {extra[:3]})"
        )
    for name, shape in shapes.items():
        if tuple(adapter[name].shape) != shape:
            raise ModelError(f"adapter tensor {name} has shape {tuple(adapter[name].shape)}, expected {shape}")  # fmt: skip


def prune_ffn_units(w_in: np.ndarray, w_out: np.ndarray, keep: int) -> np.ndarray:
    """The indices (in the base's order) of the ``keep`` feed-forward units with the largest
    ``|W_in[j, :]| * |W_out[:, j]|``, as ``stance.model.prune_ffn`` chooses them."""
    score = np.linalg.norm(w_in, axis=1) * np.linalg.norm(w_out, axis=0)
    return np.sort(np.argsort(-score, kind="stable")[:keep])


__all__ = [
    "Int8Map",
    "NumpyStanceNet",
    "activation_qparams",
    "adapter_shapes",
    "check_adapter",
    "prune_ffn_units",
]
