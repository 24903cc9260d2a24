"""Workspace paths: canonical roots, relative-path rules, private paths and the safe reader.

The reader itself (descriptors that never block or follow a final symlink, bounded reads,
the hard-link rule, OS errors as messages) lives in :mod:`memquill.foundation.safe_read`; its names
are re-exported here, so ``memquill.paths`` stays the one place to import them from.

Every path a tool accepts is workspace-relative. It is normalised, checked against the workspace
boundary both lexically and after resolving symlinks, and refused when it names memquill's own
bookkeeping, a file that usually holds credentials (:mod:`memquill.private_paths`), or
anything but a note. Every read opens without blocking and serves regular files only, and a
note with several hard links only when the user opts in (:func:`is_hard_linked`).
Messages never contain an absolute path.
"""

from __future__ import annotations

import os
import posixpath
import re
import sys
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from memquill.errors import (
    AccessDeniedError,
    InvalidInputError,
    Messages,
    SourceError,
    StorageError,
    UnsafePathError,
)
from memquill.foundation.safe_read import (
    HARD_LINKS_ENV,
    MAX_READ_BYTES,
    hard_links_allowed,
    is_hard_linked,
    open_regular,
    os_errors_as_source,
    read_regular,
    read_regular_stat,
    read_text_nofollow,
    read_text_stat,
    source_error,
)
from memquill.owner_only import private_folder
from memquill.private_paths import (
    NOTE_EXTENSIONS,
    is_managed_record_path,
    is_note,
    is_private,
    private_reason,
)

__all__ = [
    "HARD_LINKS_ENV",
    "MAX_READ_BYTES",
    "WORKSPACE_ENV",
    "WorkspaceChoice",
    "canonical_workspace",
    "choose_workspace",
    "default_workspace",
    "fallback_workspace",
    "hard_links_allowed",
    "is_hard_linked",
    "is_managed_record_path",  # re-exported: the rules live in memquill.private_paths
    "is_private",
    "normalize_relative",
    "open_regular",
    "os_errors_as_source",
    "prepare_workspace",
    "read_regular",
    "read_regular_stat",
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


_WINDOWS_ABSOLUTE: Final = re.compile(r"^(?:[A-Za-z]:|[\\/]{2})")


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


def prepare_workspace(workspace: str | os.PathLike[str], *, create: bool = True) -> Path:
    """:func:`canonical_workspace`, after creating the folder when it does not exist.

    With ``create``, a missing workspace is made, with every missing parent folder, each
    private (``0700`` whatever the umask); a folder that exists is left exactly as it is.

    Raises:
        UnsafePathError: the path is relative, or it is not a directory.
        StorageError: it does not exist (and ``create`` is false), or it cannot be created.
    """
    raw: str = os.path.expanduser(os.fspath(workspace))
    if create and raw and os.path.isabs(raw) and "\0" not in raw:
        _make_private_folders(Path(raw))
    return canonical_workspace(workspace)


def _make_private_folders(path: Path) -> None:
    missing: list[Path] = []
    current = path
    try:
        while not os.path.lexists(current) and current.parent != current:
            missing.append(current)
            current = current.parent
        for folder in reversed(missing):
            try:
                os.mkdir(folder, 0o700)
            except FileExistsError:
                continue  # made meanwhile by someone else: theirs, as it is
            os.chmod(folder, 0o700)  # exactly 0700, whatever the umask let mkdir keep
    except (OSError, ValueError) as error:
        raise StorageError(Messages.WORKSPACE_NOT_CREATED) from error


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


def fallback_workspace() -> Path:
    """``memquill/workspace`` in the user's data directory: the folder used when neither
    ``--workspace`` nor ``$MEMQUILL_WORKSPACE`` names one, the only one memquill creates (on
    the first write). Nothing is created here."""
    return user_data_dir() / "memquill" / "workspace"


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

    def create(self) -> None:
        """Create the folder, owner-only (``0700``, and so each missing parent), if missing.

        Raises:
            OSError: it cannot be created.
        """
        private_folder(self.path)

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
    """``--workspace``, else ``$MEMQUILL_WORKSPACE``, else the default (nothing is created).

    An empty ``$MEMQUILL_WORKSPACE`` counts as unset, as shells treat variables.

    Raises:
        InvalidInputError: ``flag`` is given but empty (``--workspace ""``): a script whose
            variable came out empty must not silently use another folder.
    """
    if flag is not None:
        if not flag:
            raise InvalidInputError(Messages.WORKSPACE_EMPTY)
        return WorkspaceChoice(Path(flag).expanduser().absolute(), "flag")
    configured = os.environ.get(WORKSPACE_ENV)
    if configured:
        return WorkspaceChoice(Path(configured).expanduser().absolute(), "variable")
    return WorkspaceChoice(fallback_workspace(), "default")


def normalize_relative(path: str) -> str:
    """Normalise a requested workspace-relative path to POSIX form.

    A path whose last part is empty or ``.`` (``memory.md/``, ``notes/.``) names a folder, as
    the operating system reads it, so it never names the file ``normpath`` would leave.

    Raises:
        AccessDeniedError: the path is absolute (POSIX or Windows form), holds NUL, or climbs
            out of the workspace with ``..``.
        SourceError: the path ends with a separator or ``.`` (it names a folder).
    """
    if "\0" in path or path.startswith(("/", "\\")) or _WINDOWS_ABSOLUTE.match(path):
        raise AccessDeniedError(Messages.RELATIVE_PATH)
    slashed = path.replace("\\", "/")
    normalized = posixpath.normpath(slashed)
    if normalized == ".." or normalized.startswith("../"):
        raise AccessDeniedError(Messages.OUTSIDE)
    if slashed.rsplit("/", 1)[-1] in ("", ".") and normalized != ".":
        raise SourceError(Messages.NOT_REGULAR)
    return normalized


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
            not a note (by its name or, through a symlink, its target's), or a file with more
            than one hard link (see :func:`is_hard_linked`).
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
    return read_text_nofollow(Path(real), limit=limit, note=True)


def _refuse_private_or_not_note(relative: str, extensions: Collection[str]) -> None:
    reason = private_reason(relative)
    if reason is not None:
        raise AccessDeniedError(reason)
    if not is_note(relative, extensions):
        raise AccessDeniedError(Messages.NOT_A_NOTE)
