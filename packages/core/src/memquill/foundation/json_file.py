"""A JSON document kept in one file only memquill writes, changed under a kernel lock.

memquill keeps three such documents: the session bindings, the extraction job ledger and the
model-assistance block receipts. Each file is the whole truth of what it holds; anyone may read
it at any time, one writer at a time changes it. :class:`JsonFile` reads and changes all of
them by one rule:

- **Reading** takes no lock and creates nothing: a rewrite replaces the file in one rename, so
  a reader sees the old document or the new one. The file must be a regular file (never a
  symlink; a FIFO is refused without waiting) of at most ``limit`` bytes, read with
  :func:`memquill.paths.read_regular_stat`; the document's own ``decode`` parses it with
  :func:`memquill.jsondoc.parse_json` and validates it. A missing file is the empty document.
- **A change** (:meth:`JsonFile.change`) creates the folder owner-only, takes the exclusive
  kernel lock on the sidecar ``<name>.lock`` as the store's writers take theirs
  (:func:`memquill.foundation.kernel_lock.take_lock`: freed by the kernel when its holder dies),
  reads, lets the caller change the document, and writes it back only if its bytes changed (a
  missing file is written only once the document is no longer empty): staging files a killed
  writer left are removed, then :func:`memquill.foundation.atomic.atomic_write` replaces the file.
  Nothing is written when the caller's block raises.
- **Every failure is the document's own error** (:class:`Faults`), so each keeps its
  documented codes and messages.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable, Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from memquill.errors import BusyError, Messages, SourceError
from memquill.foundation.atomic import atomic_write, remove_staging
from memquill.foundation.kernel_lock import release_lock, take_lock
from memquill.owner_only import private_folder
from memquill.paths import read_regular_stat

__all__ = ["Fault", "Faults", "JsonFile"]

T = TypeVar("T")

Fault = Callable[[], Exception]
"""Makes the error a document raises for one kind of failure."""


@dataclass(frozen=True, slots=True)
class Faults:
    """The errors one document raises.

    Attributes:
        unsafe: a symlink, folder, FIFO… where the file or its lock should be (or, for an
            ``owner_only`` document, a file group or others may read).
        too_large: the file, or the document about to be written, is over the limit.
        unreadable: the operating system refused the read.
        unsaved: the operating system refused the write (folder, lock file, staging, rename).
        busy: another writer kept the lock past the timeout.
    """

    unsafe: Fault
    too_large: Fault
    unreadable: Fault
    unsaved: Fault
    busy: Fault


class JsonFile(Generic[T]):
    """One JSON document's file (see the module doc).

    Args:
        path: the file.
        decode: the file's bytes as a document; raises the document's own "invalid" error.
        encode: a document as bytes (deterministic: the same document, the same bytes).
        empty: the document a missing file holds.
        faults: the document's errors.
        limit: the most bytes the file may hold.
        lock_timeout: seconds a change waits for another writer.
        parents: a change creates missing parent folders too (else only the file's folder).
        owner_only: refuse a file that group or others may read (a secret's receipt).
        guard: called before every read and around the folder's creation; raises when the
            paths around the document are unsafe (a symlinked folder, say).
    """

    def __init__(
        self,
        path: Path,
        *,
        decode: Callable[[bytes], T],
        encode: Callable[[T], bytes],
        empty: Callable[[], T],
        faults: Faults,
        limit: int,
        lock_timeout: float = 5.0,
        parents: bool = True,
        owner_only: bool = False,
        guard: Callable[[], None] | None = None,
    ) -> None:
        self.path = path
        self.lock_path = path.with_name(path.name + ".lock")
        self._decode = decode
        self._encode = encode
        self._empty = empty
        self._faults = faults
        self._limit = limit
        self._lock_timeout = lock_timeout
        self._parents = parents
        self._owner_only = owner_only
        self._guard = guard

    def read(self) -> T:
        """The document as it is now (empty when the file is missing); no lock, nothing made."""
        data = self.read_bytes()
        return self._empty() if data is None else self._decode(data)

    def read_bytes(self) -> bytes | None:
        """The file's bytes, checked as the module doc says (``None`` when it is missing)."""
        if self._guard is not None:
            self._guard()
        faults = self._faults
        try:
            data, info = read_regular_stat(self.path, self._limit)
        except FileNotFoundError:
            return None
        except SourceError as error:
            fault = faults.too_large if error.message == Messages.TOO_LARGE else faults.unsafe
            raise fault() from None
        except OSError as error:
            fault = faults.unsafe if error.errno == errno.ELOOP else faults.unreadable
            raise fault() from error
        if self._owner_only and os.name == "posix" and info.st_mode & 0o077:
            raise faults.unsafe()
        return data

    @contextmanager
    def change(self) -> Generator[T]:
        """The document under the lock; what the block leaves in it is written (if it differs).

        Raises:
            the document's faults; whatever ``decode`` and the block raise (nothing written).
        """
        self._prepare_folder()
        fd = self._take_lock()
        try:
            before = self.read_bytes()
            if before is None:
                document, before = self._empty(), self._encode(self._empty())
            else:
                document = self._decode(before)
            yield document
            data = self._encode(document)
            if data != before:
                self._write(data, under_lock=True)
        finally:
            release_lock(fd)

    def write(self, document: T) -> None:
        """Replace the document without the lock: for a document each of whose writers writes
        a whole value of its own (a receipt), where the last rename wins.

        Raises:
            the document's ``too_large`` and ``unsaved`` faults.
        """
        self._prepare_folder()
        self._write(self._encode(document), under_lock=False)

    def _prepare_folder(self) -> None:
        if self._guard is not None:
            self._guard()
        try:
            private_folder(self.path.parent, parents=self._parents)
        except OSError as error:
            raise self._faults.unsaved() from error
        if self._guard is not None:
            self._guard()  # again: a symlink may have been swapped in meanwhile

    def _take_lock(self) -> int:
        faults = self._faults
        try:
            return take_lock(self.lock_path, self._lock_timeout)
        except BusyError:
            raise faults.busy() from None
        except SourceError:
            raise faults.unsafe() from None
        except OSError as error:
            fault = faults.unsafe if error.errno == errno.ELOOP else faults.unsaved
            raise fault() from error

    def _write(self, data: bytes, *, under_lock: bool) -> None:
        if len(data) > self._limit:
            raise self._faults.too_large()
        if under_lock:
            # A leftover costs disk space only (the next change retries): never a failed write.
            with contextlib.suppress(OSError):
                remove_staging(self.path)
        try:
            atomic_write(self.path, data)
        except OSError as error:
            raise self._faults.unsaved() from error

    def __repr__(self) -> str:
        return f"JsonFile({str(self.path)!r})"
