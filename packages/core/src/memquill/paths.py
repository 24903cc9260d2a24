"""Workspace paths: canonical roots, relative-path rules, private paths and the safe reader.

Every path a tool accepts is workspace-relative. It is normalised, checked against the workspace
boundary both lexically and after resolving symlinks, and refused when it names memquill's own
bookkeeping, a file that usually holds credentials (:mod:`memquill.private_paths`), or
anything but a note. Every read opens without blocking and serves regular files only, and a
note with several hard links only when the user opts in (:func:`is_hard_linked`).
Messages never contain an absolute path.
"""

from __future__ import annotations

import errno
import os
import posixpath
import re
import stat
import sys
from collections.abc import Collection, Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from memquill.errors import (
    AccessDeniedError,
    InvalidInputError,
    MemquillError,
    Messages,
    SourceError,
    StorageError,
    UnsafePathError,
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
MAX_READ_BYTES: Final = 512 * 1024
"""The largest workspace file a query will read (512 KiB)."""
HARD_LINKS_ENV: Final = "MEMQUILL_ALLOW_HARD_LINKS"
"""Set to ``1`` to let the read tools serve notes that have more than one hard link."""


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


_SAFE_FLAGS: Final = (
    getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
)


def open_regular(path: str | os.PathLike[str], flags: int = os.O_RDONLY, mode: int = 0o600) -> int:
    """Open a regular file without following a final symlink and without ever blocking.

    A FIFO, socket or device is refused before it is opened when its type shows, and in any
    case after (by the type of the open descriptor, which no rename can change): opening is
    non-blocking (a FIFO with no writer would otherwise wait forever), so even a FIFO swapped
    in between costs nothing. ``O_NONBLOCK`` changes nothing for a regular file.

    Returns:
        the descriptor, which the caller closes.

    Raises:
        SourceError: ``path`` exists and is not a regular file.
        OSError: it cannot be opened (missing, a symlink: ``ELOOP``, no permission…).
    """
    try:
        mode_before = os.lstat(path).st_mode
    except FileNotFoundError:
        if not flags & os.O_CREAT:
            raise
    else:
        if not (stat.S_ISREG(mode_before) or stat.S_ISLNK(mode_before)):
            raise SourceError(Messages.NOT_REGULAR)
    fd = os.open(path, flags | _SAFE_FLAGS, mode)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SourceError(Messages.NOT_REGULAR)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of a regular file (see :func:`open_regular`), refusing more than ``limit``.

    Raises:
        SourceError: not a regular file, or larger than ``limit``.
        OSError: it cannot be opened or read.
    """
    return read_regular_stat(path, limit)[0]


def hard_links_allowed() -> bool:
    """Whether the user opted in to notes with several hard links (``$MEMQUILL_ALLOW_HARD_LINKS``
    is ``1``). An environment variable, not a workspace setting: whoever can plant a link in
    the workspace could also write its settings."""
    return os.environ.get(HARD_LINKS_ENV) == "1"


def is_hard_linked(info: os.stat_result) -> bool:
    """Whether a note with this ``stat`` must be refused for its hard links.

    A hard link is the same file under a second name, and nothing about the name inside the
    workspace says where the other names are: ``ln ~/.ssh/config notes/x.md`` would otherwise
    serve a file from outside the workspace, past every path check. So a note whose link
    count is above one is refused, unless :func:`hard_links_allowed`.
    """
    return info.st_nlink > 1 and not hard_links_allowed()


def read_regular_stat(
    path: str | os.PathLike[str], limit: int, *, note: bool = False
) -> tuple[bytes, os.stat_result]:
    """:func:`read_regular`, with the ``fstat`` of the file read (``note``: refuse hard links)."""
    fd = open_regular(path)
    try:
        info = os.fstat(fd)
        if note and is_hard_linked(info):
            raise AccessDeniedError(Messages.HARD_LINK)
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
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise SourceError(Messages.TOO_LARGE)
    return data, info


def read_text_nofollow(path: Path, *, limit: int = MAX_READ_BYTES, note: bool = False) -> str:
    """Read a regular file without following a final symlink, refusing more than ``limit`` bytes.

    Never blocks (:func:`open_regular`). Invalid UTF-8 is replaced (U+FFFD), as a browser or
    editor would show it. A ``note`` (query content) with several hard links is refused
    (:func:`is_hard_linked`), checked on the open descriptor.

    Raises:
        SourceError: the file is missing, unreadable, not regular, or too large.
        AccessDeniedError: a ``note`` with several hard links.
    """
    return read_text_stat(path, limit=limit, note=note)[0]


def read_text_stat(
    path: Path, *, limit: int = MAX_READ_BYTES, note: bool = False
) -> tuple[str, os.stat_result]:
    """:func:`read_text_nofollow`, with the ``fstat`` of the very file the text came from."""
    try:
        data, info = read_regular_stat(path, limit, note=note)
    except AccessDeniedError:
        raise  # a PermissionError too, yet already the answer
    except OSError as error:
        raise source_error(error) from None
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
