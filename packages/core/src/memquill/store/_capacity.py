"""The records store's capacity: how large ``records.md`` may grow, a per-workspace setting.

The default is 2 MiB (:data:`DEFAULT_CAPACITY`), the spec's choice: a file a person can still
open, read and review in an editor, and that a write rewrites in milliseconds. A workspace that
needs more sets it, from 1 MiB to 64 MiB (:data:`MAX_CAPACITY`), whole MiB:

- in the workspace, ``.assistant/config.json``: ``{"store": {"capacityMiB": 16}}``;
- in code: ``RecordStore(..., capacity=...)``, ``open_session(..., capacity=...)``,
  ``MemquillStore(..., capacity=...)`` (bytes; these win over the file);
- on the command line: ``memquill --capacity 16 ...`` (MiB).

A missing or unreadable config file, or one without the key, means the default; a value out of
range in the file is an ``invalid`` error when the store is opened (never silently clamped: a
store that shrank would refuse to read its own file). Every copy of a synced workspace should
use the same capacity. A store kept in PostgreSQL has its workspace row's quota instead.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final, cast

from memquill.errors import CapacityError, InvalidInputError, MemquillError, Messages
from memquill.foundation.safe_read import read_text_nofollow
from memquill.jsondoc import parse_json
from memquill.store._codec import MAX_STORE_BYTES

MIB: Final = 1024 * 1024
DEFAULT_CAPACITY: Final = MAX_STORE_BYTES
"""2 MiB: the spec's human-sized file."""
MAX_CAPACITY: Final = 64 * MIB
"""The largest capacity a workspace may set."""
CONFIG_PATH: Final = ".assistant/config.json"


def check_capacity(capacity: object) -> int:
    """``capacity`` (bytes) if it is a whole number of MiB from 1 to 64.

    Raises:
        InvalidInputError: otherwise.
    """
    if type(capacity) is not int or capacity % MIB or not MIB <= capacity <= MAX_CAPACITY:
        raise InvalidInputError(Messages.CAPACITY_SETTING)
    return capacity


def workspace_capacity(workspace: str | os.PathLike[str]) -> int:
    """The capacity ``.assistant/config.json`` of ``workspace`` sets (default: 2 MiB).

    Raises:
        InvalidInputError: the file sets ``store.capacityMiB`` to something out of range.
    """
    try:
        data: object = parse_json(read_text_nofollow(Path(workspace) / CONFIG_PATH))
    except (MemquillError, OSError, ValueError):
        return DEFAULT_CAPACITY
    store = cast(dict[str, object], data).get("store") if isinstance(data, dict) else None
    if not isinstance(store, dict) or "capacityMiB" not in store:
        return DEFAULT_CAPACITY
    value = cast(dict[str, object], store)["capacityMiB"]
    if type(value) is not int:
        raise InvalidInputError(Messages.CAPACITY_SETTING)
    return check_capacity(value * MIB)


def full_error(capacity: int) -> CapacityError:
    """The error of a store at ``capacity`` that a file or a write would exceed."""
    if capacity == DEFAULT_CAPACITY:
        return CapacityError(Messages.FULL)
    return CapacityError(Messages.FULL.replace("2 MiB", f"{capacity // MIB} MiB"))
