"""Issue 47 items 6 and 7: every side file (ratings, checksums, claims, reports, configs, rules)
is read by one bounded reader (``factseek.files.read_input``/``read_json``) whose error names
its cap; a device is refused unread; JSON side files may start with a UTF-8 byte-order mark."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factseek.errors import ConfigError, DataError, InputError, StoreError
from factseek.files import SIDE_LIMIT, read_input, read_json

BOM = b"\xef\xbb\xbf"
RATINGS = {
    "format_version": 1,
    "name": "desk",
    "labels": [
        {"label": "true", "name": "True", "rating": 5, "machine": ["averitec:supported"]},
        {"label": "false", "name": "False", "rating": 1, "machine": ["averitec:refuted"]},
    ],
}


def sparse(path: Path, size: int) -> Path:
    """A file of ``size`` zero bytes that takes no disk space."""
    with path.open("wb") as f:
        f.truncate(size)
    return path


def one_line(r: object, code: int, *needles: str) -> str:
    err = r.stderr  # type: ignore[attr-defined]
    assert r.exit_code == code, (r.exit_code, r.output)  # type: ignore[attr-defined]
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
    assert "unexpected" not in err and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


# ----------------------------------------------------------------------------- the reader


def test_a_device_is_refused_before_anything_is_read() -> None:
    for device in ("/dev/zero", "/dev/urandom", "/dev/null"):
        with pytest.raises(InputError, match=r"is a device, not a rating scale; give a regular"):
            read_input(device, "rating scale")


def test_a_pipe_is_still_read(tmp_path: Path) -> None:
    import os
    import threading

    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    threading.Thread(target=lambda: fifo.write_bytes(b'{"a": 1}'), daemon=True).start()
    assert read_json(fifo, "report") == {"a": 1}


def test_an_endless_pipe_stops_at_the_cap(tmp_path: Path) -> None:
    import os
    import threading

    fifo = tmp_path / "p"
    os.mkfifo(fifo)

    def endless() -> None:
        try:
            with fifo.open("wb") as f:
                while True:
                    f.write(b"x" * 65536)
        except OSError:  # the reader went away
            pass

    threading.Thread(target=endless, daemon=True).start()
    with pytest.raises(InputError, match=r"p: the report is larger than 1 MiB"):
        read_input(fifo, "report", limit=2**20)


def test_the_error_names_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = sparse(tmp_path / "ratings.json", SIDE_LIMIT + 1)
    with pytest.raises(InputError) as e:
        read_json(big, "rating scale", limit=SIDE_LIMIT)
    assert str(e.value).endswith(
        "ratings.json: the rating scale is larger than 16 MiB (16,777,216 bytes), the most "
        "factseek reads for one"
    )
    monkeypatch.setenv("FACTSEEK_MAX_INPUT_BYTES", "100")
    with pytest.raises(InputError, match=r"larger than the input limit of 100 bytes; raise it"):
        read_json(big, "report")


def test_read_json_takes_a_byte_order_mark_and_names_bad_files(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(BOM + b'{"a": [1, 2]}')
    assert read_json(path, "report") == {"a": [1, 2]}
    path.write_bytes(b'{"a": \xff}')
    with pytest.raises(DataError, match=r"x\.json: not UTF-8 text \(byte 6\)"):
        read_json(path, "report")
    path.write_bytes(b'{"a": ')
    with pytest.raises(DataError, match=r"x\.json: not valid JSON"):
        read_json(path, "report")


# ----------------------------------------------------------------------------- ratings


def test_ratings_past_the_cap_are_refused_with_the_cap(tmp_path: Path) -> None:
    from factseek.review.ratings import load_ratings

    with pytest.raises(ConfigError, match=r"larger than 16 MiB"):
        load_ratings(sparse(tmp_path / "ratings.json", SIDE_LIMIT + 1))


@pytest.mark.parametrize("command", [["serve"], ["feedback", "export"]])
def test_ratings_from_dev_zero_is_one_line(tmp_path: Path, command: list[str]) -> None:
    """`--ratings /dev/zero` read 17 GB and kept going (serve, feedback export)."""
    from factseek.cli import app

    extra = ["--db", str(tmp_path / "h.sqlite"), "--out", str(tmp_path / "o")]
    args = [*command, "--ratings", "/dev/zero", *(extra if command[0] == "feedback" else [])]
    r = CliRunner().invoke(app, args)
    one_line(r, 2, "/dev/zero is a device, not a rating scale")


def test_a_ratings_file_with_a_byte_order_mark_loads(tmp_path: Path) -> None:
    from factseek.review.ratings import load_ratings

    path = tmp_path / "ratings.json"
    path.write_bytes(BOM + json.dumps(RATINGS).encode())
    scale = load_ratings(path)
    assert scale.name == "desk" and [x.name for x in scale.labels] == ["True", "False"]


# ----------------------------------------------------------------------------- AVeriTeC


def test_an_averitec_file_with_a_byte_order_mark_loads(tmp_path: Path) -> None:
    """Both AVeriTeC JSON readers: the data set's and the stance pairs' (real-world evidence)."""
    from factseek.datasets.public import load_averitec
    from factseek.stance.realworld import _averitec_rows

    rows = [{"claim": "Buses doubled.", "label": "Supported", "claim_date": "01-02-2020"}]
    path = tmp_path / "dev.json"
    path.write_bytes(BOM + json.dumps(rows).encode())
    (claim,) = load_averitec(path)
    assert claim.claim.text == "Buses doubled."
    assert _averitec_rows(path) == rows


# ----------------------------------------------------------------------------- a store's files


@pytest.fixture
def store(tmp_path: Path) -> Path:
    from factseek.store import build_store

    rows = [
        {
            "url": f"https://s.example/{i}",
            "title": "T",
            "text": f"bus {i} council",
            "published": "2020-01-02",
        }
        for i in range(20)
    ]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    build_store([tmp_path / "d.jsonl"], tmp_path / "s")
    return tmp_path / "s"


def _index_checksums(store: Path) -> Path:
    return store / json.loads((store / "config.json").read_text())["index"] / "checksums.json"


def test_a_checksum_file_linked_to_dev_zero_is_one_line(store: Path) -> None:
    """checksums.json -> /dev/zero: MemoryError."""
    from factseek.cli import app
    from factseek.store.reader import Store

    sidecar = _index_checksums(store)
    sidecar.unlink()
    sidecar.symlink_to("/dev/zero")
    with pytest.raises(StoreError, match=r"is corrupt: checksum file .*is a device") as e:
        Store.open(store)
    assert "\n" not in str(e.value)
    one_line(CliRunner().invoke(app, ["index", "verify", "--store", str(store)]), 1, "a device")


def test_a_checksum_file_past_the_input_cap_names_the_cap(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from factseek.store.reader import Store

    size = _index_checksums(store).stat().st_size
    monkeypatch.setenv("FACTSEEK_MAX_INPUT_BYTES", str(size - 1))
    with pytest.raises(StoreError, match=rf"larger than the input limit of {size - 1:,} bytes"):
        Store.open(store)
    monkeypatch.setenv("FACTSEEK_MAX_INPUT_BYTES", str(size))
    Store.open(store)


def test_a_store_config_past_its_cap_is_one_line(store: Path) -> None:
    from factseek.store.reader import Store

    sparse(store / "config.json", SIDE_LIMIT + 1)
    with pytest.raises(StoreError, match=r"larger than 16 MiB"):
        Store.open(store)


# ----------------------------------------------------------------------------- rules, configs


def test_rules_and_model_configs_past_the_cap_name_it(tmp_path: Path) -> None:
    from factseek.errors import ModelError
    from factseek.judge.rules import load_rules
    from factseek.ml.folder import read_model_config

    with pytest.raises(ConfigError, match=r"larger than 16 MiB"):
        load_rules(sparse(tmp_path / "rules.json", SIDE_LIMIT + 1))
    (tmp_path / "m").mkdir()
    sparse(tmp_path / "m" / "config.json", SIDE_LIMIT + 1)
    with pytest.raises(ModelError, match=r"larger than 16 MiB"):
        read_model_config(tmp_path / "m", kind="k", version=1, what="stance model")


#: Reads that do not go through the bounded reader, and why (factseek's own work files, files
#: whose size a checksum or a recorded size bounds first, package data).
UNBOUNDED = {
    "llm/llamacpp.py": "/proc/cpuinfo and factseek's own probe record",
    "demo.py": "the package's own demo data",
    "stance/readings.py": "a hash of a model's weights",
    "stance/kept_net.py": "a hash of a model's adapter weights",
    "stance/train.py": "the training run's own checkpoint and output",
    "stance/checkpoint.py": "the training run's own checkpoint",
    "judge/train.py": "the training run's own checkpoints",
    "fetch/cache.py": "a cached body named by its verified sha256",
    "cli/eval.py": "the results.md the command just wrote",
    "ml/encode.py": "factseek's own encoded parts",
    "store/integrity.py": "a store file whose size the checksum file records",
    "store/sources.py": "store sources, streamed line by line or one HTML page",
    "store/reader.py": "store files checked against their recorded sizes first",
    "store/build.py": "the store's own segment being written",
    "rewrite/environment/wordnet.py": "the WordNet files factseek unpacked itself",
    "rewrite/plots.py": "a training log for a figure",
    "rewrite/transformer/trajectories.py": "the run's own journal",
}


def test_side_files_are_read_only_through_the_bounded_reader() -> None:
    """No module reads a file whole by ``read_text``/``read_bytes``/``json.load`` outside
    ``factseek.files``, except the ones listed (with why)."""
    root = Path(__file__).resolve().parents[1] / "src" / "factseek"
    raw = re.compile(r"\.read_text\(|\.read_bytes\(|json\.load\(")
    found = {
        path.relative_to(root).as_posix()
        for path in root.rglob("*.py")
        if path.name != "files.py" and raw.search(path.read_text(encoding="utf-8"))
    }
    assert found <= set(UNBOUNDED), sorted(found - set(UNBOUNDED))
