"""How long a text is, counted the same way in every script.

Chinese, Japanese, Thai, Lao, Khmer and Burmese are written without spaces between words, so
``len(text.split())`` calls a whole Japanese article a handful of "words". ``text_units``
counts space-separated words, plus one word per ``CHARS_PER_WORD`` characters of those scripts
(a Chinese or Japanese word averages about two characters), so a threshold such as "at least 25
words" means about the same amount of text in any language.
"""

from __future__ import annotations

import re

#: Characters of scripts written without spaces: CJK punctuation, kana, Han, Thai, Lao, Khmer, Myanmar.
UNSPACED_CHARS = (
    "\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u0e00-\u0eff\u1780-\u17ff\u1000-\u109f"
)
_UNSPACED = re.compile(f"[{UNSPACED_CHARS}]")
CHARS_PER_WORD = 2


def text_units(text: str) -> int:
    """Words, script-aware: spaced words, plus one per ``CHARS_PER_WORD`` unspaced characters.

    ``"The council met."`` is 3; ``"市議会は予算案を可決した。"`` is 6 (13 characters).
    """
    unspaced = len(_UNSPACED.findall(text))
    if not unspaced:
        return len(text.split())
    return len(_UNSPACED.sub(" ", text).split()) + unspaced // CHARS_PER_WORD
