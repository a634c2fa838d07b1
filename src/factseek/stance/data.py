"""Stance training and evaluation pairs from the public data sets, split without leakage.

``build_pairs(data, sources)`` returns ``{split: [StancePair]}`` for ``train``, ``validation`` and
``test``. Each source is a folder under ``data`` (see docs/stance.md):

- ``fever`` (``fever_dev/``): each claim with each of its gold evidence texts (SUPPORTS ->
  supports, REFUTES -> refutes; claims the annotators disagreed on are left out), plus one
  ``nei`` pair per claim: the evidence text of the same split that BM25 ranks highest for the
  claim among those of *other* evidence groups, so "not enough information" is not simply "few
  shared words". Sides come from ``datasets.fever.group_split`` (connected groups of shared
  evidence), so no evidence text is on two sides.
- ``fever-train`` (``fever_train/``; pre-training only, not among the default sources): each
  SUPPORTS / REFUTES claim with up to ``FEVER_TRAIN_GOLD_PER_CLAIM`` of its gold sentences, and
  each NOT ENOUGH INFO claim with its BM25-best sentence (``nei``), as the usual NLI-FEVER recipe
  pairs them. (A SUPPORTS / REFUTES claim's BM25-best sentence that is not gold is no "nei": FEVER
  leaves many evidence sentences unmarked, and as "nei" pairs they taught a reader that the
  sentences closest to a claim say nothing about it.) Sentences
  that are also FEVER dev evidence (``fever_dev/`` beside it) are left out. Sides: by a hash of
  the claim id (``FEVER_TRAIN_SIDES``); the cross-source rule below drops training pairs whose
  sentence is on another side.
- ``fmt`` (``fool_me_twice/``, dev and test files): each claim with its gold sentences (its
  label), and with up to ``FMT_NEI_PER_CLAIM`` retrieved sentences that are not gold (``nei``),
  those sharing most words with the claim first. Sides: group split by shared gold sentences.
- ``climate`` (``climate_fever/``): each claim with its five sentences and their own labels.
  Sides: claim-level (its claims share Wikipedia sentences so much that grouping by shared
  sentences leaves one giant group); the cross-source rule below then drops a training pair
  whose sentence is also a test sentence.
- ``checkcovid``, ``wice``, ``symmetric``, ``averitec`` and ``averitec-dev`` (the real-world
  sets: news claims, web articles, AVeriTeC's question-answers): ``stance.realworld``. For a set
  whose test side is kept aside by its publishers, factseek's test side is its published dev
  side, never trained or tuned on. AVeriTeC (CC BY-NC) is never in the shipped model's sources.

A training or validation pair whose evidence text is also a test evidence text (of any requested
source; compared on letters and digits only, so two tokenisations of one sentence are one text),
or whose claim is a test claim of another source, is dropped; so is a training pair whose
evidence is a validation text, or whose claim is another source's validation claim. ``form="question"`` rewrites every question as a yes/no question
(``stance.questions.as_questions``); ``"mixed"`` does so for the claims whose hash falls under
``question_share``; the label is unchanged. Orders are deterministic (file order).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from factseek.datasets.fever import (
    SPLITS,
    FeverClaim,
    Split,
    clean_text,
    evidence_groups,
    fever_files,
    group_split,
    load_fever_dev,
)
from factseek.datasets.guard import jsonl_objects
from factseek.errors import DataError, InputError
from factseek.stance import news, realworld
from factseek.stance.pairs import StancePair, bm25_nearest
from factseek.text import tokenize
from factseek.types import StanceLabel

Form = Literal["statement", "question", "mixed"]
FORMS: tuple[Form, ...] = ("statement", "question", "mixed")
FMT_NEI_PER_CLAIM = 2
MAX_EVIDENCE_CHARS = 4000
#: ``fever-train``: gold sentences kept per claim, and the shares of claims (by hash of the id)
#: on its validation and test sides.
FEVER_TRAIN_GOLD_PER_CLAIM = 2
FEVER_TRAIN_SIDES: tuple[float, float] = (0.02, 0.01)
_FEVER_LABELS: dict[str, StanceLabel] = {"SUPPORTS": "supports", "REFUTES": "refutes"}
_CLIMATE_LABELS: dict[str, StanceLabel] = {
    "SUPPORTS": "supports",
    "REFUTES": "refutes",
    "NOT_ENOUGH_INFO": "nei",
}
_EXTRA_LABELS: dict[str, StanceLabel] = {
    "supports": "supports",
    "refutes": "refutes",
    "nei": "nei",
    "not enough info": "nei",
    "not-enough-info": "nei",
}


@dataclass(frozen=True, kw_only=True)
class Source:
    """A data source: its folder under the data root, whether derived weights may be shared."""

    folder: str
    shareable: bool
    load: Callable[[Path], dict[Split, list[StancePair]]]
    about: str
    trains: bool = True
    default: bool = True  # among the shipped model's sources (False: pre-training only)


# ----------------------------------------------------------------------------- helpers


def _unit(text: str) -> float:
    return int.from_bytes(hashlib.sha1(text.encode("utf-8")).digest()[:8], "big") / 2**64


def _sides(items: Sequence[tuple[str, Sequence[str]]]) -> dict[str, Split]:
    """Item id -> split by connected groups of shared keys (``datasets.fever.group_split``)."""
    claims = [FeverClaim(id=i, text=i, label="SUPPORTS", evidence=tuple(k)) for i, k in items]
    return group_split(claims)


# ----------------------------------------------------------------------------- sources


def fever_pairs(folder: Path) -> dict[Split, list[StancePair]]:
    """FEVER pairs (see the module docstring)."""
    data = load_fever_dev(folder)
    sides = group_split(data.claims)
    groups = evidence_groups([(c.id, c.evidence) for c in data.claims])
    out: dict[Split, list[StancePair]] = {s: [] for s in SPLITS}
    for split in SPLITS:
        claims = [c for c in data.claims if sides[c.id] == split and c.label in _FEVER_LABELS]
        ev_ids = sorted({e for c in data.claims if sides[c.id] == split for e in c.evidence})
        owner = {e: groups[c.id] for c in data.claims if sides[c.id] == split for e in c.evidence}
        position = {e: i for i, e in enumerate(ev_ids)}
        by_group: dict[str, set[int]] = {}
        for e in ev_ids:
            by_group.setdefault(owner[e], set()).add(position[e])
        nearest = bm25_nearest(
            [c.text for c in claims],
            [data.evidence[e] for e in ev_ids],
            [by_group[groups[c.id]] for c in claims],
        )
        for c, near in zip(claims, nearest, strict=True):
            label = _FEVER_LABELS[c.label]
            for e in c.evidence:
                out[split].append(
                    StancePair(
                        question=c.text,
                        evidence=data.evidence[e],
                        label=label,
                        source="fever",
                        group=groups[c.id],
                    )
                )
            if near is not None:
                out[split].append(
                    StancePair(
                        question=c.text,
                        evidence=data.evidence[ev_ids[near]],
                        label="nei",
                        source="fever",
                        group=groups[c.id],
                    )
                )
    return out


def fever_train_pairs(folder: Path) -> dict[Split, list[StancePair]]:
    """FEVER train pairs for pre-training (see the module docstring)."""
    data = load_fever_dev(folder)
    nei_claims = [
        (f"nei-{row.get('id', i)}", clean_text(row.get("claim", "")))
        for i, row in jsonl_objects(fever_files(Path(folder))[0])
        if str(row.get("label", "")).strip().upper() == "NOT ENOUGH INFO"
    ]
    nei_claims = [(cid, text) for cid, text in nei_claims if text]
    dev = Path(folder).parent / SOURCES["fever"].folder  # its sentences stay out of pre-training
    held = {_key(t) for t in load_fever_dev(dev).evidence.values()} if dev.is_dir() else set()
    ev_ids = sorted(e for e, text in data.evidence.items() if _key(text) not in held)
    kept = set(ev_ids)
    nearest = bm25_nearest(
        [text for _, text in nei_claims],
        [data.evidence[e] for e in ev_ids],
        [set()] * len(nei_claims),
    )
    out: dict[Split, list[StancePair]] = {s: [] for s in SPLITS}

    def side(cid: str) -> Split:
        u = _unit(f"fever-train:{cid}")
        val, test = FEVER_TRAIN_SIDES
        return "test" if u < test else "validation" if u < test + val else "train"

    def pair(cid: str, text: str, evidence: str, label: StanceLabel) -> None:
        out[side(cid)].append(
            StancePair(
                question=text, evidence=evidence, label=label, source="fever-train", group=cid
            )
        )

    for c in data.claims:
        gold = [e for e in c.evidence if e in kept][:FEVER_TRAIN_GOLD_PER_CLAIM]
        for e in gold:
            pair(c.id, c.text, data.evidence[e], _FEVER_LABELS[c.label])
    for (cid, text), near in zip(nei_claims, nearest, strict=True):
        if near is not None:
            pair(cid, text, data.evidence[ev_ids[near]], "nei")
    return out


def fmt_pairs(folder: Path) -> dict[Split, list[StancePair]]:
    """Fool Me Twice pairs (see the module docstring)."""
    files = sorted(Path(folder).glob("*.jsonl"))
    if not files:
        raise DataError(
            "no .jsonl files (Fool Me Twice layout: dev.jsonl, test.jsonl)", str(folder)
        )
    rows: list[tuple[str, str, StanceLabel, list[str], list[str]]] = []
    for path in files:
        for i, row in jsonl_objects(path):
            label = _FEVER_LABELS.get(str(row.get("label", "")).upper())
            claim = clean_text(row.get("text") or row.get("claim") or "")
            if label is None or not claim or "id" not in row:
                raise DataError(
                    "claim lines need id, text and label SUPPORTS/REFUTES", str(path), i
                )
            gold = [clean_text(e.get("text", "")) for e in row.get("gold_evidence") or []]
            gold = [g for g in dict.fromkeys(gold) if g]
            seen = set(gold)
            retrieved = []
            for e in row.get("retrieved_evidence") or []:
                text = clean_text(e.get("text", "")) if isinstance(e, dict) else ""
                if text and text not in seen:
                    seen.add(text)
                    retrieved.append(text)
            rows.append((f"fmt-{row['id']}", claim, label, gold, retrieved))
    sides = _sides([(cid, gold) for cid, _, _, gold, _ in rows])
    out: dict[Split, list[StancePair]] = {s: [] for s in SPLITS}
    for cid, claim, label, gold, retrieved in rows:
        words = set(tokenize(claim))
        ranked = sorted(
            retrieved, key=lambda t: -len(words & set(tokenize(t)))
        )  # stable: file order
        for text in gold:
            out[sides[cid]].append(
                StancePair(question=claim, evidence=text, label=label, source="fmt", group=cid)
            )
        for text in ranked[:FMT_NEI_PER_CLAIM]:
            out[sides[cid]].append(
                StancePair(question=claim, evidence=text, label="nei", source="fmt", group=cid)
            )
    return out


def climate_pairs(folder: Path) -> dict[Split, list[StancePair]]:
    """Climate-FEVER pairs (see the module docstring)."""
    path = Path(folder)
    path = path / "climate-fever.jsonl" if path.is_dir() else path
    rows = []
    for i, row in jsonl_objects(path):
        claim = clean_text(row.get("claim", ""))
        evidences = row.get("evidences")
        if not claim or not isinstance(evidences, list):
            raise DataError("claim lines need claim and evidences", str(path), i)
        cid = f"climate-{row.get('claim_id', i)}"
        items = []
        for e in evidences:
            label = _CLIMATE_LABELS.get(str(e.get("evidence_label", "")))
            text = clean_text(e.get("evidence", ""))
            if label is not None and text:
                items.append((str(e.get("evidence_id", text)), text, label))
        rows.append((cid, claim, items))
    sides = _sides(
        [(cid, [cid]) for cid, _, _ in rows]
    )  # claim-level (shared sentences form one giant group)
    out: dict[Split, list[StancePair]] = {s: [] for s in SPLITS}
    for cid, claim, items in rows:
        for _, text, label in items:
            out[sides[cid]].append(
                StancePair(question=claim, evidence=text, label=label, source="climate", group=cid)
            )
    return out


#: Every source by name; ``shareable``: its terms allow sharing weights trained on it;
#: ``trains``: it has a train side (an evaluation-only source has a test side alone).
SOURCES: dict[str, Source] = {
    "fever": Source(
        folder="fever_dev",
        shareable=True,
        load=fever_pairs,
        about="FEVER dev claims + gold evidence, BM25 NEI pairs (CC BY-SA)",
    ),
    "fever-train": Source(
        folder="fever_train",
        shareable=True,
        default=False,
        load=fever_train_pairs,
        about="FEVER train claims + gold sentences, BM25 NEI pairs; for pre-training (CC BY-SA)",
    ),
    "fmt": Source(
        folder="fool_me_twice",
        shareable=True,
        load=fmt_pairs,
        about="Fool Me Twice gold + retrieved-not-gold NEI (Apache-2.0 / CC BY-SA)",
    ),
    "climate": Source(
        folder="climate_fever",
        shareable=True,
        load=climate_pairs,
        about="Climate-FEVER per-evidence labels (CC BY-SA)",
    ),
    "checkcovid": Source(
        folder="check_covid",
        shareable=True,
        load=realworld.checkcovid_pairs,
        about="Check-COVID news claims x abstract sentences, contrastive sets (MIT)",
    ),
    "wice": Source(
        folder="wice",
        shareable=True,
        load=realworld.wice_pairs,
        about="WiCE claims x the cited web article's deciding sentences (ODC-BY / CC BY-SA)",
    ),
    "liarplus": Source(
        folder="liar_plus",
        shareable=True,
        load=realworld.liarplus_pairs,
        about="LIAR-PLUS PolitiFact claims x the fact-checker's justification (CC0)",
    ),
    "symmetric": Source(
        folder="fever_symmetric",
        shareable=True,
        trains=False,
        load=realworld.symmetric_pairs,
        about="FEVER-Symmetric claim-only-bias-free pairs (CC BY-SA)",
    ),
    "averitec": Source(
        folder="averitec",
        shareable=False,
        load=realworld.averitec_pairs,
        about="AVeriTeC train question-answers (CC BY-NC: not for shipped models)",
    ),
    "fnc1": Source(
        folder="fnc1",
        shareable=False,
        default=False,
        load=news.fnc1_pairs,
        about="FNC-1 news headlines x the body's first-read sentence; experiments only (terms unclear)",
    ),
    "averitec-dev": Source(
        folder="averitec",
        shareable=False,
        trains=False,
        load=realworld.averitec_dev_pairs,
        about="AVeriTeC dev Boolean answers, evaluation only (CC BY-NC)",
    ),
}
#: What the shipped model trains on: every source with a train side whose terms allow sharing
#: derived weights.
DEFAULT_SOURCES: tuple[str, ...] = tuple(
    k for k, s in SOURCES.items() if s.shareable and s.trains and s.default
)
#: What ``factseek stance eval`` scores by default: the shipped model's sources, FEVER-Symmetric
#: and AVeriTeC dev.
EVAL_SOURCES: tuple[str, ...] = (*DEFAULT_SOURCES, "symmetric", "averitec-dev")


def parse_sources(text: str | Sequence[str]) -> tuple[str, ...]:
    """``"fever,fmt"`` -> ("fever", "fmt"); the error lists the registered sources."""
    names = [s.strip() for s in (text.split(",") if isinstance(text, str) else text) if s.strip()]
    unknown = [n for n in names if n not in SOURCES]
    if unknown or not names:
        raise InputError(
            f"unknown stance source(s) {', '.join(unknown) or '(none given)'}; choose from: {', '.join(SOURCES)}"
        )
    return tuple(dict.fromkeys(names))


def with_form(
    pairs: Sequence[StancePair], form: Form, *, question_share: float = 0.5
) -> list[StancePair]:
    """The pairs with their questions in ``form`` (see the module docstring)."""
    from factseek.stance.questions import as_questions

    if form not in FORMS:
        raise InputError(f"unknown form {form!r}; choose from: {', '.join(FORMS)}")
    if form == "statement":
        return list(pairs)
    chosen = [
        p.form == "statement" and (form == "question" or _unit(f"q:{p.group}") < question_share)
        for p in pairs
    ]
    texts = list(dict.fromkeys(p.question for p, c in zip(pairs, chosen, strict=True) if c))
    asked = dict(zip(texts, as_questions(texts), strict=True)) if texts else {}
    return [
        replace(p, question=asked[p.question], form="question") if c else p
        for p, c in zip(pairs, chosen, strict=True)
    ]


def build_pairs(
    data: str | Path, sources: Iterable[str] = DEFAULT_SOURCES
) -> dict[Split, list[StancePair]]:
    """``{split: pairs}`` over ``sources`` under the data root (see the module docstring)."""
    root = Path(data)
    out: dict[Split, list[StancePair]] = {s: [] for s in SPLITS}
    for name in parse_sources(list(sources)):
        folder = root / SOURCES[name].folder
        if not folder.exists():
            raise DataError(
                f"stance source {name!r} not found (expected the folder {SOURCES[name].folder}/)",
                str(folder),
            )
        for split, pairs in SOURCES[name].load(folder).items():
            out[split].extend(replace(p, evidence=p.evidence[:MAX_EVIDENCE_CHARS]) for p in pairs)
    test = _keys(out["test"])
    out["validation"] = [p for p in out["validation"] if not _held(p, test)]
    held = _keys([*out["test"], *out["validation"]])
    out["train"] = [p for p in out["train"] if not _held(p, held)]
    return out


def _key(text: str) -> str:
    """Text compared across sources: lower-case letters and digits only (the same sentence in
    two tokenisations is one text)."""
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _keys(pairs: Iterable[StancePair]) -> tuple[set[str], dict[str, set[str]]]:
    """The evidence keys of ``pairs``, and their claim keys by source."""
    claims: dict[str, set[str]] = {}
    for p in pairs:
        claims.setdefault(_key(p.question), set()).add(p.source)
    return {_key(p.evidence) for p in pairs}, claims


def _held(pair: StancePair, keys: tuple[set[str], dict[str, set[str]]]) -> bool:
    """Its evidence is held out, or its claim is held out by another source (within a source,
    its own split keeps a claim's groups apart)."""
    evidence, claims = keys
    return _key(pair.evidence) in evidence or bool(
        claims.get(_key(pair.question), set()) - {pair.source}
    )


def extra_pairs(path: str | Path) -> list[StancePair]:
    """Training pairs of your own: a JSON Lines file of ``{"question", "evidence", "label"}``
    objects (label ``supports``, ``refutes`` or ``nei``; ``claim`` stands in for a missing
    ``question``), such as the ``stance.jsonl`` of ``factseek feedback export``."""
    path = Path(path)
    out: list[StancePair] = []
    for i, row in jsonl_objects(path):
        question = clean_text(row.get("question") or row.get("claim") or "")
        evidence = clean_text(row.get("evidence") or "")
        label = str(row.get("label", "")).strip().lower()
        if not question or not evidence:
            raise DataError("needs a question (or claim) and its evidence", str(path), i)
        if label not in _EXTRA_LABELS:
            raise DataError(
                f"unknown stance label {label!r}; expected supports, refutes or nei", str(path), i
            )
        out.append(
            StancePair(
                question=question,
                evidence=evidence[:MAX_EVIDENCE_CHARS],
                label=_EXTRA_LABELS[label],
                source="extra",
                group=f"extra:{path.name}:{i}",
                form="question" if question.endswith("?") else "statement",
            )
        )
    return out


def add_extra(
    pairs: dict[Split, list[StancePair]], extra: Sequence[StancePair]
) -> dict[Split, list[StancePair]]:
    """``pairs`` with ``extra`` added to the train side, except those whose evidence is a
    validation or test text (the same leakage rule as ``build_pairs``)."""
    held = {p.evidence for p in pairs["validation"]} | {p.evidence for p in pairs["test"]}
    return {**pairs, "train": [*pairs["train"], *(p for p in extra if p.evidence not in held)]}


def parse_oversample(text: str) -> dict[str, int]:
    """``"checkcovid=3,wice=2"`` -> {"checkcovid": 3, "wice": 2} ('' -> {})."""
    out: dict[str, int] = {}
    for item in (x.strip() for x in text.split(",")):
        if not item:
            continue
        name, _, times = item.partition("=")
        if name.strip() not in SOURCES or not times.strip().isdigit() or int(times) < 1:
            raise InputError(
                f"bad oversampling {item!r}: expected SOURCE=N with N >= 1 and SOURCE one of {', '.join(SOURCES)}"
            )
        out[name.strip()] = int(times)
    return out


def repeat_sources(pairs: Sequence[StancePair], repeats: dict[str, int]) -> list[StancePair]:
    """``pairs`` with each pair of a source in ``repeats`` present that many times in all; a
    copy's group gets a ``#k`` suffix, so ``with_form`` may ask it in the other form."""
    out: list[StancePair] = []
    for p in pairs:
        out.append(p)
        for k in range(1, repeats.get(p.source, 1)):
            out.append(replace(p, group=f"{p.group}#{k}"))
    return out


def label_counts(pairs: Iterable[StancePair]) -> dict[str, int]:
    counts: dict[str, int] = {"supports": 0, "refutes": 0, "nei": 0}
    for p in pairs:
        counts[p.label] += 1
    return counts


def describe(pairs: Sequence[StancePair]) -> str:
    """One line: how many pairs, per label and per source."""
    by_source: dict[str, int] = {}
    for p in pairs:
        by_source[p.source] = by_source.get(p.source, 0) + 1
    labels = label_counts(pairs)
    return (
        f"{len(pairs)} pairs ({', '.join(f'{k} {v}' for k, v in labels.items())}; "
        + ", ".join(f"{k} {v}" for k, v in by_source.items())
        + ")"
    )


def subsample(pairs: Sequence[StancePair], n: int | None, seed: int = 0) -> list[StancePair]:
    """At most ``n`` pairs, chosen by a seeded hash (order kept); all when ``n`` is None."""
    if n is None or n >= len(pairs):
        return list(pairs)
    keyed = sorted(range(len(pairs)), key=lambda i: _unit(f"{seed}:{i}:{pairs[i].evidence}"))
    keep = set(keyed[:n])
    return [p for i, p in enumerate(pairs) if i in keep]


def per_source(
    pairs: Sequence[StancePair], sources: Sequence[str], n: int | None, seed: int = 0
) -> list[StancePair]:
    """At most ``n`` pairs of each of ``sources`` (``subsample``), source after source."""
    return [q for name in sources for q in subsample([p for p in pairs if p.source == name], n, seed)]  # fmt: skip


def balance_nei(pairs: Sequence[StancePair], seed: int = 0) -> list[StancePair]:
    """Every supports and refutes pair, and at most ``max(#supports, #refutes)`` nei pairs
    (chosen by a seeded hash, like ``subsample``); order kept."""
    counts = label_counts(pairs)
    nei = [p for p in pairs if p.label == "nei"]
    keep = {id(p) for p in subsample(nei, max(counts["supports"], counts["refutes"]), seed)}
    return [p for p in pairs if p.label != "nei" or id(p) in keep]


__all__ = [
    "DEFAULT_SOURCES",
    "EVAL_SOURCES",
    "FORMS",
    "SOURCES",
    "Form",
    "StancePair",
    "balance_nei",
    "bm25_nearest",
    "build_pairs",
    "describe",
    "label_counts",
    "parse_oversample",
    "parse_sources",
    "per_source",
    "repeat_sources",
    "subsample",
    "with_form",
]
