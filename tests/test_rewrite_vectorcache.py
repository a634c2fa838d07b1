"""Search-result vectors cached on disk between runs (``rewrite.vectorcache``)."""

from __future__ import annotations

import numpy as np

from factseek.ml.encode import FunctionEncoder
from factseek.rewrite.edits.vectorcache import DiskCachedEncoder
from factseek.rewrite.transformer import tables


def _enc(calls: list[int]) -> FunctionEncoder:
    def fn(texts):
        calls.append(len(texts))
        return np.array([[len(t), t.count("a") + 1, 1.0] for t in texts], np.float32)

    return FunctionEncoder(fn, 3, name="toy")


def test_rows_come_back_from_disk_in_a_new_encoder(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path))
    calls: list[int] = []
    # texts whose 16-byte digests end in NUL bytes are the ones numpy's "S16" would trim
    texts = [f"text {i}" for i in range(400)]
    assert any(tables.RowCache.digest(t).endswith(b"\0") for t in texts)
    first = DiskCachedEncoder(_enc(calls))
    a = first.encode([*texts, texts[0]])
    assert calls == [400] and first.encoded == 400
    assert np.array_equal(a[0], a[-1])
    again = DiskCachedEncoder(_enc(calls))  # a new process, as far as the cache knows
    b = again.encode(texts[::-1])
    assert calls == [400] and again.encoded == 0
    assert np.array_equal(b, a[:400][::-1])
    c = again.encode(["new one", texts[3]])
    assert calls == [400, 1] and np.array_equal(c[1], a[3])


def test_the_cache_is_bounded(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path))
    calls: list[int] = []
    enc = DiskCachedEncoder(_enc(calls), max_rows=5)
    enc.encode([f"t{i}" for i in range(8)])
    assert len(DiskCachedEncoder(_enc(calls), max_rows=5)._disk.keys) == 5  # the newest kept
    again = DiskCachedEncoder(_enc(calls), max_rows=5)
    again.encode(["t7"])  # among the newest: from disk
    assert again.encoded == 0
    again.encode(["t0"])  # dropped: computed again
    assert again.encoded == 1 and calls[-1] == 1
