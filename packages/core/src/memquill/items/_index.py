"""An item store's semantic index configuration, in LangGraph's ``IndexConfig`` shape, checked.

The embed itself is the adapter's to turn into an embedder (``memquill_langchain``'s
``embedder_from_index``); the core only checks the shape, so every surface refuses the same
configurations with the same message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, cast

from memquill.errors import InvalidInputError, Messages

ItemIndex = Literal[False] | tuple[str, ...] | None
"""What of an item is embedded: ``None`` the store's fields, ``False`` nothing (the item is
kept out of the vector index), a tuple the fields it names (LangGraph's paths)."""


def check_index(index: object) -> None:
    """Check a semantic index configuration, in LangGraph's ``IndexConfig`` shape.

    Accepted: ``None`` and ``False`` (no index), and a mapping with an ``embed`` (what the
    adapter turns into an embedder), optionally ``dims`` (a positive ``int``) and ``fields``
    (a non-empty list of non-empty text paths; default ``["$"]``, the whole value).
    Search with an index re-orders the keyword hits by similarity, bounded
    (``memquill.semantic._texts.similarity_order``); the items stay the truth.

    Raises:
        InvalidInputError: anything else (another key, a bad ``dims`` or ``fields``).
    """
    if index is None or index is False:
        return
    if not isinstance(index, Mapping):
        raise InvalidInputError(Messages.ITEM_INDEX)
    config: Mapping[object, object] = index  # pyright: ignore[reportUnknownVariableType]
    if "embed" not in config or not set(config) <= {"embed", "dims", "fields"}:
        raise InvalidInputError(Messages.ITEM_INDEX)
    dims = config.get("dims")
    if dims is not None and (isinstance(dims, bool) or not isinstance(dims, int) or dims < 1):
        raise InvalidInputError(Messages.ITEM_INDEX)
    fields = config.get("fields")
    if fields is not None and not _text_paths(fields):
        raise InvalidInputError(Messages.ITEM_INDEX)


def _text_paths(fields: object) -> bool:
    if not isinstance(fields, list) or not fields:
        return False
    paths: list[object] = fields  # pyright: ignore[reportUnknownVariableType]
    return all(isinstance(path, str) and path for path in paths)


def check_put_index(index: object) -> ItemIndex:
    """A put's ``index`` (LangGraph's ``put(index=...)``) as kept with the item.

    Accepted: ``None`` (the store's fields), ``False`` (not embedded) and a non-empty list (or
    tuple) of non-empty text paths, the fields embedded for this item.

    Raises:
        InvalidInputError: anything else.
    """
    if index is None or index is False:
        return index
    given: object = index
    if isinstance(given, tuple):
        given = list(cast("tuple[object, ...]", given))
    if not _text_paths(given):
        raise InvalidInputError(Messages.ITEM_INDEX)
    paths = cast("list[str]", given)
    return tuple(paths)
