"""Reviewer names and embeddable JSON-LD (issue 47, items 1-3): any name a person can type works,
"anonymous" is no one in any case or width, and ClaimReview JSON is safe inside a page."""

from __future__ import annotations

import json
import re

import pytest
from fastapi.testclient import TestClient

from factseek.review.claimreview import dumps, refusal
from factseek.review.export import export
from factseek.review.feedback import ANONYMOUS, FeedbackLog, clean_user, is_anonymous
from factseek.review.history import History
from factseek.types import ReviewRecord
from factseek.web.app import user_name
from web_fixtures import carded_report, csrf_token, stored_run, web_client

NAMES = {
    "Мария": "Мария",
    "Ｍａｒｉａ": "Maria",  # full-width letters read as the letters
    "José\u200b Núñez": "José Núñez",  # a zero-width space is dropped
    "李 明": "李 明",
    "  zoë\t\n o'neil  ": "zoë o'neil",
    "\u202eadmin": "admin",  # direction overrides are not shown
    "🦉 owl": "🦉 owl",
}
ANONYMOUS_FORMS = ["anonymous", "Anonymous", "ANONYMOUS", "Ａｎｏｎｙｍｏｕｓ", "anon\u200bymous",
                   "ANONYM\u00adOUS", "\u200b", "", "   "]  # fmt: skip


@pytest.mark.parametrize(("typed", "stored"), NAMES.items())
def test_clean_user_keeps_any_typed_name(typed, stored) -> None:
    assert clean_user(typed) == stored and not is_anonymous(typed)


@pytest.mark.parametrize("typed", ANONYMOUS_FORMS)
def test_anonymous_in_any_case_or_width_is_no_one(typed) -> None:
    assert is_anonymous(typed) and clean_user(typed) == ANONYMOUS


def test_an_old_record_by_anonymous_in_capitals_is_never_published() -> None:
    rec = ReviewRecord(status="set", reviewer="ANONYMOUS", label="true", rating_name="True")
    assert "no named reviewer" in refusal(rec)


@pytest.fixture
def client(tmp_path):
    with web_client(tmp_path, "anonymous") as c:
        yield c


def stored(c: TestClient) -> str:
    return stored_run(c, carded_report(), "ana")


token = csrf_token


@pytest.mark.parametrize(("typed", "shown"), NAMES.items())
def test_a_name_outside_latin1_is_a_reviewer_name(client, typed, shown) -> None:
    url = stored(client)
    r = client.post("/user", data={"csrf_token": token(client), "user": typed, "next": url},
                    follow_redirects=False)  # fmt: skip
    assert r.status_code == 303 and r.headers["x-content-type-options"] == "nosniff"
    cookie = r.headers["set-cookie"]
    assert cookie.isascii() and user_name(client.cookies.get("factseek_user")) == shown
    assert client.post(f"{url}/approve", data={"csrf_token": token(client, url)}).status_code == 200
    html = client.get(url).text
    assert f"approved by {shown}" in html.replace("&#39;", "'")
    data = client.get(url + "/claimreview.jsonld").json()
    assert data["author"] == {"@type": "Person", "name": shown}


@pytest.mark.parametrize("typed", ["Anonymous", "ANONYMOUS", "Ａｎｏｎｙｍｏｕｓ", "\u200b"])
def test_anonymous_in_any_form_cannot_decide(client, typed) -> None:
    url = stored(client)
    client.post("/user", data={"csrf_token": token(client), "user": typed})
    r = client.post(f"{url}/approve", data={"csrf_token": token(client, url)})
    assert r.status_code == 400 and "set your reviewer name" in r.text
    assert client.get(url + "/claimreview.jsonld").status_code == 409


SCRIPT = "</script><script>alert(1)</script><!--&"


def test_dumps_escapes_what_could_leave_a_script_element() -> None:
    data = {"name": SCRIPT, "list": ["a\u2028b", "x>y"]}
    text = dumps(data, indent=2)
    assert not re.search(r"[<>&\u2028\u2029]", text)
    assert "\\u003c/script\\u003e" in text and json.loads(text) == data


def test_claimreview_json_ld_is_safe_in_a_page(client) -> None:
    url = stored(client)
    client.post("/user", data={"csrf_token": token(client), "user": "maria"})
    client.post(f"{url}/approve", data={"csrf_token": token(client, url)})
    r = client.get(url + "/claimreview.jsonld", params={"org": SCRIPT})
    assert r.status_code == 200 and "<" not in r.text and ">" not in r.text and "&" not in r.text
    assert r.json()["author"]["name"] == SCRIPT


def test_feedback_exports_are_safe_in_a_page(tmp_path) -> None:
    db = tmp_path / "h.sqlite"
    history, log = History(db), FeedbackLog(db)
    report = carded_report()
    rid = history.create(report.claim, user="maria")
    history.finish(rid, report)
    log.add(rid, "approve", {"label": "refuted", "scale": "averitec", "judge": "j", "note": SCRIPT},
            user="maria")  # fmt: skip
    counts = export(history, log, tmp_path / "out", organisation=SCRIPT)
    assert counts.claimreviews == 1
    for path in (tmp_path / "out").iterdir():
        text = path.read_text(encoding="utf-8")
        assert "</script" not in text and "<" not in text, path.name
    (cr,) = [
        json.loads(x) for x in (tmp_path / "out" / "claimreview.jsonl").read_text().splitlines()
    ]
    assert cr["author"]["name"] == SCRIPT
