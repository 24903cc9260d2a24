"""The detector contract: :class:`SecretDetector`, and :class:`RegexDetector`, which most are.

A :class:`RegexDetector` is a regular expression for where a credential may be, optionally
confirmed by a judgement of each match, and optionally guarded by cheap substring triggers so the
expression runs only on text that could hold a match. The built-in detectors are in
:mod:`memquill.store._secret_rules`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol


class SecretDetector(Protocol):
    """Anything with a ``name`` that can tell whether a text holds a credential."""

    @property
    def name(self) -> str:
        """A short, stable identifier shown in findings (never the matched text)."""
        ...

    def detect(self, text: str) -> bool:
        """Whether ``text`` holds a credential of this kind."""
        ...


@dataclass(frozen=True, slots=True)
class RegexDetector:
    """A detector that matches a regular expression, optionally confirming each match.

    Attributes:
        name: the finding's identifier.
        pattern: where a credential may be.
        confirm: given a match, whether it really is one (default: always).
        triggers: lowercase substrings of which any match must contain one; when none is in
            the text the expression is not run (a cheap test first: most notes have none).
    """

    name: str
    pattern: re.Pattern[str]
    confirm: Callable[[re.Match[str]], bool] | None = None
    triggers: tuple[str, ...] = ()

    def detect(self, text: str) -> bool:
        if self.triggers:
            lowered = _lowered(text)
            if not any(trigger in lowered for trigger in self.triggers):
                return False
        for match in self.pattern.finditer(text):
            if self.confirm is None or self.confirm(match):
                return True
        return False


# The scanner hands every detector the same string: lower it once, not once per detector.
_LAST_LOWERED: list[tuple[str, str]] = [("", "")]


def _lowered(text: str) -> str:
    seen, lowered = _LAST_LOWERED[0]
    if seen is not text:
        lowered = text.lower()
        _LAST_LOWERED[0] = (text, lowered)  # one atomic store: threads at worst lower twice
    return lowered
