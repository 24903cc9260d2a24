"""Where a PostgreSQL store is: ``postgresql://…#workspace=NAME&mirror=1&idle_timeout=S``.

The connection string is kept out of every ``repr`` and message: it may hold a password.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final
from urllib.parse import parse_qsl, urlencode, urlsplit

from memquill.errors import InvalidInputError, Messages

__all__ = ["PostgresLocation", "parse_location", "with_workspace"]

_MAX_NAME: Final = 200


@dataclass(frozen=True)
class PostgresLocation:
    """A parsed store location (``repr`` never shows the connection string)."""

    conninfo: str = field(repr=False)
    workspace: str = "default"
    mirror: bool = False
    idle_timeout: float = 5.0


def parse_location(location: str) -> PostgresLocation:
    """Split ``postgresql://…#workspace=NAME&mirror=1&idle_timeout=S`` into its parts.

    Raises:
        InvalidInputError: an unknown or invalid option (the message never repeats the URL).
    """
    conninfo, _, options = location.partition("#")
    try:
        urlsplit(conninfo)
        pairs = dict(parse_qsl(options, keep_blank_values=True, strict_parsing=bool(options)))
        name = pairs.pop("workspace", "default")
        mirror = pairs.pop("mirror", "0") in ("1", "true", "yes")
        idle = float(pairs.pop("idle_timeout", "5"))
    except ValueError:
        raise InvalidInputError(Messages.STORE_LOCATION) from None
    valid_name = 0 < len(name) <= _MAX_NAME and name.isprintable()
    if pairs or not valid_name or not 0 < idle <= 3600:
        raise InvalidInputError(Messages.STORE_LOCATION)
    return PostgresLocation(conninfo, name, mirror, idle)


def with_workspace(location: str, name: str) -> str:
    """The same store location naming the row ``name`` (the other options kept).

    Raises:
        InvalidInputError: ``location`` is not valid, or ``name`` is not a valid row name.
    """
    parsed = parse_location(location)
    options = {"workspace": name, "idle_timeout": repr(parsed.idle_timeout)}
    if parsed.mirror:
        options["mirror"] = "1"
    changed = f"{parsed.conninfo}#{urlencode(options)}"
    parse_location(changed)  # the same checks for the new name
    return changed
