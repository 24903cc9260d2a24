"""The job ledger: turns, sources and jobs as data, their strict JSON, and the file on disk.

The ledger holds references only: turn ids (hashes), session and message ids, statuses, times,
counters and a keyed model fingerprint. Never a word of the conversation, never a key. Its
shape (``docs/extraction.md``)::

    {"version": 1,
     "turns": ["<sha256 of session:assistant message id>", ...],          # <= 5000, never pruned
     "counters": {"<session id>": <committed turns of that session>},
     "pendingSources": {"<session id>": [{"userMessageId", "assistantMessageId"}, ...]},
     "jobs": [{"id", "sessionId", "userMessageId", "assistantMessageId", "providerId",
               "status", "reason"?, "updatedAt", "routeFingerprint"?, "retryAt"?, "sources"?,
               "requiresConfigurationChange"?, "storageBlockedRevision"?, "attempts"?}, ...]}
"""

from __future__ import annotations

import json
import os
import re
import stat
import threading
from collections import OrderedDict
from collections.abc import Generator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, Final, Literal, cast

from memquill.errors import (
    JobBusyError,
    JobCorruptError,
    JobLimitError,
    JobUnsafePathError,
    MemquillError,
    Messages,
    StorageError,
)
from memquill.foundation.json_file import Faults, JsonFile
from memquill.foundation.kernel_lock import release_lock, take_lock
from memquill.jsondoc import parse_json
from memquill.paths import canonical_workspace
from memquill.store import sha256_hex

MAX_TURNS: Final = 5000
"""Committed turns a workspace's ledger records; past it, extraction stops (``job_limit``)."""
MAX_JOBS: Final = 5000
"""Jobs a ledger holds (a job closes at most every third turn, so turns run out first)."""
MAX_LEDGER_BYTES: Final = 4 * 1024 * 1024
"""The largest ledger file read (4 MiB)."""
MAX_SOURCES: Final = 3
"""Source turns in one batch, and pending sources per session."""
BATCH_TURNS: Final = 3
"""Every third committed turn of a session closes a batch."""
MAX_ATTEMPTS: Final = 3
"""Paid model calls a job may spend, over its whole life."""

JobStatus = Literal[
    "pending", "running", "completed", "nothing", "unavailable", "failed", "cooldown", "skipped"
]
JOB_STATUSES: Final[frozenset[str]] = frozenset(
    {"pending", "running", "completed", "nothing", "unavailable", "failed", "cooldown", "skipped"}
)
ELIGIBLE: Final[frozenset[str]] = frozenset(
    {"pending", "running", "unavailable", "failed", "cooldown"}
)
"""Statuses a pass picks up again; ``completed``, ``nothing`` and ``skipped`` are final."""


def turn_id(session_id: str, assistant_message_id: str) -> str:
    """The id of the turn the assistant message ``assistant_message_id`` closed: the sha256 of
    ``session id + ":" + assistant message id`` (also the id of the job that turn closed)."""
    return sha256_hex(f"{session_id}:{assistant_message_id}")


@dataclass(frozen=True, slots=True)
class SourceRef:
    """One source turn of a batch: the user message and the assistant reply that answered it."""

    user_message_id: str
    assistant_message_id: str


@dataclass(frozen=True, slots=True)
class Job:
    """One batch of up to three committed turns, and how its extraction stands.

    Attributes:
        id: the batch-closing turn's id; also the base of the records' idempotency keys.
        session_id, user_message_id, assistant_message_id: the batch-closing turn.
        provider_id: the model's readable label at the last attempt (``none`` without a model).
        status: see :data:`JobStatus`.
        reason: why it has that status (``docs/extraction.md`` lists every reason).
        updated_at: ISO-8601 UTC; set on every status change, and the scheduling order.
        route_fingerprint: the keyed fingerprint of the model configuration last tried.
        retry_at: not before this time (milliseconds since the epoch), while the fingerprint
            still matches.
        sources: the batch's source turns (1–3).
        requires_configuration_change: credentials were refused: wait for another
            configuration.
        storage_blocked_revision: the storage signature when storage failed; the job waits
            until it changes.
        attempts: paid model calls spent (0–3), counted before each call.
    """

    id: str
    session_id: str
    user_message_id: str
    assistant_message_id: str
    provider_id: str
    status: JobStatus
    updated_at: str
    reason: str | None = None
    route_fingerprint: str | None = None
    retry_at: int | None = None
    sources: tuple[SourceRef, ...] = ()
    requires_configuration_change: bool = False
    storage_blocked_revision: str | None = None
    attempts: int = 0

    @property
    def refs(self) -> tuple[SourceRef, ...]:
        """The batch's sources (a job without ``sources`` stands for its own turn)."""
        return self.sources or (SourceRef(self.user_message_id, self.assistant_message_id),)

    def evolve(self, **changes: object) -> Job:
        """A copy with ``changes`` applied."""
        return replace(self, **changes)  # pyright: ignore[reportArgumentType]


@dataclass(slots=True)
class Ledger:
    """The whole ledger, as read (mutable inside a ledger transaction only)."""

    turns: list[str] = field(default_factory=list[str])
    counters: dict[str, int] = field(default_factory=dict[str, int])
    jobs: list[Job] = field(default_factory=list[Job])
    pending_sources: dict[str, list[SourceRef]] = field(default_factory=dict[str, list[SourceRef]])

    def job(self, job_id: str) -> Job | None:
        """The job with ``job_id``, if any."""
        return next((job for job in self.jobs if job.id == job_id), None)

    def replace_job(self, job: Job) -> None:
        """Put ``job`` in place of the job with its id."""
        for index, existing in enumerate(self.jobs):
            if existing.id == job.id:
                self.jobs[index] = job
                return
        raise KeyError(job.id)

    @property
    def pending_turns(self) -> int:
        """Source turns waiting for their batch to close, over all sessions."""
        return sum(len(refs) for refs in self.pending_sources.values())


# ----------------------------------------------------------------------------------------------
# Reading and writing the ledger's JSON, strictly.
#
# Every field is checked on read: a wrong type, an unknown key, an out-of-range number, a
# string that could carry text (longer than an id, with control characters), a turn id that is
# not a sha256 (64 lowercase hex digits), or a job whose id is not the id of its own closing turn
# (``sha256(session id + ":" + assistant message id)``, which also keys its records, so a
# rewritten id would ask the model again and save the batch twice) makes the whole file
# ``job_corrupt``; more than 5,000 turns or jobs, or a file over 4 MiB, is ``job_limit``. Unknown
# keys are refused rather than kept, so nothing but references can ever sit in the file.


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


# ----------------------------------------------------------------------------------------------
# The ledger on disk: ``.assistant/memory-jobs.json``, its two kernel locks, atomic rewrites.
#
# - The ledger is a :class:`memquill.foundation.json_file.JsonFile`. Reads take no lock (a rewrite
#   replaces the file atomically) and create nothing: a workspace whose ledger does not exist
#   reads as an empty ledger, and viewing it leaves no trace.
# - Every change is a short read-modify-write under a kernel lock on ``memory-jobs.json.lock``
#   (freed by the kernel when its holder dies), written only when it changed something, whole:
#   an exclusive ``0600`` staging file, synced, renamed over the ledger, the folder synced. A
#   process killed at any moment leaves the old ledger or the new one. That lock is never held
#   across a model call.
# - A pass of the extraction runner holds a second lock, ``memory-jobs.json.runner``, claimed
#   without waiting: one pass at a time per workspace across every process.
# - ``.assistant`` must be a real folder and each file a regular file (never a symlink):
#   anything else is ``job_unsafe_path``. The folder is private: no query ever reads it.


LEDGER_DIR: Final = ".assistant"
LEDGER_NAME: Final = "memory-jobs.json"
LEDGER_PATH: Final = f"{LEDGER_DIR}/{LEDGER_NAME}"
"""Where the ledger lives, relative to the workspace."""
_CACHED_LEDGERS: Final = 32

# The last bytes read or written per ledger path, and what they decode to: a read whose bytes
# are the same skips decoding and validation (bytes, not file metadata, decide: a same-size
# rewrite within the clock's granularity is still seen).
_CACHE: Final[OrderedDict[Path, tuple[bytes, Ledger]]] = OrderedDict()
_CACHE_LOCK: Final = threading.Lock()
_FAULTS: Final = Faults(
    unsafe=partial(JobUnsafePathError, Messages.JOBS_UNSAFE_PATH),
    too_large=partial(JobLimitError, Messages.JOBS_LIMIT),
    unreadable=partial(StorageError, Messages.JOBS_READ_FAILED),
    unsaved=partial(StorageError, Messages.JOBS_SAVE_FAILED),
    busy=partial(JobBusyError, Messages.JOBS_BUSY),
)


@dataclass(frozen=True, slots=True)
class LedgerFile:
    """The ledger of one workspace.

    Attributes:
        root: the canonical workspace.
        lock_timeout: seconds a change waits for another process's change (then ``job_busy``).
    """

    root: Path
    lock_timeout: float = 5.0
    _file: JsonFile[Ledger] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        path = self.path
        ledger_file = JsonFile(
            path,
            decode=partial(_decoded, path),
            encode=partial(_encoded, path),
            empty=Ledger,
            faults=_FAULTS,
            limit=MAX_LEDGER_BYTES,
            lock_timeout=self.lock_timeout,
            parents=False,
            guard=self._check_paths,
        )
        object.__setattr__(self, "_file", ledger_file)

    @classmethod
    def of(cls, workspace: str | os.PathLike[str], lock_timeout: float = 5.0) -> LedgerFile:
        """The ledger of ``workspace``.

        Raises:
            UnsafePathError: the workspace is relative or not a directory.
            StorageError: it does not exist.
        """
        return cls(canonical_workspace(workspace), lock_timeout)

    @property
    def directory(self) -> Path:
        """``<workspace>/.assistant``."""
        return self.root / LEDGER_DIR

    @property
    def path(self) -> Path:
        """``<workspace>/.assistant/memory-jobs.json``."""
        return self.directory / LEDGER_NAME

    def exists(self) -> bool:
        """Whether a ledger was ever written (an unsafe path counts as existing)."""
        try:
            os.lstat(self.path)
        except FileNotFoundError:
            return False
        except OSError:
            return True
        return True

    def read(self) -> Ledger:
        """The ledger as it is now (empty when missing). Creates nothing, takes no lock.

        Raises:
            JobCorruptError, JobLimitError, JobUnsafePathError, StorageError.
        """
        return self._file.read()

    @contextmanager
    def change(self) -> Generator[Ledger]:
        """Read the ledger under the change lock; what the block leaves in it is written.

        Nothing is written when the block raises or leaves the ledger as it was.

        Raises:
            JobBusyError: another process kept the lock past ``lock_timeout``.
            JobCorruptError, JobLimitError (also when the result would exceed 4 MiB),
            JobUnsafePathError, StorageError.
        """
        with self._file.change() as ledger:
            yield ledger

    @contextmanager
    def runner_claim(self) -> Generator[bool]:
        """Claim the runner lock without waiting; yields whether this caller holds it."""
        self._check_paths()
        fd: int | None = None
        if self.directory.is_dir():
            try:
                fd = take_lock(self.directory / f"{LEDGER_NAME}.runner", 0.0)
            except (OSError, MemquillError):
                fd = None  # held by another pass, or unusable: no pass here
        try:
            yield fd is not None
        finally:
            if fd is not None:
                release_lock(fd)

    def _check_paths(self) -> None:
        checks = (
            (self.directory, stat.S_ISDIR),
            (self.path, stat.S_ISREG),
            (self.directory / f"{LEDGER_NAME}.lock", stat.S_ISREG),
            (self.directory / f"{LEDGER_NAME}.runner", stat.S_ISREG),
        )
        for path, is_kind in checks:
            try:
                mode = os.lstat(path).st_mode
            except FileNotFoundError:
                if path == self.directory:
                    return  # nothing inside a missing folder
                continue
            except OSError as error:
                raise StorageError(Messages.JOBS_READ_FAILED) from error
            if not is_kind(mode):
                raise JobUnsafePathError(Messages.JOBS_UNSAFE_PATH)


def _decoded(path: Path, data: bytes) -> Ledger:
    with _CACHE_LOCK:
        cached = _CACHE.get(path)
    if cached is not None and cached[0] == data:
        return _copy(cached[1])
    ledger = decode_ledger(data)
    _remember(path, data, ledger)
    return _copy(ledger)


def _encoded(path: Path, ledger: Ledger) -> bytes:
    data = encode_ledger(ledger)
    _remember(path, data, ledger)  # the bytes this ledger is written as decode to it
    return data


def _remember(path: Path, data: bytes, ledger: Ledger) -> None:
    with _CACHE_LOCK:
        _CACHE[path] = (data, _copy(ledger))
        _CACHE.move_to_end(path)
        while len(_CACHE) > _CACHED_LEDGERS:
            _CACHE.popitem(last=False)


def _copy(ledger: Ledger) -> Ledger:
    """A copy a caller may change (jobs and references are immutable; containers are not)."""
    return Ledger(
        list(ledger.turns),
        dict(ledger.counters),
        list(ledger.jobs),
        {session: list(refs) for session, refs in ledger.pending_sources.items()},
    )
