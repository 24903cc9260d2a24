"""Make tool outputs comparable across runs and adapters (used by the demo and the parity suite).

Record ids, revisions and timestamps differ between two workspaces built the same way, so a case
compares outputs after replacing each distinct value by a numbered placeholder (``<id:1>``,
``<rev:2>``, ``<time>``), numbered in order of first appearance within the case. A revision
shown by its first 16 hex digits becomes ``<rev16:N>``, with the number of the revision it
starts (so ``<rev16:2>`` is the short form of ``<rev:2>``). Schemas are
compared after inlining references and dropping the parts frameworks legitimately rewrite.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, cast

_ID: Final = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_REVISION: Final = re.compile(r"(?<![0-9a-f])(?:[0-9a-f]{64}|[0-9a-f]{16})(?![0-9a-f])")
_SHORT: Final = 16
_TIMESTAMP: Final = re.compile(
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})"
)


class Normalizer:
    """Replaces volatile values with stable placeholders; one instance per case run."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._revisions: dict[str, int] = {}
        """By full revision and by short form; both forms of one revision share a number."""

    def text(self, value: str) -> str:
        """``value`` with ids, revisions and timestamps replaced."""
        ids = self._ids
        value = _ID.sub(lambda match: f"<id:{ids.setdefault(match.group(0), len(ids) + 1)}>", value)
        value = _REVISION.sub(self._revision, value)
        return _TIMESTAMP.sub("<time>", value)

    def _revision(self, match: re.Match[str]) -> str:
        found = match.group(0)
        short = found[:_SHORT]
        seen = self._revisions
        number = seen.get(found) or seen.get(short)
        if number is None and len(found) == _SHORT:
            number = next((n for rev, n in seen.items() if rev.startswith(found)), None)
        if number is None:
            number = 1 + len(set(seen.values()))
        seen[found] = seen[short] = number
        return f"<rev:{number}>" if len(found) > _SHORT else f"<rev16:{number}>"

    def data(self, value: Any) -> Any:
        """A JSON value with every string normalised (keys kept)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {key: self.data(item) for key, item in value.items()}  # pyright: ignore[reportUnknownVariableType]
        if isinstance(value, list | tuple):
            return [self.data(item) for item in value]  # pyright: ignore[reportUnknownVariableType]
        return value


def canonical_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The part of an input schema every framework must preserve exactly.

    References are inlined; the top-level ``title``, ``description`` and
    ``additionalProperties`` (which some frameworks drop or rewrite) are removed, as are
    per-property ``title`` keys. What remains — property names, types, bounds, enums, defaults,
    descriptions and ``required`` — must be identical on every adapter.
    """
    definitions: dict[str, Any] = {**schema.get("definitions", {}), **schema.get("$defs", {})}
    resolved = _inline(dict(schema), definitions)
    top = {
        key: value
        for key, value in resolved.items()
        if key not in {"title", "description", "additionalProperties", "$defs", "definitions"}
    }
    properties = top.get("properties", {})
    top["properties"] = {
        name: {key: value for key, value in spec.items() if key != "title"}
        for name, spec in properties.items()
    }
    top["required"] = sorted(top.get("required", []))
    return top


def _inline(node: Any, definitions: Mapping[str, Any]) -> Any:
    if isinstance(node, Mapping):
        mapping = cast(Mapping[str, Any], node)
        reference = mapping.get("$ref")
        if isinstance(reference, str):
            return _inline(definitions[reference.rsplit("/", 1)[-1]], definitions)
        return {key: _inline(value, definitions) for key, value in mapping.items()}
    if isinstance(node, list):
        return [_inline(item, definitions) for item in cast(list[Any], node)]
    return node
