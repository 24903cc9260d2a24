"""Reading every stored blob back, as ``doctor`` does: checksums and parses, nothing else."""

from __future__ import annotations

from memquill.index._codec import CorruptBlob, decode_matrix, decode_postings
from memquill.index._db import IndexDatabase, row_checksum
from memquill.index._manifest import NoteRow, decode_notes

__all__ = ["verify_blobs"]


def verify_blobs(database: IndexDatabase) -> list[str]:
    """Problems with any postings blob, chunk matrix, note table or row (empty: all sound).

    Every live note of a segment's table must have its ``docs`` row, with the same values.
    """
    problems: list[str] = []
    with database.reading() as connection:
        for term, seg, blob in connection.execute("SELECT term, seg, data FROM postings"):
            try:
                decode_postings(bytes(blob))
            except CorruptBlob as error:
                problems.append(f"postings of {term!r} in segment {seg}: {error}")
        for doc_id, blob in connection.execute("SELECT id, data FROM matrices"):
            try:
                decode_matrix(bytes(blob))
            except CorruptBlob as error:
                problems.append(f"chunk matrix of note {doc_id}: {error}")
        rows: dict[int, tuple[object, ...]] = {}
        for row in connection.execute(
            "SELECT id, path, size, mtime, ino, ctime, dev, seen, seg, crc FROM docs"
        ):
            if row_checksum(row) != row[9]:
                problems.append(f"row of note {row[1]!r}: checksum")
            rows[int(row[0])] = tuple(row[:9])
        gone = {int(doc_id) for (doc_id,) in connection.execute("SELECT id FROM gone")}
        for seg, blob in connection.execute("SELECT seg, notes FROM segs"):
            try:
                notes = decode_notes(bytes(blob), int(seg))
            except CorruptBlob as error:
                problems.append(f"notes of segment {seg}: {error}")
                continue
            problems.extend(_disagreements(notes, rows, gone))
    return problems[:20]


def _disagreements(
    notes: list[NoteRow], rows: dict[int, tuple[object, ...]], gone: set[int]
) -> list[str]:
    found: list[str] = []
    for note in notes:
        if note.id in gone:
            continue
        expected = (note.id, note.path, *note.identity, note.seen, note.seg)
        if rows.get(note.id) != expected:
            found.append(f"row of note {note.path!r}: disagrees with its segment")
    return found
