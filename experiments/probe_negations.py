"""Probe: how often is a refuting reading right when the evidence's negation denies something the
question does not ask about?

    python experiments/probe_negations.py --data "$FACTSEEK_DATA" [--model mpnet]
        [--sources checkcovid,wice,averitec-dev,liarplus] [--max-pairs 300]
    python experiments/probe_negations.py --sources "" --run RUN --claims CLAIMS.json

With ``--sources``: reads the validation and test sides of the gold-labelled sources (statement
form, ``--max-pairs`` seeded pairs per source and side) with the model as it ships and prints,
for its ``supports`` and ``refutes`` readings, how often they were right (the side's own
labels; on WiCE, "supported" or not) among pairs whose evidence holds no negation, a negation
of the question's own words, or only negations of something else. About 3 minutes for
``mpnet`` on 2 cores (less when the readings are kept, ``stance.readings``).

With ``--run`` (an ``eval pipeline`` run over AVeriTeC-labelled claims, its ``--claims`` file):
the run's refuting cards in the same three groups, each counted right when its claim's label is
"Refuted" (a subquestion's card is scored by its claim, as ``eval pipeline`` scores subquestion
answers), and ``--show`` flagged cards for reading. Reads no model. Used for docs/verdicts.md,
"Tried, not shipped: a negation of something else".

The detector (``elsewhere``, below; spaCy's dependency parse) was written for the demo's
misread, "The mayor did not mention her 2019 promise that the plant would cost $31 million",
read as refuting "Did the mayor say the plant would cost $31 million?": what a negation denies
is the word it negates with that word's own complements one level down (the verb's object, its
complement, the object of its preposition; for "X, not Y", what follows "not"), not the clauses
hanging from them ("her promise *that the plant would cost ...*"); a negated noun of evidence
("no *evidence* that ...") denies its clause too. A sentence is flagged when it holds a
negation, the question none, and every negation denies something known that shares no word
(stems) with the question. It lives here, not in factseek: the probe found the flag is not a
sign of a worse reading (docs/verdicts.md), so nothing uses it.
"""

from __future__ import annotations

import argparse
import logging
import os
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from factseek.errors import MissingDependency
from factseek.text import stem

# ----------------------------------------------------------------------------- the detector

log = logging.getLogger(__name__)

MAX_CHARS = 2_000  # longer texts are not parsed (cards are sentences)
NEGATORS = frozenset({"not", "n't", "never", "no", "neither", "nor", "nobody", "nothing", "none"})
#: Complements of the negated word that are part of what is denied.
COMPLEMENTS = frozenset({"dobj", "attr", "acomp", "xcomp", "oprd", "prt", "dative", "pobj"})
# fmt: off
#: Nouns whose denial denies their clause: "no evidence that vaccines cause autism".
EVIDENCE = frozenset({
    "evidence", "proof", "sign", "indication", "record", "basis", "data", "link", "connection",
    "truth", "trace", "confirmation",
})
CONTENT = frozenset({"NOUN", "PROPN", "VERB", "ADJ"})
#: Words too common to tie a negation to the question ("be", "do", "have" as main verbs too).
LIGHT = frozenset({"be", "do", "have", "get", "make", "go", "take", "there", "it", "that"})
# fmt: on


def _negators(doc: Any) -> list[Any]:
    """The negations of a parsed text: "not"/"n't"/"never" as ``neg``, and "no", "neither",
    "nobody", "nothing", "none" wherever they stand."""
    return [t for t in doc if t.dep_ == "neg" or (t.lower_ in NEGATORS and t.dep_ != "neg")]


def _words(tokens: Iterable[Any]) -> frozenset[str]:
    """The stems of the content words among ``tokens`` (nouns, names, verbs, adjectives)."""
    return frozenset(
        stem(t.lemma_.lower())
        for t in tokens
        if t.pos_ in CONTENT and t.is_alpha and t.lemma_.lower() not in LIGHT
    )


def denied(neg: Any) -> frozenset[str]:
    """The stems of what the negation token ``neg`` denies (module docstring)."""
    doc = neg.doc
    alone = neg.i + 1 < len(doc) and doc[neg.i + 1].is_punct  # "No. The bridge reopened in June."
    if neg.head is neg or neg.dep_ in ("intj", "ROOT") or (neg.lower_ == "no" and alone):
        return _words(doc)
    head = neg.head if neg.dep_ in ("neg", "det", "advmod", "preconj", "cc") else neg
    if neg.dep_ == "neg" and head.i < neg.i and head.pos_ in ("NOUN", "PROPN", "NUM"):
        # "born in Hawaii, not Kenya", "the fixed charge, not the bill": what follows is denied
        after = []
        for t in doc[neg.i + 1 :]:
            if t.is_punct or t.dep_ == "cc":
                break
            after.append(t)
        return _words(after)
    if head is neg and neg.dep_ in ("nsubj", "dobj", "pobj", "nsubjpass", "attr"):
        head = neg.head  # "nothing was found", "he said nothing": the verb is what is denied
    out = [head]
    for c in head.children:
        if c.dep_ in COMPLEMENTS or (c.dep_ in ("compound", "amod") and c.i < head.i):
            out.append(c)
            out += [g for g in c.children if g.dep_ in ("pobj", "dobj", "compound", "amod")]
        elif c.dep_ == "prep":
            out += [g for g in c.children if g.dep_ == "pobj"]
    if head.lemma_.lower() in EVIDENCE or any(t.lemma_.lower() in EVIDENCE for t in out):
        out += [t for t in head.subtree]  # "no evidence that X": X is what is denied
    return _words(out)


@lru_cache(maxsize=4096)
def negations(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """Each negation of ``text`` as (the words it negates as written, the stems of what it
    denies); empty without a negation or without spaCy."""
    if not any(w in text.lower() for w in ("not", "n't", "never", "no", "neither", "nor")):
        return ()
    from factseek.ml.nlp import load_spacy  # loaded once per process

    try:
        doc = load_spacy()(text[:MAX_CHARS])
    except MissingDependency as e:  # a refinement: without the parse, no flag
        log.debug("negations not parsed: %s", e)
        return ()
    out = []
    for neg in _negators(doc):
        head = neg.head if neg.head is not neg else neg
        lo, hi = sorted((neg.i, head.i))
        out.append((doc[lo : hi + 1].text, denied(neg)))
    return tuple(out)


def elsewhere(question: str, text: str) -> str:
    """When every negation of ``text`` denies something ``question`` does not ask about, what to
    tell the reviewer ("its negation, “did not mention”, is of something the question does not
    ask about"); else "" (no negation, a negated question, or a negation of the question's own
    words)."""
    said = negations(text)
    if not said or negations(question):
        return ""
    asked = _question_words(question)
    if not asked or any(not d or d & asked for _, d in said):  # unknown, or the question's own
        return ""
    shown = ", ".join(f"“{w}”" for w, _ in said[:2])
    return f"its negation ({shown}) is of something the question does not ask about"


@lru_cache(maxsize=1024)
def _question_words(question: str) -> frozenset[str]:
    from factseek.ml.nlp import load_spacy

    try:
        return _words(load_spacy()(question[:MAX_CHARS]))
    except MissingDependency:
        return frozenset()


# ----------------------------------------------------------------------------- the probe

KINDS = ("no negation", "negation of the question's words", "negation of something else")


def kind_of(question: str, evidence: str) -> str:
    if not negations(evidence):
        return KINDS[0]
    return KINDS[2] if elsewhere(question, evidence) else KINDS[1]


def table(tally: Counter[tuple[str, str, bool]], labels: tuple[str, ...]) -> None:
    print("| evidence | " + " | ".join(f"{x}: right / readings" for x in labels) + " |")
    print("|---|" + "---:|" * len(labels))
    for kind in KINDS:
        cells = []
        for label in labels:
            ok, bad = tally[(kind, label, True)], tally[(kind, label, False)]
            cells.append(f"{100 * ok / (ok + bad):.0f}% ({ok} / {ok + bad})" if ok + bad else "-")
        print(f"| {kind} | " + " | ".join(cells) + " |")


def run_cards(run: Path, claims: Path, show: int) -> None:
    from factseek.datasets.claims import data_format, with_ids
    from factseek.runs.batch import claim_id
    from factseek.runs.evaluate import load_reports

    gold = {claim_id(r.claim): r.label for r in with_ids(data_format("averitec", claims).load(claims))}  # fmt: skip
    tally: Counter[tuple[str, str, bool]] = Counter()
    shown = []
    for cid, report in sorted(load_reports(run).items()):
        for e in report.evidence:
            if e.stance is None or e.stance.label != "refutes" or cid not in gold:
                continue
            kind = kind_of(e.question, e.text)
            tally[(kind, "refutes", gold[cid] == "refuted")] += 1
            if kind == KINDS[2]:
                shown.append((cid, gold[cid], e.question, e.text, elsewhere(e.question, e.text)))
    print(f"\n{run}: refuting cards, right when their claim is refuted")
    table(tally, ("refutes",))
    for cid, label, q, text, note in shown[:show]:
        print(f"\n[{cid}, {label}] {q}\n  {text[:300]}\n  -> {note}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=os.environ.get("FACTSEEK_DATA"))
    p.add_argument("--model", default="mpnet", help="a shipped stance model's name or a folder")
    p.add_argument("--sources", default="checkcovid,wice,averitec-dev,liarplus")
    p.add_argument("--max-pairs", type=int, default=300, help="per source and side")
    p.add_argument("--run", type=Path, default=None, help="an eval pipeline run folder")
    p.add_argument("--claims", type=Path, default=None, help="that run's AVeriTeC claims file")
    p.add_argument("--show", type=int, default=0, help="flagged cards (or pairs) to print")
    args = p.parse_args()
    if args.run is not None:
        if args.claims is None or not args.claims.is_file():
            p.error("--run needs its claims file (--claims)")
        run_cards(args.run, args.claims, args.show)
    if not args.sources:
        return
    if args.data is None or not Path(args.data).is_dir():
        print("skipped: no data (pass --data DIR or set FACTSEEK_DATA)")
        return

    from factseek.files import cache_root
    from factseek.stance import engine_for_many, load_stance
    from factseek.stance.data import build_pairs, parse_sources, per_source
    from factseek.stance.realworld import scoring

    names = parse_sources(args.sources)
    model = load_stance(args.model, engine=engine_for_many(), readings=cache_root())
    sides = build_pairs(args.data, names)
    pairs = [q for side in ("validation", "test") for q in per_source(sides[side], names, args.max_pairs)]  # fmt: skip
    print(f"reading {len(pairs)} pairs with {model.name} ...", flush=True)
    read = model.classify([(q.question, q.evidence) for q in pairs])
    tally: Counter[tuple[str, str, bool]] = Counter()
    shown = []
    for q, r in zip(pairs, read, strict=True):
        if r.label == "nei":
            continue
        if scoring(q.source) == "supported-vs-not":  # WiCE: supported or not
            right = (r.label == "supports") == (q.label == "supports")
        else:
            right = r.label == q.label
        kind = kind_of(q.question, q.evidence)
        tally[(kind, r.label, right)] += 1
        if kind == KINDS[2] and r.label == "refutes":
            shown.append((q.source, q.label, right, q.question, q.evidence))
    print(f"\n{model.name}: how often its readings were right, by what the evidence negates")
    table(tally, ("supports", "refutes"))
    for source, label, right, question, evidence in shown[: args.show]:
        print(f"\n[{source}, gold {label}, {'right' if right else 'wrong'}] {question}\n  {evidence[:300]}")  # fmt: skip


if __name__ == "__main__":
    main()
