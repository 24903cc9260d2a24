"""A workspace kept in git: the merge driver, its attribute, and what git must not carry.

``memquill sync setup`` makes ``git merge`` / ``git pull`` merge ``memory/records.md`` record
by record (``docs/sync.md``). It writes, each only when missing, so running it again changes
nothing:

- ``.gitattributes`` in the workspace folder: ``memory/records.md merge=memquill -text diff``
  (committed, so every clone has it): merge with the driver; never convert line endings
  (``core.autocrlf`` or a ``* text=auto eol=crlf`` line would check every block out with CRLF,
  which the decoder refuses, and a fact saved before control characters were refused may hold
  a ``\r`` of its own); diff it as text all the same;
- ``.gitignore`` in the workspace folder: memquill's per-machine files (``memory/.records-*``:
  the writer lock, staging files, backups holding forgotten text, a database mirror; and the
  extraction job ledger ``.assistant/memory-jobs.json*``), which would otherwise be committed
  and conflict on every pull;
- the index: a per-machine file committed before (a workspace kept in git before setup) is
  removed from it with ``git rm --cached`` (the working file stays), since an ignore line
  does not stop git carrying a tracked file; the removal is staged, committed with the rest;
- the repository's own config (``.git/config``, never committed, so each clone runs setup
  once): ``merge.memquill.name`` and ``merge.memquill.driver``. Git runs the driver through a
  shell from the work tree's top folder, so the command names this very interpreter by its
  absolute path, quoted: ``'/path/to/python' -m memquill.cli merge %O %A %B``.

Everything is asked of the ``git`` program itself (``check-attr``, ``check-ignore``,
``ls-files``, ``config``) and done by it (``config``, ``rm --cached``), so the answer is what
git will do, whatever other attribute or ignore files say.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from memquill.errors import InvalidInputError, Messages, StorageError
from memquill.foundation.atomic import atomic_write

RECORDS: Final = "memory/records.md"
ATTRIBUTE_LINE: Final = f"{RECORDS} merge=memquill -text diff"
IGNORE_LINES: Final = ("memory/.records-*", ".assistant/memory-jobs.json*")
"""Per-machine files git must not carry, as ``.gitignore`` lines (workspace-relative)."""
_PROBES: Final = ("memory/.records-lock", ".assistant/memory-jobs.json")
_DRIVER_NAME: Final = "memquill: memory/records.md merged record by record"
_TIMEOUT: Final = 30.0


@dataclass(frozen=True, slots=True)
class GitSetup:
    """How a workspace's git repository merges ``records.md``.

    Attributes:
        repository: the work tree's top folder (``None``: the workspace is not in one).
        attribute: git applies ``merge=memquill`` and no line-ending conversion (``-text``) to
            ``memory/records.md``.
        driver: the repository's ``merge.memquill.driver`` (``None``: not set).
        driver_runs: the driver's program exists (a moved or deleted environment breaks it).
        unignored: per-machine files git would carry (``IGNORE_LINES`` not in effect).
        tracked: per-machine files git tracks (each once, even when in conflict); ``sync
            setup`` stops tracking them.
    """

    repository: Path | None
    attribute: bool = False
    driver: str | None = None
    driver_runs: bool = False
    unignored: tuple[str, ...] = ()
    tracked: tuple[str, ...] = ()

    @property
    def ready(self) -> bool:
        """A pull merges ``records.md`` record by record and carries no per-machine file."""
        return (
            self.repository is not None
            and self.attribute
            and self.driver_runs
            and not self.unignored
            and not self.tracked
        )


def driver_command() -> str:
    """The merge driver command for this installation (absolute interpreter path, quoted)."""
    return f"{shlex.quote(sys.executable)} -m memquill.cli merge %O %A %B"


def git_setup(workspace: Path) -> GitSetup:
    """How ``workspace``'s repository merges ``records.md`` now (nothing is changed).

    Raises:
        InvalidInputError: the ``git`` program is missing.
    """
    top = _git(workspace, "rev-parse", "--show-toplevel", check=False)
    if top.returncode != 0:
        return GitSetup(None)
    attributes = _git(workspace, "check-attr", "merge", "text", "--", RECORDS).stdout.splitlines()
    driver = _git(workspace, "config", "--local", "--get", "merge.memquill.driver", check=False)
    command = driver.stdout.strip() if driver.returncode == 0 else None
    unignored = tuple(
        line
        for line, probe in zip(IGNORE_LINES, _PROBES, strict=True)
        if _git(workspace, "check-ignore", "-q", "--no-index", probe, check=False).returncode
    )
    listed = _git(workspace, "ls-files", "-z", "--", *IGNORE_LINES).stdout
    # A file in conflict is listed once per index stage (base, ours, theirs): name it once.
    tracked = tuple(dict.fromkeys(name for name in listed.split("\0") if name))
    return GitSetup(
        repository=Path(top.stdout.strip()),
        attribute=attributes == [f"{RECORDS}: merge: memquill", f"{RECORDS}: text: unset"],
        driver=command,
        driver_runs=command is not None and _runs(command),
        unignored=unignored,
        tracked=tracked,
    )


def set_up_git(workspace: Path) -> tuple[GitSetup, tuple[str, ...]]:
    """Make ``workspace``'s repository merge ``records.md`` record by record (module
    docstring): the set-up afterwards, and one line per change made (none when it was set).

    Raises:
        InvalidInputError: the workspace is not in a git work tree, or ``git`` is missing.
        StorageError: a file could not be written.
    """
    before = git_setup(workspace)
    if before.repository is None:
        raise InvalidInputError(Messages.NOT_A_GIT_WORKSPACE)
    changes: list[str] = []
    if not before.attribute:
        _append_line(workspace / ".gitattributes", ATTRIBUTE_LINE)
        changes.append(f".gitattributes: added `{ATTRIBUTE_LINE}`")
    for line in before.unignored:
        _append_line(workspace / ".gitignore", line)
        changes.append(f".gitignore: added `{line}` (per-machine files git must not carry)")
    if before.tracked:
        # Ignoring a committed file does not stop git carrying it: every pull would still
        # conflict on it. Out of the index only; the working file (a live lock) stays.
        _git(workspace, "rm", "--cached", "--quiet", "--", *before.tracked)
        changes.extend(
            f"git rm --cached: {name} (per-machine; the file stays, commit the removal)"
            for name in before.tracked
        )
    command = driver_command()
    if before.driver != command:
        _git(workspace, "config", "--local", "merge.memquill.name", _DRIVER_NAME)
        _git(workspace, "config", "--local", "merge.memquill.driver", command)
        changes.append(f"git config merge.memquill.driver: {command}")
    return git_setup(workspace), tuple(changes)


def _runs(command: str) -> bool:
    try:
        program = shlex.split(command)[0]
    except (ValueError, IndexError):
        return False
    return os.path.isfile(program) and os.access(program, os.X_OK)


def _append_line(path: Path, line: str) -> None:
    """Add ``line`` to the text file ``path`` (created when missing), atomically."""
    try:
        before = path.read_text("utf-8") if path.exists() else ""
        text = before + ("" if not before or before.endswith("\n") else "\n") + line + "\n"
        # The person's own file: it keeps its mode (a new one gets the umask's, as git's do).
        mode = path.stat().st_mode & 0o777 if path.exists() else None
        atomic_write(path, text.encode("utf-8"), mode=mode)
    except (OSError, UnicodeDecodeError) as error:
        raise StorageError(Messages.SAVE_FAILED) from error


def _git(workspace: Path, *arguments: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    try:
        done = subprocess.run(
            ["git", "-C", str(workspace), *arguments],  # noqa: S607  (git from PATH, as a person's)
            capture_output=True,
            text=True,
            timeout=_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        raise InvalidInputError(Messages.GIT_MISSING) from None
    if check and done.returncode != 0:
        raise InvalidInputError(Messages.GIT_FAILED.format(command=arguments[0]))
    return done
