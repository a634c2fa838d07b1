"""The web app over HTTP (FastAPI's test client): check, review, correct, rerun, export, safety."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from factseek.review.history import History
from factseek.types import Claim, Report, Verdict, from_json
from factseek.web.app import WebSettings, create_app
from factseek.web.jobs import Runner
from web_fixtures import CLAIM, DOCS, carded_report, fake_parts

BASE = "http://127.0.0.1:8321"


@pytest.fixture
def client(tmp_path):
    settings = WebSettings(db=tmp_path / "h.sqlite", store=tmp_path, user="ana", organisation="")
    runner = Runner(History(settings.db), workers=2, build=fake_parts)
    app = create_app(settings, runner=runner)
    with TestClient(app, base_url=BASE) as c:
        c.get("/")  # sets the CSRF cookie
        yield c
    runner.close()


def token(c: TestClient, path: str = "/") -> str:
    html = c.get(path).text
    return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)


def wait(c: TestClient, url: str) -> dict:
    for _ in range(300):
        st = c.get(url + "/status").json()
        if st["status"] != "running":
            return st
        time.sleep(0.05)
    raise AssertionError(f"{url} still running")


def check(c: TestClient, claim: Claim = CLAIM, **extra: str) -> str:
    form = {
        "csrf_token": token(c),
        "claim": claim.text,
        "date": claim.date.isoformat() if claim.date else "",
        "speaker": claim.speaker or "",
        "venue": claim.venue or "",
        **extra,
    }
    r = c.post("/check", data=form, follow_redirects=False)
    assert r.status_code == 303, r.text
    url = r.headers["location"]
    assert wait(c, url)["status"] == "done"
    return url


def stored(c: TestClient, report: Report) -> str:
    history: History = c.app.state.history
    rid = history.create(report.claim, user="ana")
    history.finish(rid, report)
    return f"/runs/{rid}"


def test_every_page_has_a_strict_csp_and_no_inline_script(client) -> None:
    url = check(client)
    for path in ("/", "/history", url):
        r = client.get(path)
        assert r.status_code == 200
        csp = r.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "default-src 'none'" in csp
        assert "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
        assert r.headers["x-content-type-options"] == "nosniff"
        assert not re.search(r"<script(?![^>]*\bsrc=)", r.text)  # scripts only from files
        assert " style=" not in r.text and "<style" not in r.text


def test_check_then_review_shows_verdict_questions_and_cards(client) -> None:
    url = check(client)
    st = client.get(url + "/status").json()
    assert st["stages"][0] == "decompose" and st["stages"][-1] == "judge"
    html = client.get(url).text
    assert 'id="verdict-label">Half True<' in html and "tone-mixed" in html
    assert "Did the council spend 3 million dollars on the bridge?" in html
    assert "ledger.example" in html and "chars " in html
    assert html.index('id="verdict"') < html.index("Subquestions")  # the verdict leads
    assert "native filters" not in html and "emulated:" not in html  # plain words (issue 16)


def test_progress_streams_as_server_sent_events(client) -> None:
    url = check(client)
    with client.stream("GET", url + "/events") as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        body = "".join(r.iter_text())
    stages = re.findall(r"event: stage\ndata: \"(\w+)\"", body)
    assert stages == [
        "decompose",
        "rewrite",
        "search",
        "documents",
        "passages",
        "summarize",
        "evidence",
        "judge",
    ]
    assert f'event: done\ndata: "{url}"' in body


def test_forms_need_the_csrf_token_and_same_origin(client) -> None:
    r = client.post("/check", data={"claim": CLAIM.text}, follow_redirects=False)
    assert r.status_code == 403 and "form token" in r.text
    r = client.post("/check", data={"claim": CLAIM.text, "csrf_token": "forged"})
    assert r.status_code == 403
    r = client.post(
        "/check",
        data={"claim": CLAIM.text, "csrf_token": token(client)},
        headers={"Origin": "https://evil.example"},
    )
    assert r.status_code == 403 and "cross-site" in r.text
    cookie = client.cookies.get("factseek_csrf")
    assert cookie and 'factseek_csrf="' not in client.get("/").text  # never echoed in a page
    assert len(client.app.state.history.list()) == 0


def test_foreign_host_header_is_refused(client) -> None:
    r = client.get("/", headers={"Host": "attacker.example"})
    assert r.status_code == 400


def test_page_content_is_escaped_and_bad_links_are_not_links(client) -> None:
    evil = "<script>alert(1)</script> said <b>x</b>"
    report = carded_report()
    ev = report.evidence[0]
    bad = ev.__class__(**{**ev.__dict__, "url": "javascript:alert(2)", "title": "<img src=x>"})
    report = report.__class__(
        **{**report.__dict__, "claim": Claim(text=evil), "evidence": (bad, report.evidence[1])}
    )
    html = client.get(stored(client, report)).text
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert 'href="javascript:' not in html and "&lt;img src=x&gt;" in html


def test_bad_input_shows_the_form_again_with_one_line(client) -> None:
    r = client.post(
        "/check", data={"csrf_token": token(client), "claim": "x", "date": "2099-01-01"}
    )
    assert r.status_code == 400 and "in the future" in r.text
    r = client.post("/check", data={"csrf_token": token(client), "claim": "x", "llm": "gpt-9"})
    assert r.status_code == 400 and "unknown llm" in r.text
    assert client.get("/runs/999").status_code == 404


def test_check_form_chooses_the_date_basis_and_keeps_pdfs(client) -> None:
    html = client.get("/").text
    assert 'name="date_basis"' in html and 'name="keep_pdf"' in html
    built = []
    client.app.state.runner._build = lambda options: built.append(options) or fake_parts()
    url = check(client, date_basis="published", keep_pdf="1")
    rec = client.app.state.history.get(int(url.rsplit("/", 1)[1]))
    assert rec.report.config["temporal"]["date_basis"] == "published"
    assert rec.report.config["keep_pdf"] is True and built[-1].keep_pdf is True
    # a rerun with edited questions keeps the run's choices
    t = token(client, url)
    r = client.post(
        f"{url}/questions",
        data={"csrf_token": t, "q": ["Who built the bridge?"]},
        follow_redirects=False,
    )
    rerun = r.headers["location"]
    assert wait(client, rerun)["status"] == "done"
    new = client.app.state.history.get(int(rerun.rsplit("/", 1)[1]))
    assert new.report.config["temporal"]["date_basis"] == "published"
    default = client.app.state.history.get(int(check(client).rsplit("/", 1)[1]))
    assert default.report.config["temporal"]["date_basis"] == "modified"
    assert default.report.config["keep_pdf"] is False
    assert built[-1].stance == "default"  # the stance model serve was started with
    r = client.post(
        "/check", data={"csrf_token": token(client), "claim": "x", "date_basis": "latest"}
    )
    assert r.status_code == 400 and "unknown date basis" in r.text


def test_review_names_page_date_removals_in_words(client) -> None:
    from dataclasses import replace

    from factseek.constraints.hits import PAGE_REMOVED
    from factseek.types import FunnelRow

    report = replace(
        carded_report(),
        removed={"page:modified-after-claim": 1, "claim-day": 2},
        funnel=(
            FunnelRow(stage="pages read", documents=3),
            FunnelRow(stage=f"{PAGE_REMOVED}modified-after-claim", documents=1),
        ),
    )
    html = client.get(stored(client, report)).text
    assert "modified on or after the claim&#39;s day (by the page&#39;s own dates): 1" in html
    assert "published on the claim&#39;s day: 2" in html
    assert "removed by the page&#39;s own dates: modified on or after the claim&#39;s day" in html
    assert "page:modified-after-claim" not in html


def test_corrections_are_kept_with_who_and_when(client) -> None:
    url = stored(client, carded_report())
    html = client.get(url).text
    assert "Supports" in html and "80%" in html and "a-no" in html and "Confidence 66%" in html
    t = token(client, url)
    client.cookies.set("factseek_user", "maria")
    r = client.post(f"{url}/cards/E2", data={"csrf_token": t, "action": "irrelevant"})
    assert r.status_code == 200
    client.post(f"{url}/cards/E1", data={"csrf_token": t, "action": "stance", "label": "refutes"})
    client.post(
        f"{url}/verdict",
        data={"csrf_token": t, "label": "politifact:false", "note": "It cost 5M"},
    )
    assert (
        client.post(f"{url}/cards/E9", data={"csrf_token": t, "action": "irrelevant"}).status_code
        == 404
    )
    assert (
        client.post(f"{url}/verdict", data={"csrf_token": t, "label": "politifact:meh"}).status_code
        == 400
    )
    html = client.get(url).text
    assert 'id="verdict-label">False<' in html and "Set by <b>maria</b>" in html
    assert "The machine said: Refuted" in html and "marked irrelevant by maria" in html
    assert "Refutes · set by maria" in html
    log = client.app.state.feedback.for_run(int(url.rsplit("/", 1)[1]))
    assert [(c.kind, c.target, c.user) for c in log] == [
        ("relevance", "E2", "maria"), ("stance", "E1", "maria"), ("verdict", "", "maria")
    ]  # fmt: skip
    data = json.loads(client.get(url + "/export.json").text)
    assert data["verdict"]["label"] == "false" and [e["id"] for e in data["evidence"]] == ["E1"]


def test_edit_questions_reruns_from_search(client) -> None:
    url = check(client)
    t = token(client, url)
    edited = ["Did the bridge cost 5 million dollars?", "", "Who approved the bridge budget?"]
    r = client.post(f"{url}/questions", data={"csrf_token": t, "q": edited}, follow_redirects=False)
    assert r.status_code == 303
    new = r.headers["location"]
    assert new != url and wait(client, new)["status"] == "done"
    rid = int(new.rsplit("/", 1)[1])
    rec = client.app.state.history.get(rid)
    assert rec.parent_id == int(url.rsplit("/", 1)[1])
    assert [q.text for q in rec.report.questions] == [edited[0], edited[2]]
    assert {q.source for q in rec.report.questions} == {"user"}
    assert rec.report.timings["decompose"] < 0.05
    html = client.get(new).text
    assert "rerun of" in html and "edited by the reviewer" in html
    log = client.app.state.feedback.for_run(rec.parent_id)
    assert log[0].kind == "questions" and log[0].value["rerun_id"] == rid
    r = client.post(f"{url}/questions", data={"csrf_token": t, "q": ["", " "]})
    assert r.status_code == 400


def test_exports_json_md_html_and_claimreview(client) -> None:
    url = stored(client, carded_report())
    assert client.get(url + "/claimreview.jsonld").status_code == 409  # nobody reviewed it
    client.cookies.set("factseek_user", "maria")
    r = client.post(f"{url}/approve", data={"csrf_token": token(client, url)})
    assert r.status_code == 200
    r = client.get(url + "/export.json")
    assert r.headers["content-disposition"].startswith("attachment")
    assert from_json(Report, r.text).claim == CLAIM
    assert "# factseek report" in client.get(url + "/export.md").text
    r = client.get(url + "/export.html?inline=true")
    assert (
        r.text.startswith("<!doctype html>")
        and "unsafe-inline" in r.headers["content-security-policy"]
    )
    assert client.get(url + "/export.pdf").status_code == 404
    r = client.get(
        url + "/claimreview.jsonld", params={"url": "https://desk.example/1", "org": "Desk"}
    )
    cr = r.json()
    assert r.headers["content-type"].startswith("application/ld+json")
    assert cr["@type"] == "ClaimReview" and cr["author"] == {
        "@type": "Organization",
        "name": "Desk",
    }
    assert cr["reviewRating"]["alternateName"] == "Refuted"
    assert cr["reviewRating"]["ratingValue"] == 1 and cr["reviewRating"]["bestRating"] == 5
    assert [c["url"] for c in cr["citation"]] == [DOCS[0].url, DOCS[1].url]
    r = client.get(url + "/claimreview.jsonld", params={"url": "javascript:x"})
    assert r.status_code == 400
    nj = stored(client, Report(claim=CLAIM))
    assert client.get(nj + "/claimreview.jsonld").status_code == 409
    r = client.post(f"{nj}/approve", data={"csrf_token": token(client, nj)})
    assert r.status_code == 400 and "nothing to approve" in r.text


def test_history_search_reopen_delete(client) -> None:
    a = check(client)
    b = stored(client, carded_report().__class__(claim=Claim(text="Rain fell on Tuesday.")))
    html = client.get("/history", params={"q": "bridge"}).text
    assert f'href="{a}"' in html and f'href="{b}"' not in html
    assert client.get(a).status_code == 200
    r = client.post(f"{b}/delete", data={"csrf_token": token(client)}, follow_redirects=False)
    assert r.status_code == 303 and client.get(b).status_code == 404


def test_user_name_cookie_and_no_open_redirect(client) -> None:
    t = token(client)
    r = client.post("/user", data={"csrf_token": t, "user": "  Li\nWei ", "next": "//evil.example"}, follow_redirects=False)  # fmt: skip
    assert r.headers["location"] == "/" and 'value="Li Wei"' in client.get("/").text
    r = client.post("/user", data={"csrf_token": t, "user": "x", "next": "/history"}, follow_redirects=False)  # fmt: skip
    assert r.headers["location"] == "/history"


def test_failed_run_is_shown_with_one_line(tmp_path) -> None:
    from factseek.errors import SearchError

    def broken(options):
        raise SearchError("the store is corrupt\nTraceback...")

    settings = WebSettings(db=tmp_path / "h.sqlite", store=tmp_path)
    runner = Runner(History(settings.db), build=broken)
    with TestClient(create_app(settings, runner=runner), base_url=BASE) as c:
        t = token(c)
        r = c.post("/check", data={"csrf_token": t, "claim": CLAIM.text}, follow_redirects=False)
        url = r.headers["location"]
        assert wait(c, url)["status"] == "failed"
        html = c.get(url).text
        assert "the store is corrupt" in html and "Traceback" not in html
    runner.close()


def test_serve_binds_loopback_and_warns_otherwise() -> None:
    from factseek.web.security import allowed_hosts
    from factseek.web.server import exposure_warning

    assert exposure_warning("127.0.0.1") == "" and exposure_warning("localhost") == ""
    assert "anyone who can reach" in exposure_warning("0.0.0.0")
    assert "attacker.example" not in allowed_hosts("127.0.0.1")
    assert "192.168.1.5" in allowed_hosts("192.168.1.5")


def test_serve_help_and_missing_extra_hint(monkeypatch) -> None:
    from typer.testing import CliRunner

    from factseek.cli import app

    res = CliRunner().invoke(app, ["serve", "--help"])
    assert res.exit_code == 0 and "--store" in res.output and "127.0.0.1" in res.output
    assert "--stance" in res.output
    from factseek.web.app import WebSettings, check_options

    chosen = WebSettings(db=Path("h.sqlite"), store=Path("s"), stance="small")
    assert check_options(chosen, {}).stance == "small"
    import builtins

    real = builtins.__import__

    def no_uvicorn(name, *a, **k):
        if name == "uvicorn":
            raise ImportError("no uvicorn", name="uvicorn")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_uvicorn)
    res = CliRunner().invoke(app, ["serve"])
    assert res.exit_code == 2 and 'pip install "factseek[web]"' in res.output


@pytest.mark.slow
def test_readme_serve_command_starts_and_answers(tmp_path) -> None:
    """The README's `factseek serve --store ... --port ... --user ...` as a real process."""
    import os
    import subprocess
    import sys

    import httpx

    from factseek.demo import demo_store
    from factseek.web.server import free_port

    store = demo_store(tmp_path / "my-store")
    port = free_port()
    env = {**os.environ, "FACTSEEK_HOME": str(tmp_path / "home")}
    cmd = [sys.executable, "-m", "factseek", "serve", "--store", str(store), "--port", str(port)]
    proc = subprocess.Popen([*cmd, "--user", "maria"], env=env, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(200):
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/", timeout=2)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        assert r.status_code == 200 and 'value="maria"' in r.text
        assert (tmp_path / "home" / "history.sqlite").exists()
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_publishing_needs_a_named_reviewer_and_history_shows_the_review(client) -> None:
    url = stored(client, carded_report())
    html = client.get(url).text
    assert "Machine verdict · not reviewed" in html and 'id="claimreview-refused"' in html
    assert "<meter" not in html  # no quality-style meter under a verdict
    r = client.get(url + "/claimreview.jsonld")
    assert r.status_code == 409 and "no reviewer has approved or set" in r.text
    auto = client.get(url + "/automated-verdict.json").json()
    assert auto["automated"] is True and auto["verdict"]["label"] == "refuted"
    t = token(client, url)
    client.post("/user", data={"csrf_token": t, "user": " "})  # no name: no decision
    assert client.cookies.get("factseek_user") == "anonymous"
    r = client.post(f"{url}/approve", data={"csrf_token": t})
    assert r.status_code == 400 and "set your reviewer name" in r.text
    client.post("/user", data={"csrf_token": t, "user": "maria"})
    assert client.post(f"{url}/approve", data={"csrf_token": t}).status_code == 200
    html = client.get(url).text
    assert "Reviewed verdict" in html and "Approved by <b>maria</b>" in html
    assert client.get(url + "/claimreview.jsonld").status_code == 200
    row = client.get("/history").text.split("<tbody>")[1]
    assert 'class="vtag tone-bad">Refuted<' in row and "approved by maria" in row
    # a correction that changes the machine's verdict makes the approval outdated
    client.post(f"{url}/cards/E2", data={"csrf_token": t, "action": "irrelevant"})
    html = client.get(url).text
    assert "approval outdated" in html and "corrections since changed" in html
    assert client.get(url + "/claimreview.jsonld").status_code == 409
    row = client.get("/history").text.split("<tbody>")[1]
    assert 'class="vtag tone-good">Supported<' in row and "approval outdated" in row
    md = client.get(url + "/export.md").text
    assert "**supported**" in md and "the machine said no 0.70" in md
    assert "maria approved Refuted" in md


def test_a_rerun_carries_corrections_forward(client) -> None:
    url = check(client)  # summary cards S1.. (fake parts have no stance model)
    rid = int(url.rsplit("/", 1)[1])
    report = client.app.state.history.get(rid).report
    first = next(i for i, s in enumerate(report.summaries, 1) if s.relevant)
    t = token(client, url)
    client.cookies.set("factseek_user", "maria")
    client.post(f"{url}/cards/S{first}", data={"csrf_token": t, "action": "irrelevant"})
    client.post(f"{url}/verdict", data={"csrf_token": t, "label": "factseek:false"})
    questions = [q.text for q in report.questions]
    r = client.post(
        f"{url}/questions", data={"csrf_token": t, "q": questions}, follow_redirects=False
    )
    new = r.headers["location"]
    assert wait(client, new)["status"] == "done"
    html = client.get(new).text
    assert 'id="carried"' in html and f"#{rid}" in html
    assert f"S{first} marked irrelevant by maria → now" in html
    assert "verdict set to false by maria" in html and "decided on each run" in html
    log = client.app.state.feedback.for_run(int(new.rsplit("/", 1)[1]))
    carried = [c for c in log if c.kind == "relevance"]
    assert carried and carried[0].user == "maria"
    assert carried[0].value["carried_from"] == {"run": rid, "card": f"S{first}"}
    assert "marked irrelevant by maria" in html  # the carried mark is in force on the rerun


def test_the_review_page_says_how_far_to_trust_a_cards_stance(client) -> None:
    from dataclasses import replace

    said = "on real-world evidence it never trained on (WiCE), a “supports” reading was <b>"
    report = carded_report()
    url = stored(client, replace(report, config={**report.config, "stance_reliability": said}))
    page = client.get(url).text
    line = page.index('id="stance-reliability"')
    assert "How far to trust a card&#39;s stance: on real-world evidence" in page
    assert "&lt;b&gt;" in page and line < page.index('id="card-E1"')
    plain = client.get(stored(client, report)).text
    assert 'id="stance-reliability"' not in plain


def test_the_review_page_says_how_far_to_trust_the_claims_answer(client) -> None:
    from dataclasses import replace

    said = "where it was measured (dev), when the claim itself was answered “no” it was <b>"
    report = carded_report()
    assert any(a.answer in ("yes", "no") for a in report.answers)
    url = stored(client, replace(report, config={**report.config, "answer_reliability": said}))
    page = client.get(url).text
    assert 'id="answer-reliability"' in page and "How far to trust an answer: where" in page
    assert "· strength 0." in page  # an answer's mass, not a percentage that reads as measured
    assert "&lt;b&gt;" in page and "<b>." not in page
    assert 'id="answer-reliability"' not in client.get(stored(client, report)).text


def test_the_review_page_says_when_a_cards_figure_differs(client) -> None:
    from dataclasses import replace

    report = carded_report()
    first = replace(report.evidence[0], figures="this says <18%>; the question, 40 percent")
    page = client.get(stored(client, replace(report, evidence=(first, *report.evidence[1:])))).text
    card = page[page.index('id="card-E1"') :]
    assert "compare the figures: this says &lt;18%&gt;; the question, 40 percent" in card
    assert "compare the figures" not in client.get(stored(client, report)).text


def test_an_abstentions_best_card_set_by_a_reviewer_shows_who_not_a_probability(client) -> None:
    from dataclasses import replace

    report = carded_report()
    held = Verdict(judged=True, label="not-enough-evidence", scale="averitec",
                   judge="evidence-model:x", abstained=True)  # fmt: skip
    url = stored(client, replace(report, verdict=held))  # another judge: not rerun
    box = client.get(url).text.split('id="abstained"')[1].split("</div>")[0]
    assert "E1</a> ledger.example (80%)" in box and "E2</a> post.example (70%)" in box
    client.cookies.set("factseek_user", "maria")
    t = token(client, url)
    client.post(f"{url}/cards/E2", data={"csrf_token": t, "action": "stance", "label": "refutes"})
    box = client.get(url).text.split('id="abstained"')[1].split("</div>")[0]
    assert "E2</a> post.example (set by maria)" in box and "100%" not in box
