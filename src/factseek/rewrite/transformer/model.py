"""The decision transformer that rewrites queries, in nanoGPT style (one file).

A trajectory of edits is a sequence of steps ``t = 0..T-1``; each step is three tokens,
``(R_t, s_t, a_t)``: the return-to-go (what gain is still wanted), the state (a pooled sentence
embedding of the current query) and the edit taken. The decoder is causal, so the action logits
read off the state token ``s_t`` see ``R_0..R_t, s_0..s_t, a_0..a_{t-1}`` and never ``a_t``.

Block size ``K = max_edits``: at most K steps, sequence length 3K. A trajectory of ``n < K``
edits has ``n + 1`` steps, the last one taking STOP; one of exactly K edits has K steps and stops
because the budget is spent.

Actions are discrete: ``kind * max_positions + position`` for each ``(kind, position)`` edit
(kinds in ``factseek.rewrite.environment.actions.KINDS`` order), then one STOP. Invalid actions (a position
past the query, a kind the token's part of speech does not allow) are masked to ``-inf`` with
the boolean mask the caller gives, so they can never be predicted; STOP is always allowed.

One addition to the paper (``mask_input``, on by default): the state token also embeds the action
mask. A pooled sentence embedding does not say which token sits at position p; the mask does say
how long the query is and which positions are verbs, content words or stop words, which is what
a (kind, position) decision needs to generalise to unseen claims.

Two more, both optional: ``pointer_head`` scores each (kind, position) as a dot product between a
per-kind query read off the state token and features of position p, with parameters shared
across positions; ``word_dim > 0`` (needs the pointer head) adds to those features the encoder's
vectors of the word at p and of the word SWAP/ADD would write there, so the decision can depend
on the word itself (``forward(..., words=...)``; ``editor.WordVectors`` builds them).

torch is imported when this module is; import it only where a model is built.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from factseek.errors import ModelError
from factseek.files import atomic_path, atomic_write

#: Targets equal to this are ignored by the loss (padding after a trajectory ends).
IGNORE = -100

FORMAT_VERSION = 1
MODEL_KIND = "factseek-decision-transformer"
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"


@dataclass(frozen=True, kw_only=True)
class DTConfig:
    """Shape of a decision transformer. ``state_dim`` must match the sentence encoder."""

    n_layer: int = 2
    n_head: int = 4
    n_embd: int = 128
    dropout: float = 0.1
    bias: bool = True
    max_edits: int = 4  # K: block size in steps; the token sequence is 3K long
    max_positions: int = 48  # query tokens an edit can address (longer queries: the first ones)
    n_kinds: int = 4  # len(actions.KINDS)
    state_dim: int = 384  # MiniLM; 768 for all-mpnet-base-v2
    mask_input: bool = True  # the state token also sees the action mask (not in the paper)
    pointer_head: bool = (
        False  # score (kind, position) against per-position features (not in the paper)
    )
    word_dim: int = (
        0  # > 0: the pointer head also sees each position's word vectors (not in the paper)
    )

    def __post_init__(self) -> None:
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd={self.n_embd} is not a multiple of n_head={self.n_head}")
        if min(self.max_edits, self.max_positions, self.n_kinds, self.state_dim) < 1:
            raise ValueError("max_edits, max_positions, n_kinds and state_dim must be positive")
        if self.word_dim < 0 or (self.word_dim and not self.pointer_head):
            raise ValueError("word_dim must be >= 0, and > 0 only with pointer_head")

    @property
    def n_actions(self) -> int:
        """Output classes: every (kind, position) plus STOP."""
        return self.n_kinds * self.max_positions + 1

    @property
    def stop_index(self) -> int:
        return self.n_kinds * self.max_positions

    @property
    def pad_index(self) -> int:
        """Input-only action id for steps whose action is not known (yet)."""
        return self.n_actions

    @property
    def block_size(self) -> int:
        """Tokens in the longest sequence: 3K."""
        return 3 * self.max_edits

    def to_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> DTConfig:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})  # type: ignore[arg-type]


#: The paper's decoder: 6 layers, 8 heads, 768-d (state: all-mpnet-base-v2, 768-d).
PAPER = DTConfig(n_layer=6, n_head=8, n_embd=768, dropout=0.1, state_dim=768)
#: A CPU-sized model for tests, laptops and shared machines (~0.5M parameters).
SMALL = DTConfig(n_layer=2, n_head=4, n_embd=128, dropout=0.1, state_dim=384)
PRESETS: dict[str, DTConfig] = {"small": SMALL, "paper": PAPER}


def encode_action(kind_index: int, position: int, cfg: DTConfig) -> int:
    """The class id of edit ``(kind, position)``."""
    if not (0 <= kind_index < cfg.n_kinds and 0 <= position < cfg.max_positions):
        raise ValueError(f"action ({kind_index}, {position}) outside the model's action space")
    return kind_index * cfg.max_positions + position


def decode_action(index: int, cfg: DTConfig) -> tuple[int, int] | None:
    """``(kind_index, position)`` of a class id, or None for STOP."""
    if index == cfg.stop_index:
        return None
    if not 0 <= index < cfg.stop_index:
        raise ValueError(f"action id {index} outside the model's action space")
    return divmod(index, cfg.max_positions)


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: DTConfig) -> None:
        super().__init__()
        self.n_head = cfg.n_head
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.bias)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        self.dropout = cfg.dropout
        self.resid_drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, L, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        # (B, L, C) -> (B, n_head, L, C // n_head)
        q, k, v = (t.view(B, L, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(
            q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True
        )
        y = y.transpose(1, 2).contiguous().view(B, L, C)  # back to (B, L, C)
        return self.resid_drop(self.proj(y))


class Block(nn.Module):
    def __init__(self, cfg: DTConfig) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.attn = CausalSelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.mlp = nn.Sequential(
            nn.Linear(cfg.n_embd, 4 * cfg.n_embd, bias=cfg.bias),
            nn.GELU(),
            nn.Linear(4 * cfg.n_embd, cfg.n_embd, bias=cfg.bias),
            nn.Dropout(cfg.dropout),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class DecisionTransformer(nn.Module):
    """GPT decoder over interleaved (return-to-go, state, action) tokens."""

    def __init__(self, cfg: DTConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.embed_rtg = nn.Linear(1, cfg.n_embd)
        self.embed_state = nn.Linear(cfg.state_dim, cfg.n_embd)
        # which edits the query allows: its length and each token's part-of-speech class
        self.embed_mask = (
            nn.Linear(cfg.n_actions, cfg.n_embd, bias=False) if cfg.mask_input else None
        )
        self.embed_action = nn.Embedding(cfg.n_actions + 1, cfg.n_embd)  # + pad
        self.embed_timestep = nn.Embedding(cfg.max_edits, cfg.n_embd)
        self.embed_type = nn.Embedding(3, cfg.n_embd)  # which of R, s, a a token is
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        if cfg.pointer_head:
            # logit(kind, p) = <query_kind(h), features(p)>: parameters shared across positions
            self.tok_proj = nn.Linear(cfg.n_kinds, cfg.n_embd)
            self.tok_pos = nn.Embedding(cfg.max_positions, cfg.n_embd)
            # the word at p and the word SWAP/ADD would put there: (2 * word_dim) -> C
            self.word_proj = (
                nn.Sequential(
                    nn.Linear(2 * cfg.word_dim, cfg.n_embd),
                    nn.GELU(),
                    nn.Linear(cfg.n_embd, cfg.n_embd),
                )
                if cfg.word_dim
                else None
            )
            self.kind_query = nn.Linear(cfg.n_embd, cfg.n_kinds * cfg.n_embd)
            self.stop_head = nn.Linear(cfg.n_embd, 1)
        else:
            self.head = nn.Linear(cfg.n_embd, cfg.n_actions, bias=False)
        self.apply(self._init_weights)
        for name, p in self.named_parameters():  # GPT-2 scaled init of residual projections
            if name.endswith("proj.weight") or name.endswith("mlp.2.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * cfg.n_layer))

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def _pointer(
        self, h: torch.Tensor, masks: torch.Tensor | None, words: torch.Tensor | None
    ) -> torch.Tensor:
        cfg = self.cfg
        B, T, C = h.shape
        K, P = cfg.n_kinds, cfg.max_positions
        if masks is None:
            feats = h.new_zeros(B, T, P, K)
        else:  # which kinds each position allows: (B, T, K*P) -> (B, T, P, K)
            feats = masks[..., : K * P].reshape(B, T, K, P).transpose(2, 3).to(h.dtype)
        tok = self.tok_proj(feats) + self.tok_pos.weight  # (B, T, P, C)
        if self.word_proj is not None:
            if words is None:
                raise ValueError("this model needs word vectors (words=...)")
            tok = tok + self.word_proj(words)  # (B, T, P, 2 * word_dim) -> (B, T, P, C)
        q = self.kind_query(h).view(B, T, K, C)  # (B, T, K, C)
        kp = torch.einsum("btkc,btpc->btkp", q, tok) / math.sqrt(C)  # (B, T, K, P)
        return torch.cat((kp.reshape(B, T, K * P), self.stop_head(h)), dim=-1)

    def forward(
        self,
        rtg: torch.Tensor,
        states: torch.Tensor,
        actions: torch.Tensor,
        timesteps: torch.Tensor,
        masks: torch.Tensor | None = None,
        targets: torch.Tensor | None = None,
        words: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Action logits at every step, and the cross-entropy loss when ``targets`` are given.

        rtg (B, T) float; states (B, T, state_dim) float; actions (B, T) long, the action
        taken at each step (``pad_index`` where unknown; only earlier steps' actions are seen);
        timesteps (B, T) long in [0, K); masks (B, T, n_actions) bool, True = allowed (None:
        no masking); targets (B, T) long, ``IGNORE`` on padded steps; words
        (B, T, max_positions, 2 * word_dim) float, each position's word vector and that of the
        word SWAP/ADD would insert (zeros where none), needed when ``word_dim > 0``.
        Returns logits (B, T, n_actions), invalid actions at -inf, and the mean loss or None.
        """
        cfg = self.cfg
        B, T = actions.shape
        if cfg.max_edits < T:
            raise ValueError(f"{T} steps exceed the block size K={cfg.max_edits}")
        t_emb = self.embed_timestep(timesteps)  # (B, T, C)
        r = self.embed_rtg(rtg.unsqueeze(-1)) + t_emb  # (B, T, 1) -> (B, T, C)
        s = self.embed_state(states) + t_emb  # (B, T, state_dim) -> (B, T, C)
        if self.embed_mask is not None and masks is not None:
            s = s + self.embed_mask(masks.to(s.dtype))  # (B, T, n_actions) -> (B, T, C)
        a = self.embed_action(actions) + t_emb  # (B, T) -> (B, T, C)
        x = torch.stack((r, s, a), dim=2) + self.embed_type.weight  # (B, T, 3, C)
        x = x.reshape(B, 3 * T, cfg.n_embd)  # interleaved R_0 s_0 a_0 R_1 ... : (B, 3T, C)
        x = self.drop(x)
        for block in self.blocks:
            x = block(x)
        x = self.ln_f(x)
        h = x[:, 1::3]  # the state tokens: (B, T, C)
        logits = (
            self._pointer(h, masks, words) if cfg.pointer_head else self.head(h)
        )  # (B, T, n_actions)
        if masks is not None:
            stop = torch.tensor([cfg.stop_index], device=masks.device)
            allowed = masks.index_fill(-1, stop, True)  # STOP always allowed: no all--inf row
            logits = logits.masked_fill(~allowed, float("-inf"))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(
                logits.reshape(B * T, -1), targets.reshape(B * T), ignore_index=IGNORE
            )
        return logits, loss


# ----------------------------------------------------------------------------- checkpoints


def pick_device(requested: str | None = None) -> str:
    from factseek.ml.training import training_device

    return str(training_device(requested or "auto"))


def save_checkpoint(
    out: str | Path, model: Any, *, encoder_name: str, step: int, meta: Mapping[str, Any]
) -> None:
    """Write ``config.json`` and ``model.safetensors`` to ``out``, each atomically."""
    from safetensors.torch import save_file

    out = Path(out)
    state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    with atomic_path(out / WEIGHTS_FILE) as tmp:
        save_file(state, str(tmp))
    doc = {
        "format_version": FORMAT_VERSION,
        "kind": MODEL_KIND,
        "model": model.cfg.to_dict(),
        "encoder": encoder_name,
        "step": step,
        **meta,
    }
    atomic_write(out / CONFIG_FILE, json.dumps(doc, indent=2))


def _read_config(cfg_file: Path) -> dict[str, Any]:
    """A model folder's config.json through the bounded reader; ``ModelError`` if unusable."""
    from factseek.errors import InputError
    from factseek.files import SIDE_LIMIT, read_json

    try:
        doc = read_json(cfg_file, "model config", limit=SIDE_LIMIT)
    except InputError as e:
        raise ModelError(f"unreadable model config: {e}") from None
    if not isinstance(doc, dict):
        raise ModelError(f"{cfg_file}: not a {MODEL_KIND} config")
    return doc


def update_config(path: str | Path, changes: Mapping[str, Any]) -> dict[str, Any]:
    """Merge ``changes`` into a model folder's ``config.json`` (atomically); returns the result."""
    cfg_file = Path(path) / CONFIG_FILE
    doc = _read_config(cfg_file)
    doc.update(changes)
    atomic_write(cfg_file, json.dumps(doc, indent=2))
    return doc


def load_checkpoint(path: str | Path, device: str = "cpu") -> tuple[Any, dict[str, Any]]:
    """``(model in eval mode, config.json contents)``; ModelError when incomplete or unknown."""
    from safetensors.torch import load_file

    path = Path(path)
    cfg_file, weights = path / CONFIG_FILE, path / WEIGHTS_FILE
    if not cfg_file.is_file() or not weights.is_file():
        raise ModelError(
            f"{path} is not a rewrite model folder (needs {CONFIG_FILE}, {WEIGHTS_FILE})"
        )
    doc = _read_config(cfg_file)
    if doc.get("kind") != MODEL_KIND or doc.get("format_version") != FORMAT_VERSION:
        raise ModelError(
            f"{cfg_file}: not a {MODEL_KIND} of format_version {FORMAT_VERSION}"
            f" (found {doc.get('kind')!r} v{doc.get('format_version')!r})"
        )
    model = DecisionTransformer(DTConfig.from_dict(doc["model"]))
    try:
        model.load_state_dict(load_file(str(weights), device=device))
    except (RuntimeError, OSError) as e:
        raise ModelError(f"{weights}: does not match its config ({str(e).splitlines()[0]})") from e
    return model.to(device).eval(), doc
