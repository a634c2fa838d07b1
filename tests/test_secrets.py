"""Issue 14 case 7: secrets are scrubbed before truncation, and credentials inside configured
URLs (``--llm-base-url``, ``SEARXNG_URL``) appear in no message, note or report."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

from factseek.constraints.hits import Constraints
from factseek.errors import FactseekError, LLMError
from factseek.llm.openai import OpenAILLM
from factseek.redact import redact_text, redact_url
from factseek.report import render
from factseek.search.searxng import SearxngSearch
from factseek.types import Claim, Report

sys.path.insert(0, str(Path(__file__).parent))
from test_llm_http import FakeServer

KEY = "sk-FAKE0123456789abcdefghijklmnopqrstuv"


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_key_is_scrubbed_before_the_message_is_cut() -> None:
    """The 4xx message was cut to 200 characters first, so a prefix of the key survived."""
    for pad in range(150, 200, 7):  # the key straddles the old cut at every offset
        message = "x" * pad + f" invalid key {KEY} " + "y" * 300
        server = FakeServer(
            lambda i, b, m=message: (400, {}, json.dumps({"error": {"message": m}}).encode())
        )
        try:
            llm = OpenAILLM(model="m", base_url=server.url, api_key=KEY, retries=0)
            with pytest.raises(LLMError) as e:
                llm.generate(["hello"])
        finally:
            server.close()
        text = str(e.value)
        assert "sk-FAK" not in text and KEY[:8] not in text, text


@pytest.mark.parametrize(
    "url",
    [
        "http://user:s3cretpass@127.0.0.1:{port}/v1",
        "http://127.0.0.1:{port}/v1?api_key=s3cretpass",
        "http://user:s3cretpass@127.0.0.1:{port}/v1?token=s3cretpass&x=1",
    ],
)
def test_llm_base_url_credentials_never_shown(url: str) -> None:
    llm = OpenAILLM(
        model="m", base_url=url.format(port=closed_port()), retries=1, sleep=lambda s: None
    )
    assert "s3cretpass" not in repr(llm)
    with pytest.raises(LLMError) as e:
        llm.generate(["hello"])
    assert "s3cretpass" not in str(e.value) and "127.0.0.1" in str(e.value)


def test_searxng_url_credentials_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    from factseek.search.http import HttpConfig

    monkeypatch.setenv("SEARXNG_URL", f"http://admin:s3cretpass@127.0.0.1:{closed_port()}")
    backend = SearxngSearch(config=HttpConfig(retries=0, timeout=2.0))
    with pytest.raises(FactseekError) as e:
        backend.search("buses", 5, Constraints())
    assert "s3cretpass" not in str(e.value) and "admin" not in str(e.value)
    assert "127.0.0.1" in str(e.value)


def test_reports_redact_credentials_in_notes_and_urls() -> None:
    note = "search failed for 'q': searxng: cannot reach http://admin:s3cretpass@10.0.0.1:8888"
    report = Report(claim=Claim(text="c"), notes=(note, f"LLM said {KEY}"))
    for fmt in ("json", "md", "html"):
        out = render(report, fmt)
        assert "s3cretpass" not in out and "admin:" not in out and KEY[:8] not in out, fmt
        assert "10.0.0.1:8888" in out


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://u:p@host.example/x", "http://host.example/x"),
        ("https://host.example/s?q=a&api_key=abc&token=t&x=1", "https://host.example/s?q=a&api_key=***&token=***&x=1"),
        ("https://host.example/#access_token=abc", "https://host.example/#access_token=***"),
        ("https://host.example/page?monkey=banana", "https://host.example/page?monkey=banana"),
        ("https://host.example/p", "https://host.example/p"),
    ],
)  # fmt: skip
def test_redact_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_redact_text_shapes() -> None:
    text = (
        f"Authorization: Bearer abc.def-ghi failed; key {KEY}; see https://u:pw@h.example/?sig=zz"
    )
    out = redact_text(text, secrets=["pw"])
    assert "abc.def" not in out and KEY[:6] not in out and "u:pw" not in out and "zz" not in out
    assert "h.example" in out


def test_no_url_or_secret_reaches_the_error_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from factseek import api
    from factseek.cli import app

    def fail(*a: Any, **k: Any) -> Any:
        raise LLMError(f"LLM server http://u:s3cretpass@h.example failed: {KEY}")

    monkeypatch.setattr(api, "check", fail)
    r = CliRunner().invoke(app, ["check", "a claim", "--date", "2021-01-01", "-q"])
    assert r.exit_code == 1 and "s3cretpass" not in r.stderr and KEY[:8] not in r.stderr
