"""``Pool``: a process's connections to one PostgreSQL database, shared by all its workspaces.

A workspace's backend borrows a connection for one read or one write transaction and gives it
back; it never owns one. So an application with thousands of namespaces keeps a handful of
connections open, and pays for opening one (authentication included) only when every kept one
is in use or lost. The rules:

- One pool per process, connection string and idle timeout (:func:`pool_for`). A forked child
  never uses, nor closes, its parent's connections: the pool is found by process id, so the
  child opens its own (closing the parent's would end the parent's sessions on the server).
- At most :data:`POOL_SIZE` connections are open at once. A borrower finds an idle one (the
  most recently given back first), or opens one while below the bound, or waits for one to
  be given back, at most :data:`WAIT` seconds (then ``busy``).
- A connection goes back to the pool only if it is open, not broken and idle (no transaction
  open, no statement running). Anything else (lost, ended by the server, left inside a
  transaction by an interrupted statement) is closed and forgotten: a connection is never
  reused in the middle of a transaction, so a write lost with its connection is never
  completed by a later borrower.
- ``fresh=True`` opens a new connection rather than trusting an idle one (a retry after an
  idle one turned out to be gone, e.g. after a server restart); an idle one is closed to make
  room when the pool is full.

Opening is :func:`memquill.store._postgres_sql.connect`'s (its errors never quote the
connection string); checking the schema is the backend's, once per backend.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time
from collections.abc import Callable, Generator
from typing import Final, TypeVar

import psycopg
from psycopg import pq

from memquill.errors import BusyError, Messages, StorageError
from memquill.store._backend import Listing
from memquill.store._postgres_location import PostgresLocation
from memquill.store._postgres_sql import (
    Connection,
    close_quietly,
    connect,
    workspace_listing,
)

_T = TypeVar("_T")
POOL_SIZE: Final = 8
"""Connections a process keeps open to one database at most (borrowed and idle together)."""
WAIT: Final = 30.0
"""Seconds a borrower waits for a connection when all :data:`POOL_SIZE` are in use."""

_POOLS: dict[tuple[int, str, float], Pool] = {}


class Pool:
    """The connections of one process to one database (see the module docstring).

    Args:
        location: the database (its connection string and idle timeout; the workspace is not
            used).
        size: connections open at most.
    """

    def __init__(self, location: PostgresLocation, size: int = POOL_SIZE) -> None:
        self._location = location
        self._size = size
        self._pid = os.getpid()
        self._idle: list[Connection] = []
        self._open = 0  # borrowed and idle
        self._ready = threading.Condition(threading.Lock())
        self.opened = 0
        """Connections this pool has opened so far (each one an authentication)."""

    def __repr__(self) -> str:
        return f"Pool(open={self._open}, idle={len(self._idle)}, size={self._size})"

    @contextlib.contextmanager
    def connection(self, *, fresh: bool = False) -> Generator[Connection]:
        """A connection for the ``with`` block, given back (or closed) when it ends.

        Raises:
            BusyError: every connection stayed in use for :data:`WAIT` seconds.
            StorageError: a connection had to be opened and the database cannot be reached.
        """
        connection = self._borrow(fresh)
        try:
            yield connection
        finally:
            self._give_back(connection)

    def run(self, work: Callable[[Connection], _T]) -> _T:
        """``work`` on a connection; if the connection turns out to be gone (an idle one the
        server ended, or lost in a restart), once more on a newly opened one. For reads, and
        writes that cannot have been applied when the connection fails.

        Raises:
            psycopg.Error: as ``work`` raises it (a second ``OperationalError`` included).
            The errors of :meth:`connection`.
        """
        try:
            with self.connection() as connection:
                return work(connection)
        except psycopg.OperationalError:
            pass
        with self.connection(fresh=True) as connection:
            return work(connection)

    def close(self) -> None:
        """Close the idle connections (borrowed ones are closed when given back)."""
        with self._ready:
            idle, self._idle = self._idle, []
            self._open -= len(idle)
            self._ready.notify_all()
        if os.getpid() == self._pid:
            for connection in idle:
                close_quietly(connection)

    def _borrow(self, fresh: bool) -> Connection:
        deadline = time.monotonic() + WAIT
        with self._ready:
            while True:
                if self._idle and not fresh:
                    connection = self._idle.pop()
                    if _reusable(connection):
                        return connection
                    self._open -= 1
                    close_quietly(connection)
                    continue
                if self._open < self._size:
                    self._open += 1
                    break
                if self._idle:  # fresh, and the pool is full: make room
                    self._open -= 1
                    close_quietly(self._idle.pop(0))
                    continue
                left = deadline - time.monotonic()
                if left <= 0:
                    raise BusyError(Messages.DATABASE_BUSY)
                self._ready.wait(left)
        try:
            connection = connect(self._location)
        except BaseException:
            with self._ready:
                self._open -= 1
                self._ready.notify()
            raise
        with self._ready:
            self.opened += 1
        return connection

    def _give_back(self, connection: Connection) -> None:
        if os.getpid() != self._pid:
            return  # borrowed across a fork: the parent's session, never this process's
        keep = _reusable(connection)
        with self._ready:
            if keep:
                self._idle.append(connection)
            else:
                self._open -= 1
            self._ready.notify()
        if not keep:
            close_quietly(connection)


def pool_for(location: PostgresLocation) -> Pool:
    """This process's pool for ``location``'s database (made on first use)."""
    key = (os.getpid(), location.conninfo, location.idle_timeout)
    found = _POOLS.get(key)
    if found is None:
        if not _POOLS:
            # At exit the idle connections end their sessions rather than being dropped.
            atexit.register(close_pools)
        # setdefault is atomic: two threads making the first pool at once share one.
        found = _POOLS.setdefault(key, Pool(location))
    return found


def list_workspaces(location: PostgresLocation, prefix: str, held: str | None = None) -> Listing:
    """:func:`~memquill.store._postgres_sql.workspace_listing` on a connection of the pool:
    the mark of the workspace rows that start with ``prefix``, and their names, sorted,
    unless the mark is ``held`` (none before the schema exists; nothing is created).

    Raises:
        StorageError: the database cannot be reached or read.
    """
    try:
        return pool_for(location).run(
            lambda connection: workspace_listing(connection, prefix, held)
        )
    except psycopg.Error:
        raise StorageError(Messages.DATABASE_UNAVAILABLE) from None


def close_pools() -> None:
    """Close every idle connection this process keeps (the pools stay usable)."""
    pid = os.getpid()
    for key, pool in list(_POOLS.items()):
        if key[0] == pid:
            pool.close()


def _reusable(connection: Connection) -> bool:
    return (
        not connection.closed
        and not connection.broken
        and connection.info.transaction_status == pq.TransactionStatus.IDLE
    )
