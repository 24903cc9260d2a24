"""The safe reader: open and read workspace files without blocking, following or overreading.

Every read of a workspace file goes through :func:`open_regular`: it never follows a final
symlink, never blocks (a FIFO swapped in costs nothing), and serves regular files only, checked
again on the open descriptor. Reads are bounded (:func:`read_regular_stat` refuses more than
its limit), a note with several hard links is refused unless the user opts in
(:func:`is_hard_linked`), and an operating-system error becomes a :class:`SourceError` whose
message names no absolute path (:func:`source_error`). :mod:`memquill.paths` re-exports every
name.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from memquill.errors import AccessDeniedError, MemquillError, Messages, SourceError
from memquill.private_paths import is_records_text

__all__ = [
    "HARD_LINKS_ENV",
    "MAX_READ_BYTES",
    "hard_links_allowed",
    "is_hard_linked",
    "open_regular",
    "os_errors_as_source",
    "read_at_most",
    "read_regular",
    "read_regular_stat",
    "read_text_nofollow",
    "read_text_stat",
    "source_error",
]

MAX_READ_BYTES: Final = 512 * 1024
"""The largest workspace file a query will read (512 KiB)."""
HARD_LINKS_ENV: Final = "MEMQUILL_ALLOW_HARD_LINKS"
"""Set to ``1`` to let the read tools serve notes that have more than one hard link."""

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
    """:func:`read_regular`, with the ``fstat`` of the file read. A ``note`` (query content) is
    refused with several hard links, and in the records format (an export of memory, a copy of
    ``records.md``: :func:`~memquill.private_paths.is_records_text`), wherever it lies."""
    fd = open_regular(path)
    try:
        info = os.fstat(fd)
        if note and is_hard_linked(info):
            raise AccessDeniedError(Messages.HARD_LINK)
        if info.st_size > limit:
            raise SourceError(Messages.TOO_LARGE)
        data = read_at_most(fd, limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise SourceError(Messages.TOO_LARGE)
    if note and is_records_text(data):
        raise AccessDeniedError(Messages.RECORDS_COPY)
    return data, info


def read_at_most(fd: int, count: int) -> bytes:
    """Up to ``count`` bytes of an open file, read in 1 MiB pieces (fewer at its end)."""
    chunks: list[bytes] = []
    remaining = count
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


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
