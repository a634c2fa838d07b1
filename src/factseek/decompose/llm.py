"""Claim decomposition with a language model, as in the paper.

A few-shot prompt (four demonstrations on made-up claims: speaker + venue + claim -> yes/no
questions) is sampled with temperature, one round after another, until ``n`` unique questions
are collected or ``rounds`` rounds have run. Each completion is parsed into lines; numbering,
bullets and quotes are stripped; anything that is not a yes/no question (a wh-question, prose,
a statement) is dropped; questions are deduplicated by exact match. The claim itself comes first.
"""

from __future__ import annotations

import re

from factseek.decompose import claim_question, dedup
from factseek.errors import ConfigError, LLMError
from factseek.llm.base import LLM, Unusable, generate_parsed
from factseek.llm.prompt import Demo, FewShotPrompt, clean_untrusted
from factseek.types import MAX_CLAIM_CHARS, Claim, Question

N_QUESTIONS = 10
ROUNDS = 5
TEMPERATURE = 0.7
MAX_TOKENS = 200
MAX_QUESTION_CHARS = 300
MIN_QUESTION_WORDS = 3

SYSTEM = (
    "You help fact-checkers. Given a claim with its speaker and venue, write the yes/no "
    "questions a fact-checker would research to verify it, covering both what the claim says "
    "explicitly and what it implies. Each question must be answerable with yes or no. "
    "Write one question per line and nothing else."
)

# Made-up claims and speakers (not from any data set).
DEMOS: tuple[Demo, ...] = (
    Demo(
        input='Senator Dana Whitfield stated on May 12, 2019 in a town hall: "Our state has cut '
        "its jobless rate in half since I took office, and the new plant in Millbrook alone "
        'created 5,000 of those jobs."',
        output="Has the state's unemployment rate fallen by about half since Whitfield took office?\n"
        "Did the Millbrook plant create about 5,000 jobs?\n"
        "Was the Millbrook plant a major cause of the drop in unemployment?\n"
        "Did Whitfield's policies help bring the plant to Millbrook?",
    ),
    Demo(
        input='A Facebook post stated on August 2, 2021: "The city of Port Alder banned dogs '
        'from all public parks last week."',
        output="Did Port Alder pass a ban on dogs in public parks?\n"
        "Does the ban cover all public parks in Port Alder?\n"
        "Was the ban enacted in the week before the post?",
    ),
    Demo(
        input="Governor Luis Ortega stated on January 20, 2022 in a State of the State address: "
        '"Thanks to our reforms, teachers here now earn more than the national average, yet we '
        'spend less per student than any neighboring state."',
        output="Do teachers in the state earn more than the national average teacher salary?\n"
        "Did teacher pay in the state rise after Ortega's reforms?\n"
        "Does the state spend less per student than each of its neighboring states?\n"
        "Is the rise in teacher pay a result of Ortega's reforms?",
    ),
    Demo(
        input='Rep. Carla Benning stated on October 5, 2020 in a campaign ad: "My opponent voted '
        'to raise property taxes 14 times."',
        output="Did Benning's opponent vote on bills that raised property taxes?\n"
        "Did the opponent cast 14 separate votes to raise property taxes?\n"
        "Were all 14 votes for property tax increases rather than other taxes or fees?",
    ),
)

DEFAULT_PROMPT = FewShotPrompt(system=SYSTEM, demos=DEMOS)

#: Words a yes/no question starts with (auxiliaries and modals).
YES_NO_STARTS: frozenset[str] = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "am",
        "do",
        "does",
        "did",
        "has",
        "have",
        "had",
        "can",
        "could",
        "will",
        "would",
        "should",
        "shall",
        "may",
        "might",
        "must",
        "isn't",
        "aren't",
        "wasn't",
        "weren't",
        "don't",
        "doesn't",
        "didn't",
        "hasn't",
        "haven't",
        "hadn't",
        "can't",
        "couldn't",
        "won't",
        "wouldn't",
        "shouldn't",
    ]
)

_LEAD = re.compile(
    r"^\s*(?:[-*•·]+|\(?\d{1,2}[.):]|\(?[a-z][.)]\s|q(?:uestion)?\s*\d*\s*[:.)-])\s*", re.IGNORECASE
)
_QUOTES = "\"'“”‘’`«»"
_SPLIT = re.compile(r"(?<=\?)\s+(?=\S)")


def claim_input(claim: Claim) -> str:
    """The paper's input: speaker + venue (or date) + quoted claim, bounded."""
    text, _ = clean_untrusted(claim.text, MAX_CLAIM_CHARS)
    text = text[:MAX_CLAIM_CHARS]
    speaker = " ".join((claim.speaker or "Someone").split())[:100]
    venue = " ".join((claim.venue or "").split())[:200].rstrip(":")
    if venue.lower().startswith("stated"):
        return f'{speaker} {venue}: "{text}"'
    when = f" on {claim.date:%B} {claim.date.day}, {claim.date.year}" if claim.date else ""
    where = f" {venue}" if venue else ""
    return f'{speaker} stated{when}{where}: "{text}"'


def clean_question(line: str) -> str | None:
    """One candidate line -> a yes/no question, or None when it is not one."""
    q = _LEAD.sub("", line.strip())
    q = q.strip().strip(_QUOTES).strip()
    q = " ".join(q.split())
    if not q.endswith("?") or len(q) > MAX_QUESTION_CHARS:
        return None
    first = q.split()[0].lower().strip(_QUOTES)
    if first not in YES_NO_STARTS or len(q.split()) < MIN_QUESTION_WORDS:
        return None
    return q[0].upper() + q[1:]


def parse_questions(text: str) -> list[str]:
    """Every yes/no question in a completion, in order (wh-questions and prose dropped)."""
    out: list[str] = []
    for line in text.splitlines():
        for part in _SPLIT.split(line):
            q = clean_question(part)
            if q is not None:
                out.append(q)
    return out


def _parse_nonempty(text: str) -> list[str]:
    qs = parse_questions(text)
    if not qs:
        raise Unusable("no yes/no question in the completion")
    return qs


class LLMDecomposer:
    """Sampled few-shot decomposition; see the module docstring."""

    name = "llm"

    def __init__(
        self,
        llm: LLM,
        *,
        n: int = N_QUESTIONS,
        rounds: int = ROUNDS,
        temperature: float = TEMPERATURE,
        prompt: FewShotPrompt = DEFAULT_PROMPT,
        max_tokens: int = MAX_TOKENS,
    ) -> None:
        if n < 1 or rounds < 1:
            raise ConfigError("n and rounds must be >= 1")
        self.llm = llm
        self.n = n
        self.rounds = rounds
        self.temperature = temperature
        self.prompt = prompt
        self.max_tokens = max_tokens

    def decompose(self, claim: Claim) -> list[Question]:
        """The claim, then up to ``n`` unique yes/no questions. Raises LLMError if none came."""
        claim_q = claim_question(claim)
        messages = self.prompt.render(claim_input(claim))
        found: list[Question] = []
        for r in range(self.rounds):
            try:
                batch = generate_parsed(
                    self.llm,
                    [messages],
                    _parse_nonempty,
                    temperature=self.temperature,
                    max_tokens=self.max_tokens,
                    seed=r,
                    what="decomposition",
                )[0][0]
            except LLMError:
                if found:
                    break  # keep what earlier rounds gave
                raise
            before = len(found)
            found = dedup([*found, *(Question(text=t, source="llm", kind="llm") for t in batch)])
            found = [q for q in found if q.text != claim_q.text]
            if len(found) >= self.n:
                break
            if self.temperature == 0.0 and len(found) == before:
                break  # greedy decoding will not say anything new
        return [claim_q, *found[: self.n]]
