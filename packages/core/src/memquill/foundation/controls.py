"""Control characters: which a fact may not hold, and how a terminal is shown them.

A control character in text printed to a terminal is an instruction to the terminal, not text:
``ESC [`` sequences recolour, move the cursor, rewrite the title or the clipboard, and a lone
carriage return overwrites what was printed before it. A model-written fact or a planted note
must never drive the user's terminal, so:

- **Facts** (:data:`FORBIDDEN`): the C0 controls other than tab and newline (U+0000–U+0008,
  U+000B–U+001F, carriage return included), DEL (U+007F) and the C1 controls (U+0080–U+009F)
  are refused on every write (code ``invalid``, the message names the first as ``U+XXXX``).
- **Display** (:func:`escape_controls`): the ``memquill`` command prints every text it shows
  (notes, facts, messages) with those characters written as ``\\xNN`` escapes, two lowercase
  hex digits (``ESC`` is shown as ``\\x1b``); tab and newline are kept, and so is the carriage
  return of a CRLF line ending, which a terminal cannot misuse. ``memquill export`` writes the
  exact bytes instead: it is a file, not a display.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["FORBIDDEN", "escape_controls", "first_control"]

FORBIDDEN: Final = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""The characters a fact may not hold: C0 but tab and newline, DEL, and C1."""

# For display a carriage return that ends a CRLF line is harmless; a lone one is not.
_SHOWN_ESCAPED: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)")


def first_control(text: str) -> str | None:
    """The first character of ``text`` a fact may not hold, as ``U+XXXX`` (``None``: none)."""
    found = FORBIDDEN.search(text)
    return None if found is None else f"U+{ord(found.group()):04X}"


def escape_controls(text: str) -> str:
    """``text`` with every control character a terminal would act on written as ``\\xNN``."""
    if text.isprintable() or _SHOWN_ESCAPED.search(text) is None:
        return text
    return _SHOWN_ESCAPED.sub(lambda match: f"\\x{ord(match.group()):02x}", text)
