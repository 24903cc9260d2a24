"""Secret scanning: content with a finding is never saved.

The scanner normalises text first (:func:`normalize_for_detection`: NFKC, zero-width and other
format characters removed, look-alike letters folded to ASCII), so a key broken by a zero-width
space or typed in full-width or Cyrillic letters is found like the plain one, then runs every
detector (:mod:`memquill.store._secret_rules`). Prose about secrets and obvious placeholders
(``<your-key>``, ``xxxx``, ``***``, ``${TOKEN}``) pass. Plugins add detectors through the
``memquill_register_secret_detectors`` hook.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Final

from memquill.errors import SecretError
from memquill.store._secret_detectors import SecretDetector
from memquill.store._secret_kinds import secret_message
from memquill.store._secret_rules import BUILTIN_DETECTORS

# Characters that render as nothing: every format character (Unicode category Cf: zero-width
# space and joiners, bidi controls, soft hyphen, tags), variation selectors, the combining
# grapheme joiner and the Hangul fillers. A test checks that every Cf character is covered.
_INVISIBLE: Final = re.compile(
    "[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160"
    "\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f"
    "\ufeff\uffa0\ufff0-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
# Cyrillic and Greek letters drawn like Latin ones (NFKC keeps them apart). Folding them only
# for detection lets ``ѕk-…`` (Cyrillic dze) or ``АКІА…`` match; the stored text is unchanged.
_LOOKALIKE_FROM: Final = "аеорсухіјѕԁһԛԝӏАВЕКМНОРСТХЅІЈҮԜΑΒΕΖΗΙΚΜΝΟΡΤΥΧοινκρυ"
_LOOKALIKE_TO: Final = "aeopcyxijsdhqwlABEKMHOPCTXSIJYWABEZHIKMNOPTYXoivkpu"
_LOOKALIKE: Final = re.compile(f"[{_LOOKALIKE_FROM}]")
_FOLD: Final = dict(zip(_LOOKALIKE_FROM, _LOOKALIKE_TO, strict=True))


def _fold(match: re.Match[str]) -> str:
    return _FOLD[match.group()]


_BUILTIN_IDS: Final = frozenset(id(detector) for detector in BUILTIN_DETECTORS)


def normalize_for_detection(text: str) -> str:
    """``text`` as detectors see it: invisible characters removed, NFKC, look-alikes folded.

    Only for matching: what is stored is always the text as given. ASCII text is returned as
    it is, and each step runs only when it has something to change (a substitution per
    look-alike is four times faster than translating a whole Cyrillic note).
    """
    if text.isascii():
        return text
    visible = _INVISIBLE.sub("", text)
    if not unicodedata.is_normalized("NFKC", visible):
        visible = unicodedata.normalize("NFKC", visible)
    return _LOOKALIKE.sub(_fold, visible)


class SecretScanner:
    """Runs a fixed set of detectors over content.

    Args:
        detectors: the detectors to run; the built-ins when omitted.
    """

    def __init__(self, detectors: Iterable[SecretDetector] | None = None) -> None:
        self._detectors: tuple[SecretDetector, ...] = (
            BUILTIN_DETECTORS if detectors is None else tuple(detectors)
        )

    @property
    def detectors(self) -> tuple[SecretDetector, ...]:
        """The detectors, in the order they run."""
        return self._detectors

    def findings(self, text: str) -> tuple[str, ...]:
        """Names of the detectors that match ``text`` (empty when it is clean).

        Detectors see the normalised text. When normalising changed it, a plugin's detector
        also sees the text as given, so one written for the raw form keeps working.
        """
        normalized = normalize_for_detection(text)
        found: list[str] = []
        for detector in self._detectors:
            if detector.detect(normalized) or (
                normalized != text and id(detector) not in _BUILTIN_IDS and detector.detect(text)
            ):
                found.append(detector.name)
        return tuple(found)

    def check(self, text: str) -> None:
        """Raise :class:`~memquill.errors.SecretError` when ``text`` has any finding; its
        message names the kinds found in words (never the text), ``kinds`` the detectors."""
        kinds = self.findings(text)
        if kinds:
            raise SecretError(secret_message(kinds), kinds)
