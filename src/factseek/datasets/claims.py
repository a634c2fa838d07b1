"""Labelled-claim data sets: factseek's claims file, ClaimDecomp, LIAR, LIAR-PLUS, AVeriTeC and
FEVER into one record.

Every loader reads one file and returns ``list[LabeledClaim]``; ``FORMATS`` maps a format name to
its loader and label set, ``load_claims(path, format)`` dispatches (``format="auto"`` sniffs it).
A malformed line raises ``DataError`` naming the file and line. The record and its parsing
helpers are in ``factseek.datasets.labeled``, the public data sets' loaders in
``factseek.datasets.public`` (the record is re-exported here). The formats are documented below,
in ``docs/formats.md`` and ``docs/data.md`` (where each data set comes from).

- ``claims``: factseek's own claims file (``factseek.datasets.claimsfile``): JSONL, or CSV/TSV
  with a header, with ``claim`` (or ``text``) and optional ``id``, ``date``, ``speaker``,
  ``venue``, ``label``, ``questions``. Its label set is the one set its labels belong to
  (``claimsfile.file_label_set``; a file mixing sets is refused).

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

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from factseek.datasets.claimsfile import (
    file_label_set,
    is_claims_table,
    looks_like_claims,
    read_claims_file,
)
from factseek.datasets.guard import loader
from factseek.datasets.labeled import (
    DedupReport,
    LabeledClaim,
    jsonl_records,
    normalize_claim_text,
    unique,
)
from factseek.datasets.public import (
    load_averitec,
    load_claimdecomp,
    load_fever,
    load_liar,
    load_liar_plus,
)
from factseek.errors import InputError
from factseek.labels import AVERITEC, FEVER, POLITIFACT, LabelSet

# ----------------------------------------------------------------------------- claims file


def claims_label_set(path: str | Path) -> LabelSet:
    """The label set of a claims file: the one set its labels belong to (PolitiFact when it has
    none); ``read_claims_file`` refuses a file whose labels mix sets, naming both."""
    return file_label_set(read_claims_file(path), path)


def load_claims_file(path: str | Path) -> list[LabeledClaim]:
    """A claims file (``docs/formats.md``) as labelled claims; labels in ``claims_label_set``."""
    records = read_claims_file(path)
    labels = file_label_set(records, path)
    return [
        LabeledClaim(
            claim=r.claim if r.claim.id else replace(r.claim, id=f"line-{r.line}"),
            label=labels.parse(r.label) if r.label is not None else None,
            questions=unique(list(r.questions)),
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
    """Guess a file's format from its first line and extension: a CSV/TSV header naming a claim
    column is a claims file; other ``.tsv`` files are LIAR, ``.json`` AVeriTeC; JSON Lines by
    their first record's fields."""
    path = Path(path)
    if is_claims_table(path):
        return "claims"
    if path.suffix == ".tsv":
        return "liar"
    if path.suffix == ".json":
        return "averitec"
    for _, r in jsonl_records(path):
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
