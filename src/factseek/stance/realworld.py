"""Stance pairs from real-world fact-checking data: Check-COVID, WiCE, FEVER-Symmetric, AVeriTeC.

Each loader returns ``{split: [StancePair]}`` like the Wikipedia sources of ``stance.data``.
Where a data set publishes a development side and keeps its test side aside, factseek's
``test`` side **is that published development side** (never trained or tuned on), and the
``validation`` side (thresholds, calibration) is carved out of the published training side.

- ``checkcovid`` (``check_covid/``, MIT): each claim with its evidence sentences of the
  abstract ``cord_id`` (``evidence_set`` indices, in order, joined): SUPPORT -> supports,
  REFUTE -> refutes, NOTENOUGHINFO -> nei. Sides: ``train.jsonl`` split by abstract (a
  contrastive set shares its abstract, so it stays on one side), 85 / 15; ``dev.jsonl`` -> test.
- ``wice`` (``wice/``, annotations ODC-BY): the claim with the sentences of the cited web
  article that decide it. Test (``dev.jsonl``): *supported* -> supports and *not supported* ->
  nei, with the article's first non-empty supporting sentence set; a not-supported claim with
  none gets the ``WICE_NEI_SENTENCES`` article sentences BM25 ranks highest for it (what a
  retriever would hand the model); *partially supported* claims are left out of the test side
  (it is scored supported vs not). Train and validation (``partial_train.jsonl``, every claim
  partially supported): the claim with its supporting sentences -> nei (the evidence backs part
  of the claim, not all of it), and the claim without the words the article does not back
  (``non_supported_spans``) with the same sentences -> supports, when what is left still reads
  as a sentence (``_supported_part``); split by article, 85 / 15.
- ``symmetric`` (``fever_symmetric/``, CC BY-SA): evaluation only, the test side: FEVER claims
  with one evidence sentence, in pairs written so that the claim alone does not give the label
  away (``fever_symmetric_test.jsonl``; its other files reuse the same sentences, so none can
  train without leaking into it). Wikipedia's tokenisation (``-LRB-``, `` ,``) is undone.
- ``liarplus`` (``liar_plus/``, CC0): PolitiFact claims with the fact-checker's justification
  (its sentences that name the rating left out): true and mostly-true -> supports, false and
  pants-fire -> refutes; half-true and barely-true are left out. A leading "Says" is dropped.
  Sides: both files (``val2.jsonl``, ``test2.jsonl``) split by claim, 80 / 10 / 10.
- ``averitec`` (``averitec/train.json``, CC BY-NC: never in a shipped model): each Boolean
  question-answer as (question, the annotator's explanation), Yes -> supports, No -> refutes
  (the "Yes"/"No" itself is not in the evidence, which would give the label away); and each
  claim with all its answers joined (Supported / Refuted / Not Enough Evidence). Claim-level
  hash split 70 / 10 / 20.
- ``averitec-dev`` (``averitec/dev.json``, CC BY-NC): evaluation only, the test side: the
  Boolean answers of the published dev claims as above (scored supports vs refutes).

``SCORING`` says how each source's test side is scored (``stance.evaluate.score_pairs``).
"""

from __future__ import annotations

import hashlib
import itertools
import re
from pathlib import Path
from typing import Any, Literal

from factseek.datasets.fever import SPLITS, Split, clean_text
from factseek.datasets.guard import jsonl_objects
from factseek.errors import DataError
from factseek.stance.pairs import StancePair, bm25_nearest
from factseek.types import StanceLabel

WICE_NEI_SENTENCES = 2
VALIDATION_SHARE = 0.15
Scoring = Literal["3way", "supported-vs-not", "supports-vs-refutes"]

_CHECKCOVID: dict[str, StanceLabel] = {
    "SUPPORT": "supports",
    "REFUTE": "refutes",
    "NOTENOUGHINFO": "nei",
}
_FEVER: dict[str, StanceLabel] = {"SUPPORTS": "supports", "REFUTES": "refutes"}
_AVERITEC: dict[str, StanceLabel] = {
    "Supported": "supports",
    "Refuted": "refutes",
    "Not Enough Evidence": "nei",
}


def _unit(text: str) -> float:
    return int.from_bytes(hashlib.sha1(text.encode("utf-8")).digest()[:8], "big") / 2**64


def _train_or_validation(group: str) -> Split:
    return "validation" if _unit(f"val:{group}") < VALIDATION_SHARE else "train"


def _pair(question: str, evidence: str, label: StanceLabel, source: str, group: str) -> Any:
    form: Literal["statement", "question"] = "question" if question.endswith("?") else "statement"
    return StancePair(
        question=question, evidence=evidence, label=label, source=source, group=group, form=form
    )


def _empty() -> dict[Split, list[Any]]:
    return {s: [] for s in SPLITS}


def _folder_file(folder: Path, name: str) -> Path:
    path = Path(folder) / name
    if not path.is_file():
        raise DataError(f"expected {name} in the folder", str(folder))
    return path


# ----------------------------------------------------------------------------- Check-COVID


def checkcovid_pairs(folder: Path) -> dict[Split, list[Any]]:
    """Check-COVID pairs (see the module docstring)."""
    corpus: dict[str, list[str]] = {}
    for i, row in jsonl_objects(_folder_file(folder, "corpus.jsonl")):
        abstract = row.get("abstract")
        if "cord_id" not in row or not isinstance(abstract, list):
            raise DataError("corpus lines need cord_id and an abstract list", "corpus.jsonl", i)
        corpus[str(row["cord_id"])] = [clean_text(s) for s in abstract]
    out = _empty()
    for name in ("train.jsonl", "dev.jsonl"):
        path = _folder_file(folder, name)
        for i, row in jsonl_objects(path):
            label = _CHECKCOVID.get(str(row.get("label", "")))
            claim = clean_text(row.get("claim", ""))
            cord = str(row.get("cord_id", ""))
            if label is None or not claim or cord not in corpus:
                raise DataError("claim lines need claim, label and a known cord_id", str(path), i)
            sentences = corpus[cord]
            idx = sorted(
                {
                    int(e["sent_index"])
                    for e in row.get("evidence_set") or []
                    if isinstance(e, dict) and 0 <= int(e.get("sent_index", -1)) < len(sentences)
                }
            )
            evidence = " ".join(sentences[k] for k in idx).strip()
            if not evidence:
                continue
            split: Split = "test" if name == "dev.jsonl" else _train_or_validation(cord)
            out[split].append(_pair(claim, evidence, label, "checkcovid", f"checkcovid-{cord}"))
    return out


# ----------------------------------------------------------------------------- WiCE

_META = re.compile(r"^\(meta data\)\s*")


def _article(row: dict[str, Any]) -> list[str]:
    """The article's sentences; its ``(meta data) TITLE: ...`` lines lose the marker."""
    return [_META.sub("", clean_text(s)).strip() for s in row.get("evidence") or []]


def _first_set(row: dict[str, Any], n: int) -> list[int]:
    for s in row.get("supporting_sentences") or []:
        chosen = sorted({int(k) for k in s if 0 <= int(k) < n})
        if chosen:
            return chosen
    return []


_DANGLING = re.compile(
    r"(?:\b(?:and|or|the|a|an|of|in|on|at|to|by|with|for|as|from)|[,:;(\"“-])\s*[.!?]?$", re.I
)


def _supported_part(row: dict[str, Any]) -> str | None:
    """A partially supported claim without the words its article does not back
    (``non_supported_spans``), when what is left still reads as a sentence: at least 6 words,
    starting with a capital, a verb at its root (spaCy), no determiner or preposition left
    without its word, and no dangling last word ("were", "in", "the")."""
    tokens, flags = row.get("claim_tokens") or [], row.get("non_supported_spans") or []
    if len(tokens) != len(flags) or not any(flags) or all(flags):
        return None
    text = " ".join(t for t, drop in zip(tokens, flags, strict=True) if not drop)
    text = untokenize(text).replace(" - ", "-").replace("()", "").replace('" "', "")
    text = re.sub(r"^[\s,;:]+", "", " ".join(text.split()))
    if len(text.split()) < 6 or not text[:1].isupper() or _DANGLING.search(text):
        return None
    from factseek.ml.nlp import load_spacy

    doc = load_spacy()(text)
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    words = [t for t in doc if not t.is_punct]
    broken = any(  # "the in", "In, Bentley": a determiner or preposition left without its word
        a.pos_ in ("DET", "ADP") and (b.pos_ in ("ADP", "AUX", "PUNCT") or b.is_punct)
        for a, b in itertools.pairwise(doc)
    )
    if (
        root is None
        or root.pos_ not in ("VERB", "AUX")
        or doc[0].pos_ in ("VERB", "AUX")
        or words[-1].pos_ in ("AUX", "ADP", "DET", "CCONJ", "SCONJ", "PART")
        or broken
    ):
        return None
    return text if text.endswith((".", "!", "?")) else text + "."


def wice_pairs(folder: Path) -> dict[Split, list[Any]]:
    """WiCE pairs (see the module docstring)."""
    out = _empty()
    path = _folder_file(folder, "partial_train.jsonl")
    for i, row in jsonl_objects(path):
        claim, sentences = clean_text(row.get("claim", "")), _article(row)
        chosen = _first_set(row, len(sentences))
        if not claim or not sentences:
            raise DataError("claim lines need claim and evidence sentences", str(path), i)
        if not chosen:
            continue
        article = str((row.get("meta") or {}).get("id", i)).split("-")[0]
        evidence = " ".join(sentences[k] for k in chosen)
        side = _train_or_validation(article)
        out[side].append(_pair(claim, evidence, "nei", "wice", f"wice-{article}"))
        kept = _supported_part(row)
        if kept:
            out[side].append(_pair(kept, evidence, "supports", "wice", f"wice-{article}"))
    path = _folder_file(folder, "dev.jsonl")
    pending: list[tuple[str, list[str], str]] = []
    for i, row in jsonl_objects(path):
        label = str(row.get("label", ""))
        claim, sentences = clean_text(row.get("claim", "")), _article(row)
        if not claim or not sentences:
            raise DataError("claim lines need claim and evidence sentences", str(path), i)
        if label not in ("supported", "not_supported"):
            continue
        group = f"wice-{(row.get('meta') or {}).get('id', i)}"
        chosen = _first_set(row, len(sentences))
        if chosen:
            stance: StanceLabel = "supports" if label == "supported" else "nei"
            out["test"].append(
                _pair(claim, " ".join(sentences[k] for k in chosen), stance, "wice", group)
            )
        elif label == "not_supported":
            pending.append((claim, sentences, group))
    for claim, sentences, group in pending:
        body = [s for s in sentences if not s.startswith(("TITLE:", "PUBLISHED DATETIME:"))]
        picked: list[int] = []
        for _ in range(WICE_NEI_SENTENCES):
            [best] = bm25_nearest([claim], body, [set(picked)])
            if best is None:
                break
            picked.append(best)
        if picked:
            evidence = " ".join(body[k] for k in sorted(picked))
            out["test"].append(_pair(claim, evidence, "nei", "wice", group))
    return out


# ----------------------------------------------------------------------------- FEVER-Symmetric

_PTB = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}"}


def untokenize(text: str) -> str:
    """Wikipedia-dump tokenisation undone: brackets, and spaces before punctuation."""
    words = [_PTB.get(w, w) for w in text.split()]
    s = " ".join(words)
    s = re.sub(r"\s+([.,;:!?%)\]}])", r"\1", s)
    s = re.sub(r"([(\[{])\s+", r"\1", s)
    s = re.sub(r"\s+'s\b", "'s", s)
    s = s.replace("`` ", '"').replace(" ''", '"').replace(" -- ", " – ")
    return s.strip()


def symmetric_pairs(folder: Path) -> dict[Split, list[Any]]:
    """FEVER-Symmetric pairs (see the module docstring)."""
    files: dict[str, Split] = {"fever_symmetric_test.jsonl": "test"}
    out = _empty()
    for name, split in files.items():
        path = _folder_file(folder, name)
        for i, row in jsonl_objects(path):
            label = _FEVER.get(str(row.get("label") or row.get("gold_label") or ""))
            claim = untokenize(clean_text(row.get("claim", "")))
            evidence = untokenize(clean_text(row.get("evidence_sentence") or row.get("evidence")))
            if label is None or not claim or not evidence:
                raise DataError("lines need claim, evidence and a FEVER label", str(path), i)
            rid = str(row.get("id", i))  # a generated pair: its source claim's id + 7 digits
            group = f"symmetric-{rid[:-7] if len(rid) > 9 else rid}"
            out[split].append(_pair(claim, evidence, label, "symmetric", group))
    return out


# ----------------------------------------------------------------------------- LIAR-PLUS

_LIAR: dict[str, StanceLabel] = {
    "true": "supports",
    "mostly-true": "supports",
    "false": "refutes",
    "pants-fire": "refutes",
}
_RATING = re.compile(
    r"we rate|rating|pants on fire|truth-o-meter|mostly true|half true|mostly false", re.I
)


def liarplus_pairs(folder: Path) -> dict[Split, list[Any]]:
    """LIAR-PLUS pairs (see the module docstring; CC0)."""
    out = _empty()
    for name in ("val2.jsonl", "test2.jsonl"):
        path = _folder_file(folder, name)
        for i, row in jsonl_objects(path):
            label = _LIAR.get(str(row.get("label", "")))
            claim = re.sub(r"^Says\s+", "", clean_text(row.get("claim", "")))
            sentences = re.split(r"(?<=[.!?])\s+", clean_text(row.get("justification") or ""))
            evidence = " ".join(s for s in sentences if s and not _RATING.search(s))
            if label is None or not claim or not evidence:
                continue
            group = f"liarplus-{row.get('json_file_id', f'{name}:{i}')}"
            u = _unit(f"liar:{group}")
            split: Split = "train" if u < 0.8 else "validation" if u < 0.9 else "test"
            out[split].append(_pair(claim, evidence, label, "liarplus", group))
    return out


# ----------------------------------------------------------------------------- AVeriTeC


def _averitec_rows(path: Path) -> list[dict[str, Any]]:
    from factseek.files import read_json

    rows = read_json(path, "AVeriTeC file")  # capped; UTF-8 with or without a byte-order mark
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise DataError("expected a JSON list of claim objects", str(path))
    return rows


def boolean_answers(row: dict[str, Any], source: str, group: str) -> list[Any]:
    """(question, explanation) pairs of a claim's Boolean answers: Yes -> supports, No -> refutes."""
    out = []
    for q in row.get("questions") or []:
        question = clean_text(q.get("question", ""))
        for a in q.get("answers") or []:
            answer = clean_text(a.get("answer", "")).lower()
            explanation = clean_text(a.get("boolean_explanation") or "")
            if a.get("answer_type") == "Boolean" and answer in ("yes", "no") and explanation:
                label: StanceLabel = "supports" if answer == "yes" else "refutes"
                out.append(_pair(question, explanation, label, source, group))
    return out


def averitec_pairs(folder: Path) -> dict[Split, list[Any]]:
    """AVeriTeC training pairs from ``train.json`` (see the module docstring; CC BY-NC)."""
    path = Path(folder)
    path = path / "train.json" if path.is_dir() else path
    out = _empty()
    for i, row in enumerate(_averitec_rows(path)):
        group = f"averitec-{i}"
        pairs = boolean_answers(row, "averitec", group)
        answers = []
        for q in row.get("questions") or []:
            question = clean_text(q.get("question", ""))
            for a in q.get("answers") or []:
                text = clean_text(a.get("answer", ""))
                if text and a.get("answer_type") != "Unanswerable":
                    answers.append(f"{question} {text}.")
        claim = clean_text(row.get("claim", ""))
        verdict = _AVERITEC.get(str(row.get("label", "")))
        if claim and answers and verdict is not None:
            pairs.append(_pair(claim, " ".join(answers), verdict, "averitec", group))
        u = _unit(f"0:{group}")
        out["train" if u < 0.7 else "validation" if u < 0.8 else "test"].extend(pairs)
    return out


def averitec_dev_pairs(folder: Path) -> dict[Split, list[Any]]:
    """The Boolean answers of AVeriTeC's published dev claims, as a test side only."""
    path = Path(folder)
    path = path / "dev.json" if path.is_dir() else path
    out = _empty()
    for i, row in enumerate(_averitec_rows(path)):
        out["test"].extend(boolean_answers(row, "averitec-dev", f"averitec-dev-{i}"))
    return out


#: How each source's test side is scored (``stance.evaluate.score_pairs``); others: 3-way.
SCORING: dict[str, Scoring] = {
    "wice": "supported-vs-not",
    "averitec-dev": "supports-vs-refutes",
    "symmetric": "supports-vs-refutes",
    "liarplus": "supports-vs-refutes",
}


def scoring(source: str) -> Scoring:
    return SCORING.get(source, "3way")


__all__ = [
    "SCORING",
    "averitec_dev_pairs",
    "averitec_pairs",
    "boolean_answers",
    "checkcovid_pairs",
    "liarplus_pairs",
    "scoring",
    "symmetric_pairs",
    "untokenize",
    "wice_pairs",
]
