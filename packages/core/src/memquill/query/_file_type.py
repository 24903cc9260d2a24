"""Which sources a search considers: the ``file_type`` of ``memory_search``.

Its own module so that a search checked without the validation models (the shell's) and the
ranking can name it without loading pydantic.
"""

from __future__ import annotations

from typing import Final, Literal

FileType = Literal["all", "daily", "longterm", "notes"]
"""Which sources a search considers: every one, daily notes, long-term memory, other notes."""

FILE_TYPES: Final[tuple[FileType, ...]] = ("all", "daily", "longterm", "notes")
"""Every :data:`FileType`, in the order the tool's schema lists them."""
