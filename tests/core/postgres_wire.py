"""What the process says to a test database, read off the wire: libpq's trace of the pool's one
connection, each line split at its tabs (direction ``F``/``B``, length, message)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from psycopg import pq

from memquill.store._postgres_location import parse_location
from memquill.store._postgres_pool import pool_for


@contextmanager
def traced(url: str) -> Iterator[list[list[str]]]:
    """The trace of what the ``with`` block sent and received on ``url``'s database (the list
    yielded, filled at the end): the pool is left one connection, traced, and no other may be
    opened meanwhile (it would go untraced)."""
    pool = pool_for(parse_location(url))
    pool.close()
    lines: list[list[str]] = []
    with tempfile.TemporaryFile() as trace:
        with pool.connection() as connection:
            connection.pgconn.trace(trace.fileno())
            connection.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)
        opened = pool.opened
        try:
            yield lines
        finally:
            with pool.connection() as connection:
                connection.pgconn.untrace()
        assert pool.opened == opened, "a connection was opened beside the traced one"
        trace.seek(0)
        lines.extend(line.split("\t") for line in trace.read().decode().splitlines())
