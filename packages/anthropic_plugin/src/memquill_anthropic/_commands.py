"""The six memory commands on a memquill session, each through the one write path.

Every write is computed from the current text and written with the record revision that text
was read at; the store compares that revision under its lock, so a write never lands on text it
did not see. When it changed meanwhile (``conflict``, or ``not_found`` when the file went), the
command reads again and applies itself again, up to 64 attempts: concurrent ``insert``s all
land, and a ``str_replace`` whose ``old_str`` is gone answers the reference's "did not appear
verbatim" instead of overwriting. A directory is deleted or moved in one write (every fact
under it, all or none).

``create`` saves with an idempotency key made of the path and the text, so a repeated create of
a file that was deleted since is blocked by the fact's tombstone and refused: a deleted file
never comes back from a retried command. A file moved or edited since is not deleted: the
create then chains a new idempotency key to the fact that took the old one, so the same text
may be created at that path again. Writes go out as ``tool`` writes of the session's id.

Failures are :class:`anthropic.lib.tools.ToolError`, which the SDK's tool runner sends back as
an ``is_error`` tool result with the text: the reference's wording for what the reference
refuses too (:mod:`._messages`), memquill's for the rest, including every
:class:`memquill.MemquillError` (a credential, the store's lock or limits, a read-only session).
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Callable, Generator
from contextlib import contextmanager
from typing import Final

from anthropic.lib.tools import ToolError
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from memquill import (
    ConflictError,
    InvalidInputError,
    MemorySession,
    MemquillError,
    NotFoundError,
    Record,
    SecretError,
    WriteSource,
    correct,
    remember,
)
from memquill.store import MAX_KEY_CHARS, FactKey
from memquill.tools import find_operation, forget_many, rename_many
from memquill_anthropic._files import MemoryFiles
from memquill_anthropic._messages import Texts
from memquill_anthropic._paths import ROOT, MemoryPath, key_of, parse_path
from memquill_anthropic._text import check_text, insert_text, numbered, replace_once

ATTEMPTS: Final = 64
"""How often a command reads and applies itself again when the file changed under it."""
_CREATE_PREFIX: Final = "memory-tool:create:"

Change = Callable[[str], tuple[str, str]]
"""A file's current text → its new text and the command's answer (raises ``ToolError``)."""


class MemoryCommands:
    """The commands of one session (each returns its answer or raises ``ToolError``).

    Args:
        session: whose workspace, and who writes (its session id is the writes' source).
    """

    def __init__(self, session: MemorySession) -> None:
        self.session = session

    @property
    def source(self) -> WriteSource:
        """What the writes record as their source: a tool write of the session."""
        return WriteSource("tool", session_id=self.session.session_id)

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        """A file's numbered lines, or a directory's listing."""
        path = parse_path(command.path)
        files = self._read(path)
        record = files.file(path)
        if record is not None:
            return numbered(command.path, record.content, command.view_range)
        if files.is_directory(path):
            return files.listing(path)
        raise ToolError(Texts.MISSING.format(path=command.path))

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        """A new file (an existing path is refused, as by the reference)."""
        path, text = parse_path(command.path), command.file_text
        base = _CREATE_PREFIX + hashlib.sha256(f"{path.key}\0{text}".encode()).hexdigest()
        operation = base

        def attempt() -> str | None:
            nonlocal operation
            files = self._read(path)
            if files.exists(path):
                raise ToolError(Texts.EXISTS.format(path=command.path))
            self._check_room(files, path)
            check_text(command.path, text)
            with _changed_on(ConflictError):  # created meanwhile: the next read says so
                outcome = remember(
                    self.session, text, source=self.source, idempotency_key=operation, key=path.key
                )
            if outcome.status == "saved":
                return Texts.CREATED.format(path=command.path)
            if outcome.status == "duplicate":  # this very create, run twice at once
                raise ToolError(Texts.EXISTS.format(path=command.path))
            written = find_operation(self.session, operation, source=self.source)
            alive = None if written is None else self._read(path).snapshot.current(written)
            if written is None or alive is None:
                raise ToolError(Texts.FORGOTTEN.format(path=command.path))
            # Moved or edited since, not deleted: this create is a new file.
            operation = f"{base}:after:{written.root_id}"
            return None

        return self._until_applied(path, command.path, attempt)

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        """``old_str`` replaced by ``new_str`` in the current text, if it occurs exactly once."""

        def change(content: str) -> tuple[str, str]:
            return replace_once(command.path, content, command.old_str, command.new_str)

        return self._edit(parse_path(command.path), change)

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        """``insert_text`` put before line ``insert_line`` of the current text."""

        def change(content: str) -> tuple[str, str]:
            edited = insert_text(content, command.insert_line, command.insert_text)
            return edited, Texts.INSERTED.format(path=command.path)

        return self._edit(parse_path(command.path), change)

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        """A file forgotten, or a directory: every file under it, in one write."""
        path = parse_path(command.path)
        if path.is_root:
            raise ToolError(Texts.DELETE_ROOT)

        def attempt() -> str:
            files = self._read(path)
            doomed = self._named(files, path)
            if not doomed:
                raise ToolError(Texts.DELETE_MISSING.format(path=command.path))
            targets = [(FactKey(r.key or ""), files.revision(r)) for _, r in doomed]
            with _changed_on(ConflictError, NotFoundError):
                forget_many(self.session, targets, source=self.source)
            return Texts.DELETED.format(path=command.path)

        return self._until_applied(path, command.path, attempt)

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        """A file or a directory moved to a new path that does not exist yet, in one write."""
        old, new = parse_path(command.old_path), parse_path(command.new_path)
        if old.is_root:
            raise ToolError(Texts.RENAME_ROOT)

        def attempt() -> str:
            files = self._read(old)
            if files.exists(new):
                raise ToolError(Texts.DESTINATION_EXISTS.format(path=command.new_path))
            moving = self._named(files, old)
            if not moving:
                raise ToolError(Texts.DELETE_MISSING.format(path=command.old_path))
            if old.contains(new):
                raise ToolError(Texts.INTO_ITSELF.format(old=old.given, new=new.given))
            self._check_room(files, new)
            moves = [
                (FactKey(r.key or ""), _moved_key(new, names), files.revision(r))
                for names, r in moving
            ]
            with _changed_on(ConflictError, NotFoundError):
                rename_many(self.session, moves, source=self.source)
            return Texts.RENAMED.format(old=command.old_path, new=command.new_path)

        return self._until_applied(old, command.old_path, attempt)

    def clear_all(self) -> str:
        """Every file under ``/memories`` forgotten, in one write."""
        root = parse_path(ROOT)

        def attempt() -> str:
            files = self._read(root)
            targets = [(FactKey(r.key or ""), files.revision(r)) for _, r in files.below(root)]
            if targets:
                with _changed_on(ConflictError, NotFoundError):
                    forget_many(self.session, targets, source=self.source)
            return Texts.CLEARED

        return self._until_applied(root, ROOT, attempt)

    # -- helpers -------------------------------------------------------------------------------

    def _edit(self, path: MemoryPath, change: Change) -> str:
        """Apply ``change`` to the current text of the file at ``path`` until it sticks."""

        def attempt() -> str:
            files = self._read(path)
            record = files.file(path)
            if record is None:
                text = Texts.NOT_A_FILE if files.is_directory(path) else Texts.MISSING
                raise ToolError(text.format(path=path.given))
            edited, answer = change(record.content)
            if edited == record.content:
                return answer  # nothing to write
            check_text(path.given, edited)
            with _changed_on(ConflictError, NotFoundError):
                revision = files.revision(record)
                correct(self.session, FactKey(path.key), edited, revision, source=self.source)
            return answer

        return self._until_applied(path, path.given, attempt)

    def _until_applied(
        self, path: MemoryPath, given: str, attempt: Callable[[], str | None]
    ) -> str:
        """Run ``attempt`` (which reads, checks and writes) until it answers, at most
        :data:`ATTEMPTS` times; the ``CONTENDED`` refusal, naming ``given``, after that.

        ``attempt`` raising :class:`_Changed` (the file changed under its write) runs it again
        after a short pause; returning ``None`` runs it again at once. memquill's errors become
        the ``ToolError`` the model reads (:meth:`_answers`, for ``path``).
        """
        for tries in range(ATTEMPTS):
            try:
                with self._answers(path):
                    answer = attempt()
            except _Changed:
                _pause(tries)
                continue
            if answer is not None:
                return answer
        raise ToolError(Texts.CONTENDED.format(path=given, attempts=ATTEMPTS))

    def _read(self, path: MemoryPath) -> MemoryFiles:
        with self._answers(path):
            return MemoryFiles(self.session.store.snapshot())

    @staticmethod
    def _named(files: MemoryFiles, path: MemoryPath) -> list[tuple[tuple[str, ...], Record]]:
        """What ``path`` names: the file there (names ``()``) and every file below it."""
        record = files.file(path)
        found: list[tuple[tuple[str, ...], Record]] = [((), record)] if record else []
        return found + files.below(path)

    @staticmethod
    def _check_room(files: MemoryFiles, path: MemoryPath) -> None:
        """Refuse a new file or directory below a file (a file holds no files)."""
        above = files.file_above(path)
        if above is not None:
            raise ToolError(Texts.INSIDE_A_FILE.format(parent=above.given, path=path.given))

    @contextmanager
    def _answers(self, path: MemoryPath) -> Generator[None]:
        """memquill's errors become the ``ToolError`` the model reads."""
        try:
            yield
        except SecretError as error:
            kinds = ", ".join(error.kinds) or "a credential"
            raise ToolError(Texts.CREDENTIAL.format(path=path.given, kinds=kinds)) from error
        except MemquillError as error:
            raise ToolError(Texts.REFUSED.format(path=path.given, reason=error.message)) from error


class _Changed(Exception):  # a signal inside this module, never raised out of it
    """The file changed under a command's write: read again and apply the command again."""


@contextmanager
def _changed_on(*errors: type[MemquillError]) -> Generator[None]:
    """``errors`` (a write's ``conflict``, ``not_found``) become :class:`_Changed`."""
    try:
        yield
    except errors:
        raise _Changed from None


def _moved_key(new: MemoryPath, names: tuple[str, ...]) -> str:
    """The key of a file moved to ``new`` (plus ``names`` below it, for a directory).

    Raises:
        ToolError: that key would pass 200 characters.
    """
    try:
        return key_of(new.names + names)
    except InvalidInputError:
        raise ToolError(Texts.PATH_LONG.format(path=new.given, limit=MAX_KEY_CHARS)) from None


def _pause(attempt: int) -> None:
    """A short, growing, jittered wait before reading again, so racing writers spread out."""
    time.sleep(random.uniform(0, min(0.05, 0.002 * (attempt + 1))))
