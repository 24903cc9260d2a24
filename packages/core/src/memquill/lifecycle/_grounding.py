"""Whether an extracted fact is tied to what the user wrote: a substantial quote, grounded content.

A verbatim quote alone proves little: ``"a"`` is in almost every message, and any sentence can
be attached to it. An accepted fact therefore also needs, deterministically (memquill's own
search words and terms from :mod:`memquill.query`: NFKC, case folding, the stemmer and the
spec's stop words, so ``prefers`` and ``prefer`` are one term):

1. **A substantial quote.** The evidence (already found verbatim in the user's message) has at
   least :data:`MIN_QUOTE_WORDS` words and :data:`MIN_QUOTE_CHARACTERS` characters (without the
   spaces around it; a CJK character is a word of its own and counts as two characters, about
   what a short English word takes), and at least one word that is not a stop word.
2. **Grounded content.** The content's significant terms are its search terms (stop words
   dropped) without the words that only frame a fact (``user``, ``said``, ``also``, ``since``…,
   :data:`FRAMING_WORDS`). There must be at least one; at least half of them must occur in the
   user's message; and at least one must occur in the evidence itself.

So ``"User prefers tea over coffee"`` quoting ``"I really prefer tea over coffee"`` is grounded
(``prefer``, ``tea``, ``coffee``: all in the quote), and ``"The user is a billionaire who owns a
yacht named Zeus"`` is not, whatever it quotes from a message that never mentions any of it.
Half, not most: a terse paraphrase of two terms ("Lives in Lisbon" for "I moved to Lisbon")
shares one of them.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final

from memquill.query import is_cjk, query_terms, tokenize, words

MIN_QUOTE_WORDS: Final = 3
MIN_QUOTE_CHARACTERS: Final = 12
FRAMING_WORDS: Final = (
    "user users person "
    "say says said saying state states stated mention mentions mentioned tell tells told "
    "also now currently really very just since still than as there here "
    "always usually often sometimes"
)
"""Words that frame a fact rather than state it: never evidence of grounding, nor of invention."""


def quote_problem(evidence: str) -> str | None:
    """Why ``evidence`` is not a substantial quote, or ``None`` when it is (rule 1)."""
    quote = evidence.strip()
    size = sum(2 if is_cjk(char) else 1 for char in quote)
    if len(words(quote)) < MIN_QUOTE_WORDS or size < MIN_QUOTE_CHARACTERS:
        return (
            f"evidence is too short to be a quote (at least {MIN_QUOTE_WORDS} words and "
            f"{MIN_QUOTE_CHARACTERS} characters)"
        )
    if not query_terms(quote):
        return "evidence holds only stop words"
    return None


def content_problem(content: str, evidence: str, message: str) -> str | None:
    """Why ``content`` is not grounded in ``evidence`` and its user ``message``, or ``None``
    (rule 2)."""
    framing = _framing()
    terms = [term for term in query_terms(content) if term not in framing]
    if not terms:
        return "content has no significant word"
    said = set(tokenize(message))
    grounded = sum(term in said for term in terms)
    if 2 * grounded < len(terms):
        return "content is not grounded in that user message (under half of its words are there)"
    quoted = set(tokenize(evidence))
    if not any(term in quoted for term in terms):
        return "content shares no word with its evidence"
    return None


@lru_cache(maxsize=1)
def _framing() -> frozenset[str]:
    return frozenset(query_terms(FRAMING_WORDS))
