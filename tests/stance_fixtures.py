"""Tiny random checkpoints for the stance network's tests: a BERT folder and an MPNet one, each
with ``config.json``, ``model.safetensors`` (Hugging Face's tensor names) and ``tokenizer.json``."""

from __future__ import annotations

import json
from pathlib import Path

WORDS = ["the", "sky", "is", "blue", "not", "red", "grass", "green", "moon", "cheese", "made", "of"]
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, "?", "."]
#: issue 23's two user cases: (question, evidence, the right label)
USER_CASES = [
    (
        "The Elm Street Bridge reopened in May 2023 after being closed for 14 months.",
        "The Elm Street Bridge reopened to traffic Monday afternoon, 14 months after it closed.",
        "supports",
    ),
    (
        "Have water bills risen 40 percent?",
        "40 percent is the fixed charge, not the bill.",
        "refutes",
    ),
]
#: a layer's linear maps, by kind of checkpoint: our name's checkpoint name
LAYER_MAPS = {
    "bert": (
        "attention.self.query",
        "attention.self.key",
        "attention.self.value",
        "attention.output.dense",
    ),
    "mpnet": ("attention.attn.q", "attention.attn.k", "attention.attn.v", "attention.attn.o"),
}
LAYER_NORMS = {
    "bert": ("attention.output.LayerNorm", "output.LayerNorm"),
    "mpnet": ("attention.LayerNorm", "output.LayerNorm"),
}


def tiny_checkpoint(root: Path, kind: str = "bert", *, hidden: int = 16, ffn: int = 32) -> Path:
    """A random 2-layer, 2-head checkpoint of ``kind`` ("bert" or "mpnet") in ``root``."""
    import torch
    from safetensors.torch import save_file
    from tokenizers.implementations import BertWordPieceTokenizer

    BertWordPieceTokenizer({w: i for i, w in enumerate(VOCAB)}, lowercase=True).save(
        str(root / "tokenizer.json")
    )
    h, layers, heads, mpnet = hidden, 2, 2, kind == "mpnet"
    cfg = {
        "hidden_size": h,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "intermediate_size": ffn,
        "vocab_size": len(VOCAB),
        "max_position_embeddings": 64,
    }
    if mpnet:
        cfg |= {"model_type": "mpnet", "relative_attention_num_buckets": 32, "pad_token_id": 1}
        cfg |= {"layer_norm_eps": 1e-5, "hidden_act": "gelu"}
    else:
        cfg |= {"type_vocab_size": 2, "layer_norm_eps": 1e-12}
    (root / "config.json").write_text(json.dumps(cfg))
    g = torch.Generator().manual_seed(0)
    t = {
        "embeddings.word_embeddings.weight": torch.randn(len(VOCAB), h, generator=g),
        "embeddings.position_embeddings.weight": torch.randn(64, h, generator=g)
        * (0.3 if mpnet else 0.1),
    }
    if mpnet:
        t["encoder.relative_attention_bias.weight"] = torch.randn(32, heads, generator=g)
    else:
        t["embeddings.token_type_embeddings.weight"] = torch.randn(2, h, generator=g) * 0.1
    t["embeddings.LayerNorm.weight"] = torch.ones(h)
    t["embeddings.LayerNorm.bias"] = torch.zeros(h)
    shapes = {name: (h, h) for name in LAYER_MAPS[kind]}
    shapes |= {"intermediate.dense": (ffn, h), "output.dense": (h, ffn)}
    for i in range(layers):
        for name, shape in shapes.items():
            t[f"encoder.layer.{i}.{name}.weight"] = torch.randn(*shape, generator=g) * (0.3 if mpnet else 0.2)  # fmt: skip
            bias = torch.randn(shape[0], generator=g) * 0.1 if mpnet else torch.zeros(shape[0])
            t[f"encoder.layer.{i}.{name}.bias"] = bias
        for norm in LAYER_NORMS[kind]:
            t[f"encoder.layer.{i}.{norm}.weight"] = torch.ones(h)
            t[f"encoder.layer.{i}.{norm}.bias"] = torch.zeros(h)
    save_file(t, str(root / "model.safetensors"))
    return root
