"""Workspace paths: canonical roots, relative-path rules, private paths and the safe reader.

Every path a tool accepts is workspace-relative. It is normalised, checked against the workspace
boundary both lexically and after resolving symlinks, and refused when it names memquill's own
bookkeeping, a file that usually holds credentials (the lists below, documented in
``docs/security.md``), or anything but a note. Messages never contain an absolute path.
"""

from __future__ import annotations

import errno
import os
import posixpath
import re
import stat
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Final

from memquill.errors import AccessDeniedError, Messages, SourceError, StorageError, UnsafePathError

__all__ = [
    "CREDENTIAL_FOLDERS",
    "CREDENTIAL_NAMES",
    "CREDENTIAL_NESTED_FOLDERS",
    "CREDENTIAL_PREFIXES",
    "CREDENTIAL_SUFFIXES",
    "MAX_READ_BYTES",
    "NOTE_EXTENSIONS",
    "canonical_workspace",
    "default_workspace",
    "is_managed_record_path",
    "is_note",
    "is_private",
    "may_be_private",
    "normalize_relative",
    "private_reason",
    "read_text_nofollow",
    "read_workspace_file",
    "relative_inside",
    "source_error",
    "user_data_dir",
]

MAX_READ_BYTES: Final = 512 * 1024
"""The largest workspace file a query will read (512 KiB)."""

NOTE_EXTENSIONS: Final = (".md", ".txt", ".markdown")
"""What a note is when the scan settings do not say otherwise: the only files ``get`` serves."""

_PRIVATE_SEGMENTS: Final = frozenset({".assistant", ".git", ".memquill"})
_WINDOWS_ABSOLUTE: Final = re.compile(r"^(?:[A-Za-z]:|[\\/]{2})")

# Files and folders that usually hold credentials: never served, searched or listed, whatever
# their extension and whatever the scan settings say. Names compare case-insensitively.
CREDENTIAL_FOLDERS: Final = frozenset(
    {
        ".aws",  # credentials, config with keys
        ".azure",
        ".docker",  # config.json holds registry auth
        ".env",  # a folder named .env (and the file)
        ".gnupg",
        ".kube",  # config holds cluster tokens and client keys
        ".password-store",
        ".ssh",
    }
)
"""A path with any of these folders (or files) in it is private."""
CREDENTIAL_NESTED_FOLDERS: Final = (".config/gcloud", ".config/gh")
"""Folders two levels deep that hold tokens (Google Cloud SDK, GitHub CLI)."""
CREDENTIAL_NAMES: Final = frozenset(
    {
        ".boto",
        ".dockercfg",
        ".envrc",
        ".git-credentials",
        ".htpasswd",
        ".netrc",
        "_netrc",
        ".npmrc",
        ".pgpass",
        ".pypirc",
        ".s3cfg",
        ".yarnrc.yml",
        "client_secret.json",
        "credentials",
        "credentials.json",
        "kubeconfig",
    }
)
"""File names that usually hold credentials."""
CREDENTIAL_PREFIXES: Final = (
    ".env.",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_rsa",
    "client_secret_",
)
"""File name starts: ``.env.local``, SSH private keys (``id_ed25519``, ``id_rsa_work``), Google
OAuth client files."""
CREDENTIAL_SUFFIXES: Final = (
    ".env",  # prod.env
    ".jks",
    ".kdbx",  # KeePass
    ".key",
    ".keystore",
    ".p12",
    ".pem",
    ".pfx",
    ".ppk",  # PuTTY
    ".tfstate",  # Terraform state holds every secret it manages
    ".tfstate.backup",
    ".tfvars",
)
"""File name ends: keys, certificates with keys, key stores, Terraform state and variables."""


def canonical_workspace(workspace: str | os.PathLike[str]) -> Path:
    """The real path of ``workspace``, which must be an absolute path to a directory.

    Raises:
        UnsafePathError: the path is relative, or it is not a directory.
        StorageError: it does not exist or cannot be resolved.
    """
    raw = os.fspath(workspace)
    if not raw or not os.path.isabs(raw) or "\0" in raw:
        raise UnsafePathError(Messages.ABSOLUTE_WORKSPACE)
    try:
        root = Path(os.path.realpath(raw, strict=True))
        is_dir = root.is_dir()
    except OSError as error:
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


def default_workspace() -> Path:
    """``$MEMQUILL_WORKSPACE``, else ``memquill/workspace`` in the user's data directory."""
    configured = os.environ.get("MEMQUILL_WORKSPACE")
    if configured:
        return Path(configured).expanduser().absolute()
    return user_data_dir() / "memquill" / "workspace"


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
    paths, and the files and folders that usually hold credentials (``CREDENTIAL_*``).
    """
    return private_reason(path) is not None


def private_reason(path: str) -> str | None:
    """Why a workspace-relative path is private (the refusal's message), or ``None``."""
    lowered = path.lower().replace("\\", "/")
    segments = lowered.split("/")
    if any(segment in _PRIVATE_SEGMENTS for segment in segments):
        return Messages.PRIVATE
    if is_managed_record_path(lowered):
        return Messages.PRIVATE
    name = segments[-1]
    nested = "/" + lowered + "/"
    if (
        any(segment in CREDENTIAL_FOLDERS for segment in segments)
        or any(f"/{folder}/" in nested for folder in CREDENTIAL_NESTED_FOLDERS)
        or name in CREDENTIAL_NAMES
        or name.startswith(CREDENTIAL_PREFIXES)
        or name.endswith(CREDENTIAL_SUFFIXES)
    ):
        return Messages.CREDENTIAL_FILE
    return None


_NESTED_LEAVES: Final = frozenset(folder.rsplit("/", 1)[1] for folder in CREDENTIAL_NESTED_FOLDERS)


def may_be_private(path: str, name: str) -> bool:
    """A cheap necessary condition of :func:`is_private` for ``path`` (last segment ``name``)
    whose parent folders are not private: a scan asks it of every entry it lists."""
    lowered = name.lower()
    return (
        lowered.startswith((".", "_", "id_", "client_secret"))
        or lowered.endswith(CREDENTIAL_SUFFIXES)
        or lowered in CREDENTIAL_NAMES
        or lowered in _NESTED_LEAVES
        or path[:7].lower() == "memory/"
        or "\\" in path
    )


def is_note(path: str, extensions: Collection[str] = NOTE_EXTENSIONS) -> bool:
    """Whether ``path`` has one of the note ``extensions`` (lowercase, with the dot)."""
    return posixpath.splitext(path.replace("\\", "/"))[1].lower() in extensions


def relative_inside(root: Path, real: str) -> str | None:
    """``real`` relative to ``root`` in POSIX form, or ``None`` when it lies outside."""
    relative = os.path.relpath(real, root)
    if relative == ".." or relative.startswith(".." + os.sep) or os.path.isabs(relative):
        return None
    return Path(relative).as_posix()


def read_workspace_file(
    root: Path,
    path: str,
    *,
    extensions: Collection[str] = NOTE_EXTENSIONS,
    limit: int = MAX_READ_BYTES,
) -> str:
    """Read a workspace note for a query, enforcing every boundary.

    Args:
        root: the canonical workspace (from :func:`canonical_workspace`).
        path: the requested relative path (normalised here).
        extensions: what a note is (the scan settings' extensions); anything else is refused.
        limit: the largest size served, in bytes.

    Raises:
        AccessDeniedError: absolute, escaping (lexically or through a symlink) or private path,
            or not a note (by its name or, through a symlink, its target's).
        SourceError: missing, unreadable, not a regular file, or larger than ``limit``.
    """
    relative = normalize_relative(path)
    _refuse_private_or_not_note(relative, extensions)
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
    _refuse_private_or_not_note(real_relative, extensions)
    return read_text_nofollow(Path(real), limit=limit)


def _refuse_private_or_not_note(relative: str, extensions: Collection[str]) -> None:
    reason = private_reason(relative)
    if reason is not None:
        raise AccessDeniedError(reason)
    if not is_note(relative, extensions):
        raise AccessDeniedError(Messages.NOT_A_NOTE)


def read_text_nofollow(path: Path, *, limit: int = MAX_READ_BYTES) -> str:
    """Read a regular file without following a final symlink, refusing more than ``limit`` bytes.

    Invalid UTF-8 is replaced (U+FFFD), as a browser or editor would show it.

    Raises:
        SourceError: the file is missing, unreadable, not regular, or too large.
    """
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
    return data.decode("utf-8", "replace")


def source_error(error: OSError) -> SourceError:
    """Translate an OS error into a message that names no absolute path."""
    if error.errno == errno.ENOENT:
        return SourceError(Messages.SOURCE_MISSING)
    if error.errno in (errno.EACCES, errno.EPERM):
        return SourceError(Messages.SOURCE_UNREADABLE)
    return SourceError(Messages.SOURCE_READ_FAILED)
