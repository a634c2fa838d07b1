"""Where a stance training run starts and goes on from: the checkpoint a killed run resumes
(its adapter and optimizer moments every ``CHECKPOINT_STEPS``, under the output's work folder,
valid only for the same fingerprint), and a pre-trained model's adapter (``--init``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from factseek.errors import ConfigError
from factseek.files import atomic_write
from factseek.stance.crossencoder import WEIGHTS_FILE, read_config


def save_checkpoint(work: Path, net: Any, optimizer: Any, step: int, fp: str) -> None:
    from safetensors.torch import save_file

    from factseek.files import atomic_path

    tensors = {f"net/{k}": v for k, v in net.adapter_state().items()}
    names = {id(p): n for n, p in net.named_parameters()}
    opt_step = 0.0
    for group in optimizer.param_groups:
        for p in group["params"]:
            state = optimizer.state.get(p)
            if state:
                for key in ("exp_avg", "exp_avg_sq"):
                    tensors[f"opt/{names[id(p)]}/{key}"] = state[key].detach().cpu().clone()
                opt_step = float(state["step"])
    work.mkdir(parents=True, exist_ok=True)
    with atomic_path(work / "checkpoint.safetensors", suffix=".safetensors") as tmp:
        save_file({k: v.contiguous() for k, v in tensors.items()}, str(tmp))
    atomic_write(
        work / "checkpoint.json",
        json.dumps({"fingerprint": fp, "step": step, "opt_step": opt_step}),
    )


def load_checkpoint(work: Path, net: Any, optimizer: Any, fp: str) -> int:
    """The finished step of a matching checkpoint (0 when there is none)."""
    import torch
    from safetensors.torch import load_file

    meta_path = work / "checkpoint.json"
    if not meta_path.is_file() or not (work / "checkpoint.safetensors").is_file():
        return 0
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    if meta.get("fingerprint") != fp:
        return 0
    tensors = load_file(str(work / "checkpoint.safetensors"))
    net.load_adapter({k[4:]: v for k, v in tensors.items() if k.startswith("net/")})
    params = dict(net.named_parameters())
    for name, p in params.items():
        if f"opt/{name}/exp_avg" in tensors:
            optimizer.state[p] = {
                "step": torch.tensor(float(meta["opt_step"])),
                "exp_avg": tensors[f"opt/{name}/exp_avg"].to(p.device),
                "exp_avg_sq": tensors[f"opt/{name}/exp_avg_sq"].to(p.device),
            }
    return int(meta["step"])


def start_from(net: Any, folder: str | Path) -> None:
    """Load a trained stance folder's adapter and head into ``net`` (same base and shape): a
    pre-trained model that training goes on from."""
    from safetensors.torch import load_file

    path = Path(folder)
    mine = net.config.to_dict()
    theirs = read_config(path).get("net", {})
    shape = ("base", "layers", "ffn", "train_layers", "lora_rank", "lora_alpha", "n_labels")
    differ = [k for k in shape if theirs.get(k) != mine[k]]
    if differ:
        raise ConfigError(
            f"--init {path.name}: its network differs from this one's ({', '.join(differ[:4])})"
        )
    net.load_adapter(load_file(str(path / WEIGHTS_FILE)))
