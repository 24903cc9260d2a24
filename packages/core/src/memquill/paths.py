"""Workspace paths: canonical roots, relative-path rules, private paths and the safe reader.

Every path a tool accepts is workspace-relative. It is normalised, checked against the workspace
boundary both lexically and after resolving symlinks, and refused when it names memquill's own
bookkeeping or a file that usually holds credentials. Messages never contain an absolute path.
"""

from __future__ import annotations

import errno
import os
import posixpath
import re
import stat
import sys
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from memquill.errors import (
    AccessDeniedError,
    MemquillError,
    Messages,
    SourceError,
    StorageError,
    UnsafePathError,
)

__all__ = [
    "MAX_READ_BYTES",
    "WORKSPACE_ENV",
    "WorkspaceChoice",
    "canonical_workspace",
    "choose_workspace",
    "default_workspace",
    "is_managed_record_path",
    "is_private",
    "normalize_relative",
    "os_errors_as_source",
    "read_text_nofollow",
    "read_text_stat",
    "read_workspace_file",
    "relative_inside",
    "source_error",
    "user_cache_dir",
    "user_data_dir",
]

WORKSPACE_ENV: Final = "MEMQUILL_WORKSPACE"
"""The environment variable naming the workspace when no ``--workspace`` is given."""
MAX_READ_BYTES: Final = 512 * 1024
"""The largest workspace file a query will read (512 KiB)."""

_PRIVATE_SEGMENTS: Final = frozenset({".assistant", ".git", ".memquill"})
_WINDOWS_ABSOLUTE: Final = re.compile(r"^(?:[A-Za-z]:|[\\/]{2})")
_CREDENTIAL_SUFFIXES: Final = (".pem", ".key")
_CREDENTIAL_PREFIXES: Final = ("id_rsa", "id_ed25519")


def canonical_workspace(workspace: str | os.PathLike[str]) -> Path:
    """The real path of ``workspace``, which must be an absolute path to a directory (a
    leading ``~`` is expanded).

    Raises:
        UnsafePathError: the path is relative, or it is not a directory.
        StorageError: it does not exist or cannot be resolved.
    """
    raw: str = os.path.expanduser(os.fspath(workspace))  # "~/notes", as the commands take it
    if not raw or not os.path.isabs(raw) or "\0" in raw:
        raise UnsafePathError(Messages.ABSOLUTE_WORKSPACE)
    try:
        root = Path(os.path.realpath(raw, strict=True))
        is_dir = root.is_dir()
    except FileNotFoundError as error:
        raise StorageError(Messages.WORKSPACE_MISSING) from error
    except (OSError, ValueError) as error:  # ValueError: a path the OS cannot even encode
        raise StorageError(Messages.UNAVAILABLE) from error
    if not is_dir:
        raise UnsafePathError(Messages.WORKSPACE_NOT_DIR)
    return root


def user_data_dir() -> Path:
    """The platform's per-user data folder (memquill keeps its own files in ``memquill/``).

    ``%LOCALAPPDATA%`` on Windows, ``~/Library/Application Support`` on macOS, else
    ``$XDG_DATA_HOME`` or ``~/.local/share``. Nothing is created.
    """
    home = Path.home()
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
    if sys.platform == "darwin":
        return home / "Library" / "Application Support"
    return Path(os.environ.get("XDG_DATA_HOME") or home / ".local" / "share")


def user_cache_dir() -> Path:
    """The platform's per-user cache folder (memquill keeps its caches in ``memquill/``).

    ``%LOCALAPPDATA%`` on Windows, ``~/Library/Caches`` on macOS, else ``$XDG_CACHE_HOME``
    or ``~/.cache``. Nothing is created.
    """
    home = Path.home()
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
    if sys.platform == "darwin":
        return home / "Library" / "Caches"
    return Path(os.environ.get("XDG_CACHE_HOME") or home / ".cache")


def default_workspace() -> Path:
    """``$MEMQUILL_WORKSPACE``, else ``memquill/workspace`` in the user's data directory."""
    return choose_workspace(None).path


@dataclass(frozen=True, slots=True)
class WorkspaceChoice:
    """The workspace a command uses, and why: the same rules for ``memquill`` and
    ``memquill-mcp``.

    Attributes:
        path: the absolute folder (``~`` expanded).
        origin: ``flag`` (``--workspace``), ``variable`` (``$MEMQUILL_WORKSPACE``) or
            ``default`` (``memquill/workspace`` in the user's data directory).
    """

    path: Path
    origin: Literal["flag", "variable", "default"]

    @property
    def why(self) -> str:
        """Where the choice came from, for people."""
        if self.origin == "flag":
            return "from --workspace"
        if self.origin == "variable":
            return f"from ${WORKSPACE_ENV}"
        return f"the default: neither --workspace nor ${WORKSPACE_ENV} is set"

    def problem(self) -> str | None:
        """Why the folder cannot be used as chosen (``None``: it can).

        Only the default is created on first use; a folder the user named must exist, so a
        typo never scatters memory into a new folder.
        """
        where = f"The workspace {self.path} ({self.why})"
        if self.path.is_dir():
            return None
        if os.path.lexists(self.path):
            return f"{where} is not a folder."
        if self.origin == "flag":
            return (
                f"{where} does not exist. Create it first (mkdir -p {self.path}) or pass an "
                "existing folder."
            )
        if self.origin == "variable":
            return (
                f"{where} does not exist, and memquill does not create it. Create it "
                f"(mkdir -p {self.path}) or unset {WORKSPACE_ENV} to use the default folder."
            )
        return None


def choose_workspace(flag: str | None) -> WorkspaceChoice:
    """``--workspace``, else ``$MEMQUILL_WORKSPACE``, else the default (nothing is created)."""
    if flag:
        return WorkspaceChoice(Path(flag).expanduser().absolute(), "flag")
    configured = os.environ.get(WORKSPACE_ENV)
    if configured:
        return WorkspaceChoice(Path(configured).expanduser().absolute(), "variable")
    return WorkspaceChoice(user_data_dir() / "memquill" / "workspace", "default")


def normalize_relative(path: str) -> str:
    """Normalise a requested workspace-relative path to POSIX form.

    Raises:
        AccessDeniedError: the path is absolute (POSIX or Windows form), holds NUL, or climbs
            out of the workspace with ``..``.
    """
    if "\0" in path or path.startswith(("/", "\\")) or _WINDOWS_ABSOLUTE.match(path):
        raise AccessDeniedError(Messages.RELATIVE_PATH)
    normalized = posixpath.normpath(path.replace("\\", "/"))
    if normalized == ".." or normalized.startswith("../"):
        raise AccessDeniedError(Messages.OUTSIDE)
    return normalized


def is_managed_record_path(path: str) -> bool:
    """Whether ``path`` names the records file, its lock or temp files, or a projection."""
    lowered = path.lower().replace("\\", "/")
    lowered = lowered.removeprefix("./")
    return lowered == "memory/records.md" or lowered.startswith(
        ("memory/records/", "memory/.records-")
    )


def is_private(path: str) -> bool:
    """Whether a workspace-relative path must never be served as query content.

    Private: any ``.assistant``, ``.git`` or ``.memquill`` segment, memquill's managed record
    paths, and files that usually hold credentials (``.env``, ``.env.*``, ``*.pem``, ``*.key``,
    ``id_rsa*``, ``id_ed25519*``).
    """
    lowered = path.lower().replace("\\", "/")
    segments = lowered.split("/")
    if any(segment in _PRIVATE_SEGMENTS for segment in segments):
        return True
    if is_managed_record_path(lowered):
        return True
    name = segments[-1]
    return (
        name == ".env"
        or name.startswith((".env.", *_CREDENTIAL_PREFIXES))
        or name.endswith(_CREDENTIAL_SUFFIXES)
    )


def relative_inside(root: Path, real: str) -> str | None:
    """``real`` relative to ``root`` in POSIX form, or ``None`` when it lies outside."""
    relative = os.path.relpath(real, root)
    if relative == ".." or relative.startswith(".." + os.sep) or os.path.isabs(relative):
        return None
    return Path(relative).as_posix()


def read_workspace_file(root: Path, path: str, *, limit: int = MAX_READ_BYTES) -> str:
    """Read a workspace file for a query, enforcing every boundary.

    Args:
        root: the canonical workspace (from :func:`canonical_workspace`).
        path: the requested relative path (normalised here).
        limit: the largest size served, in bytes.

    Raises:
        AccessDeniedError: absolute, escaping (lexically or through a symlink) or private path.
        SourceError: missing, unreadable, not a regular file, or larger than ``limit``.
    """
    relative = normalize_relative(path)
    if is_private(relative):
        raise AccessDeniedError(Messages.PRIVATE)
    candidate = os.path.join(root, relative)
    if relative_inside(root, os.path.abspath(candidate)) is None:
        raise AccessDeniedError(Messages.OUTSIDE)
    try:
        real = os.path.realpath(candidate, strict=True)
    except OSError as error:
        raise source_error(error) from None
    real_relative = relative_inside(root, real)
    if real_relative is None:
        raise AccessDeniedError(Messages.SYMLINK_OUTSIDE)
    if is_private(real_relative):
        raise AccessDeniedError(Messages.PRIVATE)
    return read_text_nofollow(Path(real), limit=limit)


def read_text_nofollow(path: Path, *, limit: int = MAX_READ_BYTES) -> str:
    """Read a regular file without following a final symlink, refusing more than ``limit`` bytes.

    Invalid UTF-8 is replaced (U+FFFD), as a browser or editor would show it.

    Raises:
        SourceError: the file is missing, unreadable, not regular, or too large.
    """
    return read_text_stat(path, limit=limit)[0]


def read_text_stat(path: Path, *, limit: int = MAX_READ_BYTES) -> tuple[str, os.stat_result]:
    """:func:`read_text_nofollow`, with the ``fstat`` of the very file the text came from."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        raise source_error(error) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SourceError(Messages.NOT_REGULAR)
        if info.st_size > limit:
            raise SourceError(Messages.TOO_LARGE)
        chunks: list[bytes] = []
        remaining = limit + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError as error:
        raise source_error(error) from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise SourceError(Messages.TOO_LARGE)
    return data.decode("utf-8", "replace"), info


def source_error(error: OSError) -> SourceError:
    """Translate an OS error into a message that names no absolute path."""
    if error.errno == errno.ENOENT:
        return SourceError(Messages.SOURCE_MISSING)
    if error.errno in (errno.EACCES, errno.EPERM):
        return SourceError(Messages.SOURCE_UNREADABLE)
    return SourceError(Messages.SOURCE_READ_FAILED)


@contextmanager
def os_errors_as_source() -> Generator[None]:
    """Turn an operating-system error raised inside into :func:`source_error`'s error.

    memquill's own errors (some of which are ``OSError`` too) pass through unchanged.
    """
    try:
        yield
    except MemquillError:
        raise
    except OSError as error:
        raise source_error(error) from None
