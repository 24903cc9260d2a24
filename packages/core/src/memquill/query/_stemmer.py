"""An English stemmer for search terms: Snowball's, plus common irregular forms.

:func:`stem` is the Snowball English stemmer (Porter2, through PyStemmer's C implementation),
with two rules of memquill's own on top, which ``docs/ranking.md`` gives:

- :data:`IRREGULAR` maps common irregular verb and noun forms to their base first (``went``
  is ``go``, ``children`` is ``child``), since a question asks "go" where the note says
  "went";
- the plural of a word without a vowel loses its ``s`` (``PDFs`` is ``pdf``, ``PRs`` is
  ``pr``): Snowball keeps the ``s`` of a word with no vowel before it, and notes are full of
  acronyms a question names in the singular.

:data:`STEMMER_VERSION` names the stemmer and these rules, for indexes built with them.

Exact counting (:func:`~memquill.query._tokens.count_term`) relies on one property, checked by
property tests: apart from the irregular forms (and the few words Snowball itself stems
irregularly, :data:`SNOWBALL_EXCEPTIONS`), every word whose stem is ``t`` starts with
``search_prefix(t)``. Snowball rewrites at most the last letter of what it keeps (``y`` to
``i``, an added ``e``, ``enci`` to ``ence``), the last two of ``ble`` (``biliti`` to
``ble``), or the ``y`` of a consonant and ``ying`` (``dying`` is ``die``), so the prefix drops
those letters when they may have been rewritten.
"""

from __future__ import annotations

import threading
from functools import lru_cache
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
