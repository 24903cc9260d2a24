"""Reading every stored blob back, as ``doctor`` does: checksums and parses, nothing else."""

from __future__ import annotations

from memquill.index._codec import CorruptBlob, decode_matrix, decode_postings
from memquill.index._db import IndexDatabase, row_checksum

__all__ = ["verify_blobs"]


def verify_blobs(database: IndexDatabase) -> list[str]:
    """Problems with any postings blob, chunk matrix or row checksum (empty: all sound)."""
    problems: list[str] = []
    with database.reading() as connection:
        for term, seg, blob in connection.execute("SELECT term, seg, data FROM postings"):
            try:
                decode_postings(bytes(blob))
            except CorruptBlob as error:
                problems.append(f"postings of {term!r} in segment {seg}: {error}")
        for row in connection.execute(
            "SELECT id, path, size, mtime, ino, ctime, dev, seen, bytes, length, tags, day, seg, "
            "crc, matrix FROM docs"
        ):
            if row_checksum(row) != row[13]:
                problems.append(f"row of note {row[1]!r}: checksum")
            try:
                decode_matrix(bytes(row[14]))
            except CorruptBlob as error:
                problems.append(f"chunk matrix of note {row[1]!r}: {error}")
    return problems[:20]
