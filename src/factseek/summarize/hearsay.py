"""Hearsay is not confirmation: a sentence that passes a claim on as hearsay takes no side.

News reports a claim long before anyone confirms it: "the singer has reportedly split from her
label", "the suspect allegedly fled", "rumours that the plant will close", "the company claims
that ...". A stance reader sees the claim's words and reads such a sentence as supporting it
(on FNC-1's news, bodies that only *discuss* a headline were read as supporting half the time
or more: docs/stance.md). ``hearsay_reading(question, text, reading)`` turns a reader's
"supports" of a sentence that marks what it says as hearsay (``HEARSAY``: reportedly,
allegedly, purportedly, supposedly, rumoured, unconfirmed, unverified, "is said to", "claims
that", "may have") into "nei", with a note that names the word; refutations, readings a
reviewer set, and questions that are hedged themselves ("Did X allegedly ...?") are left
alone. Figures compared never agree on such a sentence either (``summarize.compare``), so no
reading they set is one to turn. "According to" is not hearsay: it cites a source ("according
to the labour bureau, 3.1 percent") as often as it distances one. ``EvidenceConfig.hearsay``
turns it on (docs/verdicts.md: what it changes on AVeriTeC and FNC-1).
"""

from __future__ import annotations

import re

from factseek.types import SET_ASIDE, StanceResult

__all__ = ["HEARSAY", "hearsay", "hearsay_reading"]

#: Words that mark what a sentence says as hearsay, not as found.
HEARSAY = re.compile(
    r"\b(?:reportedly|allegedly|purportedly|supposedly|rumou?r(?:s|ed)?|unconfirmed|unverified|"
    r"(?:is|are|was|were) said to|claim(?:s|ed)? (?:that|to)|may have|might have)\b",
    re.IGNORECASE,
)


def hearsay(text: str) -> str:
    """The first word of ``text`` that marks it as hearsay, as written, else ""."""
    m = HEARSAY.search(text)
    return m.group(0) if m else ""


def hearsay_reading(
    question: str, text: str, reading: StanceResult | None
) -> tuple[StanceResult | None, str]:
    """The reading, as "nei" when it supports a sentence that passes the claim on as hearsay
    (module docstring), and the note that says so ("" when it stands)."""
    if reading is None or reading.label != "supports" or reading.set_by:
        return reading, ""
    word = hearsay(text)
    if not word or hearsay(question):
        return reading, ""
    return StanceResult(label="nei", probs=dict(reading.probs), model=reading.model), (
        f'it passes the claim on as hearsay ("{word}"); the reader said supports '
        f"{reading.confidence:.2f}, {SET_ASIDE}"
    )
