"""The words the page shows: provenance, age, statuses and reasons, in plain English.

Codes stay in the JSON (and in a small ``code`` label on the page) so a person can look them up
in ``docs/errors.md``, but every message a person reads is a sentence.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Final

from memquill.store import JSONValue

STATUS_WORDS: Final[Mapping[str, str]] = {
    "active": "current",
    "superseded": "replaced by a correction",
    "revoked": "forgotten",
}

JOB_STATUSES: Final[Mapping[str, str]] = {
    "pending": "waiting",
    "running": "running",
    "completed": "saved facts",
    "nothing": "found nothing to remember",
    "unavailable": "unavailable",
    "failed": "failed",
    "cooldown": "cooling down",
    "skipped": "skipped",
}

JOB_REASONS: Final[Mapping[str, str]] = {
    "binding_unavailable": "the conversation is no longer bound to this workspace",
    "policy_blocked": "the conversation is in a read-only mode",
    "source_unavailable": "the messages can no longer be found",
    "source_changed": "the messages were edited while the model was answering",
    "source_revoked": "a fact from these messages was corrected or forgotten",
    "retry_exhausted": "three paid attempts were used; it will not be retried",
    "identity_unavailable": "the model's identity could not be established",
    "storage_capacity": "the records store is full",
    "storage_corrupt": "records.md cannot be read",
    "storage_unavailable": "the records store is unavailable",
    "storage_busy": "another writer held the records store",
    "extraction_or_storage_failed": "the model's answer or the save failed",
    "credentials_missing": "the model needs credentials; waiting for a configuration change",
    "provider_missing": "the model provider is no longer configured",
    "persistence_unavailable": "the model's settings could not be read",
    "runtime_unsupported": "this runtime cannot reach a model",
    "request_failed": "the model request failed",
    "empty_response": "the model answered with nothing",
    "cancelled": "the request was cancelled",
    "in_flight": "another request was already running",
    "configuration_required": "the model needs configuration",
}


def _text(source: Mapping[str, JSONValue], key: str) -> str | None:
    value = source.get(key)
    return value if isinstance(value, str) and value else None


def provenance(source: Mapping[str, JSONValue]) -> str:
    """Where a record came from, as a phrase: ``added by hand``, ``saved by a tool in …``."""
    kind = source.get("kind")
    session = _text(source, "sessionId")
    message = _text(source, "messageId")
    if kind == "manual":
        return "added by hand"
    if kind == "tool":
        return f"saved by a tool in session {session}" if session else "saved by a tool"
    if kind == "conversation":
        role = _text(source, "role")
        said = f" ({role} message)" if role else ""
        where = f"session {session}, message {message}" if session and message else "a chat"
        return f"extracted from {where}{said}"
    return f"source {kind!s}"


def age(timestamp: str, now: datetime) -> str:
    """How long ago ``timestamp`` was, coarsely: ``just now``, ``5 minutes ago``, ``3 days ago``."""
    try:
        then = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
        seconds = int((now - then).total_seconds())
    except (ValueError, TypeError):
        return "at an unknown time"
    for unit, size in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''} ago"
    return "just now"  # under a minute, or a clock that runs behind the file's
