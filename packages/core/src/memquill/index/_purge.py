"""Taking a removed note out of its segment in the change that removes it.

A deleted or edited note must not leave its words behind as postings until its segment is
merged: within the same transaction as the removal, each postings blob of its segment that
holds it is rewritten without it (deleted when no other note holds the term), found through the
note's ``terms`` row, which is deleted too, and the segment's note table is rewritten without
it. Its id stays in ``gone``: other processes may hold the old blobs in their caches and drop
the id by that list (a rewritten blob only ever loses ids, so such a cache stays right).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from memquill.index._codec import decode_postings, decode_terms, encode_postings
from memquill.index._db import IndexDamaged
from memquill.index._manifest import decode_notes, encode_notes
from memquill.index._postings import drop_ids

__all__ = ["purge_segment"]


def purge_segment(connection: sqlite3.Connection, seg: int, ids: Iterable[int]) -> None:
    """Remove every trace of the notes ``ids`` from segment ``seg`` (inside a transaction).

    Raises:
        IndexDamaged: a note has no terms row, or a stored blob does not parse.
    """
    dead = set(ids)
    terms: set[str] = set()
    for doc_id in sorted(dead):
        row = connection.execute(
            "DELETE FROM terms WHERE id = ? RETURNING data", (doc_id,)
        ).fetchone()
        if row is None:
            raise IndexDamaged(f"no terms for {doc_id}")
        terms.update(decode_terms(bytes(row[0])))
    for term in sorted(terms):
        found = connection.execute(
            "SELECT rowid, data FROM postings WHERE term = ? AND seg = ?", (term, seg)
        ).fetchone()
        if found is None:
            continue  # only ever held by notes removed before
        rowid, postings = int(found[0]), decode_postings(bytes(found[1]))
        kept = drop_ids(postings, dead)
        if not kept.ids:
            connection.execute("DELETE FROM postings WHERE rowid = ?", (rowid,))
        elif kept is not postings:
            connection.execute(
                "UPDATE postings SET data = ? WHERE rowid = ?", (encode_postings(kept), rowid)
            )
    table = connection.execute("SELECT notes FROM segs WHERE seg = ?", (seg,)).fetchone()
    if table is not None:
        rows = decode_notes(bytes(table[0]), seg)
        left = [row for row in rows if row.id not in dead]
        if len(left) != len(rows):
            connection.execute("UPDATE segs SET notes = ? WHERE seg = ?", (encode_notes(left), seg))
