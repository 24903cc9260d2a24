"""Reading and writing the ledger's JSON, strictly.

Every field is checked on read: a wrong type, an unknown key, an out-of-range number, a
string that could carry text (longer than an id, with control characters), a turn id that is
not a sha256 (64 lowercase hex digits), or a job whose id is not the id of its own closing turn
(``sha256(session id + ":" + assistant message id)``, which also keys its records, so a
rewritten id would ask the model again and save the batch twice) makes the whole file
``job_corrupt``; more than 5,000 turns or jobs, or a file over 4 MiB, is ``job_limit``. Unknown
keys are refused rather than kept, so nothing but references can ever sit in the file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final, cast

from memquill.errors import JobCorruptError, JobLimitError, Messages
from memquill.jsondoc import parse_json
from memquill.lifecycle._model import (
    JOB_STATUSES,
    MAX_ATTEMPTS,
    MAX_JOBS,
    MAX_SOURCES,
    MAX_TURNS,
    Job,
    JobStatus,
    Ledger,
    SourceRef,
    turn_id,
)

_VERSION: Final = 1
_MAX_ID_CHARS: Final = 200
_MAX_LABEL_CHARS: Final = 300
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")
_TURN_ID: Final = re.compile(r"[0-9a-f]{64}")
_TOP: Final = frozenset({"version", "turns", "counters", "jobs", "pendingSources"})
_REF: Final = frozenset({"userMessageId", "assistantMessageId"})
_JOB_REQUIRED: Final = (
    "id", "sessionId", "userMessageId", "assistantMessageId", "providerId", "status", "updatedAt",
)  # fmt: skip
_JOB_OPTIONAL: Final = frozenset(
    {
        "reason",
        "routeFingerprint",
        "retryAt",
        "sources",
        "requiresConfigurationChange",
        "storageBlockedRevision",
        "attempts",
    }
)


def valid_reference(value: object, limit: int = _MAX_ID_CHARS) -> bool:
    """Whether ``value`` can be a session or message id: 1–200 characters, no control ones."""
    return isinstance(value, str) and 0 < len(value) <= limit and not _CONTROL.search(value)


def decode_ledger(data: bytes) -> Ledger:
    """The ledger in ``data``.

    Raises:
        JobCorruptError: not JSON, or any field is not as the format says.
        JobLimitError: more than 5,000 turns or jobs.
    """
    try:
        document: object = parse_json(data.decode("utf-8"))
    except ValueError:  # not UTF-8, not JSON, or nested too deeply (jsondoc)
        raise JobCorruptError(Messages.JOBS_CORRUPT) from None
    top = _object(document, _TOP, required=("version", "turns", "counters", "jobs"))
    version: object = top["version"]
    if type(version) is not int or version != _VERSION:
        raise JobCorruptError(Messages.JOBS_CORRUPT)
    turns = _list(top["turns"])
    jobs = _list(top["jobs"])
    if len(turns) > MAX_TURNS or len(jobs) > MAX_JOBS:
        raise JobLimitError(Messages.JOBS_LIMIT)
    ledger = Ledger()
    for turn in turns:
        if not isinstance(turn, str) or not _TURN_ID.fullmatch(turn):
            raise JobCorruptError(Messages.JOBS_CORRUPT)
        ledger.turns.append(turn)
    for session, count in _mapping(top["counters"]).items():
        ledger.counters[_reference(session)] = _integer(count, 0, MAX_TURNS)
    for session, refs in _mapping(top.get("pendingSources", {})).items():
        ledger.pending_sources[_reference(session)] = _refs(refs, allow_empty=True)
    ledger.jobs.extend(_job(item) for item in jobs)
    return ledger


def encode_ledger(ledger: Ledger) -> bytes:
    """The ledger as compact JSON (key order fixed, so equal ledgers are equal bytes)."""
    parts = [
        '{"version":1,"turns":',
        _dumps(ledger.turns),
        ',"counters":',
        _dumps(ledger.counters),
        ',"jobs":[',
        ",".join(_job_text(job) for job in ledger.jobs),
        "]",
    ]
    if ledger.pending_sources:
        pending = {
            session: [_ref_json(ref) for ref in refs]
            for session, refs in ledger.pending_sources.items()
        }
        parts += [',"pendingSources":', _dumps(pending)]
    parts.append("}")
    return "".join(parts).encode("utf-8")


def _dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# Jobs are immutable and most of them never change again, so each one's JSON is kept, keyed by
# the object (the entry holds the job, so its id cannot be reused meanwhile): a ledger change
# then encodes only what changed, though the ledger can hold thousands of jobs.
_JOB_TEXT: Final[dict[int, tuple[Job, str]]] = {}
_MAX_JOB_TEXT: Final = 4 * MAX_JOBS


def _job_text(job: Job) -> str:
    entry = _JOB_TEXT.get(id(job))
    if entry is not None and entry[0] is job:
        return entry[1]
    if len(_JOB_TEXT) >= _MAX_JOB_TEXT:
        _JOB_TEXT.clear()
    text = _dumps(_job_json(job))
    _JOB_TEXT[id(job)] = (job, text)
    return text


def _job(value: object) -> Job:
    item = _object(value, frozenset(_JOB_REQUIRED) | _JOB_OPTIONAL, required=_JOB_REQUIRED)
    status = item["status"]
    if status not in JOB_STATUSES:
        raise JobCorruptError(Messages.JOBS_CORRUPT)
    flag = item.get("requiresConfigurationChange", False)
    if not isinstance(flag, bool):
        raise JobCorruptError(Messages.JOBS_CORRUPT)
    retry_at = item.get("retryAt")
    sources = item.get("sources")
    job = Job(
        id=_reference(item["id"]),
        session_id=_reference(item["sessionId"]),
        user_message_id=_reference(item["userMessageId"]),
        assistant_message_id=_reference(item["assistantMessageId"]),
        provider_id=_reference(item["providerId"], _MAX_LABEL_CHARS),
        status=cast(JobStatus, status),
        updated_at=_reference(item["updatedAt"]),
        reason=_optional_reference(item.get("reason")),
        route_fingerprint=_optional_reference(item.get("routeFingerprint")),
        retry_at=None if retry_at is None else _integer(retry_at, 0, 2**53),
        sources=() if sources is None else tuple(_refs(sources, allow_empty=False)),
        requires_configuration_change=flag,
        storage_blocked_revision=_optional_reference(item.get("storageBlockedRevision"), 2000),
        attempts=_integer(item.get("attempts", 0), 0, MAX_ATTEMPTS),
    )
    if job.id != turn_id(job.session_id, job.assistant_message_id):
        raise JobCorruptError(Messages.JOBS_CORRUPT)
    return job


def _job_json(job: Job) -> dict[str, object]:
    data: dict[str, object] = {
        "id": job.id,
        "sessionId": job.session_id,
        "userMessageId": job.user_message_id,
        "assistantMessageId": job.assistant_message_id,
        "providerId": job.provider_id,
        "status": job.status,
    }
    if job.reason is not None:
        data["reason"] = job.reason
    data["updatedAt"] = job.updated_at
    optional: tuple[tuple[str, object], ...] = (
        ("routeFingerprint", job.route_fingerprint),
        ("retryAt", job.retry_at),
        ("sources", [_ref_json(ref) for ref in job.sources] or None),
        ("requiresConfigurationChange", job.requires_configuration_change or None),
        ("storageBlockedRevision", job.storage_blocked_revision),
    )
    data.update((key, value) for key, value in optional if value is not None)
    data["attempts"] = job.attempts
    return data


def _ref_json(ref: SourceRef) -> dict[str, str]:
    return {"userMessageId": ref.user_message_id, "assistantMessageId": ref.assistant_message_id}


def _refs(value: object, *, allow_empty: bool) -> list[SourceRef]:
    items = _list(value)
    if len(items) > MAX_SOURCES or (not items and not allow_empty):
        raise JobCorruptError(Messages.JOBS_CORRUPT)
    refs: list[SourceRef] = []
    for item in items:
        ref = _object(item, _REF, required=tuple(sorted(_REF)))
        refs.append(
            SourceRef(_reference(ref["userMessageId"]), _reference(ref["assistantMessageId"]))
        )
    return refs


def _object(value: object, allowed: frozenset[str], *, required: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise JobCorruptError(Messages.JOBS_CORRUPT)
    mapping = cast("dict[str, Any]", value)
    if not mapping.keys() <= allowed or any(key not in mapping for key in required):
        raise JobCorruptError(Messages.JOBS_CORRUPT)
    return mapping


def _mapping(value: object) -> Mapping[str, object]:
    if not isinstance(value, dict):
        raise JobCorruptError(Messages.JOBS_CORRUPT)
    return cast("dict[str, object]", value)


def _list(value: object) -> list[object]:
    if not isinstance(value, list):
        raise JobCorruptError(Messages.JOBS_CORRUPT)
    return cast("list[object]", value)


def _reference(value: object, limit: int = _MAX_ID_CHARS) -> str:
    if not valid_reference(value, limit):
        raise JobCorruptError(Messages.JOBS_CORRUPT)
    return cast(str, value)


def _optional_reference(value: object, limit: int = _MAX_ID_CHARS) -> str | None:
    return None if value is None else _reference(value, limit)


def _integer(value: object, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise JobCorruptError(Messages.JOBS_CORRUPT)
    return value
