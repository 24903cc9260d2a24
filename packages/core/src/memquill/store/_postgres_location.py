"""Where a PostgreSQL store is: ``postgresql://…#workspace=NAME&mirror=1&idle_timeout=S``.

``postgres://`` is the same scheme (libpq reads both). The connection string is kept out of
every ``repr`` and message: it may hold a password. A refused option is named (its name only,
never its value or the URL), so a person sees which part of ``--store`` to fix;
:attr:`PostgresLocation.display` is the database as ``memquill where`` shows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final
from urllib.parse import parse_qsl, urlencode, urlsplit

from memquill.errors import InvalidInputError, Messages

OPTIONS: Final = ("workspace", "mirror", "idle_timeout")
"""The options a location takes after ``#``."""
_MAX_NAME: Final = 200
_SHOWN_NAME: Final = 40


@dataclass(frozen=True)
class PostgresLocation:
    """A parsed store location (``repr`` never shows the connection string)."""

    conninfo: str = field(repr=False)
    workspace: str = "default"
    mirror: bool = False
    idle_timeout: float = 5.0

    @property
    def display(self) -> str:
        """The database as a person reads it: scheme, user, host, port and database name.

        Never the password, and never the query string (``?password=…`` and
        ``?sslpassword=…`` are valid there).
        """
        try:
            parts = urlsplit(self.conninfo)
            port = parts.port
        except ValueError:
            return "postgresql://(a connection string memquill cannot show)"
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        user = f"{parts.username}@" if parts.username else ""
        return f"{parts.scheme}://{user}{host}{f':{port}' if port else ''}{parts.path}"


def parse_location(location: str) -> PostgresLocation:
    """Split ``postgresql://…#workspace=NAME&mirror=1&idle_timeout=S`` into its parts.

    Raises:
        InvalidInputError: the URL cannot be read, or an option is unknown or has a bad value
            (the message names the option, never the URL or a value).
    """
    conninfo, _, options = location.partition("#")
    try:
        urlsplit(conninfo)
        pairs = dict(parse_qsl(options, keep_blank_values=True, strict_parsing=bool(options)))
    except ValueError:
        raise InvalidInputError(Messages.STORE_OPTIONS) from None
    unknown = sorted(set(pairs) - set(OPTIONS))
    if unknown:
        shown = unknown[0][:_SHOWN_NAME] if unknown[0].isprintable() else "(unprintable)"
        raise InvalidInputError(Messages.STORE_OPTION_UNKNOWN.format(shown))
    name = pairs.get("workspace", "default")
    if not (0 < len(name) <= _MAX_NAME and name.isprintable()):
        raise InvalidInputError(Messages.STORE_OPTION_WORKSPACE)
    mirror = pairs.get("mirror", "0")
    if mirror not in ("0", "1", "true", "false", "yes", "no"):
        raise InvalidInputError(Messages.STORE_OPTION_MIRROR)
    try:
        idle = float(pairs.get("idle_timeout", "5"))
    except ValueError:
        idle = 0.0
    if not 0 < idle <= 3600:
        raise InvalidInputError(Messages.STORE_OPTION_IDLE)
    return PostgresLocation(conninfo, name, mirror in ("1", "true", "yes"), idle)


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
