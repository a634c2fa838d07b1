"""Labelled-claim data sets: factseek's claims file, ClaimDecomp, LIAR, LIAR-PLUS, AVeriTeC and
FEVER into one record.

Every loader reads one file and returns ``list[LabeledClaim]``; ``FORMATS`` maps a format name to
its loader and label set, ``load_claims(path, format)`` dispatches (``format="auto"`` sniffs it).
A malformed line raises ``DataError`` naming the file and line. The formats are documented below,
in ``docs/formats.md`` and ``docs/data.md`` (where each data set comes from).

- ``claims``: factseek's own claims file (``factseek.datasets.claimsfile``): JSONL with ``claim``
  (or ``text``) and optional ``id``, ``date``, ``speaker``, ``venue``, ``label``, ``questions``.
  Its label set is the first of PolitiFact, AVeriTeC, FEVER that has every label in the file.

- ``claimdecomp``: JSONL, one PolitiFact claim a line (``example_id``, ``label``, ``claim``,
  ``person``, ``venue`` as "stated on April 7, 2020 in a press briefing:", ``justification``
  paragraphs, ``annotations[].questions``). The chat-formatted train file (``messages``: user =
  speaker + venue + claim, assistant = questions joined by commas) loads too, with ``label=None``.
- ``liar``: TSV, 14 columns (id, label, statement, subjects, speaker, job, state, party, five
  credit-history counts, context). The counts include the current statement and so leak its
  label: the loader subtracts the current statement from its own label's count and stores the
  result as ``meta["credit_<label>"]`` (clamped at 0; ``meta["credit_inconsistent"] = "1"`` when
  the raw count was already 0). They are never part of the classifier input.
- ``liar-plus``: JSONL with LIAR's fields (``claim``, ``originator``, ``title``, ``party``,
  ``topics``) and the fact-checker's ``justification``.
- ``averitec``: one JSON array; ``claim_date`` as DD-MM-YYYY; ``questions[].question`` are the
  gold questions; 4-way labels.
- ``fever``: JSONL with ``claim``, ``label`` (or ``gold_label``) and the evidence sentence
  (``evidence`` or ``evidence_sentence``) as ``justification``. FEVER-Symmetric wraps every value
  in single quotes (``"'SUPPORTS'"``); one enclosing pair is removed.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from factseek.datasets.claimsfile import ClaimRecord, looks_like_claims, read_claims_file
from factseek.datasets.guard import at, loader
from factseek.errors import DataError, InputError
from factseek.labels import AVERITEC, FEVER, LABEL_SETS, POLITIFACT, LabelSet
from factseek.sanitize import json_loads
from factseek.text import WORD_RE
from factseek.types import MAX_CLAIM_CHARS, Claim

MAX_FIELD_CHARS = 100_000  # justification / article text kept per record
MAX_LINE_CHARS = 10_000_000  # a longer line is malformed input, not data


@dataclass(frozen=True, kw_only=True)
class LabeledClaim:
    """One claim with its gold label (``None`` where the file has none) and what came with it.

    ``questions`` are the gold subquestions of all annotators in file order (exact duplicates
    removed); ``question_sets`` keeps them per annotator. ``meta`` holds the remaining fields as
    strings (subjects, party, credit history, url...). ``evidence`` is gold evidence text where
    the data set has it (AVeriTeC: each question's answers, a boolean answer followed by its
    explanation), with the page each came from in ``evidence_urls`` ("" when none).
    """

    claim: Claim
    label: str | None
    justification: str = ""
    questions: tuple[str, ...] = ()
    question_sets: tuple[tuple[str, ...], ...] = ()
    meta: Mapping[str, str] = field(default_factory=dict)
    evidence: tuple[str, ...] = ()
    evidence_urls: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class DedupReport:
    """What ``dedup`` removed from a training set (counts, plus the removed ids)."""

    kept: int
    overlap: int  # training claims whose normalised text is in an evaluation set
    repeated: int  # training claims repeating an earlier training claim
    removed_ids: tuple[str, ...] = ()

    def line(self) -> str:
        return (
            f"kept {self.kept} training claims; removed {self.overlap} that appear in the "
            f"evaluation data and {self.repeated} repeated within training"
        )


# ----------------------------------------------------------------------------- helpers


def normalize_claim_text(text: str) -> str:
    """Dedup key: lower-cased letter/digit runs joined by one space (quotes, punctuation ignored)."""
    return " ".join(WORD_RE.findall(text.lower()))


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit]


def _str(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return "\n".join(_str(v) for v in value)
    return str(value).strip()


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    from factseek.input_files import input_lines

    for n, raw in input_lines(path, "data file", max_line=4 * MAX_LINE_CHARS):
        at(path, n)
        try:
            line = raw.decode("utf-8-sig" if n == 1 else "utf-8")
        except UnicodeDecodeError as e:
            raise DataError(f"not UTF-8 text ({e.reason})", str(path), n) from None
        if len(line) > MAX_LINE_CHARS:
            raise DataError("line too long", str(path), n)
        if line.strip():
            yield n, line


def _jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for n, line in _lines(path):
        try:
            record = json_loads(line)
        except json.JSONDecodeError as e:
            raise DataError(f"not valid JSON ({e.msg})", str(path), n) from None
        if not isinstance(record, dict):
            raise DataError("expected a JSON object", str(path), n)
        yield n, record


def _claim_text(raw: Any, path: Path, n: int | None) -> tuple[str, dict[str, str]]:
    text = " ".join(_str(raw).split())
    if not text:
        raise DataError("empty claim", str(path), n)
    if len(text) > MAX_CLAIM_CHARS:
        return text[:MAX_CLAIM_CHARS], {"truncated": "1"}
    return text, {}


def _label(labels: LabelSet, raw: Any, path: Path, n: int | None) -> str:
    if not isinstance(raw, str):
        raise DataError(f"missing or non-text label {raw!r}", str(path), n)
    try:
        return labels.parse(raw)
    except InputError as e:
        raise DataError(str(e), str(path), n) from None


def _require(record: Mapping[str, Any], key: str, path: Path, n: int | None) -> Any:
    if key not in record:
        raise DataError(f"missing field {key!r}", str(path), n)
    return record[key]


def _unique(items: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(x for x in items if x))


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
    by_role = {m.get("role"): _str(m.get("content")) for m in messages if isinstance(m, dict)}
    user, answer = by_role.get("user", ""), by_role.get("assistant", "")
    head, _, body = user.partition("\n")
    if not body:
        raise DataError(
            "user message is not 'speaker stated on ...:' + newline + claim", str(path), n
        )
    speaker, sep, stated = head.partition(" stated on ")
    date, venue = _parse_stated("stated on " + stated) if sep else (None, None)
    text, meta = _claim_text(body.strip().strip('"“”'), path, n)
    questions = _unique([q.strip() for q in re.split(r"(?<=\?)\s*,?\s*", answer)])
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
    for n, r in _jsonl(path):
        if "messages" in r:
            out.append(_claimdecomp_chat(r, path, n))
            continue
        text, meta = _claim_text(_require(r, "claim", path, n), path, n)
        date, venue = _parse_stated(_str(r.get("venue")))
        sets = []
        for a in r.get("annotations") or []:
            qs = a.get("questions") if isinstance(a, dict) else None
            if not isinstance(qs, list):
                raise DataError("annotation without a 'questions' list", str(path), n)
            sets.append(tuple(" ".join(_str(q).split()) for q in qs if _str(q)))
        if r.get("url"):
            meta["url"] = _str(r["url"])
        if r.get("venue"):
            meta["stated"] = _str(r["venue"])
        out.append(
            LabeledClaim(
                claim=Claim(
                    text=text,
                    date=date,
                    speaker=_str(r.get("person")) or None,
                    venue=venue,
                    id=_str(r.get("example_id")) or f"line-{n}",
                ),
                label=_label(POLITIFACT, r.get("label"), path, n),
                justification=_clip(_str(r.get("justification")), MAX_FIELD_CHARS),
                questions=_unique([q for s in sets for q in s]),
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
    for n, line in _lines(path):
        row = line.rstrip("\r\n").split("\t")  # QUOTE_NONE TSV: a plain split, no field limit
        if len(row) != LIAR_COLUMNS:
            raise DataError(
                f"expected {LIAR_COLUMNS} tab-separated columns, got {len(row)}", str(path), n
            )
        label = _label(POLITIFACT, row[1], path, n)
        text, meta = _claim_text(row[2], path, n)
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
    for n, r in _jsonl(path):
        text, meta = _claim_text(_require(r, "claim", path, n), path, n)
        for key in ("title", "party"):
            if r.get(key):
                meta[key] = _str(r[key])
        if r.get("topics"):
            meta["subjects"] = ",".join(_str(t) for t in r["topics"])
        raw_id = _str(r.get("json_file_id")) or _str(r.get("id"))
        out.append(
            LabeledClaim(
                claim=Claim(
                    text=text,
                    speaker=_speaker(_str(r.get("originator"))),
                    venue=_str(r.get("context")) or None,
                    id=raw_id.removesuffix(".json") or f"line-{n}",
                ),
                label=_label(POLITIFACT, r.get("label"), path, n),
                justification=_clip(_str(r.get("justification")), MAX_FIELD_CHARS),
                meta=meta,
            )
        )
    return out


# ----------------------------------------------------------------------------- AVeriTeC, FEVER


@loader
def load_averitec(path: str | Path) -> list[LabeledClaim]:
    """AVeriTeC JSON array (dev/train files). Records without a label get ``label=None``."""
    path = Path(path)
    from factseek.input_files import read_input

    raw = read_input(path, "data file")
    try:
        data = json_loads(raw.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise DataError(f"not valid JSON ({e})", str(path)) from None
    if not isinstance(data, list):
        raise DataError("expected a JSON array of claims", str(path))
    out = []
    for i, r in enumerate(data):
        where = f"record {i}"
        if not isinstance(r, dict):
            raise DataError(f"{where}: expected an object", str(path))
        try:
            text, meta = _claim_text(_require(r, "claim", path, None), path, None)
        except DataError as e:
            raise DataError(f"{where}: {e}", str(path)) from None
        date = None
        if r.get("claim_date"):
            try:
                date = dt.datetime.strptime(_str(r["claim_date"]), "%d-%m-%Y").date()
            except ValueError:
                raise DataError(
                    f"{where}: claim_date {r['claim_date']!r} is not DD-MM-YYYY", str(path)
                ) from None
        label = None
        if r.get("label") is not None:
            try:
                label = AVERITEC.parse(_str(r["label"]))
            except InputError as e:
                raise DataError(f"{where}: {e}", str(path)) from None
        questions = r.get("questions") or []
        if not isinstance(questions, list):
            raise DataError(f"{where}: 'questions' must be a list", str(path))
        qs = tuple(
            " ".join(_str(q.get("question")).split()) for q in questions if isinstance(q, dict)
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
                meta[key] = _str(r[key])
        out.append(
            LabeledClaim(
                claim=Claim(
                    text=text,
                    date=date,
                    speaker=_str(r.get("speaker")) or None,
                    venue=_str(r.get("reporting_source")) or None,
                    id=str(i),
                ),
                label=label,
                justification=_clip(_str(r.get("justification")), MAX_FIELD_CHARS),
                questions=_unique(qs),
                question_sets=(qs,) if qs else (),
                meta=meta,
                evidence=evidence,
                evidence_urls=urls,
            )
        )
    return out


def averitec_answer_text(answer: Mapping[str, Any]) -> str:
    """An AVeriTeC answer as evidence text: the answer, plus its boolean explanation if any."""
    text = " ".join(_str(answer.get("answer")).split())
    explanation = " ".join(_str(answer.get("boolean_explanation")).split())
    if explanation:
        text = (
            f"{text}. {explanation}" if text and text[-1] not in ".!?" else f"{text} {explanation}"
        )
    return _clip(text, MAX_FIELD_CHARS)


def _averitec_answers(questions: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    texts: list[str] = []
    urls: list[str] = []
    for q in questions or []:
        for a in (q.get("answers") or []) if isinstance(q, dict) else []:
            if isinstance(a, dict) and (text := averitec_answer_text(a)):
                texts.append(text)
                urls.append(_str(a.get("source_url")))
    return tuple(texts), tuple(urls)


def _unquote(value: Any) -> str:
    s = _str(value)
    return s[1:-1].strip() if len(s) >= 2 and s[0] == s[-1] == "'" else s


@loader
def load_fever(path: str | Path) -> list[LabeledClaim]:
    """FEVER-style JSONL (claim, label, evidence sentence)."""
    path = Path(path)
    out = []
    for n, r in _jsonl(path):
        text, meta = _claim_text(_unquote(_require(r, "claim", path, n)), path, n)
        raw_label = r.get("label", r.get("gold_label"))
        evidence = r.get("evidence_sentence", r.get("evidence"))
        out.append(
            LabeledClaim(
                claim=Claim(text=text, id=_unquote(r.get("id")) or f"line-{n}"),
                label=_label(
                    FEVER, _unquote(raw_label) if raw_label is not None else None, path, n
                ),
                justification=_clip(
                    _unquote(evidence) if isinstance(evidence, str) else "", MAX_FIELD_CHARS
                ),
                meta=meta,
            )
        )
    return out


# ----------------------------------------------------------------------------- claims file


def claims_label_set(path: str | Path) -> LabelSet:
    """The label set of a claims file: the first of ``LABEL_SETS`` that parses every label in it
    (PolitiFact when it has none). ``DataError`` names the first line no single set can read."""
    return _label_set_of(read_claims_file(path), path)


def _label_set_of(records: Sequence[ClaimRecord], path: str | Path) -> LabelSet:
    rows = [r for r in records if r.label is not None]
    best: tuple[int, int] | None = None  # (lines parsed, first failing line)
    for labels in LABEL_SETS.values():
        bad = [r.line for r in rows if not _parses(labels, r.label or "")]
        if not bad:
            return labels
        if best is None or len(rows) - len(bad) > best[0]:
            best = (len(rows) - len(bad), bad[0])
    assert best is not None
    sets = "; ".join(f"{s.name}: {', '.join(s.labels)}" for s in LABEL_SETS.values())
    raise DataError(f"the labels do not all belong to one label set ({sets})", str(path), best[1])


def _parses(labels: LabelSet, raw: str) -> bool:
    try:
        labels.parse(raw)
    except InputError:
        return False
    return True


def load_claims_file(path: str | Path) -> list[LabeledClaim]:
    """A claims file (``docs/formats.md``) as labelled claims; labels in ``claims_label_set``."""
    records = read_claims_file(path)
    labels = _label_set_of(records, path)
    return [
        LabeledClaim(
            claim=r.claim if r.claim.id else replace(r.claim, id=f"line-{r.line}"),
            label=labels.parse(r.label) if r.label is not None else None,
            questions=_unique(list(r.questions)),
            question_sets=(r.questions,) if r.questions else (),
        )
        for r in records
    ]


# ----------------------------------------------------------------------------- registry


@dataclass(frozen=True, kw_only=True)
class DataFormat:
    """A named data-file format: its loader and its label set. ``labels_from_file``, when set,
    reads the label set from the file itself (``data_format`` applies it)."""

    name: str
    load: Callable[[str | Path], list[LabeledClaim]]
    labels: LabelSet
    labels_from_file: Callable[[str | Path], LabelSet] | None = None


FORMATS: dict[str, DataFormat] = {
    f.name: f
    for f in (
        DataFormat(
            name="claims",
            load=load_claims_file,
            labels=POLITIFACT,
            labels_from_file=claims_label_set,
        ),
        DataFormat(name="claimdecomp", load=load_claimdecomp, labels=POLITIFACT),
        DataFormat(name="liar", load=load_liar, labels=POLITIFACT),
        DataFormat(name="liar-plus", load=load_liar_plus, labels=POLITIFACT),
        DataFormat(name="averitec", load=load_averitec, labels=AVERITEC),
        DataFormat(name="fever", load=load_fever, labels=FEVER),
    )
}


@loader
def sniff_format(path: str | Path) -> str:
    """Guess a file's format from its extension and first record."""
    path = Path(path)
    if path.suffix == ".tsv":
        return "liar"
    if path.suffix == ".json":
        return "averitec"
    for _, r in _jsonl(path):
        if "annotations" in r or "messages" in r or "person" in r:
            return "claimdecomp"
        if "originator" in r or "json_file_id" in r:
            return "liar-plus"
        if "evidence" in r or "evidence_sentence" in r or "gold_label" in r:
            return "fever"
        if looks_like_claims(r):
            return "claims"
        break
    raise InputError(f"cannot tell the format of {path}; pass one of: {', '.join(FORMATS)}")


def data_format(name: str, path: str | Path | None = None) -> DataFormat:
    """The format by name (``"auto"`` sniffs ``path``); the error lists the registered names."""
    if name == "auto":
        if path is None:
            raise InputError("format 'auto' needs a file to look at")
        name = sniff_format(path)
    try:
        fmt = FORMATS[name]
    except KeyError:
        raise InputError(
            f"unknown data format {name!r} (one of: auto, {', '.join(FORMATS)})"
        ) from None
    if fmt.labels_from_file is not None and path is not None:
        fmt = replace(fmt, labels=fmt.labels_from_file(path))
    return fmt


def load_claims(path: str | Path, format: str = "auto") -> list[LabeledClaim]:
    """Load a data file in a registered format (or ``"auto"``)."""
    return data_format(format, path).load(path)


def dedup(
    train: Sequence[LabeledClaim], *evaluation: Sequence[LabeledClaim]
) -> tuple[list[LabeledClaim], DedupReport]:
    """Drop training claims whose normalised text is in any evaluation set, or seen earlier in
    training. Returns the kept claims (in order) and the counts."""
    held_out = {normalize_claim_text(x.claim.text) for rows in evaluation for x in rows}
    seen: set[str] = set()
    kept: list[LabeledClaim] = []
    overlap = repeated = 0
    removed: list[str] = []
    for x in train:
        key = normalize_claim_text(x.claim.text)
        if key in held_out:
            overlap += 1
        elif key in seen:
            repeated += 1
        else:
            seen.add(key)
            kept.append(x)
            continue
        removed.append(x.claim.id or "")
    return kept, DedupReport(
        kept=len(kept), overlap=overlap, repeated=repeated, removed_ids=tuple(removed)
    )


def with_ids(rows: Sequence[LabeledClaim], prefix: str = "") -> list[LabeledClaim]:
    """The rows with every claim id unique (duplicates get ``#2``, ``#3``... suffixes)."""
    seen: dict[str, int] = {}
    out = []
    for i, x in enumerate(rows):
        base = prefix + (x.claim.id or f"row-{i}")
        seen[base] = seen.get(base, 0) + 1
        cid = base if seen[base] == 1 else f"{base}#{seen[base]}"
        out.append(x if cid == x.claim.id else replace(x, claim=replace(x.claim, id=cid)))
    return out
