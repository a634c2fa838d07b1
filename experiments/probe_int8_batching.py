"""Probe: does an int8 stance reading depend on the other pairs in its batch, and what does one
pair per pass cost?

    python experiments/probe_int8_batching.py --run runs/dev-rules [--pairs 1000] [--model small]

``--run`` is any ``factseek eval pipeline`` run folder (docs/verdicts.md, "Reproduce", step 1):
its reports' questions and kept documents give the evidence candidates (``summarize.evidence``,
the run's settings), the (question, sentence) pairs the stance model reads in ``check``; the first
``--pairs`` distinct ones are used. The model (int8) reads them one pair per pass (as it ships),
in batches of 32 in order of token count, and in batches of 32 after a seeded shuffle of the
pairs (other batch mates); the same adapter unquantised (fp32) reads them in batches of 32. It
prints how far each int8 reading is from the others and from fp32 (mean and largest change of a
probability, labels that differ), and pairs per CPU-second on one thread for int8 at batch sizes
1, 16 and 32. The numbers are in docs/stance.md ("Batching").
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--run", type=Path, required=True, help="eval pipeline run folder")
    p.add_argument("--pairs", type=int, default=1000, help="distinct candidate pairs to read")
    p.add_argument("--model", default="small", help="'small', 'mpnet' or a stance model folder")
    return p.parse_args()


def main() -> int:
    args = _args()
    if not (args.run / "journal.jsonl").is_file():
        print(f"skipped: needs a run folder at {args.run}")
        return 0
    import numpy as np
    import torch

    from factseek.runs.evaluate import load_reports
    from factseek.stance import model_folder
    from factseek.stance.crossencoder import CrossEncoderStance
    from factseek.stance.thresholds import decide_many
    from factseek.summarize.evidence import EvidenceConfig, evidence_candidates
    from factseek.types import from_dict

    torch.set_num_threads(1)
    pairs: dict[tuple[str, str], None] = {}
    for rep in load_reports(args.run).values():
        cfg = from_dict(EvidenceConfig, rep.config.get("evidence") or {})
        for c in evidence_candidates(rep.claim, rep.questions, rep.documents, cfg):
            pairs.setdefault((c.question, c.text), None)
    chosen = list(pairs)[: args.pairs]
    print(f"{len(chosen)} distinct candidate pairs from {args.run}", file=sys.stderr)
    path = model_folder(args.model)
    int8 = CrossEncoderStance.load(path, quantize="int8")
    fp32 = CrossEncoderStance.load(path, quantize="none")

    def read(model: CrossEncoderStance, batch: int, items: list[tuple[str, str]]) -> np.ndarray:
        model.batch_size = batch
        return model.probabilities(items)

    shuffled = list(range(len(chosen)))
    random.Random(0).shuffle(shuffled)
    readings = {
        "int8, one pair per pass (shipped)": read(int8, 1, chosen),
        "int8, batches of 32": read(int8, 32, chosen),
        "int8, batches of 32, other batch mates": np.empty((len(chosen), 3)),
        "fp32, batches of 32": read(fp32, 32, chosen),
    }
    readings["int8, batches of 32, other batch mates"][shuffled] = read(
        int8, 32, [chosen[i] for i in shuffled]
    )
    labels = {k: decide_many(v, int8.thresholds) for k, v in readings.items()}
    print("| reading A | reading B | mean abs. change | largest | labels that differ |")
    print("|---|---|---:|---:|---:|")
    names = list(readings)
    for a, b in [(names[1], names[2]), (names[0], names[1]), (names[0], names[3]), (names[1], names[3])]:  # fmt: skip
        d = np.abs(readings[a] - readings[b])
        flips = int((labels[a] != labels[b]).sum())
        print(f"| {a} | {b} | {d.mean():.4f} | {d.max():.3f} | {flips} of {len(chosen)} ({100 * flips / len(chosen):.1f}%) |")  # fmt: skip
    print()
    print("| int8 batch size | pairs / CPU-s (one thread, best of 3) |")
    print("|---:|---:|")
    for batch in (1, 16, 32):
        best = None
        for _ in range(3):
            c = time.process_time()
            read(int8, batch, chosen)
            c = time.process_time() - c
            best = c if best is None else min(best, c)
        assert best is not None
        print(f"| {batch} | {len(chosen) / best:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
