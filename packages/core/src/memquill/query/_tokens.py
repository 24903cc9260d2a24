"""Search terms: how text becomes the whole-word terms that ranking counts.

Text is folded (NFKC, Unicode case folding, typographic apostrophe to ``'``), then read as

- *words*: runs of letters, digits and ``_`` (apostrophes inside a word join it: ``don't``); a
  possessive ``'s`` is dropped and plain ASCII words are stemmed (:mod:`memquill.query._stemmer`:
  Porter's rules and common irregular forms), so ``painting``, ``paints`` and ``painted`` share
  the term ``paint``, and ``went`` counts as ``go``;
- *CJK runs* (ideographs and kana): every character and every adjacent pair is a term, since
  those scripts do not separate words with spaces.

Query words on the spec's stop list, and words that only frame a question (``kind`` in "what
kind of"), are dropped. Two term counters agree exactly (a tested invariant): :func:`tokenize`
lists every term of a text, and :func:`count_term` counts one term in folded text with
``str.find`` — fast enough to rank a cold 8 MiB workspace without building a full index first.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Final

from memquill.query._stemmer import irregular_forms, search_prefix, stem

__all__ = [
    "QUESTION_WORDS",
    "STOP_WORDS",
    "count_term",
    "fold",
    "query_terms",
    "search_prefixes",
    "term_of_word",
    "tokenize",
]

_STOP_LIST: Final = (
    "the a an is are was were be been being have has had do does did will would shall should "
    "may might can could of at by for with about against between through during before after "
    "above below to from up down in out on off over under again further then once and but or "
    "nor not so if this that these those it its i me my we our you your he his she her they "
    "their what which who whom"
)
STOP_WORDS: Final = frozenset((*_STOP_LIST.split(" "), "how", "when", "where", "why"))
"""The spec's English stop words plus the interrogatives it lacked (``how``, ``when``,
``where``, ``why``): never query terms (documents keep them)."""
QUESTION_WORDS: Final = frozenset(("kind", "kinds", "type", "types", "sort", "sorts"))
"""Before ``of`` ("what kind of art"), these frame a question rather than name what it asks
about, so they are not query terms there ("blood type" and "sort files" keep them)."""

# Ideographs (BMP, compatibility, supplementary planes), kana, and the three ideographic
# letters of the CJK symbols block. Other symbols and punctuation there only separate.
_CJK: Final = (
    "\u3005-\u3007\u3040-\u309f\u30a1-\u30fa\u30fc-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uf900-\ufaff\U00020000-\U0003134f"
)
_WORD_CHAR: Final = rf"[^\W{_CJK}]"
_WORD: Final = rf"{_WORD_CHAR}+(?:'{_WORD_CHAR}+)*"
_TOKEN_RE: Final = re.compile(rf"(?P<cjk>[{_CJK}]+)|(?P<word>{_WORD})")
_WORD_RE: Final = re.compile(_WORD)
_WORD_CHAR_RE: Final = re.compile(_WORD_CHAR)
_CJK_CHAR_RE: Final = re.compile(f"[{_CJK}]")
_APOSTROPHES: Final = str.maketrans({"\u2019": "'", "\u02bc": "'"})


def fold(text: str) -> str:
    """The comparison form of ``text``: NFKC, case-folded, typographic apostrophes as ``'``."""
    if text.isascii():
        return text.lower()
    folded = unicodedata.normalize("NFKC", text).casefold()
    if not unicodedata.is_normalized("NFKC", folded):
        folded = unicodedata.normalize("NFKC", folded)
    return folded.translate(_APOSTROPHES)


def tokenize(text: str) -> list[str]:
    """Every term of ``text`` in order, stop words included (documents keep them)."""
    terms: list[str] = []
    for match in _TOKEN_RE.finditer(fold(text)):
        run = match.group("cjk")
        if run is None:
            terms.append(term_of_word(match.group()))
        else:
            terms.extend(_cjk_terms(run))
    return terms


def query_terms(query: str) -> tuple[str, ...]:
    """The distinct terms of a query, in first-occurrence order, without stop words."""
    terms: dict[str, None] = {}
    matches = list(_TOKEN_RE.finditer(fold(query)))
    for position, match in enumerate(matches):
        run = match.group("cjk")
        if run is not None:
            terms.update(dict.fromkeys(_cjk_terms(run)))
            continue
        word = match.group()
        bare = word.removesuffix("'s")
        if bare in STOP_WORDS or word in STOP_WORDS:
            continue
        following = matches[position + 1].group() if position + 1 < len(matches) else ""
        if bare in QUESTION_WORDS and following == "of":
            continue
        terms[term_of_word(word)] = None
    return tuple(terms)


def count_term(folded: str, term: str) -> int:
    """How many times :func:`tokenize` would yield ``term`` for text whose fold is ``folded``.

    Every word with this term starts with one of :func:`search_prefixes`; each occurrence of
    one at a word start is checked whole. No prefix starts with another, so no word is found
    twice.
    """
    if _CJK_CHAR_RE.match(term):
        return _count_overlapping(folded, term)
    count = 0
    for prefix in search_prefixes(term):
        index = folded.find(prefix)
        while index >= 0:
            if _starts_word(folded, index):
                match = _WORD_RE.match(folded, index)
                if match is None:  # pragma: no cover - the prefix starts with a word character
                    break
                if term_of_word(match.group()) == term:
                    count += 1
                index = folded.find(prefix, match.end())
            else:
                index = folded.find(prefix, index + 1)
    return count


@lru_cache(maxsize=4096)
def search_prefixes(term: str) -> tuple[str, ...]:
    """Strings one of which starts every word whose term is ``term`` (none starts another).

    Stems keep their word's start except perhaps its last letter (see
    :func:`~memquill.query._stemmer.search_prefix`); irregular forms (``went`` for ``go``) are
    listed.
    """
    if _CJK_CHAR_RE.match(term):
        return (term,)
    found = sorted({search_prefix(term), *irregular_forms(term)})
    # Sorted, a string that starts with another comes right after a kept one it extends.
    kept: list[str] = []
    for prefix in found:
        if not kept or not prefix.startswith(kept[-1]):
            kept.append(prefix)
    return tuple(kept)


@lru_cache(maxsize=1 << 16)
def term_of_word(word: str) -> str:
    """The term of one folded word: possessive dropped, then stemmed."""
    if word.endswith("'s") and len(word) > 2:
        word = word[:-2]
    if not (word.isascii() and word.isalpha()):
        return word
    return stem(word)


def _starts_word(text: str, index: int) -> bool:
    if index == 0:
        return True
    before = text[index - 1]
    if _WORD_CHAR_RE.match(before):
        return False
    # An apostrophe between word characters joins them into one word ("o'neil").
    return not (before == "'" and index >= 2 and _WORD_CHAR_RE.match(text[index - 2]))


def _cjk_terms(run: str) -> list[str]:
    terms = list(run)
    terms.extend(run[i : i + 2] for i in range(len(run) - 1))
    return terms


def _count_overlapping(text: str, needle: str) -> int:
    if len(needle) == 1:
        return text.count(needle)
    count = 0
    index = text.find(needle)
    while index >= 0:
        count += 1
        index = text.find(needle, index + 1)
    return count
