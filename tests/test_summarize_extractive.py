"""The offline extractive summarizer: relevance, redundancy, verbatim offsets, bounds."""

from __future__ import annotations

import time

import numpy as np
import pytest

from factseek.errors import ConfigError
from factseek.ml.encode import FunctionEncoder
from factseek.passages import SpanConfig, select_passages
from factseek.summarize import NOT_RELEVANT, Summarizer
from factseek.summarize.extractive import ExtractiveConfig, ExtractiveSummarizer, sentence_spans
from factseek.types import Claim, Document, Passage, Question, Summary

CLAIM = Claim(text="The unemployment rate fell to 3.5% in 2019, the lowest in 50 years.")
QUESTIONS = [
    Question(text="Did the unemployment rate fall to 3.5% in 2019?"),
    Question(text="Was the 2019 unemployment rate the lowest in 50 years?"),
]
JOBS = Document(
    url="https://news.example/jobs",
    title="Jobs report",
    text=(
        "Accept cookies to continue reading this page.\n"
        "WASHINGTON — The Labor Department released its monthly report on Friday.  "
        "The unemployment rate fell to 3.5 percent in September 2019.\n"
        "Economists had expected hiring to slow down this autumn. "
        "It was the lowest jobless rate in 50 years, the department said. "
        "Wages grew 2.9 percent from a year earlier. "
        "Sign up for our newsletter to get more stories."
    ),
)
BAKING = Document(
    url="https://food.example/bread",
    title="Bread",
    text="Bake the loaf at 200 degrees for forty minutes. Let it cool before slicing. Serve it with butter.",
)


def whole(doc: Document, rank: int = 0) -> Passage:
    """A passage spanning a whole document."""
    return Passage(
        url=doc.url,
        title=doc.title,
        text=doc.text,
        doc_rank=rank,
        score=1.0,
        start_word=0,
        end_word=len(doc.text.split()),
        start_char=0,
        end_char=len(doc.text),
    )


def texts(summary: Summary) -> list[str]:
    return [s.text for s in summary.sentences]


def assert_verbatim(summary: Summary, doc: Document) -> None:
    for s in summary.sentences:
        assert s.start_char is not None and s.end_char is not None
        assert doc.text[s.start_char : s.end_char] == s.text
        assert s.supported is True and s.support == 1.0


def test_picks_the_relevant_sentences_in_document_order() -> None:
    (summary,) = ExtractiveSummarizer().summarize(CLAIM, QUESTIONS, [whole(JOBS)])
    assert summary.relevant and summary.method == "extractive"
    assert (summary.url, summary.title) == (JOBS.url, JOBS.title)
    assert texts(summary) == [
        "The unemployment rate fell to 3.5 percent in September 2019.",
        "It was the lowest jobless rate in 50 years, the department said.",
    ]
    assert summary.text == " ".join(texts(summary))
    assert_verbatim(summary, JOBS)


def test_not_relevant_document() -> None:
    (summary,) = ExtractiveSummarizer().summarize(CLAIM, QUESTIONS, [whole(BAKING)])
    assert not summary.relevant
    assert summary.text == NOT_RELEVANT
    assert summary.sentences == ()
    assert summary.url == BAKING.url and summary.method == "extractive"


def test_redundant_sentences_are_not_repeated() -> None:
    repeated = Document(
        url="https://wire.example/1",
        text=(
            "The unemployment rate fell to 3.5 percent in 2019, the Labor Department said. "
            "The unemployment rate fell to 3.5 percent in 2019, the Labor Department said. "
            "The unemployment rate fell to 3.5 percent in 2019, the department said on Friday. "
            "It was the lowest rate in 50 years."
        ),
    )
    (summary,) = ExtractiveSummarizer().summarize(CLAIM, QUESTIONS, [whole(repeated)])
    assert texts(summary) == [
        "The unemployment rate fell to 3.5 percent in 2019, the Labor Department said.",
        "It was the lowest rate in 50 years.",
    ]
    # Without the redundancy terms the near-copy comes back (exact copies never do).
    lax = ExtractiveSummarizer(ExtractiveConfig(redundancy=0.0, max_similarity=1.0))
    (summary,) = lax.summarize(CLAIM, QUESTIONS, [whole(repeated)])
    assert sum(t.startswith("The unemployment rate fell") for t in texts(summary)) == 2
    assert_verbatim(summary, repeated)


def test_offsets_are_exact_through_select_passages() -> None:
    filler = " ".join(f"Filler{i} sentence number {i} here." for i in range(60))
    doc = Document(
        url="https://x.example/a",
        title="A",
        text=(
            f"İntro   line with ΟΔΟΣ.\n{filler}\n"
            "The unemployment rate fell to 3.5 percent in 2019, a record.\t"
            f"Nobody expected it. {filler} "
            "It was the lowest rate in 50 years, “officials” said.  More text follows here."
        ),
    )
    passages = select_passages(
        [doc, BAKING], [CLAIM.text] + [q.text for q in QUESTIONS], SpanConfig(context=10)
    )
    assert len({(p.start_word, p.end_word) for p in passages if p.url == doc.url}) >= 2
    summaries = ExtractiveSummarizer().summarize(CLAIM, QUESTIONS, passages)
    assert [s.url for s in summaries] == [doc.url]  # the bread page had no passage
    (summary,) = summaries
    assert summary.relevant and len(summary.sentences) == 2
    assert_verbatim(summary, doc)


def test_one_summary_per_document_in_rank_order() -> None:
    passages = [whole(BAKING, rank=1), whole(JOBS, rank=0)]
    summaries = ExtractiveSummarizer().summarize(CLAIM, QUESTIONS, passages)
    assert [s.url for s in summaries] == [JOBS.url, BAKING.url]
    assert [s.relevant for s in summaries] == [True, False]
    assert ExtractiveSummarizer().summarize(CLAIM, QUESTIONS, []) == []


def test_deterministic_and_independent_of_passage_order() -> None:
    left = Passage(url=JOBS.url, title=JOBS.title, text=JOBS.text[:200], doc_rank=0, score=2.0,
                   start_word=0, end_word=len(JOBS.text[:200].split()), start_char=0, end_char=200)  # fmt: skip
    rest = JOBS.text[200:]
    skip = len(rest) - len(rest.lstrip())
    right = Passage(url=JOBS.url, title=JOBS.title, text=rest.strip(), doc_rank=0, score=1.0,
                    start_word=len(JOBS.text[:200].split()), end_word=len(JOBS.text.split()),
                    start_char=200 + skip, end_char=200 + skip + len(rest.strip()))  # fmt: skip
    summarizer = ExtractiveSummarizer()
    first = summarizer.summarize(CLAIM, QUESTIONS, [left, right, whole(BAKING, 1)])
    again = summarizer.summarize(CLAIM, QUESTIONS, [whole(BAKING, 1), right, left])
    assert first == again
    assert_verbatim(first[0], JOBS)


def test_sentences_that_only_restate_the_claim_are_dropped() -> None:
    doc = Document(
        url="https://x.example/r",
        text=(
            "The unemployment rate fell to 3.5% in 2019, the lowest in 50 years. "
            "Labor statistics show the unemployment rate was 3.5 percent in late 2019."
        ),
    )
    (summary,) = ExtractiveSummarizer().summarize(CLAIM, QUESTIONS, [whole(doc)])
    assert texts(summary) == [
        "Labor statistics show the unemployment rate was 3.5 percent in late 2019."
    ]
    keep = ExtractiveSummarizer(ExtractiveConfig(restatement=None))
    (summary,) = keep.summarize(CLAIM, QUESTIONS, [whole(doc)])
    assert (
        texts(summary)[0] == "The unemployment rate fell to 3.5% in 2019, the lowest in 50 years."
    )


def test_max_sentences_and_min_relevance() -> None:
    one = ExtractiveSummarizer(ExtractiveConfig(max_sentences=1))
    (summary,) = one.summarize(CLAIM, QUESTIONS, [whole(JOBS)])
    assert len(summary.sentences) == 1
    strict = ExtractiveSummarizer(ExtractiveConfig(min_relevance=0.99))
    (summary,) = strict.summarize(CLAIM, QUESTIONS, [whole(JOBS)])
    assert not summary.relevant


def test_passage_edges_cut_mid_sentence_are_skipped() -> None:
    text = JOBS.text
    start = text.index("rate fell to 3.5")  # mid-sentence
    end = text.index("Wages grew") + len("Wages grew 2.9")  # mid-sentence
    p = Passage(url=JOBS.url, text=text[start:end], doc_rank=0, score=1.0, start_word=12,
                end_word=40, start_char=start, end_char=end)  # fmt: skip
    (summary,) = ExtractiveSummarizer().summarize(CLAIM, QUESTIONS, [p])
    assert texts(summary) == ["It was the lowest jobless rate in 50 years, the department said."]
    assert_verbatim(summary, JOBS)


def test_offsets_are_none_when_passage_offsets_disagree() -> None:
    p = whole(JOBS)
    bad = Passage(**{**p.__dict__, "end_char": p.end_char + 5})
    (summary,) = ExtractiveSummarizer().summarize(CLAIM, QUESTIONS, [bad])
    assert summary.relevant
    assert all(s.start_char is None and s.end_char is None for s in summary.sentences)


def test_encoder_adds_semantic_relevance() -> None:
    doc = Document(
        url="https://x.example/e",
        text="Joblessness dropped to a half-century low last year. The city opened a new park downtown.",
    )

    def fake(texts: list[str]) -> np.ndarray:  # the claim and the paraphrase point the same way
        return np.array(
            [
                [1.0, 0.0] if ("unemployment" in t or "Joblessness" in t) else [0.0, 1.0]
                for t in texts
            ]
        )

    plain = ExtractiveSummarizer().summarize(CLAIM, QUESTIONS, [whole(doc)])
    assert not plain[0].relevant
    dense = ExtractiveSummarizer(encoder=FunctionEncoder(fake, dim=2))
    (summary,) = dense.summarize(CLAIM, QUESTIONS, [whole(doc)])
    assert texts(summary) == ["Joblessness dropped to a half-century low last year."]
    assert_verbatim(summary, doc)


def test_work_is_bounded_on_huge_passages() -> None:
    text = "The unemployment rate fell to 3.5% in 2019. " * 60_000  # 2.6M characters
    p = Passage(url="https://big.example", text=text, doc_rank=0, score=1.0, start_word=0,
                end_word=len(text.split()), start_char=0, end_char=len(text))  # fmt: skip
    t = time.perf_counter()
    (summary,) = ExtractiveSummarizer().summarize(CLAIM, QUESTIONS, [p])
    assert time.perf_counter() - t < 5.0
    assert summary.relevant and len(summary.sentences) == 1  # the copies are redundant
    assert summary.note.endswith(f"of {ExtractiveConfig().max_candidates} sentences")


def test_implements_the_protocol_and_validates_config() -> None:
    assert isinstance(ExtractiveSummarizer(), Summarizer)
    assert ExtractiveSummarizer.name == "extractive"
    for bad in ({"max_sentences": 0}, {"min_relevance": 1.5}, {"redundancy": -0.1},
                {"min_words": 0}, {"min_words": 9, "max_words": 8}, {"max_chars": 0}, {"restatement": 0.0}):  # fmt: skip
        with pytest.raises(ConfigError):
            ExtractiveConfig(**bad)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("Sen. Warren spoke. Then she left.", ["Sen. Warren spoke.", "Then she left."]),
        ("J. K. Rowling wrote it. Dr. Who agreed.", ["J. K. Rowling wrote it.", "Dr. Who agreed."]),
        ("It grew 3.5% in the U.S. economy. Good.", ["It grew 3.5% in the U.S. economy.", "Good."]),
        (
            '"Is it true?" she asked. "Yes!" He nodded.',
            ['"Is it true?" she asked.', '"Yes!"', "He nodded."],
        ),
        ("Wait... and see. 2020 was worse.", ["Wait... and see.", "2020 was worse."]),
        (
            "HEADLINE HERE\n\nBody text. (Quoted part.) Next",
            ["HEADLINE HERE", "Body text.", "(Quoted part.)", "Next"],
        ),
        (  # a signature run into the text (a letters page without its line breaks)
            "It costs $31 million. - Ann Lee, Elm Street To the editor: Ms. Lee is wrong.",
            ["It costs $31 million.", "- Ann Lee, Elm Street To the editor: Ms. Lee is wrong."],
        ),
        (
            "It rose 5%. — A note. The U.S. - Mexico border.",
            ["It rose 5%.", "— A note.", "The U.S. - Mexico border."],
        ),
        ("a b c d e f g h", ["a b c", "d e f", "g h"]),  # max_words=3
        ("", []),
    ],
)
def test_sentence_spans(text: str, want: list[str]) -> None:
    spans = sentence_spans(text, max_words=3 if text.startswith("a b") else 60)
    assert [text[s:e] for s, e in spans] == want


@pytest.mark.slow
def test_with_the_default_minilm_encoder() -> None:
    from factseek.ml.encode import default_encoder

    summarizer = ExtractiveSummarizer(encoder=default_encoder())
    summaries = summarizer.summarize(CLAIM, QUESTIONS, [whole(JOBS), whole(BAKING, rank=1)])
    assert [s.relevant for s in summaries] == [True, False]
    assert "The unemployment rate fell to 3.5 percent in September 2019." in texts(summaries[0])
    assert_verbatim(summaries[0], JOBS)


def test_relevance_does_not_depend_on_a_sets_order() -> None:
    """A set of strings iterates in an order that changes with each process's hashing; a plain
    sum over it differs in the last bit between runs, which once flipped a sentence at the
    relevance threshold in one AVeriTeC claim. The sums are exact (math.fsum)."""
    import math
    import random

    from factseek.summarize.extractive import _coverage, _Weights

    rng = random.Random(0)
    for _ in range(300):
        words = [f"w{rng.randrange(10**6)}" for _ in range(rng.randrange(3, 12))]
        weights = _Weights([])
        weights.update({w: 1 + rng.random() for w in words})
        query, terms = frozenset(words), frozenset(rng.sample(words, len(words) // 2))
        exact = math.fsum(weights[t] for t in sorted(query & terms)) / math.fsum(
            weights[t] for t in sorted(query)
        )
        assert _coverage(terms, [("q", query)], weights) == exact
