"""An English stemmer for search terms: Porter's algorithm, plus a few irregular forms.

:func:`stem` follows M. F. Porter's 1980 algorithm (with the ``bli`` and ``logi`` rules of his
later reference code), with three deliberate differences:

- a final ``s`` stays after ``u`` and ``i`` (``bonus``, ``analysis``), so such words keep one
  form in the singular and the plural;
- a stem ending in ``i`` ends in ``y`` instead (``studies`` and ``study`` give ``study``,
  ``happiness`` gives ``happy``), which reads better and changes no conflation;
- :data:`IRREGULAR` maps common irregular verb and noun forms to their base first (``went`` is
  ``go``, ``children`` is ``child``): a question asks "go", the note says "went".

Exact counting (:func:`~memquill.query._tokens.count_term`) relies on one property, checked by
property tests: apart from the irregular forms, every word whose stem is ``t`` starts with
``search_prefix(t)``. Porter only ever rewrites the last letter of what it keeps (``y`` to
``i``, an added ``e``, ``biliti`` to ``bl``), so the prefix drops that letter when it may have
been rewritten.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final

__all__ = ["IRREGULAR", "irregular_forms", "search_prefix", "stem"]

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

_STEP2: Final = {
    "ational": "ate",
    "tional": "tion",
    "enci": "ence",
    "anci": "ance",
    "izer": "ize",
    "bli": "ble",
    "alli": "al",
    "entli": "ent",
    "eli": "e",
    "ousli": "ous",
    "ization": "ize",
    "ation": "ate",
    "ator": "ate",
    "alism": "al",
    "iveness": "ive",
    "fulness": "ful",
    "ousness": "ous",
    "aliti": "al",
    "iviti": "ive",
    "biliti": "ble",
    "logi": "log",
}
_STEP3: Final = {
    "icate": "ic",
    "ative": "",
    "alize": "al",
    "iciti": "ic",
    "ical": "ic",
    "ful": "",
    "ness": "",
}
_STEP4: Final = (
    *("al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent"),
    *("ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize"),
)
# Longest suffix first: Porter applies the longest match and, if its condition fails, none.
_STEP2_ORDER: Final = sorted(_STEP2, key=len, reverse=True)
_STEP3_ORDER: Final = sorted(_STEP3, key=len, reverse=True)
_STEP4_ORDER: Final = sorted(_STEP4, key=len, reverse=True)
_REWRITTEN_LAST: Final = frozenset("eily")
"""Letters a stem may end in that its word need not hold at that place."""


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """The stem of a folded ASCII word (irregular forms first mapped to their base)."""
    word = IRREGULAR.get(word, word)
    if len(word) < 4 or not (word.isascii() and word.isalpha()):
        return word
    word = _step1(word)
    word = _replace(word, _STEP2_ORDER, _STEP2, 0)
    word = _replace(word, _STEP3_ORDER, _STEP3, 0)
    word = _step4(word)
    word = _step5(word)
    return word[:-1] + "y" if word.endswith("i") and len(word) > 1 else word


def search_prefix(term: str) -> str:
    """A string every word whose stem is ``term`` starts with (irregular forms aside)."""
    return term[:-1] if len(term) > 1 and term[-1] in _REWRITTEN_LAST else term


@lru_cache(maxsize=4096)
def irregular_forms(term: str) -> tuple[str, ...]:
    """The irregular forms whose stem is ``term`` (sorted), which need not share its prefix."""
    return tuple(sorted(form for form, base in IRREGULAR.items() if stem(base) == term))


def _consonant(word: str, index: int) -> bool:
    letter = word[index]
    if letter in "aeiou":
        return False
    if letter == "y":
        return index == 0 or not _consonant(word, index - 1)
    return True


def _measure(word: str) -> int:
    """Porter's *m*: how many vowel-consonant sequences ``word`` holds."""
    count = 0
    previous_vowel = False
    for index in range(len(word)):
        vowel = not _consonant(word, index)
        if previous_vowel and not vowel:
            count += 1
        previous_vowel = vowel
    return count


def _has_vowel(word: str) -> bool:
    return any(not _consonant(word, index) for index in range(len(word)))


def _double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _consonant(word, len(word) - 1)


def _cvc(word: str) -> bool:
    """Consonant-vowel-consonant ending, the last not ``w``, ``x`` or ``y`` (``hop``)."""
    return (
        len(word) >= 3
        and _consonant(word, len(word) - 3)
        and not _consonant(word, len(word) - 2)
        and _consonant(word, len(word) - 1)
        and word[-1] not in "wxy"
    )


def _step1(word: str) -> str:
    if word.endswith(("sses", "ies")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("eed"):
        if _measure(word[:-3]) > 0:
            word = word[:-1]
    else:
        for suffix in ("ed", "ing"):
            if word.endswith(suffix) and _has_vowel(word[: -len(suffix)]):
                word = _restore(word[: -len(suffix)])
                break
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    return word


def _restore(word: str) -> str:
    """Porter's tidying after ``-ed``/``-ing``: ``hopp`` to ``hop``, ``hop`` to ``hope``."""
    if word.endswith(("at", "bl", "iz")):
        return word + "e"
    if _double_consonant(word) and word[-1] not in "lsz":
        return word[:-1]
    if _measure(word) == 1 and _cvc(word):
        return word + "e"
    return word


def _replace(word: str, order: list[str], table: dict[str, str], minimum: int) -> str:
    for suffix in order:
        if word.endswith(suffix):
            base = word[: -len(suffix)]
            return base + table[suffix] if _measure(base) > minimum else word
    return word


def _step4(word: str) -> str:
    for suffix in _STEP4_ORDER:
        if word.endswith(suffix):
            base = word[: -len(suffix)]
            if _measure(base) > 1 and (suffix != "ion" or base.endswith(("s", "t"))):
                return base
            return word
    return word


def _step5(word: str) -> str:
    if word.endswith("e"):
        base = word[:-1]
        measure = _measure(base)
        if measure > 1 or (measure == 1 and not _cvc(base)):
            word = base
    if word.endswith("ll") and _measure(word) > 1:
        word = word[:-1]
    return word
