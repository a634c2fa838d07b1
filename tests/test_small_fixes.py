"""Issue 29 group 6: the SSRF guard follows the IANA special-purpose registries, a declared
charset that does not fit the bytes is not trusted, a claims file may start with a byte-order
mark, and a claim dated in the future is refused when the file is read."""

from __future__ import annotations

import asyncio
import datetime as dt
import ipaddress
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factseek.cli import app
from factseek.datasets.claimsfile import read_claims_file
from factseek.errors import BlockedAddress, DataError
from factseek.fetch.guard import blocked_reason, resolve_checked
from factseek.pages.extract import decode_body, extract_html


@pytest.mark.parametrize(
    ("address", "what"),
    [
        ("3fff::1", "RFC 9637"),
        ("3fff:fff:ffff::1", "RFC 9637"),
        ("5f00::1", "RFC 9602"),
        ("100:0:0:1::5", "RFC 9780"),
        ("2001:2::1", "blocked"),  # is_private already says so
        ("192.0.0.5", "blocked"),
        ("198.18.0.1", "blocked"),
        ("2001:db8::1", "blocked"),
    ],
)
def test_special_purpose_addresses_are_refused(address: str, what: str) -> None:
    """resolve_checked("3fff::1") and 5f00::1 were treated as public (Python's is_global)."""
    with pytest.raises(BlockedAddress, match=what):
        asyncio.run(resolve_checked(address, 443))


@pytest.mark.parametrize("address", ["8.8.8.8", "2606:4700::1111", "192.0.0.9", "192.31.196.1"])
def test_public_addresses_still_pass(address: str) -> None:
    assert blocked_reason(ipaddress.ip_address(address)) is None


def test_every_registry_block_is_refused_at_both_ends() -> None:
    from factseek.fetch.guard import SPECIAL_PURPOSE

    for net, what in SPECIAL_PURPOSE:
        for ip in (net[0], net[-1]):
            assert blocked_reason(ip) is not None, (net, what)


PAGE = (
    "<html><head><title>Council budget</title></head><body><article><p>The council approved "
    "3 million dollars for the new bridge, said the mayor’s office on Tuesday. Café owners "
    "near the river welcomed the decision.</p></article></body></html>"
)


def test_a_utf16_header_over_a_utf8_body_reads_as_utf8() -> None:
    """A page whose header said charset=utf-16 but whose body was UTF-8 became CJK garbage."""
    page = PAGE if len(PAGE.encode()) % 2 == 0 else PAGE + " "
    body = page.encode("utf-8")
    assert len(body) % 2 == 0  # so that UTF-16 decodes it without an error, into garbage
    assert decode_body(body, "text/html; charset=utf-16") == page
    doc = extract_html(
        body, "https://a.example/x", headers={"content-type": "text/html; charset=utf-16"}
    )
    assert "council approved" in doc.text and "Café" in doc.text


def test_a_true_utf16_body_still_decodes() -> None:
    body = PAGE.encode("utf-16-le")
    assert decode_body(body, "text/html; charset=utf-16le") == PAGE
    assert decode_body(PAGE.encode("utf-16"), "text/html; charset=utf-16") == PAGE  # with BOM
    assert (
        decode_body(body, "text/html; charset=iso-8859-1") == PAGE
    )  # a narrow label over wide bytes


def test_a_claims_file_may_start_with_a_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(
        b"\xef\xbb\xbf" + json.dumps({"id": "c1", "claim": "Buses doubled."}).encode() + b"\n"
    )
    records = read_claims_file(path)
    assert [r.claim.id for r in records] == ["c1"]


def test_a_claim_dated_in_the_future_is_refused_when_read(tmp_path: Path) -> None:
    """A claim dated 9999-12-31 passed validation, then failed at run time."""
    path = tmp_path / "c.jsonl"
    rows = [
        {"claim": "Buses doubled.", "date": "2023-01-01"},
        {"claim": "Fares fell.", "date": "9999-12-31"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(DataError, match=r"c\.jsonl:2: date 9999-12-31 is in the future"):
        read_claims_file(path)
    tomorrow = (dt.date.today() + dt.timedelta(days=1)).isoformat()
    path.write_text(json.dumps({"claim": "Buses doubled.", "date": tomorrow}) + "\n")
    r = CliRunner().invoke(
        app, ["batch", str(path), "--out", str(tmp_path / "run"), "--store", str(tmp_path), "-q"]
    )
    assert r.exit_code == 2 and "in the future" in r.stderr and len(r.stderr.splitlines()) == 1, (
        r.output
    )
    path.write_text(
        json.dumps({"claim": "Buses doubled.", "date": dt.date.today().isoformat()}) + "\n"
    )
    assert read_claims_file(path)[0].claim.date == dt.date.today()
