"""The scan configuration: ``.assistant/config.json`` merged over the defaults.

The file is optional and read only by memquill's scan. Keys are those of the original system::

    {"ignore": ["glob", ...],
     "index": {"includeExtensions": [".md"], "maxDepth": 8, "maxFileSizeKB": 512}}

A present key replaces its default (lists are not concatenated). A missing, unreadable or
malformed file, or a value of the wrong type, means the default. Whatever the file says, the
depth is clamped to 0..12 and the per-file size to 1 byte..512 KiB.

Ignore globs match a whole workspace path: ``**/`` is any number of leading folders, ``**``
anything, ``*`` anything but ``/``, ``?`` one character but ``/``.
"""

from __future__ import annotations

import math
import os
import re
import stat
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Final

from memquill.errors import MemquillError
from memquill.jsondoc import parse_json
from memquill.paths import MAX_READ_BYTES, read_text_nofollow
from memquill.private_paths import NOTE_EXTENSIONS

CONFIG_PATH: Final = ".assistant/config.json"
DEFAULT_IGNORE: Final = (
    ".obsidian/**",
    ".trash/**",
    "**/*.png",
    "**/*.jpg",
    "**/*.jpeg",
    "**/*.gif",
    "**/*.mp4",
    "node_modules/**",
    ".git/**",
)
DEFAULT_EXTENSIONS: Final = NOTE_EXTENSIONS
DEFAULT_DEPTH: Final = 8
MAX_DEPTH: Final = 12
_CONFIG_LIMIT: Final = 256 * 1024


@dataclass(frozen=True, slots=True)
class ScanConfig:
    """The effective scan settings.

    Attributes:
        extensions: lowercase file extensions that are scanned (with the dot).
        max_depth: deepest folder level scanned (the workspace itself is level 0).
        max_file_bytes: larger files are skipped silently.
        ignore: the ignore globs.
        pattern: every glob, compiled into one expression.
        literal_ends: the literal starts and ends a path must have to match a glob (and
            whether some glob can match any path).
    """

    extensions: frozenset[str] = frozenset(DEFAULT_EXTENSIONS)
    max_depth: int = DEFAULT_DEPTH
    max_file_bytes: int = MAX_READ_BYTES
    ignore: tuple[str, ...] = DEFAULT_IGNORE
    pattern: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    literal_ends: tuple[tuple[str, ...], tuple[str, ...], bool] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "pattern", _ignore_pattern(self.ignore))
        object.__setattr__(self, "literal_ends", _literal_ends(self.ignore))

    def ignores(self, path: str) -> bool:
        """Whether an ignore glob matches the workspace path ``path``."""
        pattern = self.pattern
        if pattern is None:
            return False
        starts, ends, always = self.literal_ends
        # Each glob's literal start or end is a cheap necessary condition (the walk asks
        # about every entry, and the expression backtracks over every folder of a path).
        if not (always or path.startswith(starts) or path.endswith(ends)):
            return False
        return pattern.fullmatch(path) is not None

    def prunes(self, folder: str) -> bool:
        """Whether everything inside ``folder`` is ignored, so the walk need not enter it."""
        return self.ignores(folder) or self.ignores(folder + "/")


def load_scan_config(root: Path) -> ScanConfig:
    """The configuration of the workspace ``root`` (defaults when there is none)."""
    raw = _read_config(root)
    if raw is None:
        return ScanConfig()
    index = raw.get("index")
    index_map: dict[str, object] = (
        {str(key): value for key, value in index.items()}  # pyright: ignore[reportUnknownVariableType, reportUnknownMemberType, reportUnknownArgumentType]
        if isinstance(index, dict)
        else {}
    )
    depth = _number(index_map.get("maxDepth"), DEFAULT_DEPTH)
    size_kb = _number(index_map.get("maxFileSizeKB"), MAX_READ_BYTES // 1024)
    return ScanConfig(
        extensions=frozenset(
            value.lower()
            for value in _strings(index_map.get("includeExtensions"), DEFAULT_EXTENSIONS)
        ),
        max_depth=int(min(MAX_DEPTH, max(0, depth))),
        max_file_bytes=int(min(MAX_READ_BYTES, max(1, size_kb * 1024))),
        ignore=_strings(raw.get("ignore"), DEFAULT_IGNORE),
    )


def glob_pattern(glob: str) -> re.Pattern[str]:
    """The anchored regular expression of an ignore glob."""
    parts: list[str] = []
    index = 0
    while index < len(glob):
        if glob.startswith("**/", index):
            parts.append("(?:.+/)?")
            index += 3
        elif glob.startswith("**", index):
            parts.append(".*")
            index += 2
        elif glob[index] == "*":
            parts.append("[^/]*")
            index += 1
        elif glob[index] == "?":
            parts.append("[^/]")
            index += 1
        else:
            parts.append(re.escape(glob[index]))
            index += 1
    return re.compile("".join(parts), re.DOTALL)


@lru_cache(maxsize=64)
def _literal_ends(ignore: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    """Literal starts and ends that paths matching the globs must have (a glob with
    neither, like ``*``, can match anything: then ``True``)."""
    starts: list[str] = []
    ends: list[str] = []
    for glob in ignore:
        cuts = [index for index, char in enumerate(glob) if char in "*?"]
        if not cuts:
            starts.append(glob)  # no wildcard: the path is the glob itself
        elif cuts[0] > 0:
            starts.append(glob[: cuts[0]])
        elif cuts[-1] < len(glob) - 1:
            ends.append(glob[cuts[-1] + 1 :])
        else:
            return (), (), True
    return tuple(starts), tuple(ends), False


@lru_cache(maxsize=64)
def _ignore_pattern(ignore: tuple[str, ...]) -> re.Pattern[str] | None:
    # One alternation: the walk asks about every entry, so one match beats nine. Remembered,
    # since every scan loads the settings afresh and they rarely change.
    joined = "|".join(f"(?:{glob_pattern(glob).pattern})" for glob in ignore)
    return re.compile(joined, re.DOTALL) if joined else None


def _read_config(root: Path) -> dict[str, object] | None:
    folder = root / ".assistant"
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return None
        text = read_text_nofollow(folder / "config.json", limit=_CONFIG_LIMIT)
        parsed: object = parse_json(text)
    except (OSError, ValueError, MemquillError):
        return None
    if not isinstance(parsed, dict):
        return None
    return {str(key): value for key, value in parsed.items()}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]


def _number(value: object, default: int) -> float:
    # ``json`` accepts NaN; it would disable every bound, so it means "use the default".
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return float(default)
    return float(value)


def _strings(value: object, default: tuple[str, ...]) -> tuple[str, ...]:
    if not isinstance(value, list):
        return default
    items: list[object] = list(value)  # pyright: ignore[reportUnknownArgumentType]
    return tuple(item for item in items if isinstance(item, str))
