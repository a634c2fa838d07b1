"""FEVER claims with evidence text (dev or train), Fool Me Twice distractors, and group splits.

The layout (see docs/data.md) is a folder with two JSONL files (FEVER dev and FEVER train
come the same way):

- ``claims.jsonl``: ``id``, ``claim``, ``label`` (SUPPORTS / REFUTES, or both joined by "/" where
  annotators disagreed, kept as given; NOT ENOUGH INFO lines are dropped and counted), ``evidence`` (a list of ids into ``evidence.jsonl``).
- ``evidence.jsonl``: ``id``, ``text`` (one evidence text; FEVER's multi-sentence evidence is
  joined into one).

Claim texts come CSV-quoted in some copies (a claim wrapped in double quotes, with the quotes
inside it doubled): one enclosing pair of double quotes is removed and doubled quotes become
single ones. Penn Treebank bracket tokens (``-LRB-``, ``-RSB-``, ``-COLON-``...) of FEVER's
Wikipedia sentences become the characters they stand for.

``load_fever_dev(folder, distractors=None)`` returns the claims (``FeverClaim``, with label) and
``fever_retrieval(...)`` the same as ``RetrievalData`` (the rewriter's input). ``distractors``
is one path or several: a FEVER folder (one holding ``evidence.jsonl``) adds its evidence texts,
anything else is read as Fool Me Twice data and adds every distinct sentence in it (gold and
retrieved; id ``fmt-<sha1[:12]>`` of the text). The corpus is every FEVER evidence text (sorted
by id), then the Fool Me Twice sentences (sorted by id). A text found in the claims' folder and
in another FEVER folder is one document whose id is the smallest of its ids (claims are relevant
to it under that id; texts repeated inside one folder stay apart, as in a single folder),
and a Fool Me Twice sentence equal to a FEVER text is left out (it would be an unjudged
duplicate of a relevant document). So FEVER train with FEVER dev and Fool Me Twice as
distractors, and FEVER dev with FEVER train and Fool Me Twice, search the same corpus.

``group_split(claims)`` assigns each claim to ``train`` / ``validation`` / ``test`` by connected
groups of shared evidence: two claims that share an evidence id are always on the same side, so
no evidence text is seen in training and in evaluation. A group's side is a hash of its smallest
claim id (with ``seed``), so the split of a claim does not depend on file order or on which other
groups are present.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from factseek.datasets.guard import as_paths, jsonl_objects, loader
from factseek.datasets.records import CorpusDoc, RetrievalClaim, RetrievalData
from factseek.errors import DataError, InputError

Split = Literal["train", "validation", "test"]
SPLITS: tuple[Split, ...] = ("train", "validation", "test")
#: Default fractions of claim groups per split (train, validation, test).
DEFAULT_FRACTIONS = (0.7, 0.1, 0.2)
MAX_TEXT = 20_000
NEI = {"NOT ENOUGH INFO", "NOT_ENOUGH_INFO", "NEI"}


@dataclass(frozen=True, kw_only=True)
class FeverClaim:
    """A FEVER claim with its label and the ids of its evidence texts."""

    id: str
    text: str
    label: str  # "SUPPORTS" or "REFUTES" ("REFUTES/SUPPORTS" where annotators disagreed)
    evidence: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class FeverData:
    claims: tuple[FeverClaim, ...]
    evidence: Mapping[str, str]  # evidence id -> text
    distractors: tuple[CorpusDoc, ...] = ()  # Fool Me Twice sentences
    others: Mapping[str, str] = field(default_factory=dict)  # other FEVER folders' texts
    dropped: dict[str, int] = field(default_factory=dict)  # reason -> claims dropped


#: Penn Treebank escapes in FEVER's Wikipedia sentences.
PTB = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}", "-COLON-": ":"}  # fmt: skip
_PTB = re.compile("|".join(map(re.escape, PTB)))


def clean_text(value: Any) -> str:
    """Whitespace-normalised text with one CSV quoting layer removed and PTB brackets undone."""
    s = " ".join(str(value).split())
    if len(s) >= 2 and s[0] == s[-1] == '"':
        s = s[1:-1].replace('""', '"')
    if "-" in s:
        s = _PTB.sub(lambda m: PTB[m.group(0)], s)
    return s[:MAX_TEXT]


def fever_files(folder: Path) -> tuple[Path, Path]:
    folder = Path(folder)
    if folder.is_file():  # claims.jsonl given: evidence.jsonl beside it
        return folder, folder.parent / "evidence.jsonl"
    return folder / "claims.jsonl", folder / "evidence.jsonl"


def _is_fever(path: Path) -> bool:
    return (path / "evidence.jsonl").is_file() if path.is_dir() else path.name in ("claims.jsonl", "evidence.jsonl")  # fmt: skip


def _read_evidence(path: Path) -> dict[str, str]:
    evidence: dict[str, str] = {}
    for i, row in jsonl_objects(path):
        if "id" not in row or "text" not in row:
            raise DataError("evidence lines need id and text", str(path), i)
        evidence[str(row["id"])] = clean_text(row["text"])
    return evidence


def _distractor_sentences(path: Path) -> Iterator[str]:
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    if not files:
        raise InputError(f"no Fool Me Twice .jsonl files in {path}")
    for p in files:
        for i, row in jsonl_objects(p):
            for key in ("gold_evidence", "retrieved_evidence"):
                items = row.get(key) or []
                if not isinstance(items, list):
                    raise DataError(f"{key} must be a list", str(p), i)
                for ev in items:
                    text = ev.get("text") if isinstance(ev, dict) else ev
                    if isinstance(text, str) and text.strip():
                        yield clean_text(text)


def _fever_texts(own: Mapping[str, str], paths: Sequence[Path]) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:  # fmt: skip
    """(alias: own id -> document id, own documents, other folders' documents). A text found in
    the own folder and in another is one document, its id the smallest any folder gives it;
    every other text keeps its ids (duplicates inside one folder stay apart, as before)."""
    others: dict[str, str] = {}
    for p in paths:
        _, evidence_path = fever_files(p)
        for eid, text in _read_evidence(evidence_path).items():
            if others.setdefault(eid, own.get(eid, text)) != text:
                raise DataError(f"evidence id {eid!r} has another text in an earlier folder", str(evidence_path))  # fmt: skip
    ids_of: dict[str, list[str]] = {}
    for eid, text in others.items():
        ids_of.setdefault(text, []).append(eid)
    shared = {text for text in own.values() if text in ids_of}
    first: dict[str, str] = {}
    for eid, text in sorted(own.items()):
        if text in shared:
            first.setdefault(text, min(eid, *ids_of[text]))
    alias = {eid: first.get(text, eid) for eid, text in own.items()}
    mine = {alias[eid]: text for eid, text in own.items()}
    rest = {eid: text for eid, text in others.items() if text not in shared}
    return alias, mine, rest


@loader
def load_fever_dev(
    folder: str | Path, distractors: str | Path | Sequence[str | Path] | None = None
) -> FeverData:
    """FEVER claims with evidence text (and distractors: other FEVER folders' evidence, Fool Me
    Twice sentences); see the module docstring."""
    claims_path, evidence_path = fever_files(Path(folder))
    for p in (claims_path, evidence_path):
        if not p.exists():
            raise DataError("not found (FEVER layout: claims.jsonl + evidence.jsonl)", str(p))
    paths = as_paths(distractors)
    for p in paths:
        if not p.exists():
            raise DataError("distractors not found", str(p))
    alias, evidence, others = _fever_texts(
        _read_evidence(evidence_path), [p for p in paths if _is_fever(p)]
    )
    claims: list[FeverClaim] = []
    dropped: dict[str, int] = {}
    seen: set[str] = set()
    for i, row in jsonl_objects(claims_path):
        label = str(row.get("label", "")).strip().upper()
        if label in NEI:
            dropped["not enough info"] = dropped.get("not enough info", 0) + 1
            continue
        if not label or set(label.split("/")) - {"SUPPORTS", "REFUTES"}:
            raise DataError(f"label must be SUPPORTS or REFUTES, got {label!r}", str(claims_path), i)  # fmt: skip
        ids = row.get("evidence")
        text = clean_text(row.get("claim", ""))
        if not text or not isinstance(ids, list) or "id" not in row:
            raise DataError("claim lines need id, claim and an evidence list", str(claims_path), i)
        cid = str(row["id"])
        if cid in seen:
            raise DataError(f"duplicate claim id {cid!r}", str(claims_path), i)
        seen.add(cid)
        ev = tuple(dict.fromkeys(alias[str(e)] for e in ids if str(e) in alias))
        if not ev:
            dropped["evidence not found"] = dropped.get("evidence not found", 0) + 1
            continue
        claims.append(FeverClaim(id=cid, text=text, label=label, evidence=ev))
    known = set(evidence.values()) | set(others.values())
    got: dict[str, str] = {}
    for path in (p for p in paths if not _is_fever(p)):
        for s in _distractor_sentences(path):
            if s in known or s in got:
                continue
            got[s] = "fmt-" + hashlib.sha1(s.encode("utf-8")).hexdigest()[:12]
    extra = [CorpusDoc(id=i, text=s) for s, i in sorted(got.items(), key=lambda kv: kv[1])]
    return FeverData(claims=tuple(claims), evidence=evidence, distractors=tuple(extra), others=others, dropped=dropped)  # fmt: skip


def fever_retrieval(data: FeverData, claims: Iterable[FeverClaim] | None = None) -> RetrievalData:
    """The claims (default: all) as retrieval data over every FEVER text (ids sorted), then the
    Fool Me Twice distractors (ids sorted)."""
    texts = {**data.others, **data.evidence}
    corpus = [CorpusDoc(id=k, text=texts[k]) for k in sorted(texts)]
    corpus.extend(data.distractors)
    chosen = data.claims if claims is None else tuple(claims)
    out = tuple(RetrievalClaim(id=c.id, text=c.text, relevant=c.evidence) for c in chosen)
    return RetrievalData(claims=out, corpus=tuple(corpus), dropped=dict(data.dropped))


def load_fever_dev_retrieval(
    claims: Path, corpus: Path | Sequence[Path] | None = None
) -> RetrievalData:
    """``load_retrieval`` entry: ``claims`` is the FEVER folder, ``corpus`` the distractors."""
    return fever_retrieval(load_fever_dev(claims, corpus))


# ----------------------------------------------------------------------------- group split


def evidence_groups(items: Sequence[tuple[str, Sequence[str]]]) -> dict[str, str]:
    """Map each item id to its group: the smallest item id connected to it by shared keys."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            lo, hi = (ra, rb) if ra < rb else (rb, ra)
            parent[hi] = lo

    owner: dict[str, str] = {}
    for item, keys in items:
        parent.setdefault(item, item)
        for k in keys:
            if k in owner:
                union(item, owner[k])
            else:
                owner[k] = item
    return {item: find(item) for item, _ in items}


def _unit(text: str) -> float:
    return int.from_bytes(hashlib.sha1(text.encode("utf-8")).digest()[:8], "big") / 2**64


def group_split(
    claims: Sequence[FeverClaim],
    fractions: tuple[float, float, float] = DEFAULT_FRACTIONS,
    *,
    seed: int = 0,
) -> dict[str, Split]:
    """Claim id -> split, by connected groups of shared evidence (see the module docstring)."""
    return group_sides([(c.id, c.evidence) for c in claims], fractions, seed=seed)


def group_sides(
    items: Sequence[tuple[str, Sequence[str]]],
    fractions: tuple[float, float, float] = DEFAULT_FRACTIONS,
    *,
    seed: int = 0,
) -> dict[str, Split]:
    """``group_split`` for ``(id, evidence or relevant ids)`` pairs of any data set."""
    if len(fractions) != 3 or min(fractions) < 0 or abs(sum(fractions) - 1) > 1e-9:
        raise InputError(f"split fractions must be three numbers >= 0 summing to 1, got {fractions}")  # fmt: skip
    groups = evidence_groups(items)
    cut1, cut2 = fractions[0], fractions[0] + fractions[1]
    out: dict[str, Split] = {}
    for cid, root in groups.items():
        u = _unit(f"{seed}:{root}")
        out[cid] = "train" if u < cut1 else "validation" if u < cut2 else "test"
    return out


def split_claims(
    claims: Sequence[FeverClaim], split: Split, **kwargs: Any
) -> tuple[FeverClaim, ...]:
    """The claims of one side of ``group_split`` (same keyword arguments), in input order."""
    if split not in SPLITS:
        raise InputError(f"unknown split {split!r}; choose one of: {', '.join(SPLITS)}")
    sides = group_split(claims, **kwargs)
    return tuple(c for c in claims if sides[c.id] == split)
