"""Every error memquill raises on purpose, under one root.

::

    MemquillError                    root: catch this to catch everything memquill means to raise
    ├── MemoryRecordError            a records-store operation failed; ``code`` is one of nine
    │   ├── ConflictError            conflict     the store changed under you: re-read, then retry
    │   ├── InvalidInputError        invalid      bad content, source, batch, key or argument
    │   ├── SecretError              secret       the content holds credential material
    │   ├── UnsafePathError          unsafe_path  the workspace or memory path is not safe to use
    │   ├── BusyError                busy         another writer holds the lock
    │   ├── NotFoundError            not_found    no such (active) record
    │   ├── CapacityError            capacity     the 2 MiB store bound would be exceeded
    │   ├── CorruptError             corrupt      ``records.md`` is foreign or hand-edited
    │   └── StorageError             storage      an operating-system failure, wrapped
    ├── SourceError                  a workspace file could not be served to a query
    │   └── AccessDeniedError        the path is outside the workspace or private
    ├── BindingError                 scope_mismatch  a session cannot be bound to that workspace
    ├── JobLedgerError               the extraction job ledger cannot be used
    │   ├── JobCorruptError          job_corrupt      the ledger is not valid
    │   ├── JobLimitError            job_limit        5,000 turns or 4 MiB: extraction stopped
    │   ├── JobUnsafePathError       job_unsafe_path  ``.assistant`` or a ledger file is unsafe
    │   └── JobBusyError             job_busy         another process holds the ledger lock
    ├── ExtractionInvalidError       extraction_invalid  a model's answer broke the contract
    └── BlockedError                 blocked      a write a tombstone refused (nothing saved)

Codes and messages are a stable contract: tools, the CLI and every adapter show them verbatim,
and ``docs/errors.md`` lists them. :data:`ERRORS` is the one registry of codes: class, meaning
and the CLI's exit status for each; the texts are :class:`~memquill.foundation.messages.Messages`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Final, Literal

from memquill.foundation.messages import Messages

__all__ = [
    "ERRORS",
    "AccessDeniedError",
    "BindingError",
    "BlockedError",
    "BusyError",
    "CapacityError",
    "ConflictError",
    "CorruptError",
    "ErrorCode",
    "ErrorInfo",
    "ExtractionInvalidError",
    "InvalidInputError",
    "JobBusyError",
    "JobCorruptError",
    "JobLedgerError",
    "JobLimitError",
    "JobUnsafePathError",
    "MemoryRecordError",
    "MemquillError",
    "Messages",
    "NotFoundError",
    "SecretError",
    "SourceError",
    "StorageError",
    "UnsafePathError",
]

ErrorCode = Literal[
    "conflict",
    "invalid",
    "secret",
    "unsafe_path",
    "busy",
    "not_found",
    "capacity",
    "corrupt",
    "storage",
]


class MemquillError(Exception):
    """Root of every error memquill raises on purpose.

    Attributes:
        code: a stable, machine-readable identifier of the failure.
        message: the human-readable text, safe to show to a person or a model.
    """

    code: ClassVar[str] = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __reduce__(self) -> tuple[type[MemquillError], tuple[object, ...]]:
        return (type(self), (self.message,))

    @staticmethod
    def from_code(code: str, message: str) -> MemquillError:
        """The error class that carries ``code`` (:class:`MemquillError` for an unknown one)."""
        return _ALL_BY_CODE.get(code, MemquillError)(message)


class MemoryRecordError(MemquillError):
    """A records-store operation failed; nothing was written.

    ``code`` is one of :data:`ErrorCode`. Use :meth:`for_code` to build the subclass for a code.
    """

    code: ClassVar[ErrorCode]  # pyright: ignore[reportIncompatibleVariableOverride]

    @staticmethod
    def for_code(code: ErrorCode, message: str) -> MemoryRecordError:
        """Build the subclass that carries ``code``."""
        return _BY_CODE[code](message)


class ConflictError(MemoryRecordError):
    """The store (or the record) changed since the caller's revision; re-read, then retry."""

    code = "conflict"


class InvalidInputError(MemoryRecordError, ValueError):
    """Content, source, batch, key, revision or reservation is not acceptable."""

    code = "invalid"


class SecretError(MemoryRecordError, ValueError):
    """The content holds credential material; it was not saved.

    Attributes:
        kinds: the detector names that matched (never the matched text).
    """

    code = "secret"

    def __init__(self, message: str = Messages.SECRET, kinds: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.kinds = kinds

    def __reduce__(self) -> tuple[type[MemquillError], tuple[object, ...]]:
        return (type(self), (self.message, self.kinds))


class UnsafePathError(MemoryRecordError):
    """The workspace is relative or not a directory, or a memory path is a symlink or odd file."""

    code = "unsafe_path"


class BusyError(MemoryRecordError):
    """Another writer holds the lock (or it cannot be taken) within the wait allowed."""

    code = "busy"


class NotFoundError(MemoryRecordError, LookupError):
    """No record (or no active record) has that id or key.

    Attributes:
        current_id: when the id names a corrected version, the fact's current version.
        current_revision: that version's record revision.
    """

    code = "not_found"

    def __init__(
        self,
        message: str,
        current_id: str | None = None,
        current_revision: str | None = None,
    ) -> None:
        super().__init__(message)
        self.current_id = current_id
        self.current_revision = current_revision

    def __reduce__(self) -> tuple[type[MemquillError], tuple[object, ...]]:
        return (type(self), (self.message, self.current_id, self.current_revision))


class CapacityError(MemoryRecordError):
    """The store would exceed its 2 MiB bound, or the preflight reserve does not fit."""

    code = "capacity"


class CorruptError(MemoryRecordError):
    """``records.md`` is not a managed file or fails validation; it is never overwritten.

    Attributes:
        record_index: 0-based index of the first bad record block, when one can be named.
        imported: the file at fault is a copy given to import, not the store (so ``doctor``,
            which checks the store, cannot help).
    """

    code = "corrupt"

    def __init__(
        self, message: str, record_index: int | None = None, imported: bool = False
    ) -> None:
        super().__init__(message)
        self.record_index = record_index
        self.imported = imported

    def __reduce__(self) -> tuple[type[MemquillError], tuple[object, ...]]:
        return (type(self), (self.message, self.record_index, self.imported))


class StorageError(MemoryRecordError, OSError):
    """An operating-system failure (permissions, disk, missing workspace), wrapped."""

    code = "storage"


class SourceError(MemquillError):
    """A workspace file could not be served to a query (missing, unreadable, too large)."""

    code = "source"


class AccessDeniedError(SourceError, PermissionError):
    """The requested path is absolute, escapes the workspace, or is private."""

    code = "access_denied"


class BindingError(MemquillError):
    """A session cannot be bound to (or unbound from) that workspace's memory.

    Raised for a missing session id, a task session, a workspace that is not an existing
    absolute directory, or a bindings file that cannot be safely rewritten.
    """

    code = "scope_mismatch"


class JobLedgerError(MemquillError):
    """The extraction job ledger (``.assistant/memory-jobs.json``) cannot be used.

    Nothing was written. Memory itself is not affected: only automatic extraction waits.
    """


class JobCorruptError(JobLedgerError):
    """The ledger is not valid JSON of the ledger's format (it is never overwritten)."""

    code = "job_corrupt"


class JobLimitError(JobLedgerError):
    """The ledger holds 5,000 turns or jobs, or is over 4 MiB: extraction stopped here."""

    code = "job_limit"


class JobUnsafePathError(JobLedgerError):
    """``.assistant`` or a ledger file is a symlink or the wrong kind of file."""

    code = "job_unsafe_path"


class JobBusyError(JobLedgerError):
    """Another process kept the ledger's lock past the wait allowed."""

    code = "job_busy"


class ExtractionInvalidError(MemquillError, ValueError):
    """A model's extraction answer broke the contract; nothing of it was saved.

    The message names the rule and the item, never the answer's text.
    """

    code = "extraction_invalid"


class BlockedError(MemquillError):
    """A write the store answered ``blocked``: the fact (or its idempotency key) was corrected
    or forgotten before, so it is not saved again. Nothing was written.

    The write tools answer ``blocked`` in their receipt instead (it is the spec's status, not
    a failure); ``memquill remember`` raises this so a script sees its own exit status.
    """

    code = "blocked"


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """One stable error code: its class, what it means, and the ``memquill`` exit status.

    Attributes:
        code: the machine-readable code every surface shows.
        error: the class that carries it.
        summary: what the code means, for a person (each call site gives its own message).
        exit_status: the status ``memquill`` exits with when a command fails with it.
    """

    code: str
    error: type[MemquillError]
    summary: str
    exit_status: int


ERRORS: Final[Mapping[str, ErrorInfo]] = {
    info.code: info
    for info in (
        ErrorInfo("conflict", ConflictError, "the store changed: re-read, then retry", 10),
        ErrorInfo("invalid", InvalidInputError, "bad content, source, key or argument", 11),
        ErrorInfo("secret", SecretError, "the content holds credential material", 12),
        ErrorInfo("unsafe_path", UnsafePathError, "the workspace or memory path is unsafe", 13),
        ErrorInfo("busy", BusyError, "another writer holds the lock", 14),
        ErrorInfo("not_found", NotFoundError, "no such (active) record", 15),
        ErrorInfo("capacity", CapacityError, "the 2 MiB store bound would be exceeded", 16),
        ErrorInfo("corrupt", CorruptError, "records.md is foreign or hand-edited", 17),
        ErrorInfo("storage", StorageError, "an operating-system failure", 18),
        ErrorInfo("source", SourceError, "a workspace file could not be served", 19),
        ErrorInfo("access_denied", AccessDeniedError, "the path is outside or private", 20),
        ErrorInfo("scope_mismatch", BindingError, "the session cannot use that workspace", 21),
        ErrorInfo("job_corrupt", JobCorruptError, "the extraction job ledger is not valid", 22),
        ErrorInfo("job_limit", JobLimitError, "the extraction job ledger is full", 23),
        ErrorInfo("job_unsafe_path", JobUnsafePathError, "a ledger path is unsafe", 24),
        ErrorInfo("job_busy", JobBusyError, "another process holds the ledger lock", 25),
        ErrorInfo(
            "extraction_invalid", ExtractionInvalidError, "a model's answer broke the contract", 26
        ),
        ErrorInfo("blocked", BlockedError, "corrected or forgotten before: not saved again", 27),
    )
}
"""Every stable code, in documentation order (``docs/errors.md`` lists the same table)."""

_BY_CODE: Final[dict[str, type[MemoryRecordError]]] = {
    code: info.error for code, info in ERRORS.items() if issubclass(info.error, MemoryRecordError)
}

_ALL_BY_CODE: Final[dict[str, type[MemquillError]]] = {
    code: info.error for code, info in ERRORS.items()
}
