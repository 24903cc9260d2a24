"""Memory paths: ``/memories/...`` as the model writes them, and the fact keys they name.

Rules (the reference's, where it has one):

- a path is ``/memories`` or starts with ``/memories/`` (the reference also takes
  ``/memoriesfoo`` as ``/memories/foo``; memquill refuses it, so one file has one spelling);
- empty names and ``.`` are dropped and ``..`` goes up one name, as the file system would
  resolve them; a path that goes above ``/memories`` at any point is refused with the
  reference's "would escape" text;
- a name may hold any character but control characters (U+0000–U+001F, U+007F–U+009F) and
  unpaired surrogates;
- the file's fact key is the path below ``/memories``, each name escaped on its own
  (:func:`memquill.store.quote_key` with ``keep_slashes``), so folders stay key prefixes; a path
  whose key would pass 200 characters is refused.

A key names a file only when it is the escaped form of its path (``quote_key(unquote_key(k),
keep_slashes=True) == k``): a key like ``a%2Fb`` (an escaped slash) or ``%41`` (an escaped
letter) is a fact the memory tool does not show, since no path leads to it.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Final

from anthropic.lib.tools import ToolError

from memquill import InvalidInputError
from memquill.store import MAX_KEY_CHARS, quote_key, unquote_key
from memquill_anthropic._messages import Texts

ROOT: Final = "/memories"


@dataclass(frozen=True, slots=True)
class MemoryPath:
    """A checked memory path.

    Attributes:
        given: the path as the command gave it (answers quote it, as the reference does).
        names: the names below ``/memories`` after resolving ``.`` and ``..`` (``()``: the root).
        key: the fact key of the file at this path (``""`` for the root, which has none).
    """

    given: str
    names: tuple[str, ...]
    key: str

    @property
    def is_root(self) -> bool:
        """Whether this is ``/memories`` itself."""
        return not self.names

    @property
    def prefix(self) -> str:
        """The key prefix of everything below this path (``""`` for the root)."""
        return f"{self.key}/" if self.names else ""

    def ancestors(self) -> tuple[MemoryPath, ...]:
        """The paths above this one, below the root, nearest last."""
        return tuple(
            MemoryPath(f"{ROOT}/{'/'.join(names)}", names, key_of(names))
            for names in (self.names[:depth] for depth in range(1, len(self.names)))
        )

    def contains(self, other: MemoryPath) -> bool:
        """Whether ``other`` is this path or lies below it."""
        return other.names[: len(self.names)] == self.names


def parse_path(path: str) -> MemoryPath:
    """Check ``path`` and resolve it to names below ``/memories``.

    Raises:
        ToolError: with the reference's text for a path outside ``/memories`` or escaping it,
            memquill's for a name it cannot keep or a path too long to be a key.
    """
    if not path.startswith(ROOT):
        raise ToolError(Texts.PATH_PREFIX.format(path=path))
    rest = path[len(ROOT) :]
    if rest and not rest.startswith("/"):
        raise ToolError(Texts.PATH_ROOT.format(path=path))
    names: list[str] = []
    for name in rest.split("/"):
        if name in ("", "."):
            continue
        if name == "..":
            if not names:
                raise ToolError(Texts.ESCAPES.format(path=path))
            names.pop()
            continue
        if not _keepable(name):
            raise ToolError(Texts.PATH_NAME.format(path=path))
        names.append(name)
    try:
        key = key_of(tuple(names))
    except InvalidInputError:
        raise ToolError(Texts.PATH_LONG.format(path=path, limit=MAX_KEY_CHARS)) from None
    return MemoryPath(path, tuple(names), key)


def key_of(names: tuple[str, ...]) -> str:
    """The fact key of the file named ``names`` below ``/memories`` (``""`` for none).

    Raises:
        InvalidInputError: the escaped key would pass 200 characters.
    """
    return quote_key("/".join(names), keep_slashes=True) if names else ""


def names_of_key(key: str) -> tuple[str, ...] | None:
    """The names of the file ``key`` is, or ``None`` when no memory path leads to it."""
    try:
        text = unquote_key(key)
        if quote_key(text, keep_slashes=True) != key:
            return None
    except InvalidInputError:
        return None
    names = tuple(text.split("/"))
    if any(name in ("", ".", "..") or not _keepable(name) for name in names):
        return None
    return names


def _keepable(name: str) -> bool:
    return not any(
        unicodedata.category(char) == "Cc" or "\ud800" <= char <= "\udfff" for char in name
    )
