"""``--ray`` without a cluster: the driver's bookkeeping over an in-process stand-in for Ray
(workers that die while running a claim, a claim that kills every worker, a worker that cannot
start, a rerun), the worker class on a real store (same report as a local run; a corrupt or
foreign store refused, naming the node), store fingerprints, and the CLI's ``--ray [ADDRESS]``.
The same run on a real local Ray cluster, with a worker killed, is in test_distributed_slow.py."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

import pytest
from typer.testing import CliRunner

from factseek import __version__
from factseek.api import CheckOptions, build_parts, check_config
from factseek.cli import app
from factseek.cli.cluster import with_ray_value
from factseek.errors import ClusterError, ConfigError, StoreError
from factseek.net import ratelimit
from factseek.pipeline import run
from factseek.report import render
from factseek.runs import distributed
from factseek.runs.batch import run_claims
from factseek.runs.summary import finish_batch
from factseek.store import build_store
from factseek.store.reader import Store
from factseek.types import Claim

runner = CliRunner()

DOCS = [
    {
        "url": f"https://news{i % 3}.example/{i}",
        "title": f"Story {i}",
        "published": f"2022-0{1 + i % 9}-1{i % 9}",
        "text": f"The council approved {i} new buses for route {i % 7} after a vote of {i % 9} to 2.",
    }
    for i in range(30)
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("store")
    (tmp / "d.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    build_store([tmp / "d.jsonl"], tmp / "s")
    return tmp / "s"


def claims(n: int) -> list[tuple[int, Claim]]:
    return [
        (i + 1, Claim(text=f"The council approved {i} new buses.", id=f"c{i:02d}"))
        for i in range(n)
    ]


# ----------------------------------------------------------------------------- a stand-in for Ray


class Died(Exception):
    """Raised by a scripted worker: its process is gone."""


class RayError(Exception):
    pass


class RayTaskError(RayError):
    pass


class RayActorError(RayError):
    pass


class Ref:
    def __init__(self, actor: Actor, method: str, args: tuple[Any, ...]) -> None:
        self.actor, self.method, self.args = actor, method, args

    def value(self) -> Any:
        if self.actor.dead:
            raise RayActorError("the actor died")
        try:
            return getattr(self.actor.instance, self.method)(*self.args)
        except Died:
            self.actor.dead = True
            raise RayActorError("the actor died unexpectedly") from None


class Actor:
    def __init__(self, cls: type, args: tuple[Any, ...]) -> None:
        self.instance = cls(*args)
        self.dead = False

    def __getattr__(self, method: str) -> Any:
        return SimpleNamespace(remote=lambda *args: Ref(self, method, args))


class RemoteClass:
    def __init__(self, cls: type) -> None:
        self.cls = cls

    def options(self, **_: Any) -> RemoteClass:
        return self

    def remote(self, *args: Any) -> Actor:
        return Actor(self.cls, args)


class FakeRay:
    """What ``distributed._drive`` uses of Ray: calls run when their result is asked for, the
    oldest call first (as an actor runs its calls in order)."""

    exceptions = SimpleNamespace(RayError=RayError, RayTaskError=RayTaskError)

    def __init__(self) -> None:
        self.killed: list[Actor] = []

    def is_initialized(self) -> bool:
        return True

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": 2.0}

    def remote(self, **_: Any) -> Callable[[type], RemoteClass]:
        return RemoteClass

    def wait(self, refs: list[Ref], num_returns: int = 1) -> tuple[list[Ref], list[Ref]]:
        return refs[:1], refs[1:]

    def get(self, ref: Any, timeout: float | None = None) -> Any:
        return [r.value() for r in ref] if isinstance(ref, list) else ref.value()

    def kill(self, actor: Actor, no_restart: bool = True) -> None:
        actor.dead = True
        self.killed.append(actor)


class Scripted:
    """A worker whose claims render as their id; ``deaths[id]``: how often running that claim
    kills the worker; ``broken``: the start-up error every worker reports."""

    deaths: ClassVar[dict[str, int]] = {}
    broken = ""
    version = __version__
    seen: ClassVar[list[str]] = []

    def __init__(self, options: Any, config: Any, formats: Any, fp: Any, limits: Any) -> None:
        self.formats = sorted(set(formats) - {"json"})

    def ready(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "error": self.broken,
            "node": "node test",
            "pid": 7,
            "startup_cpu_s": 0.1,
        }

    def check(self, claim: Claim) -> dict[str, Any]:
        Scripted.seen.append(str(claim.id))
        if self.deaths.get(str(claim.id), 0) > 0:
            self.deaths[str(claim.id)] -= 1
            raise Died
        from factseek.report import render
        from factseek.types import Report

        texts = {
            "json": render(Report(claim=claim), "json"),  # a real report: resume checks it
            **{f: f"{f} {claim.id}\n" for f in self.formats},
        }
        return {"texts": texts, "cpu_s": 0.01}

    def stats(self) -> dict[str, Any]:
        return {"claims": 0, "process_cpu_s": 1.0}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeRay:
    ray = FakeRay()
    monkeypatch.setattr(distributed, "_ray", lambda: ray)
    monkeypatch.setattr(distributed, "ClaimWorker", Scripted)
    monkeypatch.setattr(Scripted, "deaths", {})
    monkeypatch.setattr(Scripted, "broken", "")
    monkeypatch.setattr(Scripted, "version", __version__)
    monkeypatch.setattr(Scripted, "seen", [])
    return ray


def drive(out: Path, todo: list[tuple[int, Claim]], **kw: Any) -> tuple[tuple[int, int, int], Any]:
    got: list[Any] = []
    result = distributed.run_claims_ray(
        todo,
        out,
        CheckOptions(),
        check_config(),
        distributed.RaySettings(**kw),
        progress=False,
        formats=["md"],
        on_stats=got.append,
    )
    return result, got[0] if got else None


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def test_every_claim_is_journaled_once_in_the_local_format(fake: FakeRay, tmp_path: Path) -> None:
    (counts, stats) = drive(tmp_path, claims(7))
    assert counts == (7, 0, 0)
    journal = lines(tmp_path / "journal.jsonl")
    assert sorted(j["id"] for j in journal) == [f"c{i:02d}" for i in range(7)]
    assert journal[0] == {"id": "c00", "line": 1, "report": "reports/c00.json"}
    from factseek.report import read_report

    assert (
        read_report(tmp_path / "reports" / "c03.json").claim.id == "c03"
    )  # as the worker wrote it
    assert (tmp_path / "reports" / "c03.md").read_text() == "md c03\n"
    assert len(stats.workers) == 2 and stats.died == 0
    assert sum(w.claims for w in stats.workers) == 7
    assert "2 workers on 1 node" in stats.line()


def test_a_worker_that_dies_loses_nothing_and_repeats_nothing(
    fake: FakeRay, tmp_path: Path
) -> None:
    Scripted.deaths = {"c02": 1, "c05": 1}
    (counts, stats) = drive(tmp_path, claims(9))
    assert counts == (9, 0, 0)
    ids = [j["id"] for j in lines(tmp_path / "journal.jsonl")]
    assert sorted(ids) == [f"c{i:02d}" for i in range(9)]  # all, and each once
    assert stats.died == 2 and len(stats.workers) == 4  # two died, two replacements finished
    assert "2 workers died and were replaced" in stats.line()
    assert Scripted.seen.count("c02") == 2  # run again after its worker died
    assert not (tmp_path / "errors.jsonl").read_text()


def test_a_claim_that_kills_every_worker_is_recorded_as_failed(
    fake: FakeRay, tmp_path: Path
) -> None:
    Scripted.deaths = {"c01": 99}
    (counts, _) = drive(tmp_path, claims(5))
    assert counts == (4, 0, 1)
    assert Scripted.seen.count("c01") == distributed.MAX_ATTEMPTS
    errors = lines(tmp_path / "errors.jsonl")
    assert errors == [
        {"id": "c01", "line": 2, "error": "a Ray worker died 3 times while checking it"}
    ]
    assert sorted(j["id"] for j in lines(tmp_path / "journal.jsonl")) == [
        "c00",
        "c02",
        "c03",
        "c04",
    ]


def test_too_many_deaths_stop_the_run_and_a_rerun_resumes(fake: FakeRay, tmp_path: Path) -> None:
    Scripted.deaths = {f"c{i:02d}": 1 for i in range(2, 12)}  # ten workers die, one per claim
    with pytest.raises(ClusterError, match="Ray workers died; stopping"):
        drive(tmp_path, claims(12), workers=1)
    first = [j["id"] for j in lines(tmp_path / "journal.jsonl")]
    assert first and len(first) == len(set(first))
    Scripted.deaths = {}
    Scripted.seen = []
    (counts, _) = drive(tmp_path, claims(12), workers=1)
    assert counts == (12 - len(first), len(first), 0)
    assert not set(Scripted.seen) & set(first)  # journaled claims are not run again
    ids = [j["id"] for j in lines(tmp_path / "journal.jsonl")]
    assert sorted(ids) == [f"c{i:02d}" for i in range(12)]


def test_a_worker_that_cannot_start_stops_the_run_naming_its_node(
    fake: FakeRay, tmp_path: Path
) -> None:
    Scripted.broken = "worker on node n7 (10.0.0.7): store /s is corrupt: x; rebuild it with: ..."
    with pytest.raises(
        ClusterError, match=r"worker on node n7 \(10\.0\.0\.7\): store /s is corrupt"
    ):
        drive(tmp_path, claims(3))
    assert lines(tmp_path / "journal.jsonl") == []


def test_a_worker_with_another_factseek_stops_the_run(fake: FakeRay, tmp_path: Path) -> None:
    Scripted.version = "0.0.1"
    with pytest.raises(
        ClusterError, match=r"worker on node test runs factseek 0\.0\.1, the driver"
    ):
        drive(tmp_path, claims(3))


def test_nothing_to_do_needs_no_cluster(fake: FakeRay, tmp_path: Path) -> None:
    drive(tmp_path, claims(2))
    fake.remote = None  # type: ignore[assignment,method-assign]  # any use of Ray would fail
    assert drive(tmp_path, claims(2))[0] == (0, 2, 0)


def test_record_is_refused_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--record cannot be used with --ray"):
        distributed.run_claims_ray(
            claims(1),
            tmp_path,
            CheckOptions(record=tmp_path / "b"),
            check_config(),
            distributed.RaySettings(),
        )


# ----------------------------------------------------------------------------- the worker itself


@pytest.fixture
def no_installed_limits() -> Any:
    previous = ratelimit.install(None)
    yield
    ratelimit.install(previous)


def test_worker_renders_the_report_a_local_run_writes(
    store: Path, no_installed_limits: Any
) -> None:
    options = CheckOptions(store=store, stance="none")
    config = check_config()
    fp = Store.open(store).fingerprint()
    worker = distributed.ClaimWorker(options, config, ["md", "json"], fp)
    info = worker.ready()
    assert info["error"] == "" and info["node"].startswith("node ")
    claim = Claim(text="The council approved 4 new buses.", id="c4")
    result = worker.check(claim)
    assert set(result["texts"]) == {"json", "md"} and result["cpu_s"] >= 0
    local = run(claim, build_parts(options), config)
    mine = json.loads(result["texts"]["json"])
    theirs = json.loads(render(local, "json"))
    mine.pop("timings"), theirs.pop("timings")
    assert mine == theirs


def test_worker_refuses_a_corrupt_store_naming_its_node(
    store: Path, tmp_path: Path, no_installed_limits: Any
) -> None:
    copy = tmp_path / "s"
    shutil.copytree(store, copy)
    fp = Store.open(copy).fingerprint()
    postings = next(copy.glob("index-*/postings_doc.npy"))
    data = bytearray(postings.read_bytes())
    data[-3] ^= 0xFF  # a posting the open-time checks do not read: only a full verify sees it
    postings.write_bytes(bytes(data))
    Store.open(copy)  # opens: the damage is deep in a large file
    worker = distributed.ClaimWorker(
        CheckOptions(store=copy, stance="none"), check_config(), [], fp
    )
    assert worker.ready()["error"].startswith("worker on node ")
    assert "is corrupt: postings_doc.npy does not match its checksum" in worker.ready()["error"]


def test_worker_refuses_a_store_that_is_not_the_drivers(
    store: Path, tmp_path: Path, no_installed_limits: Any
) -> None:
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS[:-1]))
    build_store([tmp_path / "d.jsonl"], tmp_path / "other")
    driver = Store.open(store).fingerprint()
    with pytest.raises(StoreError, match="is not the driver's"):
        distributed.check_store(tmp_path / "other", driver)
    worker = distributed.ClaimWorker(
        CheckOptions(store=tmp_path / "other", stance="none"), check_config(), [], driver
    )
    assert "is not the driver's" in worker.ready()["error"]


def test_fingerprint_is_the_same_for_a_copy_and_changes_with_the_content(
    store: Path, tmp_path: Path
) -> None:
    shutil.copytree(store, tmp_path / "copy")
    assert Store.open(tmp_path / "copy").fingerprint() == Store.open(store).fingerprint()
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS[1:]))
    build_store([tmp_path / "d.jsonl"], tmp_path / "fewer")
    assert Store.open(tmp_path / "fewer").fingerprint() != Store.open(store).fingerprint()


# ----------------------------------------------------------------------------- summaries, CLI


def test_summaries_follow_the_claims_file_whatever_the_journal_order(
    store: Path, tmp_path: Path
) -> None:
    parts = build_parts(CheckOptions(store=store, stance="none"))
    run_claims(claims(4), tmp_path, parts, check_config(), progress=False)
    finish_batch(tmp_path)
    before = (tmp_path / "summary.csv").read_text(), (tmp_path / "summary.md").read_text()
    journal = tmp_path / "journal.jsonl"
    journal.write_text("".join(reversed(journal.read_text().splitlines(keepends=True))))
    finish_batch(tmp_path)
    assert ((tmp_path / "summary.csv").read_text(), (tmp_path / "summary.md").read_text()) == before
    assert before[0].splitlines()[1].startswith("c00,")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["c.jsonl", "--ray"], ["c.jsonl", "--ray", "local"]),
        (["--ray", "c.jsonl", "-q"], ["--ray", "local", "c.jsonl", "-q"]),
        (["--ray", "--quiet"], ["--ray", "local", "--quiet"]),
        (["--ray", "auto"], ["--ray", "auto"]),
        (["--ray", "10.1.2.3:6379", "x"], ["--ray", "10.1.2.3:6379", "x"]),
        (["--ray", "ray://head.example:10001"], ["--ray", "ray://head.example:10001"]),
        (["--ray", "[fd00::1]:6379"], ["--ray", "[fd00::1]:6379"]),
        (["--ray=auto", "c.jsonl"], ["--ray=auto", "c.jsonl"]),
        (["--", "--ray"], ["--", "--ray"]),
    ],
)
def test_ray_option_takes_an_address_only_when_one_follows(
    args: list[str], expected: list[str]
) -> None:
    assert with_ray_value(args) == expected


def test_cli_checks_ray_options_before_any_work(store: Path, tmp_path: Path) -> None:
    (tmp_path / "c.jsonl").write_text('{"id": "a", "claim": "Buses were approved."}\n')
    base = ["batch", str(tmp_path / "c.jsonl"), "--out", str(tmp_path / "o"), "--store", str(store)]
    r = runner.invoke(app, [*base, "--ray-workers", "2"])
    assert r.exit_code == 2 and "--ray-workers needs --ray" in r.stderr
    r = runner.invoke(app, [*base, "--ray", "--record", str(tmp_path / "b")])
    assert r.exit_code == 2 and "--record cannot be used with --ray" in r.stderr
    assert not (tmp_path / "o" / "journal.jsonl").exists()
    r = runner.invoke(app, ["eval", "pipeline", "--help"])
    assert "--ray [ADDRESS]" in r.stdout and "--ray-workers" in r.stdout
