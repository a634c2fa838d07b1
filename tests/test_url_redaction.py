"""Issue 29 group 2: credentials inside result URLs (``user:password@``, ``?api_key=``,
``?token=``, ``#access_token=``) are redacted where URLs enter factseek, so no copy keeps them:
``--record`` bundles, the history database, the ``/runs/N`` page, exports, ClaimReview, stores."""

from __future__ import annotations

import datetime as dt
import json
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from factseek.pipeline import Parts, run
from factseek.review.history import History
from factseek.runs.bundle import Recorder, Replayer
from factseek.search.base import FunctionSearch
from factseek.summarize.extractive import ExtractiveSummarizer
from factseek.types import Claim, Document, FetchFailure, Hit, Report, to_dict, to_json
from web_fixtures import FixedJudge, TwoQuestions

SECRETS = ("hunter2pass", "APIKEY0123", "TOKEN4567", "ACCESS8910", "FINALSIG42", "nested7pass",
           "NESTEDKEY9")  # fmt: skip
#: A result URL whose parameter holds another URL, percent-encoded, with its own credentials.
NESTED = (
    "https://out.example/bridge?u=https%3A%2F%2Fbob%3Anested7pass%40inner.example%2Fdoc"
    "%3Fapi_key%3DNESTEDKEY9%26lang%3Den"
)
URLS = (
    "https://ana:hunter2pass@ledger.example/bridge-budget",
    "https://post.example/bridge-costs?api_key=APIKEY0123&page=2",
    "https://news.example/bridge?token=TOKEN4567",
    "https://blog.example/bridge#access_token=ACCESS8910&token_type=bearer",
    NESTED,
)
CLAIM = Claim(
    text="The council spent 3 million dollars on the new bridge.", date=dt.date(2024, 1, 10)
)
TEXT = "The council approved 3 million dollars for the new bridge, records show."


def assert_clean(data: str | bytes, where: str) -> None:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    for secret in SECRETS:
        assert secret not in text, f"{secret} kept in {where}"


def credentialed_search() -> FunctionSearch:
    def fn(query: str, k: int) -> list[Hit]:
        return [
            Hit(url=u, title=f"Bridge {i}", rank=i + 1, query=query, backend="creds")
            for i, u in enumerate(URLS[:k])
        ]

    return FunctionSearch(fn, name="creds")


class CredentialedFetcher:
    """Pages whose redirects and errors carry credentials too; the last URL fails."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def fetch(self, urls: list[str]) -> tuple[list[Document], list[FetchFailure]]:
        self.asked += urls
        docs, failures = [], []
        for u in urls:
            if "blog.example" in u:
                failures.append(FetchFailure(url=u, error=f"HTTP 500 for {URLS[3]}"))
                continue
            final = u.split("?")[0] + "?sig=FINALSIG42"
            meta = {"final_url": final}
            docs.append(
                Document(url=u, text=TEXT, title="Bridge", published=dt.date(2023, 5, 2), meta=meta)
            )
        return docs, failures


def parts(search: Any, fetcher: Any) -> Parts:
    return Parts(
        search=search,
        fetcher=fetcher,
        decomposer=TwoQuestions(),
        summarizer=ExtractiveSummarizer(),
        judge=FixedJudge(),
    )


def test_redacted_parts_name_what_was_removed_never_the_value() -> None:
    from factseek.redact import redacted_parts

    assert redacted_parts(URLS[0]) == ("userinfo",)
    assert redacted_parts(URLS[1]) == ("query:api_key",)
    assert redacted_parts(URLS[3]) == ("fragment:access_token",)
    assert redacted_parts("https://x.example/a?b=1") == ()


SECRET_FORMS = [
    "https://x.example/a?api%5Fkey=S3CRET&page=2",  # a percent-encoded name
    "https://x.example/a?API%5fKEY=S3CRET",
    "https://x.example/a?PHPSESSID=S3CRET",
    "https://x.example/a?hmac=S3CRET&t=1",
    "https://x.example/a;jsessionid=S3CRET?page=2",  # a path parameter
    "https://x.example/a;JSESSIONID=S3CRET/b",
    "https://x.example/o?AWSAccessKeyId=S3CRET&Expires=1&Signature=S3CRET",
    "https://x.example/a?api_key+=S3CRET",  # a space (+) after the name
    "https://x.example/a?api_key%20=S3CRET",
    "https://x.example/a?X-Amz-Signature=S3CRET",
    NESTED.replace("nested7pass", "S3CRET").replace("NESTEDKEY9", "S3CRET"),
    # the nested URL encoded twice, written as it is, or as a path segment
    "https://x.example/r?u=https%253A%252F%252Fu%253AS3CRET%2540in.example%252F%253Ftoken%253DS3CRET",
    "https://web.archive.org/web/2020/https://u:S3CRET@in.example/p?token=S3CRET",
    "https://x.example/go/https%3A%2F%2Fu%3AS3CRET%40in.example%2F%3Fsig%3DS3CRET/",
    "https://x.example/a?next=%2Flogin%3Ftoken%3DS3CRET",  # a relative URL in a parameter
    "https://x.example/a?state=a%3D1%26access_token%3DS3CRET",  # a query string in one
    "https://x.example/#/route?token=S3CRET",
]


@pytest.mark.parametrize("url", SECRET_FORMS)
def test_redact_url_removes_every_form_of_credential(url: str) -> None:
    """Issue 47 item 5: names compared decoded, path parameters, URLs nested in parameters."""
    from factseek.redact import redact_text, redact_url, redacted_parts

    shown = redact_url(url)
    assert "S3CRET" not in shown, shown
    assert redact_url(shown) == shown  # redacting twice changes nothing
    assert shown.split("/")[2] == url.split("/")[2]  # still the same site
    assert redacted_parts(url) and not redacted_parts(shown)
    assert "S3CRET" not in redact_text(f"HTTP 500 for {url} (retrying)")


def test_nested_credentials_are_named_and_the_nested_url_kept() -> None:
    from factseek.redact import redact_url, redacted_parts

    assert redacted_parts(NESTED) == ("query:u/userinfo", "query:u/query:api_key")
    assert redact_url(NESTED) == (
        "https://out.example/bridge?u=https%3A%2F%2Finner.example%2Fdoc%3Fapi_key%3D***%26lang%3Den"
    )


def test_nesting_deeper_than_the_bound_is_masked_whole() -> None:
    from urllib.parse import quote

    from factseek.redact import MAX_DEPTH, redact_url

    inner = "https://u:S3CRET@in.example/?token=S3CRET"
    for _ in range(MAX_DEPTH + 2):
        inner = "https://x.example/?u=" + quote(inner, safe="")
    assert "S3CRET" not in redact_url(inner) and "x.example" in redact_url(inner)


@pytest.mark.parametrize(
    "url",
    [
        "https://x.example/?q=a%20b&page=2",
        "https://x.example/a?monkey=banana&postcode=1",
        "https://x.example/a%2Fb;v=1?x=%3D",
        "https://x.example/search?q=user%40mail.example",
        "https://x.example/?",
    ],
)
def test_urls_without_credentials_are_kept_as_they_are(url: str) -> None:
    from factseek.redact import redact_url

    assert redact_url(url) == url


def test_the_page_cache_records_no_credentials(tmp_path: Path) -> None:
    """A redirect's target (``final_url``) with a token, and a nested URL: kept out of the
    cache's entries, and the page still comes back from the cache."""
    from factseek.fetch.cache import CachedPage, PageCache

    cache = PageCache(tmp_path)
    page = CachedPage(url=NESTED, final_url=URLS[2], content_type="text/html",
                      last_modified=None, body=b"<p>bridge</p>")  # fmt: skip
    cache.put(page)
    for path in tmp_path.rglob("*.json"):
        assert_clean(path.read_bytes(), str(path))
    got = cache.get(NESTED)
    assert got is not None and got.body == page.body
    assert got.final_url == "https://news.example/bridge?token=***"


def test_a_report_never_holds_result_credentials_in_any_field() -> None:
    """Not only the rendered report: the Report object itself (what every copy is made from)."""
    fetcher = CredentialedFetcher()
    report = run(CLAIM, parts(credentialed_search(), fetcher))
    assert report.documents and report.failures and report.results
    assert_clean(to_json(report), "the report")
    assert_clean(json.dumps(fetcher.asked), "the URLs fetched")
    assert (
        report.failures[0].url == "https://blog.example/bridge#access_token=***&token_type=bearer"
    )
    assert report.documents[0].url == "https://ledger.example/bridge-budget"


def test_record_bundle_keeps_no_credentials_and_says_what_it_redacted(tmp_path: Path) -> None:
    rec = Recorder(tmp_path / "b")
    search = rec.wrap_search(credentialed_search())
    fetcher = rec.wrap_fetcher(CredentialedFetcher())
    report = run(CLAIM, parts(search, fetcher))
    for path in (tmp_path / "b").rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            if path.suffix == ".gz":
                import gzip

                data = gzip.decompress(data)
            assert_clean(data, str(path.relative_to(tmp_path)))
    config = json.loads((tmp_path / "b" / "config.json").read_text())
    assert "userinfo" in config["redaction"] and "api_key" in config["redaction"]
    lines = [json.loads(x) for x in (tmp_path / "b" / "redactions.jsonl").read_text().splitlines()]
    removed = {p for line in lines for p in line["removed"]}
    assert {"userinfo", "query:api_key", "query:token", "fragment:access_token"} <= removed
    assert {line["where"] for line in lines} >= {"search"}
    # and it replays: the pages are found under the redacted URLs the hits now carry
    rep = Replayer(tmp_path / "b")
    replayed = run(CLAIM, parts(rep.search_backend(), rep.fetcher()))
    assert [d.url for d in replayed.documents] == [d.url for d in report.documents]


def test_an_older_bundle_with_raw_urls_replays_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bundle recorded before redaction: raw hits, pages indexed under their raw URLs."""
    import factseek.runs.bundle as bundle
    from factseek.redact import redact_url

    for name in ("redact_hit", "redact_document", "redact_failure"):
        monkeypatch.setattr(bundle, name, lambda x: x)  # the recorder as it was

    class RawFetcher(CredentialedFetcher):
        def fetch(self, urls: list[str]) -> tuple[list[Document], list[FetchFailure]]:
            raw = {redact_url(u): u for u in URLS}
            return super().fetch([raw[u] for u in urls])

    rec = Recorder(tmp_path / "old")
    run(CLAIM, parts(rec.wrap_search(credentialed_search()), rec.wrap_fetcher(RawFetcher())))
    assert URLS[1] in (tmp_path / "old" / "pages" / "index.jsonl").read_text()
    monkeypatch.undo()
    rep = Replayer(tmp_path / "old")
    report = run(CLAIM, parts(rep.search_backend(), rep.fetcher()))
    assert len(report.documents) == 4 and len(report.failures) == 1
    assert_clean(to_json(report), "a report replayed from an older bundle")


def test_history_stores_and_shows_no_credentials(tmp_path: Path) -> None:
    """A report made elsewhere (raw URLs) is redacted on the way in; rows written before that
    are redacted on the way out."""
    raw = Report(
        claim=CLAIM,
        documents=(Document(url=URLS[0], text=TEXT, id=URLS[0]),),
        failures=(FetchFailure(url=URLS[2], error=f"HTTP 500 at {URLS[2]}"),),
        notes=(f"a note naming {URLS[1]}",),
    )
    history = History(tmp_path / "h.sqlite")
    rid = history.create(CLAIM)
    history.finish(rid, raw)
    with sqlite3.connect(tmp_path / "h.sqlite") as conn:
        (stored,) = conn.execute("SELECT report_json FROM runs WHERE id = ?", (rid,)).fetchone()
        assert_clean(stored, "runs.report_json")
        conn.execute("UPDATE runs SET report_json = ? WHERE id = ?", (to_json(raw), rid))
    assert_clean(to_json(history.get(rid).report), "a report read back from an older row")


def test_redact_tree_redacts_an_id_that_is_the_url() -> None:
    from factseek.redact import redact_tree

    data = redact_tree(to_dict(Document(url=URLS[2], text="x", id=URLS[2])))
    assert data["url"] == data["id"] == "https://news.example/bridge?token=***"


def test_a_store_built_from_credentialed_urls_keeps_none(tmp_path: Path) -> None:
    from factseek.constraints.hits import Constraints
    from factseek.store import StoreBackend, build_store

    rows = [{"url": u, "title": "Bridge", "text": TEXT, "published": "2023-05-02"} for u in URLS]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    build_store([tmp_path / "d.jsonl"], tmp_path / "s")
    for path in (tmp_path / "s").rglob("*"):
        if path.is_file():
            assert_clean(path.read_bytes(), str(path))
    backend = StoreBackend.open(tmp_path / "s")
    hits = backend.search("bridge council", 10, Constraints())
    docs = backend.documents(hits)
    assert len(docs) == len(URLS) and docs[0].id == docs[0].url


# ----------------------------------------------------------------------------- the web app


@pytest.fixture
def web(tmp_path):
    from fastapi.testclient import TestClient

    from factseek.web.app import WebSettings, create_app
    from factseek.web.jobs import Runner

    settings = WebSettings(db=tmp_path / "h.sqlite", store=tmp_path, user="ana", organisation="")
    runner = Runner(
        History(settings.db),
        workers=1,
        build=lambda options=None: parts(credentialed_search(), CredentialedFetcher()),
    )
    app = create_app(settings, runner=runner)
    with TestClient(app, base_url="http://127.0.0.1:8321") as c:
        c.get("/")
        yield c
    runner.close()


def test_the_runs_page_exports_and_claimreview_keep_no_credentials(web, tmp_path: Path) -> None:
    html = web.get("/").text
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)
    form = {"csrf_token": csrf, "claim": CLAIM.text, "date": "2024-01-10"}
    r = web.post("/check", data=form, follow_redirects=False)
    url = r.headers["location"]
    for _ in range(300):
        if web.get(url + "/status").json()["status"] != "running":
            break
        time.sleep(0.05)
    page = web.get(url)
    assert page.status_code == 200 and "ledger.example" in page.text
    assert_clean(page.text, "/runs/N")
    for fmt in ("json", "md", "html"):
        r = web.get(f"{url}/export.{fmt}")
        assert r.status_code == 200, (fmt, r.status_code)
        assert_clean(r.text, f"export {fmt}")
    r = web.get(f"{url}/claimreview.jsonld")
    assert r.status_code == 409  # nothing is published before a named reviewer decides
    web.cookies.set("factseek_user", "maria")
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', web.get(url).text).group(1)
    r = web.post(f"{url}/approve", data={"csrf_token": csrf}, follow_redirects=False)
    assert r.status_code == 303, r.text
    r = web.get(f"{url}/claimreview.jsonld")
    assert r.status_code == 200
    assert_clean(r.text, "ClaimReview")
    with sqlite3.connect(tmp_path / "h.sqlite") as conn:
        for row in conn.execute("SELECT * FROM runs"):
            assert_clean(json.dumps(list(row)), "the history database")
