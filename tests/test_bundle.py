from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from factseek.constraints.hits import Constraints
from factseek.errors import BundleError, RateLimited
from factseek.llm.base import FunctionLLM
from factseek.runs.bundle import Recorder, Replayer
from factseek.search import Capabilities, FunctionSearch, constrained_search
from factseek.search.brave import BraveSearch
from factseek.types import DateEvidence, Document, FetchFailure, Hit, Query, to_json

C = Constraints(before=dt.date(2021, 6, 1))


def live_search() -> FunctionSearch:
    def fn(query: str, k: int) -> list[Hit]:
        if query == "flaky":
            raise RateLimited("brave: rate limited after 4 attempts", retry_after=3.0)
        return [
            Hit(
                url=f"https://site{i}.example/{query.replace(' ', '-')}",
                title=f"{query} {i}",
                snippet="snippet é",
                published=dt.date(2021, 1, i + 1) if i % 2 else None,
                rank=i + 1,
                score=1.0 / (i + 1),
                backend="live",
                query=query,
            )
            for i in range(k)
        ]

    return FunctionSearch(
        fn, name="live", capabilities=Capabilities(date_filter=True, max_results=20)
    )


class LiveFetcher:
    def __init__(self) -> None:
        self.calls = 0

    def fetch(self, urls: list[str]) -> tuple[list[Document], list[FetchFailure]]:
        self.calls += 1
        docs, failures = [], []
        for u in dict.fromkeys(urls):
            if "site3" in u:
                failures.append(FetchFailure(url=u, error="HTTP 404"))
                continue
            docs.append(
                Document(
                    url=u,
                    text=f"Text of {u}. Ünïcode — quotes “ok”.",
                    title="t",
                    published=dt.date(2020, 5, 5),
                    domain="example",
                    date_evidence=(DateEvidence(source="json-ld", date=dt.date(2020, 5, 5)),),
                    meta={"extractor": "trafilatura"},
                )
            )
        return docs, failures


def live_llm() -> FunctionLLM:
    return FunctionLLM(lambda msgs, p: f"summary[{p.sample}] of {msgs[-1]['content'][:30]}")


def run(backend: Any, fetcher: Any, llm: Any) -> str:
    """A miniature pipeline: search two queries, fetch the kept hits, summarize each page."""
    out: dict[str, Any] = {}
    for q in ("city budget vote", "mayor housing bill", "flaky"):
        r = constrained_search(backend, Query(text=q, question=q), 4, C)
        kept = [h.url for h, d in zip(r.hits, r.decisions, strict=True) if d.kept]
        docs, failures = fetcher.fetch(kept + kept[:1])
        outputs = (
            llm.generate([d.text for d in docs], n=2, temperature=0.7, stop=["\n"]) if docs else []
        )
        out[q] = {"result": r, "docs": docs, "failures": failures, "llm": outputs}
    return to_json(out)


def files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_record_replay_round_trip_byte_for_byte(tmp_path: Path) -> None:
    rec = Recorder(tmp_path / "a")
    live = run(
        rec.wrap_search(live_search()), rec.wrap_fetcher(LiveFetcher()), rec.wrap_llm(live_llm())
    )

    rep = Replayer(tmp_path / "a")
    again = Recorder(tmp_path / "b")
    replayed = run(
        again.wrap_search(rep.search_backend()),
        again.wrap_fetcher(rep.fetcher()),
        again.wrap_llm(rep.llm()),
    )
    assert replayed == live
    a, b = files(tmp_path / "a"), files(tmp_path / "b")
    assert a == b
    assert {"config.json", "search.jsonl", "llm.jsonl", "pages/index.jsonl"} <= set(a)
    assert sum(name.endswith(".json.gz") for name in a) == 6  # 2 queries x 3 fetched pages
    # the recorded error replays as the same error, so the report says the same thing
    assert json.loads(live)["flaky"]["result"]["error"] == "brave: rate limited after 4 attempts"


def test_replay_refuses_unrecorded_requests(tmp_path: Path) -> None:
    rec = Recorder(tmp_path)
    rec.wrap_search(live_search()).search("known", 3, C)
    rec.wrap_fetcher(LiveFetcher()).fetch(["https://a.example/x"])
    rec.wrap_llm(live_llm()).generate(["hello"])
    rep = Replayer(tmp_path)
    backend = rep.search_backend()
    assert backend.name == "live" and backend.capabilities.date_filter
    assert len(backend.search("known", 3, C)) == 3
    with pytest.raises(BundleError, match="no recorded live search for 'unknown'"):
        backend.search("unknown", 3, C)
    with pytest.raises(BundleError, match="no recorded"):
        backend.search("known", 4, C)  # a different k is a different request
    with pytest.raises(BundleError, match="page not recorded"):
        rep.fetcher().fetch(["https://b.example/y"])
    llm = rep.llm()
    assert llm.generate(["hello"]) == live_llm().generate(["hello"])
    with pytest.raises(BundleError, match="no recorded LLM call"):
        llm.generate(["hello"], temperature=0.5)


def test_keys_are_never_recorded(tmp_path: Path) -> None:
    key = "BSA-very-secret-key"
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(
            200, json={"web": {"results": [{"url": "https://x.example/", "title": "x"}]}}
        )

    brave = BraveSearch(
        api_key=key, base_url="https://brave.test/res/v1", transport=httpx.MockTransport(handler)
    )
    Recorder(tmp_path).wrap_search(brave).search("q", 3, C)
    assert seen[0].headers["x-subscription-token"] == key
    for name, data in files(tmp_path).items():
        assert key.encode() not in data, name


def test_not_a_bundle(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match="not an evidence bundle"):
        Replayer(tmp_path)
    (tmp_path / "config.json").write_text(
        '{"kind": "factseek-evidence-bundle", "format_version": 99}'
    )
    with pytest.raises(BundleError, match="unsupported bundle"):
        Replayer(tmp_path)
    with pytest.raises(BundleError):
        Recorder(tmp_path)


def test_damaged_page_is_detected(tmp_path: Path) -> None:
    rec = Recorder(tmp_path)
    rec.wrap_fetcher(LiveFetcher()).fetch(["https://a.example/x"])
    page = next((tmp_path / "pages").glob("*.json.gz"))
    page.write_bytes(b"junk")
    with pytest.raises(BundleError, match="damaged"):
        Replayer(tmp_path).fetcher().fetch(["https://a.example/x"])


def test_repeated_requests_replay_in_order(tmp_path: Path) -> None:
    answers = iter(["first", "second"])
    llm = FunctionLLM(lambda msgs, p: next(answers))
    rec = Recorder(tmp_path).wrap_llm(llm)
    assert rec.generate(["same"]) == [["first"]]
    assert rec.generate(["same"]) == [["second"]]
    rep = Replayer(tmp_path).llm()
    assert [rep.generate(["same"]) for _ in range(3)] == [[["first"]], [["second"]], [["second"]]]


# ----------------------------------------------------------------------------- compare-runs


def report(claim_id: str, *urls_kept: tuple[str, bool]) -> str:
    from factseek.types import Claim, ConstraintDecision, QueryResult, Report

    hits = tuple(Hit(url=u) for u, _ in urls_kept)
    decisions = tuple(
        ConstraintDecision(url=u, kept=k, reason="ok" if k else "undated") for u, k in urls_kept
    )
    result = QueryResult(query=Query(text="q", question="q"), hits=hits, decisions=decisions)
    return to_json(Report(claim=Claim(text=f"claim {claim_id}", id=claim_id), results=(result,)))


def test_jaccard_by_hand() -> None:
    from factseek.runs.compare import jaccard

    assert jaccard({"a", "b", "c"}, {"b", "c", "d"}) == 0.5
    assert jaccard({"a"}, {"a"}) == 1.0
    assert jaccard({"a"}, set()) == 0.0
    assert jaccard(set(), set()) is None


def test_compare_runs_reports(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from factseek.cli import app

    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "c1.json").write_text(report("c1", ("u1", True), ("u2", True), ("u3", False)))
    (a / "c2.json").write_text(report("c2", ("u9", True)))
    (a / "only-a.json").write_text(report("c3"))
    # B as one JSONL journal
    (b / "run.jsonl").write_text(
        report("c1", ("u2", True), ("u3", True), ("u4", False)).replace("\n", "")
        + "\n"
        + report("c2", ("u8", True)).replace("\n", "")
        + "\n"
    )
    result = CliRunner().invoke(app, ["compare-runs", str(a), str(b), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    rows = {r["key"]: r for r in data["rows"]}
    assert rows["c1"]["jaccard"] == pytest.approx(2 / 4)  # {u1,u2,u3} vs {u2,u3,u4}
    assert rows["c2"]["jaccard"] == 0.0
    assert data["mean"] == pytest.approx(0.25)
    assert data["only_a"] == ["c3"] and data["unit"] == "claim"

    kept = CliRunner().invoke(app, ["compare-runs", str(a), str(b), "--kept", "--json"])
    rows = {r["key"]: r for r in json.loads(kept.output)["rows"]}
    assert rows["c1"]["jaccard"] == pytest.approx(1 / 3)  # {u1,u2} vs {u2,u3}

    text = CliRunner().invoke(app, ["compare-runs", str(a / "c1.json"), str(b)])
    assert text.exit_code == 0
    assert (
        "c1" in text.output
        and "0.500" in text.output
        and "mean Jaccard over 1 claim(s): 0.500" in text.output
    )


def test_compare_runs_bundles_and_errors(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from factseek.cli import app

    for name, shift in (("a", 0), ("b", 2)):
        backend = FunctionSearch(
            lambda q, k, s=shift: [Hit(url=f"https://x/{i + s}") for i in range(k)]
        )
        Recorder(tmp_path / name).wrap_search(backend).search("q1", 4, C)
    result = CliRunner().invoke(
        app, ["compare-runs", str(tmp_path / "a"), str(tmp_path / "b"), "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["unit"] == "query" and data["rows"][0]["jaccard"] == pytest.approx(2 / 6)

    (tmp_path / "r.json").write_text(report("c1", ("u", True)))
    mixed = CliRunner().invoke(app, ["compare-runs", str(tmp_path / "a"), str(tmp_path / "r.json")])
    assert mixed.exit_code == 2 and "cannot compare" in mixed.output
    missing = CliRunner().invoke(app, ["compare-runs", str(tmp_path / "nope"), str(tmp_path / "a")])
    assert missing.exit_code == 2
    (tmp_path / "bad.json").write_text("{not json")
    bad = CliRunner().invoke(
        app, ["compare-runs", str(tmp_path / "bad.json"), str(tmp_path / "r.json")]
    )
    assert bad.exit_code == 2 and "not valid JSON" in bad.output


def test_llm_usage_replays_as_recorded(tmp_path: Path) -> None:
    from factseek.llm.base import Price

    llm = FunctionLLM(lambda msgs, p: "answer", price=Price(prompt=1.0, completion=2.0))
    rec = Recorder(tmp_path).wrap_llm(llm)
    rec.generate(["a", "b"], n=2)
    llm.usage.add(prompt_tokens=10, completion_tokens=5)  # outside any call: not recorded
    rec.generate(["c"])
    replayed = Replayer(tmp_path).llm()
    replayed.generate(["a", "b"], n=2)
    replayed.generate(["c"])
    assert dict(replayed.usage) == {
        **dict(llm.usage),
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "cost_usd": 0.0,
    }
    assert replayed.usage.requests == 5
