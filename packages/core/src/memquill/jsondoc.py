"""Parsing JSON memquill did not necessarily write, with its nesting bounded first.

Python's parser recurses once per level of nesting, so ``[`` repeated 100,000 times escapes it
as ``RecursionError`` rather than as the ``ValueError`` every caller handles. Every JSON text
memquill reads goes through :func:`parse_json`: its own files (the job ledger, block receipts,
session bindings, the writer lock's diagnostics, the record metadata in ``records.md``), the
scan configuration, transcript lines, tool receipts inside a conversation, a model's answers
and the management page's requests.

The rule: a text whose arrays and objects nest deeper than :data:`MAX_DEPTH` levels is refused
with :class:`JSONDepthError` before it is parsed. It is a ``ValueError``, so each caller's
"not JSON" handling answers with its own documented code (the ledger ``job_corrupt``, a receipt
``persistence_unavailable``, the bindings ``bindings_invalid``, ``records.md`` ``corrupt``, a
request ``invalid``). The depth is counted on the text with its strings removed, in C-speed
passes; a text with fewer openers than the limit is not scanned at all.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any, Final

__all__ = ["MAX_DEPTH", "JSONDepthError", "nesting_exceeds", "parse_json"]

MAX_DEPTH: Final = 64
"""The deepest nesting of arrays and objects memquill reads (its own documents nest a few)."""

# Only quotes and brackets matter for depth; every other byte goes (multi-byte UTF-8 sequences
# hold no ASCII byte, so none is mistaken for one). Escaped backslashes and quotes go first.
_OTHER_BYTES: Final = bytes(byte for byte in range(256) if byte not in b'"[]{}')
_STRING: Final = re.compile(rb'"[^"]*"')
_STEP: Final = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


class JSONDepthError(ValueError):
    """The text nests arrays and objects deeper than the limit (it was not parsed)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"JSON nested deeper than {limit} levels")
        self.limit = limit


def parse_json(data: str | bytes, *, max_depth: int = MAX_DEPTH, **options: Any) -> Any:
    """``json.loads(data, **options)``, refusing nesting deeper than ``max_depth``.

    ``bytes`` are decoded as ``json.loads`` decodes them (UTF-8, -16 or -32, by their start).

    Raises:
        JSONDepthError: nested too deeply (a ``ValueError``).
        ValueError: not JSON (``json.JSONDecodeError``), or bytes that do not decode.
    """
    text = (
        data.decode(json.detect_encoding(data), "surrogatepass")
        if isinstance(data, bytes)
        else data
    )
    if nesting_exceeds(text, max_depth):
        raise JSONDepthError(max_depth)
    try:
        return json.loads(text, **options)
    except RecursionError:  # called with little stack left: the text itself was within bounds
        raise JSONDepthError(max_depth) from None


def nesting_exceeds(text: str, limit: int) -> bool:
    """Whether ``text``'s arrays and objects nest deeper than ``limit`` outside its strings.

    An unterminated string leaves its brackets in the count: such a text is not JSON anyway.
    """
    if text.count("[") + text.count("{") <= limit:
        return False
    raw = text.encode("utf-8", "surrogatepass")
    marks = raw.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _OTHER_BYTES)
    brackets = _STRING.sub(b"", marks)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0) > limit
