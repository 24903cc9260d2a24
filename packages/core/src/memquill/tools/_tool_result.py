"""What a tool call returns: the text and data every adapter shows (no validation models, so
a caller that only reads a result loads none)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool call returns.

    Attributes:
        text: the text the model sees, identical on every adapter.
        structured: the same result as JSON-ready data (hits, page, receipt or error).
        is_error: whether the call failed; adapters set their native error flag from it.
    """

    text: str
    structured: dict[str, Any] | None
    is_error: bool
