"""Search terms: how text becomes the whole-word terms that ranking counts.

Text is folded (NFKC, Unicode case folding, typographic apostrophe to ``'``), then read as

- *words*: runs of letters, digits and ``_`` (apostrophes inside a word join it: ``don't``); a
  possessive ``'s`` is dropped and plain ASCII words get a light English stem (plurals, ``-ing``,
  ``-ed``, a final ``e``), so ``painting``, ``paints`` and ``painted`` share the term ``paint``;
- *CJK runs* (ideographs and kana): every character and every adjacent pair is a term, since
  those scripts do not separate words with spaces.

Query words on the spec's stop list are dropped. Two term counters agree exactly (a tested
invariant): :func:`tokenize` lists every term of a text, and :func:`count_term` counts one term
in folded text with ``str.find`` — fast enough to rank a cold 8 MiB workspace without building a
full index first.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Final

__all__ = [
    "STOP_WORDS",
    "count_term",
    "fold",
    "query_terms",
    "search_prefix",
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
_VOWEL: Final = re.compile("[aeiouy]")
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
    for match in _TOKEN_RE.finditer(fold(query)):
        run = match.group("cjk")
        if run is not None:
            terms.update(dict.fromkeys(_cjk_terms(run)))
            continue
        word = match.group()
        if word.removesuffix("'s") not in STOP_WORDS and word not in STOP_WORDS:
            terms[term_of_word(word)] = None
    return tuple(terms)


def count_term(folded: str, term: str) -> int:
    """How many times :func:`tokenize` would yield ``term`` for text whose fold is ``folded``.

    Stems only ever delete a suffix (``-ies`` becomes ``-y``), so every word with this stem
    starts with :func:`search_prefix`; each occurrence at a word start is checked whole.
    """
    if _CJK_CHAR_RE.match(term):
        return _count_overlapping(folded, term)
    prefix = search_prefix(term)
    count = 0
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


@lru_cache(maxsize=1 << 16)
def term_of_word(word: str) -> str:
    """The term of one folded word: possessive dropped, then a light English stem."""
    if word.endswith("'s") and len(word) > 2:
        word = word[:-2]
    if not (word.isascii() and word.isalpha()) or len(word) < 4:
        return word
    return _stem(word)


def _stem(word: str) -> str:
    stem = _strip_plural(word)
    for suffix in ("ing", "ed"):
        if stem.endswith(suffix) and not stem.endswith("eed"):
            base = stem[: -len(suffix)]
            if len(base) >= 3 and _VOWEL.search(base):
                stem = _undouble(base)
                break
    if stem.endswith("e") and not stem.endswith("ee") and len(stem) >= 4:
        stem = stem[:-1]
    return stem


def _strip_plural(word: str) -> str:
    if word.endswith("ies") and len(word) >= 6:
        return word[:-3] + "y"
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith(("xes", "ches", "shes", "zzes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) >= 4:
        return word[:-1]
    return word


def _undouble(stem: str) -> str:
    last = stem[-1]
    if stem[-2] == last and last not in "aeiouylsz":
        return stem[:-1]
    return stem


def search_prefix(term: str) -> str:
    """A string every occurrence of ``term`` in folded text starts with.

    Only the ``-ies`` rule adds a letter (``y``); every other stem is a prefix of its words.
    """
    return term[:-1] if term.endswith("y") and len(term) > 1 else term


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
