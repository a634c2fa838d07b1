"""The shared training pieces: a long chunked read that a killed run continues."""

from __future__ import annotations

import numpy as np
import pytest

from factseek.ml.training import read_in_chunks


def _rows(chunk):
    return [[float(x), float(x) * 2] for x in chunk]


def test_a_killed_read_goes_on_after_the_chunks_it_had_read(tmp_path):
    keep = tmp_path / "partial.npy"
    items = list(range(10))
    seen: list[list[int]] = []

    def dies_on_the_third_chunk(chunk):
        if len(seen) == 2:
            raise KeyboardInterrupt
        seen.append(list(chunk))
        return _rows(chunk)

    with pytest.raises(KeyboardInterrupt):
        read_in_chunks(items, dies_on_the_third_chunk, 3, keep)
    assert np.load(keep).shape == (6, 2)  # two chunks kept
    again: list[list[int]] = []
    progress: list[int] = []
    out = read_in_chunks(
        items, lambda c: again.append(list(c)) or _rows(c), 3, keep, progress.append
    )
    assert again == [[6, 7, 8], [9]]  # only what was not read before
    assert progress == [6, 9, 10]
    assert np.array_equal(out, np.asarray(_rows(items)))
    assert np.array_equal(out, read_in_chunks(items, _rows, 3, tmp_path / "fresh.npy"))


def test_a_kept_file_of_another_read_is_not_trusted(tmp_path):
    keep = tmp_path / "partial.npy"
    np.save(keep, np.ones((5, 2)))  # 5 rows: not a whole number of chunks of 3, nor all 4 items
    out = read_in_chunks([1, 2, 3, 4], _rows, 3, keep)
    assert np.array_equal(out, np.asarray(_rows([1, 2, 3, 4])))
    keep.write_bytes(keep.read_bytes()[:20])  # cut short
    assert np.array_equal(read_in_chunks([1, 2, 3, 4], _rows, 3, keep), out)
