"""BFS heuristics on a toy corpus with known answers; the trajectory folder; the CLI; Ray."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from factseek.cli import app
from factseek.datasets.retrieval import RetrievalClaim
from factseek.errors import ConfigError, DataError
from factseek.rewrite.environment.actions import Action, render, tag
from factseek.rewrite.environment.bfs import BfsConfig, generate, search_claim
from factseek.rewrite.environment.env import BM25Retriever, Environment
from factseek.rewrite.transformer import trajectories as tj

FILLER = [(f"f{i}", w) for i, w in enumerate(["apple pear", "plum", "kiwi fig", "lime"] * 5)]
DOCS = [
    ("rel", "approved budget"),
    ("n1", "mayor cats"),
    ("n2", "mayor dogs"),
    ("n3", "cats purr loudly often"),
    *FILLER,
]
CLAIM = "mayor cats budget"  # n1 outranks rel; removing mayor or cats puts rel first


@pytest.fixture(scope="module")
def env() -> Environment:
    return Environment(retriever=BM25Retriever.from_docs(DOCS), reward="rr@10")


def check_sequence(seq: tj.Trajectory) -> None:
    assert len(seq.queries) == len(seq.rewards) == len(seq.actions) + 1
    for i, action in enumerate(seq.actions):
        assert render(tag(seq.queries[i]), action) == seq.queries[i + 1]
    steps = list(zip(seq.rewards, seq.rewards[1:], strict=False))
    if seq.negative:
        assert all(b < a for a, b in steps)
    else:
        assert all(b > a for a, b in steps)


def test_known_answer(env):
    res = search_claim(env, "c1", CLAIM, ["rel"], BfsConfig(prune_fraction=0.0))
    assert res.status == "improvable"
    assert res.record.reward0 == 0.5
    best = res.record.sequences[0]
    assert best.rewards == (0.5, 1.0)
    assert best.actions[0].kind.value == "remove"
    assert {best.queries[1]} <= {"cats budget", "mayor budget"}
    finals = {s.queries[-1] for s in res.record.sequences}
    assert {"cats budget", "mayor budget"} <= finals
    for seq in res.record.sequences:
        check_sequence(seq)
    gains = [s.gain for s in res.record.sequences]
    assert gains == sorted(gains, reverse=True)
    assert res.stats.candidates > 0 and res.stats.expanded >= 1


def test_skips_claims_at_max_and_without_relevant(env):
    assert search_claim(env, "c", "approved budget", ["rel"]).status == "at_max"
    res = search_claim(env, "c", CLAIM, [])
    assert res.status == "no_relevant" and not res.record.sequences


def test_min_gain_prunes_small_improvements(env):
    res = search_claim(env, "c1", CLAIM, ["rel"], BfsConfig(min_gain=2.0, prune_fraction=0.0))
    assert res.status == "no_improvement"
    assert res.stats.pruned_gain >= 2 and not res.record.sequences


def test_random_pruning_is_seeded(env):
    cfg = BfsConfig(prune_fraction=0.9, seed=3)
    a = search_claim(env, "c1", CLAIM, ["rel"], cfg)
    b = search_claim(env, "c1", CLAIM, ["rel"], cfg)
    assert a.record == b.record
    assert a.stats.pruned_random > 0
    assert a.stats.pruned_random + len({s.queries[1] for s in a.record.sequences}) >= 2


def test_top_sequences_and_negatives(env):
    res = search_claim(env, "c1", CLAIM, ["rel"], BfsConfig(top_sequences=1, negatives=2))
    pos = [s for s in res.record.sequences if not s.negative]
    neg = [s for s in res.record.sequences if s.negative]
    assert len(pos) == 1 and 1 <= len(neg) <= 2
    for seq in neg:
        check_sequence(seq)
        assert seq.rewards[-1] < res.record.reward0


CLAIMS = [
    RetrievalClaim(id="c1", text=CLAIM, relevant=("rel",)),
    RetrievalClaim(id="c2", text="approved budget", relevant=("rel",)),
    RetrievalClaim(id="c3", text="mayor dogs budget", relevant=("rel",)),
]


def test_generate_writes_counts_and_resumes(env, tmp_path):
    out = tmp_path / "run"
    config = generate(env, CLAIMS[:2], out, BfsConfig(), progress=False)
    assert config["counts"]["claims"] == 2 and config["counts"]["at_max"] == 1
    assert config["counts"]["improvable"] == 1
    assert config["reward"] == "rr@10" and config["depth"] == 4
    seen: list[str] = []
    config = generate(
        env, CLAIMS, out, BfsConfig(), progress=False, on_result=lambda r: seen.append(r.record.claim_id)
    )  # fmt: skip
    assert seen == ["c3"]  # finished claims are not redone
    assert config["counts"]["claims"] == 3
    records = {r.claim_id: r for r in tj.read(out)}
    assert set(records) == {"c1", "c3"}  # c2 at max: journal only
    assert set(tj.read_journal(out)) == {"c1", "c2", "c3"}
    with pytest.raises(ConfigError, match="other settings"):
        generate(env, CLAIMS, out, BfsConfig(depth=2), progress=False)
    # the claims' own mean reward and the oracle's (each claim's best sequence, if it improves)
    journal = tj.read_journal(out)
    best = {c: max([e["reward0"], *(s.rewards[-1] for s in records[c].sequences if not s.negative)])
            if c in records else e["reward0"] for c, e in journal.items()}  # fmt: skip
    summary = tj.summarize(out)
    assert summary["claim_reward"] == pytest.approx(sum(e["reward0"] for e in journal.values()) / 3)
    assert summary["oracle_reward"] == pytest.approx(sum(best.values()) / 3)
    assert summary["oracle_reward"] > summary["claim_reward"]  # c1 and c3 improve
    counts = config["counts"]
    assert (summary["claims"], summary["at_max"], summary["no_improvement"]) == (
        counts["claims"], counts["at_max"], counts["no_improvement"]
    )  # fmt: skip
    assert summary["claim_seconds"] == pytest.approx(sum(e["seconds"] for e in journal.values()))
    # a run stopped before its end has the counts of its start in config.json: the journal's count
    path = out / "config.json"
    stale = json.loads(path.read_text()) | {"counts": {}}
    path.write_text(json.dumps(stale))
    assert tj.summarize(out)["claims"] == 3 and tj.summarize(out)["at_max"] == summary["at_max"]


def test_process_pool_matches_inline(env, tmp_path):
    generate(env, CLAIMS, tmp_path / "a", BfsConfig(), progress=False)
    generate(env, CLAIMS, tmp_path / "b", BfsConfig(), workers=2, progress=False)
    a = sorted(tj.read(tmp_path / "a"), key=lambda r: r.claim_id)
    b = sorted(tj.read(tmp_path / "b"), key=lambda r: r.claim_id)
    assert a == b


@pytest.mark.slow
def test_ray_local_cluster(env, tmp_path):
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        config = generate(env, CLAIMS, tmp_path / "r", BfsConfig(), ray_address="auto", progress=False)  # fmt: skip
    finally:
        ray.shutdown()
    generate(env, CLAIMS, tmp_path / "i", BfsConfig(), progress=False)
    assert config["counts"]["claims"] == 3
    key = lambda r: r.claim_id  # noqa: E731
    assert sorted(tj.read(tmp_path / "r"), key=key) == sorted(tj.read(tmp_path / "i"), key=key)


# ----------------------------------------------------------------------------- trajectory files


def test_returns_to_go():
    assert tj.returns_to_go([0.1, 0.3, 0.4]) == pytest.approx([0.3, 0.1])
    assert tj.returns_to_go([0.1, 0.3, 0.4], "sparse") == pytest.approx([0.3, 0.3])
    assert tj.returns_to_go([0.5]) == []


def test_trajectory_files_round_trip_and_repair(tmp_path):
    seq = tj.Trajectory(
        queries=("a b", "a"), actions=(Action.parse("remove@1"),), rewards=(0.1, 0.5)
    )
    rec = tj.ClaimTrajectories(claim_id="x", claim="a b", relevant=("d",), reward0=0.1, sequences=(seq,))  # fmt: skip
    tj.write(tmp_path, [rec], {"retriever": "bm25"})
    assert list(tj.read(tmp_path)) == [rec]
    line = json.loads((tmp_path / tj.TRAJECTORIES).read_text())
    assert line["sequences"][0]["actions"] == [["remove", 1]]
    # a crash after the trajectories line but before the journal line
    with (tmp_path / tj.TRAJECTORIES).open("a") as f:
        f.write(json.dumps({**rec.to_dict(), "claim_id": "y"}) + "\n" + '{"claim_id": "z", "cl')
    with (tmp_path / tj.JOURNAL).open("a") as f:
        f.write('{"claim_id": "y", "sta')
    journal = tj.repair(tmp_path)
    assert set(journal) == {"x"}
    assert [r.claim_id for r in tj.read(tmp_path)] == ["x"]
    with pytest.raises(Exception, match="n\\+1"):
        tj.Trajectory(queries=("a",), actions=(Action.parse("remove@0"),), rewards=(0.1,))
    (tmp_path / tj.CONFIG).write_text('{"format_version": 99}')
    with pytest.raises(DataError, match="format_version"):
        list(tj.read(tmp_path))


def test_cli_bfs(tmp_path):
    claims = tmp_path / "claims.jsonl"
    corpus = tmp_path / "corpus.jsonl"
    claims.write_text(
        "".join(
            json.dumps({"id": c.id, "query": c.text, "relevant": list(c.relevant)}) + "\n"
            for c in CLAIMS
        )
    )
    corpus.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in DOCS))
    out = tmp_path / "out"
    args = ["rewrite", "bfs", "--claims", str(claims), "--corpus", str(corpus), "--out", str(out),
            "--reward", "rr@10", "--no-progress"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output.strip().splitlines()[-1])
    assert summary["claims"] == 3 and summary["improvable"] >= 1
    assert tj.read_config(out)["counts"] == {k: summary[k] for k in tj.read_config(out)["counts"]}
    bad = CliRunner().invoke(app, [*args[:-3], "--reward", "ndcg", "--no-progress"])
    assert bad.exit_code == 2 and "unknown metric" in bad.output
    # --skip-held-out leaves out exactly the claims train/eval --holdout would hold out
    from factseek.rewrite.splits import is_held_out

    for frac in (0.1, 0.5):  # c2 held out; all three held out
        kept = [c.id for c in CLAIMS if not is_held_out(c.id, frac)]
        out2 = tmp_path / f"skip{frac}"
        res = CliRunner().invoke(
            app, [*args[:7], str(out2), *args[8:], "--skip-held-out", str(frac)]
        )
        if not kept:
            assert res.exit_code != 0 and "no usable claims" in res.output
            continue
        assert res.exit_code == 0, res.output
        assert sorted(tj.read_journal(out2)) == sorted(kept)
