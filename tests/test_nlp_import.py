"""spaCy is imported without thinc's torch probe, and torch still imports afterwards."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"


def test_spacy_does_not_import_torch() -> None:
    pytest.importorskip("torch")
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(SRC)!r})\n"
        "from factseek.ml.nlp import load_spacy\n"
        "nlp = load_spacy()\n"
        "assert [t.pos_ for t in nlp('Bills rose.')][1] == 'VERB'\n"
        "print('torch' in sys.modules)\n"
        "import torch\n"
        "print(torch.tensor([1.0]).sum().item())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "1.0"]
