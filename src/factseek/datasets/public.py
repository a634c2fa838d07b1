"""The public data sets' loaders: ClaimDecomp, LIAR, LIAR-PLUS, AVeriTeC and FEVER (their
formats: ``factseek.datasets.claims``, docs/formats.md, docs/data.md)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from factseek.datasets.guard import loader
from factseek.datasets.labeled import (
    MAX_FIELD_CHARS,
    LabeledClaim,
    claim_text,
    clip_field,
    jsonl_records,
    parse_label,
    require,
    str_field,
    text_lines,
    unique,
)
from factseek.errors import DataError, InputError
from factseek.labels import AVERITEC, FEVER, POLITIFACT
from factseek.types import Claim

# ----------------------------------------------------------------------------- ClaimDecomp

_STATED = re.compile(
    r"^\s*stated on (?P<date>[A-Za-z]+\.? \d{1,2}, \d{4})(?: in (?P<venue>.*?))?:?\s*$"
)


def _parse_stated(venue: str) -> tuple[dt.date | None, str | None]:
    """("stated on April 7, 2020 in a press briefing:") -> (2020-04-07, "a press briefing")."""
    m = _STATED.match(venue)
    if not m:
        return None, venue.strip().rstrip(":") or None
    raw = m.group("date").replace(".", "")
    date = None
    for fmt in ("%B %d, %Y", "%b %d, %Y"):
        try:
            date = dt.datetime.strptime(raw, fmt).date()
            break
        except ValueError:
            continue
    return date, (m.group("venue") or "").strip() or None


def _claimdecomp_chat(record: Mapping[str, Any], path: Path, n: int) -> LabeledClaim:
    messages = record["messages"]
    if not isinstance(messages, list):
        raise DataError("'messages' is not a list", str(path), n)
    by_role = {m.get("role"): str_field(m.get("content")) for m in messages if isinstance(m, dict)}
    user, answer = by_role.get("user", ""), by_role.get("assistant", "")
    head, _, body = user.partition("\n")
    if not body:
        raise DataError(
            "user message is not 'speaker stated on ...:' + newline + claim", str(path), n
        )
    speaker, sep, stated = head.partition(" stated on ")
    date, venue = _parse_stated("stated on " + stated) if sep else (None, None)
    text, meta = claim_text(body.strip().strip('"“”'), path, n)
    questions = unique([q.strip() for q in re.split(r"(?<=\?)\s*,?\s*", answer)])
    return LabeledClaim(
        claim=Claim(
            text=text, date=date, speaker=speaker.strip() or None, venue=venue, id=f"line-{n}"
        ),
        label=None,
        questions=questions,
        question_sets=(questions,) if questions else (),
        meta=meta,
    )


@loader
def load_claimdecomp(path: str | Path) -> list[LabeledClaim]:
    """ClaimDecomp JSONL (labelled dev/test files, or the chat-formatted train questions)."""
    path = Path(path)
    out = []
    for n, r in jsonl_records(path):
        if "messages" in r:
            out.append(_claimdecomp_chat(r, path, n))
            continue
        text, meta = claim_text(require(r, "claim", path, n), path, n)
        date, venue = _parse_stated(str_field(r.get("venue")))
        sets = []
        for a in r.get("annotations") or []:
            qs = a.get("questions") if isinstance(a, dict) else None
            if not isinstance(qs, list):
                raise DataError("annotation without a 'questions' list", str(path), n)
            sets.append(tuple(" ".join(str_field(q).split()) for q in qs if str_field(q)))
        if r.get("url"):
            meta["url"] = str_field(r["url"])
        if r.get("venue"):
            meta["stated"] = str_field(r["venue"])
        out.append(
            LabeledClaim(
                claim=Claim(
                    text=text,
                    date=date,
                    speaker=str_field(r.get("person")) or None,
                    venue=venue,
                    id=str_field(r.get("example_id")) or f"line-{n}",
                ),
                label=parse_label(POLITIFACT, r.get("label"), path, n),
                justification=clip_field(str_field(r.get("justification")), MAX_FIELD_CHARS),
                questions=unique([q for s in sets for q in s]),
                question_sets=tuple(sets),
                meta=meta,
            )
        )
    return out


# ----------------------------------------------------------------------------- LIAR, LIAR-PLUS

LIAR_COLUMNS = 14
LIAR_CREDIT = ("barely-true", "false", "half-true", "mostly-true", "pants-fire")  # columns 9-13


def _speaker(slug: str) -> str | None:
    """LIAR writes speakers as slugs ("donald-trump"); the classifier and reports want words."""
    return " ".join(w.capitalize() for w in slug.replace("-", " ").split()) or None


@loader
def load_liar(path: str | Path) -> list[LabeledClaim]:
    """LIAR TSV. Credit-history counts exclude the current statement (see the module doc)."""
    path = Path(path)
    out = []
    for n, line in text_lines(path):
        row = line.rstrip("\r\n").split("\t")  # QUOTE_NONE TSV: a plain split, no field limit
        if len(row) != LIAR_COLUMNS:
            raise DataError(
                f"expected {LIAR_COLUMNS} tab-separated columns, got {len(row)}", str(path), n
            )
        label = parse_label(POLITIFACT, row[1], path, n)
        text, meta = claim_text(row[2], path, n)
        meta.update(
            subjects=row[3].strip(), job=row[5].strip(), state=row[6].strip(), party=row[7].strip()
        )
        for name, raw in zip(LIAR_CREDIT, row[8:13], strict=True):
            try:
                count = int(float(raw)) if raw.strip() else 0
            except (ValueError, OverflowError):
                raise DataError(
                    f"credit count {raw[:20]!r} is not a finite number", str(path), n
                ) from None
            if name == label:
                if count < 1:
                    meta["credit_inconsistent"] = "1"
                count = max(count - 1, 0)
            meta[f"credit_{name}"] = str(count)
        out.append(
            LabeledClaim(
                claim=Claim(
                    text=text,
                    speaker=_speaker(row[4]),
                    venue=row[13].strip().rstrip(".") or None,
                    id=row[0].strip().removesuffix(".json") or f"line-{n}",
                ),
                label=label,
                meta=meta,
            )
        )
    return out


@loader
def load_liar_plus(path: str | Path) -> list[LabeledClaim]:
    """LIAR-PLUS JSONL: LIAR fields plus the fact-checker's ``justification``."""
    path = Path(path)
    out = []
    for n, r in jsonl_records(path):
        text, meta = claim_text(require(r, "claim", path, n), path, n)
        for key in ("title", "party"):
            if r.get(key):
                meta[key] = str_field(r[key])
        if r.get("topics"):
            meta["subjects"] = ",".join(str_field(t) for t in r["topics"])
        raw_id = str_field(r.get("json_file_id")) or str_field(r.get("id"))
        out.append(
            LabeledClaim(
                claim=Claim(
                    text=text,
                    speaker=_speaker(str_field(r.get("originator"))),
                    venue=str_field(r.get("context")) or None,
                    id=raw_id.removesuffix(".json") or f"line-{n}",
                ),
                label=parse_label(POLITIFACT, r.get("label"), path, n),
                justification=clip_field(str_field(r.get("justification")), MAX_FIELD_CHARS),
                meta=meta,
            )
        )
    return out


# ----------------------------------------------------------------------------- AVeriTeC, FEVER


@loader
def load_averitec(path: str | Path) -> list[LabeledClaim]:
    """AVeriTeC JSON array (dev/train files). Records without a label get ``label=None``."""
    path = Path(path)
    from factseek.files import read_json

    data = read_json(path, "data file")  # capped; UTF-8 with or without a byte-order mark
    if not isinstance(data, list):
        raise DataError("expected a JSON array of claims", str(path))
    out = []
    for i, r in enumerate(data):
        where = f"record {i}"
        if not isinstance(r, dict):
            raise DataError(f"{where}: expected an object", str(path))
        try:
            text, meta = claim_text(require(r, "claim", path, None), path, None)
        except DataError as e:
            raise DataError(f"{where}: {e}", str(path)) from None
        date = None
        if r.get("claim_date"):
            try:
                date = dt.datetime.strptime(str_field(r["claim_date"]), "%d-%m-%Y").date()
            except ValueError:
                raise DataError(
                    f"{where}: claim_date {r['claim_date']!r} is not DD-MM-YYYY", str(path)
                ) from None
        label = None
        if r.get("label") is not None:
            try:
                label = AVERITEC.parse(str_field(r["label"]))
            except InputError as e:
                raise DataError(f"{where}: {e}", str(path)) from None
        questions = r.get("questions") or []
        if not isinstance(questions, list):
            raise DataError(f"{where}: 'questions' must be a list", str(path))
        qs = tuple(
            " ".join(str_field(q.get("question")).split()) for q in questions if isinstance(q, dict)
        )
        qs = tuple(q for q in qs if q)
        evidence, urls = _averitec_answers(r.get("questions"))
        for key in (
            "reporting_source",
            "location_ISO_code",
            "fact_checking_article",
            "original_claim_url",
        ):
            if r.get(key):
                meta[key] = str_field(r[key])
        out.append(
            LabeledClaim(
                claim=Claim(
                    text=text,
                    date=date,
                    speaker=str_field(r.get("speaker")) or None,
                    venue=str_field(r.get("reporting_source")) or None,
                    id=str(i),
                ),
                label=label,
                justification=clip_field(str_field(r.get("justification")), MAX_FIELD_CHARS),
                questions=unique(qs),
                question_sets=(qs,) if qs else (),
                meta=meta,
                evidence=evidence,
                evidence_urls=urls,
            )
        )
    return out


def averitec_answer_text(answer: Mapping[str, Any]) -> str:
    """An AVeriTeC answer as evidence text: the answer, plus its boolean explanation if any."""
    text = " ".join(str_field(answer.get("answer")).split())
    explanation = " ".join(str_field(answer.get("boolean_explanation")).split())
    if explanation:
        text = (
            f"{text}. {explanation}" if text and text[-1] not in ".!?" else f"{text} {explanation}"
        )
    return clip_field(text, MAX_FIELD_CHARS)


def _averitec_answers(questions: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    texts: list[str] = []
    urls: list[str] = []
    for q in questions or []:
        for a in (q.get("answers") or []) if isinstance(q, dict) else []:
            if isinstance(a, dict) and (text := averitec_answer_text(a)):
                texts.append(text)
                urls.append(str_field(a.get("source_url")))
    return tuple(texts), tuple(urls)


def _unquote(value: Any) -> str:
    s = str_field(value)
    return s[1:-1].strip() if len(s) >= 2 and s[0] == s[-1] == "'" else s


@loader
def load_fever(path: str | Path) -> list[LabeledClaim]:
    """FEVER-style JSONL (claim, label, evidence sentence)."""
    path = Path(path)
    out = []
    for n, r in jsonl_records(path):
        text, meta = claim_text(_unquote(require(r, "claim", path, n)), path, n)
        raw_label = r.get("label", r.get("gold_label"))
        evidence = r.get("evidence_sentence", r.get("evidence"))
        out.append(
            LabeledClaim(
                claim=Claim(text=text, id=_unquote(r.get("id")) or f"line-{n}"),
                label=parse_label(
                    FEVER, _unquote(raw_label) if raw_label is not None else None, path, n
                ),
                justification=clip_field(
                    _unquote(evidence) if isinstance(evidence, str) else "", MAX_FIELD_CHARS
                ),
                meta=meta,
            )
        )
    return out
