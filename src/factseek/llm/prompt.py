"""Few-shot chat prompts and fencing of untrusted text.

``FewShotPrompt`` renders a system instruction, demonstrations as user/assistant turns, and the
query. ``fence`` wraps untrusted text (web pages, claims from files) between markers that carry
a nonce derived from the text, after removing anything in the text that could pass for a marker,
and cuts it to a word budget; the instruction tells the model that fenced text is data.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from factseek.llm.base import Message


@dataclass(frozen=True, kw_only=True)
class Demo:
    """One demonstration: what the user says, what the assistant answers."""

    input: str
    output: str


@dataclass(frozen=True, kw_only=True)
class FewShotPrompt:
    system: str
    demos: tuple[Demo, ...] = ()

    def render(self, query: str) -> list[Message]:
        messages: list[Message] = [{"role": "system", "content": self.system}]
        for d in self.demos:
            messages.append({"role": "user", "content": d.input})
            messages.append({"role": "assistant", "content": d.output})
        messages.append({"role": "user", "content": query})
        return messages


# Anything resembling a fence marker: runs of 3+ angle brackets, or our keywords in brackets.
_MARKERISH = re.compile(r"<{3,}|>{3,}|\[/?\s*(?:BEGIN|END)[^\]]{0,40}\]", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean_untrusted(text: str, max_words: int) -> tuple[str, bool]:
    """Control characters and marker look-alikes removed, cut to ``max_words``; (text, was_cut)."""
    text = _CONTROL.sub(" ", text)
    text = _MARKERISH.sub(" ", text)
    ws = text.split()
    cut = len(ws) > max_words
    return " ".join(ws[:max_words]), cut


def fence(text: str, label: str, max_words: int) -> str:
    """``<<<LABEL nonce>>> text <<<END LABEL nonce>>>`` with text cleaned and bounded."""
    body, cut = clean_untrusted(text, max_words)
    nonce = hashlib.blake2b(body.encode("utf-8"), digest_size=4).hexdigest()
    tail = " [...]" if cut else ""
    return f"<<<{label} {nonce}>>>\n{body}{tail}\n<<<END {label} {nonce}>>>"
