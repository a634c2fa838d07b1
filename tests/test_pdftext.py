"""--keep-pdf: a PDF made inside the test, read by factseek.pages.pdftext, fetched, and kept by the
pipeline only when asked (the paper's site constraint removes PDFs by default)."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from factseek.api import check_config
from factseek.constraints.hits import Constraints, site_reason
from factseek.errors import ExtractionError
from factseek.fetch import make_fetcher
from factseek.pages.pdftext import extract_pdf, pdf_date
from factseek.pipeline import Parts, run
from factseek.search.base import FunctionSearch
from factseek.summarize.extractive import ExtractiveSummarizer
from factseek.types import Claim, Hit, Question

D = dt.date
LINES = (
    "Brackenford council minutes, 10 March 2020.",
    "The council approved four new electric buses for the town routes.",
    "The vote was seven to two; delivery is expected in the autumn.",
)


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(
    lines: tuple[str, ...] = LINES,
    *,
    title: str = "Council minutes",
    created: str = "D:20200310093000+01'00'",
    modified: str = "D:20200402120000Z",
) -> bytes:
    """A one-page PDF with Helvetica text and a document information dictionary."""
    ops = ["BT", "/F1 12 Tf", "72 720 Td", "14 TL"]
    ops += [f"({_escape(line)}) Tj T*" for line in lines]
    ops.append("ET")
    stream = "\n".join(ops).encode("latin-1")
    info = f"/Title ({_escape(title)})"
    info += f" /CreationDate ({created})" if created else ""
    info += f" /ModDate ({modified})" if modified else ""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        f"<< {info} >>".encode("latin-1"),
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info 6 0 R >>\n" % (len(objects) + 1)
    out += b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def test_pdf_dates_read_as_iso() -> None:
    assert pdf_date("D:20200310093000+01'00'") == "2020-03-10T09:30:00+01:00"
    assert pdf_date("D:20200402120000Z") == "2020-04-02T12:00:00Z"
    assert pdf_date("D:20200402") == "2020-04-02"
    assert pdf_date("D:2020") is None and pdf_date(None) is None


def test_extract_pdf_text_title_and_dates() -> None:
    doc = extract_pdf(make_pdf(), "https://council.example/minutes/2020-03.pdf")
    for line in LINES:
        assert line in doc.text
    assert doc.title == "Council minutes" and doc.domain == "council.example"
    assert doc.published == D(2020, 3, 10) and doc.meta["date_source"] == "pdf:created"
    assert doc.modified == D(2020, 4, 2) and doc.meta["modified_source"] == "pdf:modified"
    assert doc.meta["extractor"] == "pypdf" and doc.meta["pages"] == "1"
    assert {e.source for e in doc.date_evidence} == {"pdf:created", "pdf:modified"}


def test_extract_pdf_refuses_what_it_cannot_read() -> None:
    with pytest.raises(ExtractionError, match="not a PDF"):
        extract_pdf(b"<html>not a pdf</html>", "https://x.example/a.pdf")
    with pytest.raises(ExtractionError, match="no text layer"):
        extract_pdf(make_pdf(lines=()), "https://x.example/a.pdf")
    with pytest.raises(ExtractionError, match="not a readable PDF"):
        extract_pdf(b"%PDF-1.4\n garbage", "https://x.example/a.pdf")


@pytest.fixture
def site() -> Iterator[str]:
    pdf = make_pdf()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/pdf")
            self.send_header("Content-Length", str(len(pdf)))
            self.end_headers()
            self.wfile.write(pdf)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_fetcher_reads_pdfs_only_with_keep_pdf(site: str) -> None:
    url = f"{site}/minutes/2020-03.pdf"
    plain = make_fetcher(allow_hosts=["127.0.0.1"], host_delay=0.0)
    docs, failures = plain.fetch([url])
    assert docs == [] and failures[0].error == "skipped pdf file"
    keep = make_fetcher(allow_hosts=["127.0.0.1"], host_delay=0.0, keep_pdf=True)
    docs, failures = keep.fetch([url, f"{site}/download?id=7"])  # a PDF by its type alone
    assert failures == [] and len(docs) == 2
    assert all(LINES[1] in d.text and d.meta["content_type"] == "application/pdf" for d in docs)


class _OneQuestion:
    name = "one"

    def decompose(self, claim: Claim) -> list[Question]:
        return [Question(text="Did the council approve new buses?")]


def test_pipeline_keeps_pdfs_only_with_keep_pdf(site: str) -> None:
    url = f"{site}/minutes/2020-03.pdf"
    assert site_reason(url, Constraints()) == "pdf"  # the paper's default
    assert site_reason(url, Constraints(exclude_pdf=False)) is None
    parts = Parts(
        search=FunctionSearch(lambda q, k: [Hit(url=url, title="Minutes")]),
        decomposer=_OneQuestion(),
        summarizer=ExtractiveSummarizer(),
        fetcher=make_fetcher(allow_hosts=["127.0.0.1"], host_delay=0.0, keep_pdf=True),
    )
    claim = Claim(text="The council approved four new buses.", date=D(2020, 6, 1))
    default = run(claim, parts, check_config())
    assert default.documents == () and default.removed == {"pdf": 1}
    kept = run(claim, parts, check_config(keep_pdf=True))
    assert [d.url for d in kept.documents] == [url] and "pdf" not in kept.removed
    assert kept.config["keep_pdf"] is True
    # the PDF's own dates are checked like a page's: modified 2020-04-02, after a claim of 03-20
    early = Claim(text="The council approved four new buses.", date=D(2020, 3, 20))
    report = run(early, parts, check_config(keep_pdf=True))
    assert report.documents == () and report.removed == {"page:modified-after-claim": 1}
    paper = run(early, parts, check_config(keep_pdf=True, date_basis="published"))
    assert [d.url for d in paper.documents] == [url]
