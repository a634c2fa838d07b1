"""int8 maps with one activation scale per token, and pairs read packed: ``quantize: "int8-rows"``.

Torch's dynamic int8 (``crossencoder.quantize_int8``) quantises each map's input with one scale
per forward pass, so pairs read together would take each other's range and an int8 model reads
one pair per pass. Here each token's row of a map's input gets its own symmetric scale (max |x|
/ 127), the int8 row times the int8 weights (one scale per output channel, max |w| / 127) is
summed exactly in int32 (``torch._int_mm``), and the sum is scaled back by row scale x channel
scale, plus the bias. A token's output then depends on that token's input alone, and every map
of every layer can be int8 (the MPNet feed-forward output maps too: their outliers are a few
tokens', and those tokens get their own range; docs/stance.md "The MPNet model").

Pairs are read ``BATCH_SIZE`` at a time **packed** (``packed_logits``): the tokens of all pairs
of a batch in one (tokens, hidden) matrix, no padding; the maps, norms and GELU run on the whole
matrix (row by row), attention and the head on each pair's own rows. So a pair's reading is the
same, bit for bit, alone or in any batch (tested), and a kept reading (``stance.readings``) is
the reading itself. The query, key and value maps share one quantisation of their input.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

LEVELS = 127.0  # symmetric: -127..127 (so -x reads as exactly minus x)
TINY = 1e-12  # the scale of an all-zero row (its int8 row is zero either way)
MAPS = ("query", "key", "value", "attn_out", "ffn_in", "ffn_out")


def quantize_rows(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(m, k) float -> ((m, k) int8, (m, 1) float32 scales) with x ~ int8 * scale, row by row."""
    top, bottom = x.amax(-1, keepdim=True), x.amin(-1, keepdim=True)  # faster than |x|'s max
    amax = torch.maximum(top, bottom.neg_()).clamp_(min=TINY)
    return x.mul(LEVELS / amax).round_().to(torch.int8), amax / LEVELS


class RowInt8Linear(nn.Module):
    """An ``nn.Linear`` read in int8 with one activation scale per row (module docstring)."""

    def __init__(self, linear: nn.Linear) -> None:
        super().__init__()
        w = linear.weight.detach().float()
        scale = w.abs().amax(1).clamp(min=TINY) / LEVELS  # (out,)
        q = (w / scale[:, None]).round_().clamp_(-LEVELS, LEVELS).to(torch.int8)
        self.register_buffer("weight_t", q.t())  # (in, out), column-major: _int_mm's fast layout
        self.register_buffer("scale", scale)
        bias = linear.bias if linear.bias is not None else torch.zeros(w.shape[0])
        self.register_buffer("bias", bias.detach().float())
        self.in_features, self.out_features = w.shape[1], w.shape[0]

    def product(self, q: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
        """The map of rows already quantised (``quantize_rows``): (m, in) -> (m, out) float."""
        acc = torch._int_mm(q, self.weight_t)  # exact int32 sums
        return acc.float().mul_(scales).mul_(self.scale).add_(self.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.reshape(-1, x.shape[-1]).float()
        return self.product(*quantize_rows(rows)).reshape(*x.shape[:-1], self.out_features)


def quantize_rows_net(net: nn.Module) -> nn.Module:
    """Every layer's six maps of a ``StanceNet`` -> ``RowInt8Linear``, in place (the head stays
    fp32); ``net`` is marked to be read packed (``packed_logits``)."""
    with torch.no_grad():
        for layer in net.layers:  # type: ignore[attr-defined]
            for name in MAPS:
                setattr(layer, name, RowInt8Linear(getattr(layer, name)))
    net.read_packed = True  # type: ignore[assignment]
    return net


def _qkv(layer: nn.Module, x: torch.Tensor) -> list[torch.Tensor]:
    maps = [layer.query, layer.key, layer.value]
    if all(isinstance(m, RowInt8Linear) for m in maps):
        q, scales = quantize_rows(x)  # one quantisation for the three maps of the same input
        return [m.product(q, scales) for m in maps]  # type: ignore[operator]
    return [m(x) for m in maps]


def _layer(
    layer: nn.Module, x: torch.Tensor, spans: Sequence[tuple[int, int]], masks: list
) -> torch.Tensor:
    """One layer over packed rows (tokens, hidden): attention within each pair's span."""
    h = x.shape[1]
    heads = int(layer.heads)  # type: ignore[arg-type]
    q, k, v = _qkv(layer, x)
    parts = []
    for (start, end), mask in zip(spans, masks, strict=True):
        n = end - start
        qi, ki, vi = (t[start:end].view(1, n, heads, h // heads).transpose(1, 2) for t in (q, k, v))
        a = F.scaled_dot_product_attention(qi, ki, vi, attn_mask=mask)  # (1, heads, n, hd)
        parts.append(a.transpose(1, 2).reshape(n, h))
    x = layer.attn_norm(x + layer.attn_out(torch.cat(parts)))
    return layer.ffn_norm(x + layer.ffn_out(F.gelu(layer.ffn_in(x))))


def packed_logits(
    net: nn.Module, ids: Sequence[Sequence[int]], types: Sequence[Sequence[int]]
) -> torch.Tensor:
    """(len(ids), n_labels) logits of a ``StanceNet`` (eval mode, CPU) over tokenised pairs, read
    packed: each pair's logits are what it gets read alone (module docstring)."""
    lengths = [len(row) for row in ids]
    spans, at = [], 0
    for n in lengths:
        spans.append((at, at + n))
        at += n
    flat = torch.tensor([t for row in ids for t in row], dtype=torch.long)
    kinds = torch.tensor([t for row in types for t in row], dtype=torch.long)
    if net.token_type is None:  # MPNet: positions from pad + 1 on, as its tokenizer pads
        positions = torch.cat([torch.arange(1, n + 1) for n in lengths]) + net.pad_id
    else:
        positions = torch.cat([torch.arange(n) for n in lengths])
    x = net.embed(flat, positions, kinds)  # (tokens, hidden)
    masks: dict[int, torch.Tensor | None] = {}
    for n in set(lengths):  # BERT: no mask (no padding); MPNet: its relative-position bias
        masks[n] = None if net.relative_bias is None else net.attention_mask(torch.ones(1, n))
    per_pair = [masks[n] for n in lengths]
    for layer in net.layers:
        x = _layer(layer, x, spans, per_pair)
    return torch.cat([net.head(x[start:end].mean(0, keepdim=True)) for start, end in spans])


__all__ = ["RowInt8Linear", "packed_logits", "quantize_rows", "quantize_rows_net"]
