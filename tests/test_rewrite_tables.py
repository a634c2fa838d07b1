"""The decision transformer's row caches: a killed fill keeps what it had done."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from factseek.ml.encode import FunctionEncoder
from factseek.rewrite.transformer import tables


class Killed(Exception):
    pass


def _encoder(calls: list[int], fail_after: int | None) -> FunctionEncoder:
    def encode(texts):
        if fail_after is not None and len(calls) >= fail_after:
            raise Killed
        calls.append(len(texts))
        return np.array([[len(t), t.count("a"), 1.0] for t in texts], np.float32)

    return FunctionEncoder(encode, dim=3, name="count")


def test_a_killed_encoding_resumes_from_its_last_save(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path))
    monkeypatch.setattr(tables, "SAVE_EVERY", -1.0)  # save after every batch
    texts = [f"query {'a' * i} number {i}" for i in range(10)]
    calls: list[int] = []
    with pytest.raises(Killed):
        tables.state_table(texts, _encoder(calls, fail_after=2), batch_size=3, progress=False)
    assert calls == [3, 3]
    calls.clear()
    got = tables.state_table(texts, _encoder(calls, None), batch_size=3, progress=False)
    assert calls == [3, 1]  # only the four texts the killed run never reached
    np.testing.assert_allclose(got, _encoder([], None).encode(texts), rtol=1e-6)


def test_rows_without_their_keys_are_dropped_not_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path))
    store = tables.RowCache("x", 2, np.float32)
    store.add(["a", "b"], np.ones((2, 2)))
    np.save(store.rows_path, np.ones((3, 2), np.float32))  # killed after rows, before keys
    again = tables.RowCache("x", 2, np.float32)
    assert len(again.keys) == 2 and again.rows.shape == (2, 2)
    rows, missing = again.lookup(["a", "c"])
    assert missing == [1] and rows[0].tolist() == [1.0, 1.0]
