"""The page's writes, each with the source ``manual`` and the revision the person saw.

This is the one place the page reaches the write path, so every change a person makes in the
browser is checked exactly as the CLI's and the tools' are (content limits, secret detectors,
compare-and-swap under the writer lock).
"""

from __future__ import annotations

from datetime import datetime

from memquill.records import JSONValue, iso_timestamp, sha256_hex
from memquill.results import Candidate, WriteResult
from memquill.scope import MemorySession

__all__ = ["correct", "forget", "remember"]

KEY_PREFIX = "manual:page:"
"""Page keys live apart from the CLI's (``manual:<sha256>``) and the tools' (``tool:…``)."""


def _manual(now: datetime) -> dict[str, JSONValue]:
    return {"kind": "manual", "capturedAt": iso_timestamp(now)}


def remember(
    session: MemorySession, content: str, key: str, expected_revision: str, now: datetime
) -> tuple[WriteResult, str | None]:
    """Save ``content``; returns the result and the id of the active record that holds it."""
    candidate = Candidate(content, _manual(now), KEY_PREFIX + key)
    result = session.store.save([candidate], expected_revision)
    operation_hash = sha256_hex(candidate.idempotency_key)
    active = next(
        (
            record.id
            for record in result.records
            if record.operation_hash == operation_hash and record.status == "active"
        ),
        None,
    )
    return result, active


def correct(
    session: MemorySession, record_id: str, content: str, expected_revision: str, now: datetime
) -> WriteResult:
    """Replace the active fact ``record_id`` with ``content``."""
    return session.store.correct(record_id, content, expected_revision, _manual(now))


def forget(session: MemorySession, record_id: str, expected_revision: str) -> WriteResult:
    """Forget the fact ``record_id`` and every version of it."""
    return session.store.revoke(record_id, expected_revision)
