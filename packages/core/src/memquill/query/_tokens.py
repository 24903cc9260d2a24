"""Search terms: how text becomes the whole-word terms that ranking counts, and their counts.

Text is folded (NFKC, Unicode case folding, typographic apostrophe to ``'``; a camelCase
boundary between ASCII letters is kept as an invisible mark, see below), then read as

- *words*: runs of letters and digits (apostrophes inside a word join it: ``don't``); a
  possessive ``'s`` is dropped and plain ASCII words are stemmed (:func:`stem`, below), so
  ``painting``, ``paints`` and ``painted`` share the term ``paint``, and ``went`` counts as
  ``go``;
- *identifiers*: words joined by ``_``, ``-``, ``.`` or ``/`` (``get_user_id``, ``kebab-case``,
  ``os.path``, ``src/app``), or written in camelCase (``getUserId``, ``HTTPServer``: a boundary
  falls between a lower-case and an upper-case ASCII letter, and before the last capital of an
  acronym followed by a capitalised word). An identifier gives a term for the whole
  (``get_user_id``; ``getuserid``, stemmed like any word when it is all letters) and one for
  each part (``get``, ``user``, ``id``), so ``user_id`` and ``auth`` find ``get_user_id in
  auth_service``, and ``youtube`` finds ``YouTube``;
- *CJK runs* (ideographs and kana): every character and every adjacent pair is a term, since
  those scripts do not separate words with spaces.

Query words on the spec's stop list, and words that only frame a question (``kind`` in "what
kind of"), are dropped. :data:`TOKENIZER_VERSION` names this behaviour, for indexes built
with it.

**The stemmer.** :func:`stem` is the Snowball English stemmer (Porter2, through PyStemmer's C
implementation), with two rules of memquill's own on top, which ``docs/ranking.md`` gives:

- :data:`IRREGULAR` maps common irregular verb and noun forms to their base first (``went``
  is ``go``, ``children`` is ``child``), since a question asks "go" where the note says
  "went";
- the plural of a word without a vowel loses its ``s`` (``PDFs`` is ``pdf``, ``PRs`` is
  ``pr``): Snowball keeps the ``s`` of a word with no vowel before it, and notes are full of
  acronyms a question names in the singular.

:data:`STEMMER_VERSION` names the stemmer and these rules, for indexes built with them.

**Counting.** Three term counters agree exactly (tested invariants): :func:`tokenize` lists
every term of a text; :func:`count_term` counts one term in folded text with ``str.find``,
fast enough to rank a cold 8 MiB workspace without building a full index first; and
:func:`count_words` counts every term of a text at once, at C speed, for an index: its counts
equal ``collections.Counter(tokenize(text))``.

- :func:`count_term` relies on one property of the stemmer, checked by property tests: apart
  from the irregular forms (and the few words Snowball itself stems irregularly,
  :data:`SNOWBALL_EXCEPTIONS`), every word whose stem is ``t`` starts with
  ``search_prefix(t)``. Snowball rewrites at most the last letter of what it keeps (``y`` to
  ``i``, an added ``e``, ``enci`` to ``ence``), the last two of ``ble`` (``biliti`` to
  ``ble``), or the ``y`` of a consonant and ``ying`` (``dying`` is ``die``), so the prefix drops
  those letters when they may have been rewritten.
- :func:`count_words` relies on the terms' alphabet: a term never spans a space or an ASCII
  character other than a letter, a digit, ``'``, ``_``, ``-``, ``.`` and ``/``. So the folded
  text's UTF-8 bytes, with every other ASCII byte turned into a space, split at the spaces
  into *words*: runs of bytes that hold whole terms (no term crosses a separator, and a
  separator never joins the terms around it; a word such as ``get_user_id`` may hold several).
  A word's terms are worked out once, by the tokenizer itself, and remembered; counting a text
  is then a split and a count over its words, both in C.
"""

from __future__ import annotations

import collections
import re
import string
import threading
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from functools import cache, lru_cache
from itertools import chain
from typing import Final, Protocol, cast

import Stemmer

# Forms that are more often an unrelated word are left out ("bit", "left", "saw", "rose",
# "felt", "lay", "found", "bore"), as are stop words, which a query never searches for. A
# kept form that is also a name ("Drew") still finds that name: both sides stem alike.
_IRREGULAR_GROUPS: Final = (
    "arise arose arisen|awake awoke awoken|beat beaten|become became|"
    "begin began begun|bend bent|bite bitten|bleed bled|blow blew blown|break broke broken|"
    "bring brought|build built|buy bought|catch caught|choose chose chosen|come came|"
    "creep crept|deal dealt|dig dug|draw drew drawn|dream dreamt|drink drank drunk|"
    "drive drove driven|eat ate eaten|fall fallen|feed fed|fight fought|flee fled|"
    "fly flew flown|forget forgot forgotten|forgive forgave forgiven|freeze froze frozen|"
    "get got gotten|give gave given|go went gone goes|grow grew grown|hang hung|hear heard|"
    "hide hid hidden|hold held|keep kept|know knew known|lend lent|lose lost|make made|"
    "mean meant|meet met|pay paid|ride rode ridden|ring rang rung|rise risen|run ran|"
    "say said says|see seen|seek sought|sell sold|send sent|shake shook shaken|shine shone|"
    "show shown|shrink shrank shrunk|sing sang sung|sink sank sunk|sit sat|sleep slept|"
    "slide slid|speak spoken|spend spent|stand stood|steal stole stolen|stick stuck|"
    "sting stung|strike struck|swear swore sworn|sweep swept|swim swam swum|swing swung|"
    "take took taken|teach taught|tear torn|tell told|think thought|throw threw thrown|"
    "understand understood|wake woke woken|wear wore worn|win won|write wrote written|"
    "child children|man men|woman women|mouse mice|foot feet|tooth teeth"
)
IRREGULAR: Final[dict[str, str]] = {
    form: group.split(" ")[0]
    for group in _IRREGULAR_GROUPS.split("|")
    for form in group.split(" ")[1:]
}
"""Irregular form -> the base form it is stemmed as."""
SNOWBALL_EXCEPTIONS: Final[frozenset[str]] = frozenset({"skies"})
"""Words Snowball's own exception list stems to a term they do not start with (``skies`` is
``sky``): exact counting looks for them as it does for irregular forms."""


class _Snowball(Protocol):
    """What memquill uses of a PyStemmer stemmer (the package ships no type information)."""

    def stemWord(self, word: str) -> str: ...  # PyStemmer's name


_ENGLISH: Final = cast(
    "_Snowball",
    Stemmer.Stemmer("english", 0),  # pyright: ignore[reportUnknownMemberType]
)  # no cache of its own: stem() keeps one
_LOCK: Final = threading.Lock()  # a Snowball stemmer object is not safe across threads
STEMMER_VERSION: Final = f"snowball-english {cast('str', Stemmer.version())} memquill 2"  # pyright: ignore[reportUnknownMemberType]
"""The stemmer and memquill's rules, as an index records them (others may stem otherwise)."""
_VOWELS: Final = frozenset("aeiouy")  # Snowball's English vowels


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """The stem of a folded ASCII word (irregular forms first mapped to their base)."""
    word = IRREGULAR.get(word, word)
    if not (word.isascii() and word.isalpha()):
        return word
    if len(word) > 2 and word[-1] == "s" and word[-2] != "s" and _VOWELS.isdisjoint(word):
        return word[:-1]  # an acronym's plural: Snowball would keep the "s"
    with _LOCK:
        return _ENGLISH.stemWord(word)


def search_prefix(term: str) -> str:
    """A string every word whose stem is ``term`` starts with (irregular forms aside)."""
    if term.endswith("ble"):
        return term[:-2]
    if len(term) == 3 and term.endswith("ie"):
        return term[:1]
    return term[:-1] if len(term) > 1 and term[-1] in "eil" else term


@lru_cache(maxsize=4096)
def irregular_forms(term: str) -> tuple[str, ...]:
    """The words whose stem is ``term`` that need not start with its prefix (sorted): its
    irregular forms, and Snowball's own exceptions."""
    forms = {form for form, base in IRREGULAR.items() if stem(base) == term}
    forms.update(word for word in SNOWBALL_EXCEPTIONS if stem(word) == term)
    return tuple(sorted(forms))


TOKENIZER_VERSION: Final = 3
"""Bumped whenever the terms a text or a query yields change (2: identifier parts; 3: the
Snowball stemmer); an index built with another version must be rebuilt (the stemmer's own
version is recorded too: :data:`STEMMER_VERSION`)."""
CAMEL_MARK: Final = "\u2063"
"""Marks a camelCase boundary in folded text (INVISIBLE SEPARATOR; removed from the input)."""

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
_CJK_RANGES: Final = (
    (0x3005, 0x3007),
    (0x3040, 0x309F),
    (0x30A1, 0x30FA),
    (0x30FC, 0x30FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0x20000, 0x3134F),
)
_CJK: Final = "".join(f"{chr(low)}-{chr(high)}" for low, high in _CJK_RANGES)
_WORD_CHAR: Final = rf"[^\W_{_CJK}]"
_JOINERS: Final = "_-./" + CAMEL_MARK
# A run is segments (word characters joined by apostrophes: ``o'neil``) joined by joiners
# (an identifier's parts); written as word characters joined by either, it names the word
# class twice instead of four times, and matches the same.
_RUN: Final = rf"{_WORD_CHAR}+(?:['{re.escape(_JOINERS)}]{_WORD_CHAR}+)*"
_JOINER_RE: Final = re.compile(f"[{re.escape(_JOINERS)}]")
_CAMEL_RE: Final = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z]{2})")
_CASE_MASK: Final = bytes.maketrans(
    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ\x00\x01",
    b"\x00" * 26 + b"\x01" * 26 + b"  ",
)
"""Lower-case ASCII letters as 0, upper-case as 1 (bytes 0 and 1 themselves as spaces): rare
byte values make the searches below several times faster than letters would."""
_LOWER_UPPER: Final = b"\x00\x01"
_ACRONYM_END: Final = b"\x01\x01\x00\x00"


# Each CJK class costs its pattern milliseconds to compile (the ranges are walked character
# by character): one pattern holds them, compiled on first use, and single characters are
# tested without a pattern.


@cache
def _token_re() -> re.Pattern[str]:
    return re.compile(rf"(?P<cjk>[{_CJK}]+)|(?P<word>{_RUN})")


def _starts_cjk(text: str) -> bool:
    """Whether ``text`` starts with a character of :data:`_CJK` (``[{_CJK}]`` matches it)."""
    if not text:
        return False
    code = ord(text[0])
    return code >= _CJK_RANGES[0][0] and any(low <= code <= high for low, high in _CJK_RANGES)


def _word_char(char: str) -> bool:
    """Whether the character ``char`` matches :data:`_WORD_CHAR`: ``\\w`` is what
    ``str.isalnum`` accepts and ``_``, less ``_`` and CJK."""
    return char.isalnum() and not _starts_cjk(char)


def fold(text: str) -> str:
    """The comparison form of ``text``: NFKC, case-folded, typographic apostrophes as ``'``,
    and :data:`CAMEL_MARK` at each camelCase boundary."""
    if text.isascii():
        return _mark_camel(text, ascii_only=True).lower()
    if CAMEL_MARK in text:
        text = text.replace(CAMEL_MARK, "")
    folded = unicodedata.normalize("NFKC", _mark_camel(text, ascii_only=False)).casefold()
    if not unicodedata.is_normalized("NFKC", folded):
        folded = unicodedata.normalize("NFKC", folded)
    # Two replacements scan at C speed; a translation table looks up every character.
    return folded.replace("\u2019", "'").replace("\u02bc", "'")


def plain(folded: str) -> str:
    """Folded text without its camelCase marks: every term's search prefix occurs in it."""
    return folded.replace(CAMEL_MARK, "") if CAMEL_MARK in folded else folded


def camel_free(text: str) -> bool:
    """Whether ``text`` holds no camelCase boundary (folding ASCII text then only lowers it)."""
    if text.islower():  # no upper-case letter at all (a fast C loop)
        return True
    # A byte mask of letter case finds boundaries at C speed; prose rarely has any.
    mask = text.encode("utf-8", "surrogatepass").translate(_CASE_MASK)
    return _LOWER_UPPER not in mask and _ACRONYM_END not in mask


def _mark_camel(text: str, *, ascii_only: bool) -> str:
    if camel_free(text):
        return text
    if not ascii_only:
        return _CAMEL_RE.sub(CAMEL_MARK, text)
    mask = text.encode("utf-8", "surrogatepass").translate(_CASE_MASK)
    cuts = sorted({*_finds(mask, _LOWER_UPPER), *_finds(mask, _ACRONYM_END)})
    pieces = [text[start:end] for start, end in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    return CAMEL_MARK.join(pieces)


def _finds(mask: bytes, needle: bytes) -> list[int]:
    """Offsets just after the first byte of each occurrence of ``needle``."""
    found: list[int] = []
    index = mask.find(needle)
    while index >= 0:
        found.append(index + 1)
        index = mask.find(needle, index + 1)
    return found


def is_cjk(char: str) -> bool:
    """Whether ``char`` is a CJK ideograph or kana (a word of its own)."""
    return _starts_cjk(char)


def tokenize(text: str) -> list[str]:
    """Every term of ``text`` in order, stop words included (documents keep them)."""
    return folded_terms(fold(text))


def words(text: str) -> list[str]:
    """The words of ``text`` as search reads them, folded and not stemmed: a word or an
    identifier is one word (``get_user_id``, ``getUserId``), a CJK character is one word."""
    found: list[str] = []
    for match in _token_re().finditer(fold(text)):
        run = match.group("cjk")
        if run is None:
            found.append(match.group().replace(CAMEL_MARK, ""))
        else:
            found.extend(run)
    return found


def folded_terms(folded: str) -> list[str]:
    """Every term of text whose :func:`fold` is ``folded``, in order (see :func:`tokenize`)."""
    terms: list[str] = []
    for match in _token_re().finditer(folded):
        run = match.group("cjk")
        if run is None:
            terms.extend(_run_terms(match.group()))
        else:
            terms.extend(_cjk_terms(run))
    return terms


@lru_cache(maxsize=1 << 14)
def _run_terms(run: str) -> tuple[str, ...]:
    """A word's term, or an identifier's whole term followed by its parts' terms."""
    whole = term_of_word(run.replace(CAMEL_MARK, ""))
    parts = _JOINER_RE.split(run)
    if len(parts) == 1:
        return (whole,)
    return (whole, *(term_of_word(part) for part in parts))


def term_spans(text: str, wanted: frozenset[str]) -> list[tuple[int, int, frozenset[str]]]:
    """Where ``text`` (as written, not folded) holds one of ``wanted``: (start, end, terms).

    Spans are words (a CJK character, or a pair for a wanted bigram), in order. Excerpts use
    them to place a window inside a line too long to show whole.
    """
    spans: list[tuple[int, int, frozenset[str]]] = []
    for match in _token_re().finditer(text):
        run = match.group("cjk")
        if run is None:
            found = wanted.intersection(tokenize(match.group()))
            if found:
                spans.append((match.start(), match.end(), frozenset(found)))
            continue
        start = match.start()
        for offset, char in enumerate(run):
            pair = run[offset : offset + 2]
            found = {term for term in (fold(char), fold(pair)) if term in wanted}
            if found:
                spans.append((start + offset, start + offset + 1, frozenset(found)))
    return spans


def query_terms(query: str) -> tuple[str, ...]:
    """The distinct terms of a query, in first-occurrence order, without stop words."""
    terms: dict[str, None] = {}
    matches = list(_token_re().finditer(fold(query)))
    for position, match in enumerate(matches):
        run = match.group("cjk")
        if run is not None:
            terms.update(dict.fromkeys(_cjk_terms(run)))
            continue
        word = match.group()
        parts = _JOINER_RE.split(word)
        if len(parts) > 1:
            # An identifier: its whole, and its parts that are not stop words.
            terms[term_of_word(word.replace(CAMEL_MARK, ""))] = None
            terms.update(dict.fromkeys(term_of_word(p) for p in parts if not _stop_word(p)))
            continue
        following = matches[position + 1].group() if position + 1 < len(matches) else ""
        if _stop_word(word) or (word.removesuffix("'s") in QUESTION_WORDS and following == "of"):
            continue
        terms[term_of_word(word)] = None
    return tuple(terms)


def _stop_word(word: str) -> bool:
    return word in STOP_WORDS or word.removesuffix("'s") in STOP_WORDS


def count_term(folded: str, term: str) -> int:
    """How many times :func:`tokenize` would yield ``term`` for text whose fold is ``folded``.

    Every word, identifier or part with this term starts with one of :func:`search_prefixes`;
    each occurrence of one where a word or a part starts is checked whole. Whole words and
    identifiers are counted in the text without camelCase marks, parts in the marked text. No
    prefix starts with another, so nothing is found twice.
    """
    if _starts_cjk(term):
        return _count_overlapping(folded, term)
    if CAMEL_MARK in folded:
        return _count(plain(folded), term, wholes=True, parts=False) + _count(
            folded, term, wholes=False, parts=True
        )
    return _count(folded, term, wholes=True, parts=True)


def _count(text: str, term: str, *, wholes: bool, parts: bool) -> int:
    # The run at a word character that is not CJK is the token pattern's ``word`` match
    # there, and its first part (a segment: word characters and apostrophes) ends at its first
    # joiner: one pattern compiled instead of three.
    token_re = _token_re()
    count = 0
    for prefix in search_prefixes(term):
        index = text.find(prefix)
        while index >= 0:
            start = _start_kind(text, index)
            if start is None:
                index = text.find(prefix, index + 1)
                continue
            run = token_re.match(text, index)
            if run is None or run.group("word") is None:  # pragma: no cover - see above
                break
            joiner = _JOINER_RE.search(text, index, run.end())
            segment_end = run.end() if joiner is None else joiner.start()
            segment = text[index:segment_end]
            if start == "word":
                if wholes and term_of_word(run.group()) == term:
                    count += 1
                if parts and run.end() > segment_end and term_of_word(segment) == term:
                    count += 1
            elif parts and term_of_word(segment) == term:
                count += 1
            index = text.find(prefix, segment_end)
    return count


@lru_cache(maxsize=4096)
def search_prefixes(term: str) -> tuple[str, ...]:
    """Strings one of which starts every word whose term is ``term`` (none starts another).

    Stems keep their word's start except perhaps its last letter (see
    :func:`search_prefix`); irregular forms (``went`` for ``go``) are
    listed.
    """
    if _starts_cjk(term):
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


def _start_kind(text: str, index: int) -> str | None:
    """``word`` where a word or identifier starts, ``part`` where a later part of one starts."""
    if index == 0:
        return "word"
    before = text[index - 1]
    if _word_char(before):
        return None
    if index >= 2 and _word_char(text[index - 2]):
        if before in _JOINERS:
            return "part"
        if before == "'":  # an apostrophe between word characters joins them ("o'neil")
            return None
    return "word"


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
    r"""The words of :func:`fold`\ ed text, in order."""
    return folded.encode("utf-8", "surrogatepass").translate(_SEPARATE).split()


def count_words(found: Iterable[bytes]) -> Counter[str]:
    """How many times the tokenizer yields each term of the text these words came from."""
    return Counter(chain.from_iterable(map(_TERMS.__getitem__, found)))


_LOWER_SEPARATE: Final = _SEPARATE.translate(
    bytes.maketrans(string.ascii_uppercase.encode(), string.ascii_lowercase.encode())
)
""":data:`_SEPARATE` with upper-case ASCII letters lowered (what folding ASCII text does)."""


def ascii_word_bytes(text: str) -> bytes:
    """The bytes :func:`split_words` splits for ``fold(text)``, when ``text`` is ASCII with no
    camelCase boundary (:func:`camel_free`): folding it then only lowers it, so lowering and
    separating are one translation. Every byte stands for the character at its offset, so a
    slice ``[a:b]`` splits into the words of ``fold(text[a:b])``."""
    return text.encode("ascii").translate(_LOWER_SEPARATE)


COMPOUND: Final = "\x00"
"""Starts a word's key when the word yields no term or several (:func:`word_keys`). No term
is empty or holds this character, so those keys sort before every term."""


class _WordKeys(dict[bytes, str]):
    """A word's key, worked out on first use (a missing key is computed, not an error)."""

    def __missing__(self, word: bytes) -> str:
        terms = folded_terms(word.decode("utf-8", "surrogatepass"))
        key = terms[0] if len(terms) == 1 else COMPOUND + COMPOUND.join(terms)
        if len(self) >= _MEMO:
            self.clear()  # a rare reset; a concurrent count only works its words out again
        self[word] = key
        return key


_KEYS: Final = _WordKeys()


def word_keys(found: Iterable[bytes]) -> list[str]:
    """Each word's *key*: the one term it yields (nearly every word), or a compound key that
    stands for its terms (:func:`compound_terms`: none for ``-``, several for an identifier or
    a CJK run). Counted, keys give the words' term counts once compound keys are replaced by
    their terms; a list of one object per word counts at C speed (:data:`count_keys`)."""
    return list(map(_KEYS.__getitem__, found))


def compound_terms(key: str) -> list[str]:
    """The terms a compound key (see :func:`word_keys`) stands for, in order."""
    return key[1:].split(COMPOUND) if len(key) > 1 else []


count_keys: Final = cast(
    "Callable[[dict[str, int], Iterable[str]], None]",
    vars(collections)["_count_elements"],  # the C loop Counter counts with, for any dict
)
"""``count_keys(counts, keys)`` adds one to ``counts[key]`` for each of ``keys``, at C speed
(``counts`` is a plain dict: a note's rows start as copies of one dict of zeros)."""


def term_counts(text: str, *, folded: bool = False) -> dict[str, int]:
    r"""How many times :func:`tokenize` yields each term of ``text``.

    ``folded`` says that ``text`` is already :func:`fold`\ ed.
    """
    return count_words(split_words(text if folded else fold(text)))
