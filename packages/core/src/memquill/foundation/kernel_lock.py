"""Kernel locks on files, and how a writer waits for one: inside the kernel, until a deadline.

Every lock memquill takes is an exclusive ``portalocker`` (``flock``) lock on a regular file:
the records store's writer lock, the job ledger's change and runner locks, the bindings lock.
The operating system frees it the moment its holder dies, so no stale lock is ever left behind
and no lease, timeout or heartbeat is needed. :func:`take_lock` opens the lock file (created
``0600``, never through a symlink, never blocking on a FIFO) and waits for it;
:func:`release_lock` lets go.

Polling with back-off was unfair: a writer saving in a loop took the lock again and again
while the others slept up to 50 ms between tries (one call waited 1.5 s behind 8 writers). A
writer that finds the lock taken now makes a blocking lock request, which the kernel grants
the moment the holder lets go, to one of the writers then waiting.

The request runs in a helper thread on a duplicate of the lock's descriptor, so the caller can
stop waiting at its deadline. Both descriptors name one open file, so a lock granted to the
helper is the caller's. A caller that gives up leaves its request in the kernel (a blocked
call cannot be withdrawn) but drops every reference to the open file except the request's
own, so a grant after that frees the lock again as the call returns. Where the kernel cannot
be asked to wait (Windows), the wait polls.

``preflight`` and ``doctor`` only look: they take the lock shared for a moment (:func:`probe`);
so does a store read that met a write in progress, waiting for the writer to finish
(``wait_for_lock(..., shared=True)``).
A writer that finds the lock held shared knows no writer holds it and waits the probe out,
whatever its own timeout.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Final

from memquill.errors import BusyError, Messages
from memquill.owner_only import FILE_MODE
from memquill.paths import open_regular

if TYPE_CHECKING:
    # Imported where a lock is taken: a process that only reads never loads it (it pulls in
    # ``logging`` and ``importlib.metadata``; issue 36).
    import portalocker

__all__ = [
    "PROBE_PATIENCE",
    "PROBE_SHARED",
    "probe",
    "release_lock",
    "take_lock",
    "wait_for_lock",
]

PROBE_PATIENCE: Final = 0.25
"""Seconds any writer waits for a lock that only probes hold."""
PROBE_SHARED: Final = os.name == "posix"
"""Whether a probe takes the lock shared (where the kernel has shared locks; else exclusive)."""
# Requests abandoned behind a holder that never lets go (a stopped process) stay blocked in
# their threads; past this many, further waits poll instead of adding threads.
_MAX_PENDING: Final = 16
_FIRST_POLL: Final = 0.001
_LONGEST_POLL: Final = 0.05


def wait_for_lock(fd: int, timeout: float, *, shared: bool = False) -> None:
    """Take the exclusive lock on ``fd`` within ``timeout`` seconds (``shared``: the lock a
    probe takes, granted once no writer holds it).

    A lock held only by probes (``preflight`` and ``doctor`` hold it shared, for a moment) is
    waited for up to :data:`PROBE_PATIENCE` even when ``timeout`` is shorter, so a writer
    that must not wait for another writer (``timeout`` 0) is never made busy by a probe.

    Raises:
        BusyError: the deadline passed, or the lock cannot be taken at all.
    """
    import portalocker

    mode = _probe_mode() if shared else portalocker.LOCK_EX
    if _try(fd, mode):
        return
    if not shared and timeout < PROBE_PATIENCE and _only_probes(fd):
        timeout = PROBE_PATIENCE
    if timeout <= 0:
        raise BusyError(Messages.LOCK_HELD)  # a writer holds it and the caller will not wait
    deadline = time.monotonic() + timeout
    if os.name == "posix" and _KernelWait.pending < _MAX_PENDING:
        try:
            waiter = _KernelWait(fd, mode)
        except OSError:
            pass  # no descriptor to spare: poll
        else:
            waiter.wait(timeout)
            return
    _poll(fd, deadline, mode)


def take_lock(path: Path, timeout: float) -> int:
    """The exclusive lock on the file ``path`` (created ``0600`` when missing), waited for up
    to ``timeout`` seconds (:func:`wait_for_lock`); its descriptor, for :func:`release_lock`.

    Raises:
        SourceError: ``path`` is not a regular file. OSError: it cannot be opened (``ELOOP``:
            a symlink). BusyError: the lock stayed held, or cannot be taken at all.
    """
    fd = open_regular(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        wait_for_lock(fd, timeout)
    except BaseException:
        os.close(fd)
        raise
    return fd


def release_lock(fd: int) -> None:
    """Let go of a lock :func:`take_lock` took (closing the descriptor frees it in any case)."""
    import portalocker

    try:
        portalocker.unlock(fd)
    except portalocker.LockException:
        pass  # closing the descriptor below frees the lock anyway
    finally:
        os.close(fd)


def probe(fd: int) -> bool:
    """Whether a writer holds the lock on ``fd`` (taken shared for a moment where possible, so
    probes never exclude each other and writers can tell them from writers)."""
    import portalocker

    if not _try(fd, _probe_mode()):
        return True
    portalocker.unlock(fd)
    return False


def _only_probes(fd: int) -> bool:
    """Whether the lock is held only shared (by probes), not by a writer."""
    import portalocker

    if not PROBE_SHARED or not _try(fd, portalocker.LOCK_SH):
        return False
    portalocker.unlock(fd)
    return True


def _probe_mode() -> portalocker.LockFlags:
    """How a probe takes the lock (:data:`PROBE_SHARED`)."""
    import portalocker

    return portalocker.LOCK_SH if PROBE_SHARED else portalocker.LOCK_EX


def _try(fd: int, mode: portalocker.LockFlags) -> bool:
    import portalocker

    try:
        portalocker.lock(fd, mode | portalocker.LOCK_NB)
    except portalocker.AlreadyLocked:
        return False
    except portalocker.LockException as error:
        raise BusyError(Messages.LOCK_HELD) from error
    return True


class _KernelWait:
    """One blocking lock request, made by a helper thread, that the caller may abandon."""

    pending: ClassVar[int] = 0
    """Helper threads still blocked in a request (their callers may have given up)."""
    _count: ClassVar = threading.Lock()

    def __init__(self, fd: int, mode: portalocker.LockFlags) -> None:
        self._caller = fd
        self._mode = mode
        self._fd = os.dup(fd)
        self._state = threading.Lock()  # guards the flags and the helper's descriptor
        self._done = threading.Event()
        self._granted = False
        self._abandoned = False
        self._closed = False
        self._error: BaseException | None = None

    def wait(self, timeout: float) -> None:
        helper = threading.Thread(target=self._request, name="memquill-lock-wait", daemon=True)
        with _KernelWait._count:
            _KernelWait.pending += 1
        try:
            helper.start()
        except RuntimeError:  # no thread to spare: poll
            self._close()
            _poll(self._caller, time.monotonic() + timeout, self._mode)
            return
        self._done.wait(timeout)
        with self._state:
            if self._granted:
                return
            self._abandoned = True
            if not self._closed:
                # Point the helper's descriptor at a pipe: once the caller closes its own, the
                # request still waiting in the kernel holds the last reference to the lock
                # file, so a later grant frees the lock as the call returns, without waiting
                # for this process to run Python again. (A retried call locks the pipe.)
                read_end, write_end = os.pipe()
                os.dup2(read_end, self._fd)
                os.close(read_end)
                os.close(write_end)
        raise BusyError(Messages.LOCK_HELD) from self._error

    def _request(self) -> None:
        import portalocker

        try:
            portalocker.lock(self._fd, self._mode)
        except BaseException as error:  # noqa: BLE001  (handed to the waiting caller)
            self._error = error
        with self._state:
            self._granted = self._error is None and not self._abandoned
            # The caller's descriptor keeps a granted lock; an abandoned one is already free.
            self._close()
        self._done.set()

    def _close(self) -> None:
        os.close(self._fd)
        self._closed = True
        with _KernelWait._count:
            _KernelWait.pending -= 1


def _poll(fd: int, deadline: float, mode: portalocker.LockFlags) -> None:
    import portalocker

    wait = _FIRST_POLL
    while True:
        try:
            portalocker.lock(fd, mode | portalocker.LOCK_NB)
        except portalocker.AlreadyLocked:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise BusyError(Messages.LOCK_HELD) from None
            time.sleep(min(wait, remaining))
            wait = min(wait * 2, _LONGEST_POLL)
        except portalocker.LockException as error:
            raise BusyError(Messages.LOCK_HELD) from error
        else:
            return
