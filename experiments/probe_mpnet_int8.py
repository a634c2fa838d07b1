"""Probe: which linear maps of a stance model can torch's dynamic int8 read without changing its
labels (the reason the `mpnet` model ships as `int8-mixed`)?

    python experiments/probe_mpnet_int8.py --pairs pairs.jsonl [--model mpnet] [--n 300]

``--pairs`` is a pair-set file (``factseek stance train --data DIR --out unused --pairs-out
pairs.jsonl``); ``--n`` of its validation pairs, shuffled with a fixed seed, are read by the
model in fp32 and then with int8 weights and activations on different sets of linear maps (all
of them; all but the feed-forward output; only the feed-forward maps; only the attention maps;
only the feed-forward input), one pair per pass on the current torch threads, and last with one
activation scale per token on every map (``int8-rows``, ``stance.rowint8``: packed batches of
32, each pair's reading the one it gets alone). For each set it
prints accuracy against the gold labels, how many labels agree with fp32, the mean change of a
probability and the CPU seconds spent. The numbers are in docs/stance.md ("The MPNet model").
"""

from __future__ import annotations

import argparse
import random
import time
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

VARIANTS: dict[str, Callable[[str], bool]] = {
    "every map": lambda name: True,
    "all but ffn_out (int8-mixed)": lambda name: not name.endswith("ffn_out"),
    "ffn_in + ffn_out": lambda name: "ffn_" in name,
    "attention maps only": lambda name: (
        name.rsplit(".", 1)[-1] in ("query", "key", "value", "attn_out")
    ),
    "ffn_in only": lambda name: name.endswith("ffn_in"),
}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=Path, required=True, help="a pair-set file (--pairs-out)")
    p.add_argument("--model", default="mpnet", help="a shipped stance model's name or a folder")
    p.add_argument("--n", type=int, default=300, help="validation pairs to read")
    args = p.parse_args()

    import torch
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    from factseek.stance import model_folder
    from factseek.stance.crossencoder import (  # fmt: skip
        BATCH_SIZE,
        ROWS,
        _torch_net,
        read_config,
        read_probabilities,
        tokenize,
    )
    from factseek.stance.netconfig import NetConfig, load_tokenizer
    from factseek.stance.pairs import read_pair_set
    from factseek.types import STANCE_LABELS

    folder = model_folder(args.model)
    cfg = read_config(folder)
    dev = list(read_pair_set(args.pairs)[0]["validation"])
    random.Random(0).shuffle(dev)
    dev = dev[: args.n]
    ids, types = tokenize(load_tokenizer(cfg["net"]["base"], int(cfg["max_length"])), [(x.question, x.evidence) for x in dev])  # fmt: skip
    gold = np.array([STANCE_LABELS.index(x.label) for x in dev])

    def read(keep: Callable[[str], bool] | None, mode: str = "none") -> tuple[np.ndarray, float]:
        net = _torch_net(NetConfig(**cfg["net"]), folder / "adapter.safetensors", mode)
        if keep is not None:
            names = {n for n, m in net.named_modules() if isinstance(m, torch.nn.Linear) and keep(n)}  # fmt: skip
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                quantize_dynamic(net, dict.fromkeys(names, per_channel_dynamic_qconfig), dtype=torch.qint8, inplace=True)  # fmt: skip
        start = time.process_time()
        probs = read_probabilities(net, ids, types, BATCH_SIZE if mode == ROWS else 1)
        return probs, time.process_time() - start

    ref, seconds = read(None)
    print(f"{len(dev)} validation pairs, {folder.name}, {torch.get_num_threads()} torch threads")
    print(f"fp32: accuracy {100 * (ref.argmax(1) == gold).mean():.1f}, {seconds:.1f} CPU-s")
    runs = [(name, partial(read, keep)) for name, keep in VARIANTS.items()]
    for name, run in [*runs, ("every map, one scale per token (int8-rows)", partial(read, None, ROWS))]:  # fmt: skip
        probs, seconds = run()
        print(
            f"{name}: accuracy {100 * (probs.argmax(1) == gold).mean():.1f}, labels as fp32 "
            f"{100 * (probs.argmax(1) == ref.argmax(1)).mean():.1f}%, mean change of a "
            f"probability {np.abs(probs - ref).mean():.3f}, {seconds:.1f} CPU-s",
            flush=True,
        )


if __name__ == "__main__":
    main()
