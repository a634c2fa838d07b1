"""Post-norm BERT layers in numpy, for the models that read text without torch.

Two networks use these: the rewriter's sentence encoder (``rewrite/edits/npencoder.py``) and the
stance cross-encoder (``stance/npnet.py``). Importing torch costs seconds of CPU on a small
machine, more than most calls spend reading; numpy is already loaded. float32 throughout, with
exact GELU (``erf`` below) as the checkpoints were trained with.

``layer(x, weights, linear, heads, eps, mask_bias)`` is one layer; ``linear`` is how a weight map
is applied (a plain matrix product, or ``Int8Linear``'s emulation of torch's dynamic int8).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

_ERFC_COEFFS = (-0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806, 0.09678418,
                0.37409196, 1.00002368)  # fmt: skip


def erf(x: np.ndarray) -> np.ndarray:
    """erf to within 5e-7, elementwise, float32: Numerical Recipes' ``erfc`` Chebyshev fit
    (fractional error below 1.2e-7), computed in place to keep big temporaries few."""
    z = np.abs(x)
    t = np.multiply(z, 0.5, dtype=np.float32)
    t += 1.0
    np.reciprocal(t, out=t)
    p = np.multiply(t, 0.17087277, dtype=np.float32)
    for c in _ERFC_COEFFS:
        p += c
        p *= t
    p -= 1.26551223
    z *= z
    p -= z
    np.exp(p, out=p)
    p *= t  # erfc(|x|)
    np.subtract(1.0, p, out=p)
    return np.copysign(p, x, out=p)


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact GELU, ``x * (1 + erf(x / sqrt(2))) / 2``, overwriting ``x``."""
    e = erf(x * np.float32(1 / math.sqrt(2)))
    e += 1.0
    e *= 0.5
    x *= e
    return x


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return ((x - mu) / np.sqrt(var + eps)) * w + b


def blas_threads(n: int) -> Any:
    """A context that limits numpy's BLAS to ``n`` threads (threadpoolctl, when installed)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        from contextlib import nullcontext

        return nullcontext()
    return threadpool_limits(limits=n, user_api="blas")


def mask_bias(mask: np.ndarray) -> np.ndarray:
    """(b, t) 0/1 attention mask -> (b, 1, 1, t) additive bias: 0 where a token may be attended
    to, the most negative float32 elsewhere."""
    return np.where(mask[:, None, None, :] > 0, 0.0, np.finfo(np.float32).min).astype(np.float32)


Linear = Callable[[np.ndarray, str], np.ndarray]


def dense(w: dict[str, np.ndarray]) -> Linear:
    """Plain float32 maps: ``linear(x, name) = x @ w[name + "_w"] + w[name + "_b"]`` (weights
    stored as (in, out))."""
    return lambda x, name: x @ w[name + "_w"] + w[name + "_b"]


def layer(
    x: np.ndarray,
    w: dict[str, np.ndarray],
    linear: Linear,
    heads: int,
    eps: float,
    bias: np.ndarray | None,
) -> np.ndarray:
    """One post-norm BERT layer over (b, t, h) states. ``linear(x, name)`` applies the layer's
    map ``name`` (``qkv``: query, key and value side by side; ``o``; ``i``; ``f``); ``w`` holds
    the layer norms (``n1_w``, ``n1_b``, ``n2_w``, ``n2_b``); ``bias`` is ``mask_bias``'s
    (None: every token is real)."""
    b, t, h = x.shape
    hd = h // heads
    qkv = linear(x, "qkv")  # (b, t, 3h)
    q, k, v = (qkv[..., j * h : (j + 1) * h].reshape(b, t, heads, hd).transpose(0, 2, 1, 3) for j in range(3))  # fmt: skip
    s = (q @ k.transpose(0, 1, 3, 2)) * np.float32(1 / math.sqrt(hd))  # (b, heads, t, t)
    if bias is not None:
        s += bias
    s = np.exp(s - s.max(-1, keepdims=True))
    a = (s / s.sum(-1, keepdims=True)) @ v  # (b, heads, t, hd)
    a = a.transpose(0, 2, 1, 3).reshape(b, t, h)
    x = layer_norm(x + linear(a, "o"), w["n1_w"], w["n1_b"], eps)
    f = linear(gelu(linear(x, "i")), "f")
    return layer_norm(x + f, w["n2_w"], w["n2_b"], eps)


def embed(
    emb: tuple[np.ndarray, ...], ids: np.ndarray, type_ids: np.ndarray | None, eps: float
) -> np.ndarray:
    """(b, t) token ids (and token type ids; None: all 0) -> (b, t, h) embedded states.
    ``emb``: word, position and token-type tables, then the layer norm's weight and bias."""
    word, pos, typ, nw, nb = emb
    if typ.ndim != 2 or typ.shape[1] != word.shape[1]:
        raise ValueError(f"token-type table must be (types, {word.shape[1]}), not {typ.shape}")
    t = ids.shape[1]
    types = typ[0] if type_ids is None else typ[type_ids]
    return layer_norm(word[ids] + pos[:t][None] + types, nw, nb, eps)
