"""An item's value as a fact: readable text, and the rest beside it as the fact's extra JSON.

A value is a JSON object. How it is kept (``docs/adapters/langgraph.md``):

- ``{"content": TEXT, ...}`` with non-blank text: the fact's text is ``TEXT``, verbatim; the
  other fields, if any, are the extra JSON ``{"fields": {...}}``. Reading gives
  ``{"content": TEXT, **fields}`` (``content`` first).
- any other object: the fact's text is the value as JSON (indented by two spaces; compact
  when that would not fit), and the extra JSON is ``{"text": "json"}``. Reading parses the
  text, so the value read is exactly the value written, and a person's edit of that JSON is
  what the next read returns.

A put's ``index`` (what of the item is embedded, :data:`ItemIndex`, checked by
:func:`check_put_index`) other than the store's default is kept beside them:
``"index": false`` or ``"index": [paths]``.

An item put with a time to live keeps it there too: ``"ttl": {"minutes": M, "expiresAt": T}``
(UTC, ISO 8601), so the expiry is in the record's metadata and outlives the process.

A fact with no extra JSON (or someone else's), or whose JSON text a person turned into prose,
reads as ``{"content": TEXT}``: a person's words always win.

A store's semantic index configuration is checked here too, in LangGraph's ``IndexConfig``
shape (:func:`check_index`); the embed itself is the adapter's to turn into an embedder
(``memquill_langchain``'s ``embedder_from_index``), so every surface refuses the same
configurations with the same message.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Final, Literal, cast

from memquill.errors import InvalidInputError, Messages
from memquill.foundation.text import utf16_len
from memquill.jsondoc import MAX_DEPTH, parse_json
from memquill.store import MAX_CONTENT_UNITS, JSONValue

CONTENT: Final = "content"
_FIELDS: Final = "fields"
_TEXT: Final = "text"
_JSON: Final = "json"
_INDEX: Final = "index"
_TTL: Final = "ttl"

Expiry = tuple[float, datetime]
"""An item's time to live in minutes, and when it expires (UTC)."""
_MAX_DEPTH: Final = MAX_DEPTH  # what a read parses: a value written deeper would not read back


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


def plain_value(value: object) -> dict[str, JSONValue]:
    """A plain JSON copy of ``value`` (tuples become lists).

    Raises:
        InvalidInputError: not an object of text keys and JSON values (a non-finite number,
            a key that is not text, an object nested deeper than 64 levels...).
    """
    if not isinstance(value, Mapping):
        raise InvalidInputError(Messages.ITEM_VALUE)
    copied = _plain(cast("Mapping[object, object]", value), 0)
    assert isinstance(copied, dict)
    return copied


def encode_value(
    value: object, index: ItemIndex = None, expiry: Expiry | None = None
) -> tuple[str, dict[str, JSONValue] | None]:
    """The fact's text and extra JSON for ``value`` and a checked ``index`` (see the module
    docstring).

    Raises:
        InvalidInputError: ``value`` is not a JSON object.
    """
    plain = plain_value(value)
    content = plain.get(CONTENT)
    kept: dict[str, JSONValue] = {} if index is None else {_INDEX: _index_json(index)}
    if expiry is not None:
        minutes, moment = expiry
        kept[_TTL] = {"minutes": minutes, "expiresAt": moment.isoformat(timespec="milliseconds")}
    if isinstance(content, str) and content.strip():
        fields = {name: field for name, field in plain.items() if name != CONTENT}
        extra: dict[str, JSONValue] = {_FIELDS: fields} if fields else {}
        extra.update(kept)
        return content, (extra or None)
    text = json.dumps(plain, ensure_ascii=False, indent=2, allow_nan=False)
    if utf16_len(text) > MAX_CONTENT_UNITS:
        text = json.dumps(plain, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text, {_TEXT: _JSON, **kept}


def decode_index(extra: Mapping[str, JSONValue] | None) -> ItemIndex:
    """The ``index`` a put kept in ``extra`` (``None``: the store's fields; anything a person
    wrote there that is not ``false`` or a list of text paths counts as ``None``)."""
    kept = None if extra is None else extra.get(_INDEX)
    if kept is False:
        return False
    if isinstance(kept, list) and kept and all(isinstance(p, str) and p for p in kept):
        return tuple(str(path) for path in kept)
    return None


def decode_expiry(extra: Mapping[str, JSONValue] | None) -> Expiry | None:
    """The time to live a put kept in ``extra`` (``None``: it never expires, or what is there
    is not a time to live)."""
    kept = None if extra is None else extra.get(_TTL)
    if not isinstance(kept, dict):
        return None
    minutes, moment = kept.get("minutes"), kept.get("expiresAt")
    if isinstance(minutes, bool) or not isinstance(minutes, int | float):
        return None
    if not isinstance(moment, str):
        return None
    try:
        when = datetime.fromisoformat(moment)
    except ValueError:
        return None
    return (float(minutes), when) if when.utcoffset() is not None else None


def expires_at(extra: Mapping[str, JSONValue] | None) -> datetime | None:
    """When the item whose fact has ``extra`` expires (UTC), for showing it; ``None``: never,
    or what is there is not a time to live."""
    expiry = decode_expiry(extra)
    return None if expiry is None else expiry[1].astimezone(UTC)


def expiry_text(extra: Mapping[str, JSONValue] | None) -> str | None:
    """:func:`expires_at` as people and JSON readers see it, ``YYYY-MM-DDTHH:MM:SS.mmmZ``
    (the CLI's ``--json`` and the management page write the same text); ``None``: never."""
    when = expires_at(extra)
    return None if when is None else when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _index_json(index: Literal[False] | tuple[str, ...]) -> JSONValue:
    return False if index is False else list(index)


def decode_value(content: str, extra: Mapping[str, JSONValue] | None) -> dict[str, JSONValue]:
    """The value a fact with ``content`` and ``extra`` stands for."""
    if extra is not None:
        if extra.get(_TEXT) == _JSON:
            try:
                parsed: object = parse_json(content)
            except ValueError:  # not JSON any more (a person's prose), or nested too deeply
                parsed = None
            if isinstance(parsed, dict):
                return cast("dict[str, JSONValue]", parsed)
        fields = extra.get(_FIELDS)
        if isinstance(fields, dict):
            rest = {name: field for name, field in fields.items() if name != CONTENT}
            return {CONTENT: content, **rest}
    return {CONTENT: content}


def _plain(value: object, depth: int) -> JSONValue:
    if depth > _MAX_DEPTH:
        raise InvalidInputError(Messages.ITEM_VALUE)
    if value is None or isinstance(value, bool | str | int):
        return cast(JSONValue, value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidInputError(Messages.ITEM_VALUE)
        return value
    if isinstance(value, Mapping):
        copied: dict[str, JSONValue] = {}
        for name, field in cast("Mapping[object, object]", value).items():
            if not isinstance(name, str):
                raise InvalidInputError(Messages.ITEM_VALUE)
            copied[name] = _plain(field, depth + 1)
        return copied
    if isinstance(value, list | tuple):
        return [_plain(field, depth + 1) for field in cast("list[object]", value)]
    raise InvalidInputError(Messages.ITEM_VALUE)
