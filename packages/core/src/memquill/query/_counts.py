"""Counting every term of a text at once, at C speed: what an index stores of each note.

A term never spans a space or an ASCII character other than a letter, a digit, ``'``, ``_``,
``-``, ``.`` and ``/`` (:mod:`memquill.query._tokens`). So the folded text's UTF-8 bytes, with
every other ASCII byte turned into a space, split at the spaces into *words*: runs of bytes
that hold whole terms (no term crosses a separator, and a separator never joins the terms
around it; a word such as ``get_user_id`` may hold several). A word's terms are worked out
once, by the tokenizer itself, and remembered; counting a text is then a split and a count
over its words, both in C. The counts equal
``collections.Counter(tokenize(text))`` (a tested invariant).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from itertools import chain
from typing import Final

from memquill.query._tokens import fold, folded_terms

_SEPARATE: Final = bytes(
    0x20 if byte < 0x80 and not (chr(byte).isalnum() or chr(byte) in "'_-./") else byte
    for byte in range(256)
)
"""ASCII bytes that never belong to a term become spaces; every other byte stays (bytes of
multi-byte characters are all 0x80 or above, so a character is never cut)."""
_MEMO: Final = 1 << 18
"""Words whose terms are remembered (a vault's distinct words, with their punctuation)."""


class _WordTerms(dict[bytes, tuple[str, ...]]):
    """A word's terms, worked out on first use (a missing key is computed, not an error)."""

    def __missing__(self, word: bytes) -> tuple[str, ...]:
        terms = tuple(folded_terms(word.decode("utf-8", "surrogatepass")))
        if len(self) >= _MEMO:
            self.clear()  # a rare reset; a concurrent count only works its words out again
        self[word] = terms
        return terms


_TERMS: Final = _WordTerms()


def split_words(folded: str) -> list[bytes]:
    r"""The words of :func:`~memquill.query._tokens.fold`\ ed text, in order."""
    return folded.encode("utf-8", "surrogatepass").translate(_SEPARATE).split()


def count_words(found: Iterable[bytes]) -> Counter[str]:
    """How many times the tokenizer yields each term of the text these words came from."""
    return Counter(chain.from_iterable(map(_TERMS.__getitem__, found)))


def term_counts(text: str, *, folded: bool = False) -> dict[str, int]:
    r"""How many times :func:`~memquill.query._tokens.tokenize` yields each term of ``text``.

    ``folded`` says that ``text`` is already :func:`~memquill.query._tokens.fold`\ ed.
    """
    return count_words(split_words(text if folded else fold(text)))
