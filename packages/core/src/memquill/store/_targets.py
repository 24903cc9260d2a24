"""What a correction or forget names, and the marker that keeps a field as it is.

Kept apart from :mod:`memquill.store._edits` so that code naming a fact (the tools resolving a
key, a command's arguments) loads none of the write side.
"""

from __future__ import annotations

from enum import Enum
from typing import Final, TypeAlias

from memquill.store._fact_keys import FactKey

Target: TypeAlias = "str | FactKey"
"""What a write names: a record id (36 characters) or a fact key."""


class Unchanged(Enum):
    """The type of :data:`UNCHANGED`."""

    UNCHANGED = "unchanged"


UNCHANGED: Final = Unchanged.UNCHANGED
"""For ``correct``'s ``key`` and ``extra``: keep what the current version has."""
