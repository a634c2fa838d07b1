"""Atomic writes: the umask decides the mode, a failed write leaves nothing behind."""

from __future__ import annotations

import os
import stat

import pytest

from factseek.files import atomic_dir, atomic_path, atomic_write


@pytest.fixture
def umask():
    """Set the process umask for one test and restore it afterwards."""
    old = os.umask(0o022)
    try:
        yield lambda mask: os.umask(mask)
    finally:
        os.umask(old)


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077])
def test_atomic_write_respects_the_umask(tmp_path, umask, mask):
    umask(mask)
    target = tmp_path / "sub" / "report.json"
    atomic_write(target, "{}")
    assert mode(target) == 0o666 & ~mask
    assert target.read_text() == "{}"


def test_atomic_path_respects_the_umask_and_replaces(tmp_path, umask):
    umask(0o022)
    target = tmp_path / "model.bin"
    target.write_bytes(b"old")
    os.chmod(target, 0o600)
    with atomic_path(target, suffix=".bin") as tmp:
        assert tmp.suffix == ".bin" and tmp.parent == tmp_path
        tmp.write_bytes(b"new")
    assert target.read_bytes() == b"new"
    assert mode(target) == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.bin"]


@pytest.mark.parametrize("mask", [0o022, 0o077])
def test_a_writer_that_makes_the_file_anew_still_gets_the_umasks_mode(tmp_path, umask, mask):
    """safetensors' save_file replaces the temporary file with an owner-only (0600) one: the
    file put in place has the mode any new file gets, so a trained model can be shared."""
    umask(mask)
    target = tmp_path / "adapter.safetensors"
    with atomic_path(target, suffix=".safetensors") as tmp:
        tmp.unlink()
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, b"weights")
        os.close(fd)
    assert target.read_bytes() == b"weights"
    assert mode(target) == 0o666 & ~mask


def test_failed_write_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_atomic_dir_replaces_an_unready_folder_and_leaves_nothing_on_failure(tmp_path, umask):
    umask(0o022)
    target = tmp_path / "cache"
    target.mkdir()
    (target / "old").write_text("stale")  # an older cache, not ready
    ready = lambda p: (p / "done").is_file()  # noqa: E731
    with atomic_dir(target, ready) as tmp:
        assert tmp.parent == tmp_path and not ready(target)
        (tmp / "done").write_text("1")
    assert sorted(p.name for p in target.iterdir()) == ["done"]
    assert mode(target) == 0o755
    with pytest.raises(RuntimeError), atomic_dir(tmp_path / "other", ready) as tmp:
        (tmp / "half").write_text("x")
        raise RuntimeError("boom")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"]
