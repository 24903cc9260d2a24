"""The ledger on disk: ``.assistant/memory-jobs.json``, its two kernel locks, atomic rewrites.

- The ledger is a :class:`memquill.foundation.json_file.JsonFile`. Reads take no lock (a rewrite
  replaces the file atomically) and create nothing: a workspace whose ledger does not exist
  reads as an empty ledger, and viewing it leaves no trace.
- Every change is a short read-modify-write under a kernel lock on ``memory-jobs.json.lock``
  (freed by the kernel when its holder dies), written only when it changed something, whole:
  an exclusive ``0600`` staging file, synced, renamed over the ledger, the folder synced. A
  process killed at any moment leaves the old ledger or the new one. That lock is never held
  across a model call.
- A pass of the extraction runner holds a second lock, ``memory-jobs.json.runner``, claimed
  without waiting: one pass at a time per workspace across every process.
- ``.assistant`` must be a real folder and each file a regular file (never a symlink):
  anything else is ``job_unsafe_path``. The folder is private: no query ever reads it.
"""

from __future__ import annotations

import os
import stat
import threading
from collections import OrderedDict
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Final

from memquill.errors import (
    JobBusyError,
    JobLimitError,
    JobUnsafePathError,
    MemquillError,
    Messages,
    StorageError,
)
from memquill.foundation.json_file import Faults, JsonFile
from memquill.foundation.kernel_lock import release_lock, take_lock
from memquill.lifecycle._codec import decode_ledger, encode_ledger
from memquill.lifecycle._model import MAX_LEDGER_BYTES, Ledger
from memquill.paths import canonical_workspace

LEDGER_DIR: Final = ".assistant"
LEDGER_NAME: Final = "memory-jobs.json"
LEDGER_PATH: Final = f"{LEDGER_DIR}/{LEDGER_NAME}"
"""Where the ledger lives, relative to the workspace."""
_CACHED_LEDGERS: Final = 32

# The last bytes read or written per ledger path, and what they decode to: a read whose bytes
# are the same skips decoding and validation (bytes, not file metadata, decide: a same-size
# rewrite within the clock's granularity is still seen).
_CACHE: Final[OrderedDict[Path, tuple[bytes, Ledger]]] = OrderedDict()
_CACHE_LOCK: Final = threading.Lock()
_FAULTS: Final = Faults(
    unsafe=partial(JobUnsafePathError, Messages.JOBS_UNSAFE_PATH),
    too_large=partial(JobLimitError, Messages.JOBS_LIMIT),
    unreadable=partial(StorageError, Messages.JOBS_READ_FAILED),
    unsaved=partial(StorageError, Messages.JOBS_SAVE_FAILED),
    busy=partial(JobBusyError, Messages.JOBS_BUSY),
)


@dataclass(frozen=True, slots=True)
class LedgerFile:
    """The ledger of one workspace.

    Attributes:
        root: the canonical workspace.
        lock_timeout: seconds a change waits for another process's change (then ``job_busy``).
    """

    root: Path
    lock_timeout: float = 5.0
    _file: JsonFile[Ledger] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        path = self.path
        ledger_file = JsonFile(
            path,
            decode=partial(_decoded, path),
            encode=partial(_encoded, path),
            empty=Ledger,
            faults=_FAULTS,
            limit=MAX_LEDGER_BYTES,
            lock_timeout=self.lock_timeout,
            parents=False,
            guard=self._check_paths,
        )
        object.__setattr__(self, "_file", ledger_file)

    @classmethod
    def of(cls, workspace: str | os.PathLike[str], lock_timeout: float = 5.0) -> LedgerFile:
        """The ledger of ``workspace``.

        Raises:
            UnsafePathError: the workspace is relative or not a directory.
            StorageError: it does not exist.
        """
        return cls(canonical_workspace(workspace), lock_timeout)

    @property
    def directory(self) -> Path:
        """``<workspace>/.assistant``."""
        return self.root / LEDGER_DIR

    @property
    def path(self) -> Path:
        """``<workspace>/.assistant/memory-jobs.json``."""
        return self.directory / LEDGER_NAME

    def exists(self) -> bool:
        """Whether a ledger was ever written (an unsafe path counts as existing)."""
        try:
            os.lstat(self.path)
        except FileNotFoundError:
            return False
        except OSError:
            return True
        return True

    def read(self) -> Ledger:
        """The ledger as it is now (empty when missing). Creates nothing, takes no lock.

        Raises:
            JobCorruptError, JobLimitError, JobUnsafePathError, StorageError.
        """
        return self._file.read()

    @contextmanager
    def change(self) -> Generator[Ledger]:
        """Read the ledger under the change lock; what the block leaves in it is written.

        Nothing is written when the block raises or leaves the ledger as it was.

        Raises:
            JobBusyError: another process kept the lock past ``lock_timeout``.
            JobCorruptError, JobLimitError (also when the result would exceed 4 MiB),
            JobUnsafePathError, StorageError.
        """
        with self._file.change() as ledger:
            yield ledger

    @contextmanager
    def runner_claim(self) -> Generator[bool]:
        """Claim the runner lock without waiting; yields whether this caller holds it."""
        self._check_paths()
        fd: int | None = None
        if self.directory.is_dir():
            try:
                fd = take_lock(self.directory / f"{LEDGER_NAME}.runner", 0.0)
            except (OSError, MemquillError):
                fd = None  # held by another pass, or unusable: no pass here
        try:
            yield fd is not None
        finally:
            if fd is not None:
                release_lock(fd)

    def _check_paths(self) -> None:
        checks = (
            (self.directory, stat.S_ISDIR),
            (self.path, stat.S_ISREG),
            (self.directory / f"{LEDGER_NAME}.lock", stat.S_ISREG),
            (self.directory / f"{LEDGER_NAME}.runner", stat.S_ISREG),
        )
        for path, is_kind in checks:
            try:
                mode = os.lstat(path).st_mode
            except FileNotFoundError:
                if path == self.directory:
                    return  # nothing inside a missing folder
                continue
            except OSError as error:
                raise StorageError(Messages.JOBS_READ_FAILED) from error
            if not is_kind(mode):
                raise JobUnsafePathError(Messages.JOBS_UNSAFE_PATH)


def _decoded(path: Path, data: bytes) -> Ledger:
    with _CACHE_LOCK:
        cached = _CACHE.get(path)
    if cached is not None and cached[0] == data:
        return _copy(cached[1])
    ledger = decode_ledger(data)
    _remember(path, data, ledger)
    return _copy(ledger)


def _encoded(path: Path, ledger: Ledger) -> bytes:
    data = encode_ledger(ledger)
    _remember(path, data, ledger)  # the bytes this ledger is written as decode to it
    return data


def _remember(path: Path, data: bytes, ledger: Ledger) -> None:
    with _CACHE_LOCK:
        _CACHE[path] = (data, _copy(ledger))
        _CACHE.move_to_end(path)
        while len(_CACHE) > _CACHED_LEDGERS:
            _CACHE.popitem(last=False)


def _copy(ledger: Ledger) -> Ledger:
    """A copy a caller may change (jobs and references are immutable; containers are not)."""
    return Ledger(
        list(ledger.turns),
        dict(ledger.counters),
        list(ledger.jobs),
        {session: list(refs) for session, refs in ledger.pending_sources.items()},
    )
