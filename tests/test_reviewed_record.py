"""What a reviewed verdict cites and says (issue 46): it rests on the cards the reviewer confirmed,
a reviewer's label is not replaced by one click, the verdict box leads with one plain sentence
and names its judge, and JSON clients get JSON errors."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest
from fastapi.testclient import TestClient

from factseek.report import render
from factseek.report.words import judge_words, verdict_sentence
from factseek.review.apply import reviewed, user_stance
from factseek.review.claimreview import claim_review
from factseek.review.feedback import FeedbackLog
from factseek.types import (
    Evidence,
    Report,
    StanceResult,
    Verdict,
    from_json,
)
from factseek.web.app import wants_json
from factseek.web.views import review
from web_fixtures import csrf_token, stored_run, web_client
from web_fixtures import off_topic_report as checked


def card(n: int, label: str, p: float, text: str) -> Evidence:
    rest = (1 - p) / 2
    probs = {x: (p if x == label else rest) for x in ("supports", "refutes", "nei")}
    return replace(
        checked().evidence[0],
        id=f"E{n}",
        text=text,
        stance=StanceResult(label=label, probs=probs, model="hand"),  # type: ignore[arg-type]
    )


@pytest.fixture
def log(tmp_path):
    return FeedbackLog(tmp_path / "h.sqlite")


def test_a_set_verdict_rests_on_the_confirmed_cards_only(log) -> None:
    report = checked()
    assert {"E1", "E2"} <= set(report.verdict.evidence_ids)  # the machine cites the off-topic E2
    log.add(1, "relevance", {"relevant": True}, user="maria", target="E3")
    log.add(1, "stance", {"label": "supports"}, user="maria", target="E4")
    log.add(1, "verdict", {"label": "true", "scale": "factseek"}, user="maria")
    out = reviewed(report, log.for_run(1))
    assert out.review.status == "set"
    assert out.review.citations == ("E3", "E4") and out.verdict.evidence_ids == ("E3", "E4")
    urls = [c["url"] for c in claim_review(out)["citation"]]
    assert urls == ["https://site3.example/story", "https://site4.example/story"]
    line = "Rests on E3 (site3.example), E4 (site4.example): the cards maria confirmed."
    assert line in render(out, "md") and line in render(out, "html")
    back = from_json(Report, render(out, "json"))
    assert back.review.citations == ("E3", "E4") and back.verdict.evidence_ids == ("E3", "E4")
    v = review(report, log.for_run(1)).verdict
    assert [c.id for c in v.rests_on] == ["E3", "E4"]
    assert (
        verdict_sentence(out)
        == "True: set by maria, resting on E3 and E4, the cards they confirmed."
    )
    # a confirmed card marked irrelevant later is no longer cited
    log.add(1, "relevance", {"relevant": False}, user="maria", target="E3")
    assert reviewed(report, log.for_run(1)).review.citations == ("E4",)


def test_a_set_verdict_with_nothing_confirmed_cites_nothing(log) -> None:
    log.add(1, "verdict", {"label": "false", "scale": "factseek"}, user="maria")
    out = reviewed(checked(), log.for_run(1))
    assert out.review.citations == () and out.verdict.evidence_ids == ()
    assert claim_review(out)["citation"] == []
    assert "Rests on maria's judgement alone: no card confirmed" in render(out, "md")


def test_every_decision_stays_in_the_notes_with_who_and_when(log) -> None:
    report = checked()
    first = log.add(1, "verdict", {"label": "false", "scale": "factseek"}, user="maria")
    log.add(1, "approve", {"label": "supported", "scale": "averitec", "judge": "j"}, user="li")
    out = reviewed(report, log.for_run(1))
    assert out.review.status == "approved" and out.review.reviewer == "li"
    assert f"verdict set to False by maria ({first.created}); replaced later" in out.notes


def test_the_verdict_sentence_comes_first_in_plain_words() -> None:
    cards = [
        card(1, "refutes", 0.55, "Burglaries rose, a resident said."),
        card(2, "supports", 0.59, "Burglaries fell 33 percent in Caldmere."),
    ]
    report = replace(
        checked(),
        evidence=tuple(cards),
        verdict=Verdict(judged=True, label="not-enough-evidence", scale="averitec",
                        judge="stance-rules:hand", abstained=True,
                        rationale="not enough evidence to decide: the evidence leans supported"
                        " with probability 0.31, below the 0.50 at which factseek says supported"),
    )  # fmt: skip
    assert verdict_sentence(report) == (
        "Not enough evidence: the best supporting card (E2, 0.59) is too weak, and E1 reads"
        " against it."
    )
    mine = replace(
        report, evidence=(cards[0], replace(cards[1], stance=user_stance("supports", "li")))
    )
    assert verdict_sentence(mine) == (
        "Not enough evidence: E2 (set by li) supports it, but the rules need more to decide, and E1"
        " reads against it."
    )
    assert judge_words(report.verdict) == "the stance rules, built in (stance-rules:hand)"
    assert judge_words(Verdict(judged=True, label="true", judge="user:maria")) == (
        "the reviewer maria"
    )
    rules = checked()
    assert verdict_sentence(rules).startswith("Supported: E1 (0.90) supports it, as do E2")


# ----------------------------------------------------------------------------- over HTTP


@pytest.fixture
def client(tmp_path):
    with web_client(tmp_path, "maria") as c:
        yield c


def stored(c: TestClient, report: Report) -> str:
    return stored_run(c, report, "maria")


def token(c: TestClient, path: str) -> str:
    return csrf_token(c, path)


def test_a_reviewers_label_is_not_replaced_by_one_click(client) -> None:
    url = stored(client, checked())
    t = token(client, url)
    client.post(f"{url}/cards/E3", data={"csrf_token": t, "action": "relevant"})
    client.post(f"{url}/verdict", data={"csrf_token": t, "label": "factseek:false"})
    html = client.get(url).text
    assert 'class="inline approve"' not in html  # no one-click approve over a set verdict
    assert 'id="replace-verdict"' in html and 'name="replace"' in html and "required" in html
    assert re.search(r'id="verdict-rests">Rests on <a href="#card-E3">E3</a>', html)
    row = client.get("/history").text.split("<tbody>")[1]
    assert "set by maria" in row and "rests on E3<" in row
    # the old page's approve button: refused, the reviewer's label stays
    r = client.post(f"{url}/approve", data={"csrf_token": t})
    assert r.status_code == 409 and "maria set the verdict to False" in r.text
    assert 'data-status="set"' in client.get(url).text
    # confirmed: the machine's verdict replaces it, and both decisions stay on record
    client.cookies.set("factseek_user", "li")
    r = client.post(f"{url}/approve", data={"csrf_token": t, "replace": "1"})
    assert r.status_code == 200
    html = client.get(url).text
    assert 'data-status="approved"' in html and "Approved by <b>li</b>" in html
    rows = client.get(url).text.split('id="corrections"')[1]
    assert "verdict set → false" in rows and "approved the machine verdict supported" in rows
    md = client.get(url + "/export.md").text
    assert "verdict set to False by maria (" in md and "replaced later" in md


def test_the_verdict_box_leads_with_a_sentence_and_names_its_judge(client) -> None:
    url = stored(client, checked())
    html = client.get(url).text
    head = html.index('id="verdict-headline"')
    assert head < html.index('id="verdict-confidence"')
    assert "Supported: E1 (0.90) supports it" in html[head : head + 200]
    assert "Judge: the stance rules, built in (stance-rules:hand)" in html
    index = client.get("/").text
    assert "none configured (serve --judge): the built-in stance rules judge" in index


@pytest.mark.parametrize(
    "path",
    [
        "/runs/{id}/claimreview.jsonld",  # 409: nobody reviewed it
        "/runs/999/claimreview.jsonld",
        "/runs/999/status",
        "/runs/999/automated-verdict.json",
        "/runs/999/export.json",
        "/runs/abc/status",
        "/runs/1/claimreview.jsonld?url=javascript:x",
    ],
)
def test_json_endpoints_answer_errors_in_json(client, path) -> None:
    rid = stored(client, checked()).rsplit("/", 1)[1]
    r = client.get(path.replace("{id}", rid))
    assert r.status_code >= 400
    assert r.headers["content-type"].startswith("application/json")
    body = r.json()
    assert set(body) == {"status", "error"} and body["status"] == r.status_code
    assert body["error"] and "\n" not in body["error"]
    assert r.headers["x-content-type-options"] == "nosniff"


def test_a_json_client_of_a_page_gets_json_and_a_browser_html(client) -> None:
    assert wants_json("/runs/1", "application/json") and not wants_json("/runs/1", "text/html")
    r = client.get("/runs/999", headers={"accept": "application/json"})
    assert r.status_code == 404 and r.json() == {
        "status": 404,
        "error": "no check #999 in the history",
    }
    r = client.get("/runs/999", headers={"accept": "text/html,*/*"})
    assert r.status_code == 404 and "<html" in r.text


def test_errors_answered_before_the_app_are_json_for_a_json_client(client) -> None:
    r = client.get("/runs/1/status", headers={"host": "evil.example"})
    assert r.status_code == 400 and r.json() == {"status": 400, "error": "Invalid host header"}
    assert r.headers["content-security-policy"].startswith("default-src 'none'")
    r = client.get("/history", headers={"host": "evil.example"})  # a browser's page: plain text
    assert r.status_code == 400 and r.text == "Invalid host header"


def test_claimreview_refusal_is_json(client) -> None:
    url = stored(client, checked())
    r = client.get(url + "/claimreview.jsonld")
    assert r.status_code == 409
    assert json.loads(r.text)["error"].startswith("no ClaimReview for check #")
