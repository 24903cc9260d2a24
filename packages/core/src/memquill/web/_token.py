"""The HTTP secret: one owner-only file in memquill's user data folder, made once, reused.

Loopback is shared by every user and container of a host, so memquill's HTTP servers (the MCP
server, the management page) answer only requests that carry a secret. When a person configures
none, :func:`load_token` makes one: 32 random bytes as URL-safe text in ``http-token`` (mode
``0600``, folder ``0700``), written whole and published with a hard link, so two servers
starting together agree on one token. An existing file is used only if it is a regular file
(never a symlink or FIFO) that only its owner can read or write; anything else is refused, never
quietly replaced.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path
from typing import Final

from memquill.errors import SourceError, UnsafePathError
from memquill.foundation.atomic import atomic_write
from memquill.foundation.safe_read import open_regular
from memquill.owner_only import private_folder
from memquill.paths import user_data_dir

TOKEN_FILE: Final = "http-token"  # noqa: S105 - the file's name, not a secret
"""The generated token's file name, in ``memquill`` under the user data folder."""

_MAX_TOKEN_BYTES: Final = 4096


def default_token_path() -> Path:
    """Where the generated token lives (nothing is created)."""
    return user_data_dir() / "memquill" / TOKEN_FILE


def load_token(path: Path | None = None) -> str:
    """The token in ``path`` (default :func:`default_token_path`), generated when missing.

    Raises:
        UnsafePathError: it cannot be made or read, or it is not a regular file only its owner
            can use, or it holds no token. The message names the file, never its content.
    """
    where = default_token_path() if path is None else path
    try:
        return read_token_file(where)
    except FileNotFoundError:
        pass
    try:
        private_folder(where.parent)
        with contextlib.suppress(FileExistsError):  # a racing start published first: use it
            atomic_write(where, secrets.token_urlsafe(32).encode("ascii"), exclusive=True)
    except OSError as error:
        raise UnsafePathError(f"cannot create the HTTP token {where}: {error.strerror}") from None
    return read_token_file(where)


def read_token_file(path: Path) -> str:
    """The token in ``path``: a regular file (never waited on) only its owner can use.

    Raises:
        FileNotFoundError: there is no such file.
        UnsafePathError: it is not a regular file, others may read or write it, it cannot be
            read, it is not UTF-8 text, or it is empty.
    """
    try:
        descriptor = open_regular(path)
    except FileNotFoundError:
        raise
    except (OSError, SourceError):
        raise UnsafePathError(f"the HTTP token {path} must be a regular file") from None
    try:
        mode = os.fstat(descriptor).st_mode
        if os.name == "posix" and mode & 0o077:
            raise UnsafePathError(
                f"the HTTP token {path} is readable or writable by group or others (mode "
                f"{stat.S_IMODE(mode):03o}): run chmod 600 on it"
            )
        data = os.read(descriptor, _MAX_TOKEN_BYTES)
    except OSError as error:
        raise UnsafePathError(f"cannot read the HTTP token {path}: {error.strerror}") from None
    finally:
        os.close(descriptor)
    try:
        token = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise UnsafePathError(f"the HTTP token {path} is not UTF-8 text") from None
    if not token:
        raise UnsafePathError(f"the HTTP token {path} is empty")
    return token
