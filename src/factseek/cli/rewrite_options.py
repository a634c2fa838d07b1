"""Options the `factseek rewrite` commands share: data format and split (from the registries)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from factseek.datasets.retrieval import FORMATS
from factseek.rewrite.splits import SPLITS

#: The retrieval formats of ``factseek.datasets.retrieval.FORMATS``.
DataFormat = StrEnum("DataFormat", {name.replace("-", "_"): name for name in FORMATS})  # type: ignore[misc]
#: ``factseek.rewrite.splits.SPLITS``.
SplitName = StrEnum("SplitName", {name: name for name in SPLITS})  # type: ignore[misc]

ClaimsOpt = Annotated[
    Path,
    typer.Option(help="Claims with relevance judgements (file or folder, see --format)."),
]
CorpusOpt = Annotated[
    list[Path] | None,
    typer.Option(
        help="Corpus: jsonl needs one; checkthat finds it; fever-dev: distractors, repeatable"
        " (other FEVER folders, Fool Me Twice data)."
    ),
]
FormatOpt = Annotated[DataFormat, typer.Option("--format", help="Data set kind.")]
SplitOpt = Annotated[
    SplitName,
    typer.Option(
        help="Only the claims of this side of the split by groups of shared relevant documents"
        " (70/10/20; FEVER's group split). The corpus stays whole."
    ),
]


class RetrieverName(StrEnum):
    """The endpoints a rewriter is trained and scored on (``rewrite bfs`` adds ``backend``)."""

    bm25 = "bm25"
    knn = "knn"


RetrieverOpt = Annotated[RetrieverName, typer.Option(help="Search endpoint to score queries on.")]
