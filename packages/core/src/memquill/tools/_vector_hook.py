"""A forget reaches semantic recall's vectors at the write: the one hook every write path calls.

Whatever forgets a fact — ``forget`` (a tool, the CLI, a key-value store's delete), a sync
merge or a resolved conflict copy that brings another machine's forget — calls
:func:`forget_revoked_vectors` with the records after its write, so the vectors of every
revoked version (as a record, ``r:<id>``, and as a store item, ``i:<id>``) are deleted from the
workspace's vector cache before the call returns (:func:`memquill.index.forget_vectors`), not
at the next semantic search. The cache is never the truth: a failure to change it is not the
write's, and the next semantic search deletes the rows (it never returns them meanwhile).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from memquill.errors import MemquillError
from memquill.index import forget_vectors
from memquill.paths import canonical_workspace
from memquill.store import Record
from memquill.tools._session import MemorySession


def forget_revoked_vectors(session: MemorySession, records: Iterable[Record]) -> None:
    """Delete the vectors of every revoked version in ``records`` from ``session``'s
    workspace's vector cache (if it has one)."""
    # Read only once the cache is known to exist: most workspaces have none, and a forget
    # then costs nothing here whatever the store holds.
    revoked = (record.id for record in records if record.status == "revoked")
    try:
        forget_vectors(canonical_workspace(session.workspace), revoked)
    except (sqlite3.Error, OSError, MemquillError):
        return  # the fact is forgotten either way (see the module doc)
