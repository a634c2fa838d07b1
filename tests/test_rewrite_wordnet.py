"""The WordNet reader: binary search in the index files, one seek per synset, NLTK's morphy."""

from __future__ import annotations

from pathlib import Path

import pytest

from factseek.rewrite.environment import wordnet

LICENCE = "  1 This software and database is being provided\n  2 without warranty\n"


def write_db(root: Path, synsets: dict[str, list[tuple[list[str], list[str]]]]) -> Path:
    """A tiny WordNet: per POS file name, synsets as (lemma names as written, index lemmas)."""
    root.mkdir(parents=True)
    for pos, name in wordnet.POS_FILES.items():
        data, index = LICENCE, {}
        for words, lemmas in synsets.get(name, []):
            offset = len(data.encode())
            body = " ".join(f"{w} 0" for w in words)
            data += f"{offset:08d} 05 {pos} {len(words):02x} {body} 000 | a gloss\n"
            for lemma in lemmas:
                index.setdefault(lemma, []).append(offset)
        lines = [
            f"{lemma} {pos} {len(offs)} 1 @ {len(offs)} 0 {' '.join(f'{o:08d}' for o in offs)}"
            for lemma, offs in sorted(index.items())
        ]
        (root / f"data.{name}").write_text(data)
        (root / f"index.{name}").write_text(LICENCE + "".join(line + "  \n" for line in lines))
        exc = {"noun": "geese goose\n", "verb": "ran run\n"}.get(name, "")
        (root / f"{name}.exc").write_text(exc)
    return root


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> wordnet.WordNet:
    root = write_db(
        tmp_path / "wn",
        {
            "noun": [
                (["car", "auto", "automobile"], ["car", "auto", "automobile"]),
                (["car", "railcar", "railway_car"], ["car", "railcar", "railway_car"]),
                (["goose"], ["goose"]),
                (["axis", "Axis_Powers"], ["axis"]),
                (["ax", "axe"], ["ax", "axe"]),
            ],
            "verb": [(["run", "go"], ["run", "go"]), (["test", "prove"], ["test", "prove"])],
            "adj": [(["big(a)", "large"], ["big", "large"])],
        },
    )
    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path / "cache"))
    return wordnet.WordNet(wordnet.normalised_dir(root))


def test_synsets_in_sense_order_then_lemmas_in_order(db: wordnet.WordNet) -> None:
    assert db.synonyms("car", "n") == ("car", "auto", "automobile", "railcar", "railway car")
    assert db.synonyms("Car", "n") == db.synonyms("car", "n")  # lower-cased first, like NLTK


def test_morphy_rules_and_exceptions(db: wordnet.WordNet) -> None:
    assert db.synonyms("cars", "n")[:2] == ("car", "auto")  # rule "s" -> ""
    assert db.synonyms("geese", "n") == ("goose",)  # exception list
    assert db.synonyms("ran", "v") == ("run", "go")
    assert db.synonyms("testing", "v") == ("test", "prove")  # rule "ing" -> ""
    # both base forms in the index: NLTK keeps the form itself, then the rule's
    assert db.morphy("axes", "n") == ["axe", "ax"]


def test_markers_absent_words_and_odd_input(db: wordnet.WordNet) -> None:
    assert db.synonyms("big", "a") == ("big", "large")  # "(a)" marker stripped
    assert db.synonyms("axis", "n") == ("axis", "Axis Powers")  # case kept, spaces
    for word in ("zebra", "", "s", "car park", "  "):
        assert db.synonyms(word, "n") == ()
    assert db.synonyms("car", "v") == ()
    assert db.index_entry("aaa", "n") is None and db.index_entry("zzz", "n") is None


def test_crlf_files_give_the_same_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lf = write_db(tmp_path / "lf", {"noun": [(["car", "auto"], ["car", "auto"])]})
    crlf = tmp_path / "crlf"
    crlf.mkdir()
    for f in lf.iterdir():
        (crlf / f.name).write_bytes(f.read_bytes().replace(b"\n", b"\r\n"))
    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path / "cache"))
    one = wordnet.WordNet(wordnet.normalised_dir(lf))
    two = wordnet.WordNet(wordnet.normalised_dir(crlf))
    assert one.synonyms("auto", "n") == two.synonyms("auto", "n") == ("car", "auto")


@pytest.mark.slow
def test_same_synonyms_as_nltk_on_every_lemma(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Every index lemma and exception form of the bundled WordNet 3.0, against NLTK's reader
    (the reader the rewriter used before; the shipped model was trained with it)."""
    nltk = pytest.importorskip("nltk")
    import shutil
    import warnings

    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    monkeypatch.setenv("FACTSEEK_CACHE", str(tmp_path / "cache"))
    try:
        source = wordnet.source_dir()
    except Exception as e:
        pytest.skip(f"no WordNet files: {e}")
    ours = wordnet.WordNet(wordnet.normalised_dir(source))
    ref_dir = tmp_path / "nltk"
    ref_dir.mkdir()
    for name in (*wordnet.FILES, "lexnames", "index.sense"):
        (ref_dir / name).write_bytes((source / name).read_bytes().replace(b"\r\n", b"\n"))

    class Reader(WordNetCorpusReader):
        def map_wn(self, version: str = "wordnet") -> None:
            return None

    nltk.data.path.append(str(ref_dir))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = Reader(str(ref_dir), None)

    def theirs(lemma: str, pos: str) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for s in ref.synsets(lemma, pos):
            for n in s.lemma_names():
                seen.setdefault(n.replace("_", " "), None)
        return tuple(seen)

    words = {(w, p) for w, by_pos in ref._lemma_pos_offset_map.items() for p in by_pos if p in "nvar"}  # fmt: skip
    words |= {(w, p) for p in "nvar" for w in ref._exception_map[p]}
    words |= {(w + s, p) for w, p in list(words)[::7] for s in ("s", "es", "ed", "ing", "er")}
    diffs = [(w, p) for w, p in sorted(words) if ours.synonyms(w, p) != theirs(w, p)]
    assert len(words) > 150_000 and not diffs, diffs[:5]
    shutil.rmtree(ref_dir)
