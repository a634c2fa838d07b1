"""The bundled demo: a sample claim and fictional documents that exercise both constraints."""

from __future__ import annotations

import datetime as dt
import json
import re
import tomllib
from importlib.resources import files
from pathlib import Path

import pytest

from factseek.constraints.hits import Constraints, check, site_reason, url_host_path
from factseek.types import Claim, Hit, from_dict

ROOT = Path(__file__).resolve().parents[1]
DEMO = files("factseek") / "data" / "demo"
FIELDS = {"id", "url", "title", "text", "published", "domain"}


@pytest.fixture(scope="module")
def claim() -> Claim:
    return from_dict(Claim, json.loads((DEMO / "claim.json").read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def docs() -> list[dict]:
    lines = (DEMO / "docs.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _published(doc: dict) -> dt.date | None:
    return dt.date.fromisoformat(doc["published"]) if doc["published"] else None


def _hit(doc: dict) -> Hit:
    return Hit(url=doc["url"], title=doc["title"], published=_published(doc), doc_id=doc["id"])


def test_claim_is_complete(claim: Claim) -> None:
    assert claim.date == dt.date(2023, 10, 5)
    assert claim.speaker and claim.venue and claim.id
    assert re.search(r"\$\d+ million", claim.text) and " said " in claim.text


def test_documents_are_well_formed(docs: list[dict]) -> None:
    assert len(docs) >= 60
    assert len({d["id"] for d in docs}) == len(docs)
    assert len({d["url"] for d in docs}) == len(docs)
    for d in docs:
        assert set(d) == FIELDS, d["id"]
        assert d["url"].startswith("https://")
        assert d["domain"] == url_host_path(d["url"])[0]
        assert 120 <= len(d["text"].split()) <= 400, d["id"]
        assert d["title"].strip() and d["text"] == " ".join(d["text"].split())
        if d["published"] is not None:
            assert dt.date(2015, 1, 1) <= _published(d) <= dt.date(2025, 1, 1), d["id"]


def test_documents_exercise_every_constraint(docs: list[dict], claim: Claim) -> None:
    c = Constraints(before=claim.date)
    reasons = [check(_hit(d), c).reason for d in docs]
    coarse = [r.split(":", 1)[0] for r in reasons]
    assert coarse.count("after-claim-date") >= 5
    assert coarse.count("undated") >= 3
    assert coarse.count("excluded-site") >= 3
    assert coarse.count("excluded-marker") >= 1
    assert coarse.count("pdf") >= 1 and coarse.count("video") >= 1
    assert coarse.count("ok") >= 30
    # a fact-check dated before the claim: only the site constraint removes it
    early = [d for d in docs if d["published"] and _published(d) < claim.date]
    assert sum(site_reason(d["url"], c) is not None for d in early) >= 3
    # the claim date itself counts as too late
    assert any(_published(d) == claim.date for d in docs if d["published"])


def test_allowed_evidence_supports_part_and_contradicts_part(
    docs: list[dict], claim: Claim
) -> None:
    c = Constraints(before=claim.date)
    kept = " ".join(d["text"] for d in docs if check(_hit(d), c).kept)
    later = " ".join(d["text"] for d in docs if d["published"] and _published(d) >= claim.date)
    assert "not a penny more" in kept  # the attribution holds
    assert "$44.5 million" in kept and "$61.8 million" in kept  # $62M only with interest
    assert "18 percent" in kept  # bills did not rise 40 percent
    assert "Half True" in later and "$44.9 million" in later  # leaks the answer if not filtered


def test_html_pages_have_urls_and_text() -> None:
    pages = sorted(p for p in (DEMO / "html").iterdir() if p.name.endswith(".html"))
    assert len(pages) >= 3
    for page in pages:
        html = page.read_text(encoding="utf-8")
        assert re.search(r'<link rel="canonical" href="https://[^"]+\.example/', html)
        assert "<h1>" in html or "<h1 " in html


def test_package_data_globs_cover_demo_files() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = pyproject["tool"]["setuptools"]["package-data"]["factseek"]
    package = ROOT / "src" / "factseek"
    shipped = {p for g in globs for p in package.glob(g) if p.is_file()}
    demo = [p for p in (package / "data" / "demo").rglob("*") if p.is_file()]
    assert len(demo) >= 6
    assert not [p for p in demo if p not in shipped]
