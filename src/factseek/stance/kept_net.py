"""Built int8 stance networks kept on disk: a torch int8 network is built once, not per process.

Building the torch network of a stance model reads the whole base checkpoint (440 MB for
all-mpnet-base-v2), folds the adapter into its maps and quantises them to int8, every time a
process first reads a pair (a one-claim ``check`` pays it in full; docs/stance.md, Speed, has
the demo's cost with and without it). ``built(config, weights, mode, build)`` keeps the result
instead:
the first build writes the network's state (int8 maps with their per-channel scales, the
fp32 embeddings, norms and the maps left fp32) to ``<cache>/stance-nets/<key>.pt``, and a later
process builds an empty network of the same shape, puts torch's dynamic int8 maps where
``quantize_int8`` puts them and loads the state into it (memory-mapped).
The loaded network is the built one tensor for tensor, so it reads every pair alike, bit for
bit, and readings kept under the model's key (``stance.readings``) stay valid.

The key is the adapter's bytes, the network's settings, the quantisation mode, torch's version
and the base checkpoint's path, size and modification time: any of them changed is another
network. Only torch's dynamic int8 modes (``int8``, ``int8-mixed``) are kept; at most ``KEEP``
networks (the least recently used go first; about 270 MB each for ``mpnet``'s ``int8-mixed``).
A file that cannot be read is built again and replaced, with one warning; a folder that cannot
be written to leaves the network built in memory only. Delete the folder to empty it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from factseek.files import SIDE_LIMIT, atomic_path, cache_root, read_json
from factseek.stance.netconfig import NetConfig, resolve_base

__all__ = ["DIR", "KEEP", "built", "int8_maps", "net_key"]

log = logging.getLogger(__name__)

DIR = "stance-nets"
KEEP = 2
FORMAT = 1


def int8_maps(net: Any, mode: str) -> list[str]:
    """The names of ``net``'s linear maps that torch's dynamic int8 quantises in ``mode``:
    every one (``int8``), or every one but the layers' feed-forward output maps
    (``int8-mixed``)."""
    import torch

    return [
        name
        for name, m in net.named_modules()
        if isinstance(m, torch.nn.Linear)
        and not (mode == "int8-mixed" and name.endswith("ffn_out"))
    ]


def net_key(config: NetConfig, weights: Path, mode: str) -> str:
    """What makes two builds of a stance network the same network (module docstring)."""
    import torch

    h = hashlib.sha256(weights.read_bytes())
    base = resolve_base(config.base) / "model.safetensors"
    stat = base.stat() if base.exists() else None
    settings = {
        "format": FORMAT,
        "net": dataclasses.asdict(config),
        "mode": mode,
        "torch": torch.__version__,
        "base": [str(base.resolve()), stat.st_size, stat.st_mtime_ns] if stat else str(base),
    }
    h.update(json.dumps(settings, sort_keys=True, default=str).encode("utf-8"))
    return h.hexdigest()[:32]


def built(config: NetConfig, weights: Path, mode: str, build: Callable[[], Any]) -> Any:
    """The network ``build()`` makes, read from the cache when it was kept there (module
    docstring); ``build`` is called when it was not, and its network kept."""
    folder = cache_root() / DIR
    path = folder / f"{net_key(config, weights, mode)}.pt"
    if path.is_file():
        try:
            net = _load(config, mode, path)
            os.utime(path)  # recently used: kept longest
            return net
        except Exception as e:  # a torn or foreign file: build again, replace it
            log.warning("stance network cache %s unreadable (%s); building it again", path, e)
    net = build()
    try:
        import torch

        with atomic_path(path, suffix=".part") as tmp:  # not "*.pt": _prune leaves it alone
            torch.save(net.state_dict(), str(tmp))
        _prune(folder)
    except Exception as e:  # a full disk, a read-only cache (torch raises its own errors)
        log.warning("stance network not kept in %s (%s)", folder, e)
    return net


def _load(config: NetConfig, mode: str, path: Path) -> Any:
    """An empty network of ``config``'s shape with int8 maps where ``quantize_int8`` puts
    them, filled with the kept state."""
    import torch
    from torch.ao.nn.quantized.dynamic import Linear as Int8Linear

    from factseek.stance.model import StanceNet, Unstarted, prune_ffn

    base = read_json(resolve_base(config.base) / "config.json", "model config", limit=SIDE_LIMIT)
    with Unstarted():  # no random start: every tensor comes from the file
        net = StanceNet(config, base)
    if config.ffn and config.ffn != int(base["intermediate_size"]):
        for layer in net.layers:
            prune_ffn(layer, config.ffn)
    with warnings.catch_warnings():  # torch's own notes on quantised tensors (as quantize_int8)
        warnings.simplefilter("ignore")
        for name in int8_maps(net, mode):
            owner, _, attr = name.rpartition(".")
            old = net.get_submodule(name)
            empty = Int8Linear(old.in_features, old.out_features, dtype=torch.qint8)
            setattr(net.get_submodule(owner) if owner else net, attr, empty)
        state = torch.load(str(path), weights_only=True, mmap=True)
    net.load_state_dict(state, strict=True)
    for p in net.parameters():
        p.requires_grad_(False)
    return net.eval()


def _prune(folder: Path) -> None:
    """Remove all but the ``KEEP`` most recently used networks."""

    def used(p: Path) -> float:
        try:
            return p.stat().st_mtime
        except OSError:  # removed meanwhile by another process
            return 0.0

    kept = sorted(folder.glob("*.pt"), key=used, reverse=True)
    for old in kept[KEEP:]:
        old.unlink(missing_ok=True)
