"""How the memory tool's commands read and apply themselves again when the file changed under
their write: which store errors mean "changed" (``conflict``; ``not_found`` except for
``create``), a pause before each new attempt, at most ``ATTEMPTS`` attempts, then the
``CONTENDED`` refusal naming the command's path. The store's errors are raised for real by the
write functions the commands call, a given number of times, before the real write runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.tools import ToolError
from tests.adapters.anthropic.anthropic_helpers import answer, memquill_tool

import memquill_anthropic._commands as commands
from memquill import ConflictError, MemquillError, NotFoundError
from memquill_anthropic._commands import ATTEMPTS

CONTENDED = (
    "{path} kept changing while memquill applied the command (64 attempts); view it and try again."
)

# (command, its arguments, the write function it calls, the path its refusal names)
CASES: list[tuple[str, dict[str, Any], str, str]] = [
    ("create", {"path": "/memories/new.md", "file_text": "new\n"}, "remember", "/memories/new.md"),
    (
        "str_replace",
        {"path": "/memories/a.md", "old_str": "tea", "new_str": "coffee"},
        "correct",
        "/memories/a.md",
    ),
    (
        "insert",
        {"path": "/memories/a.md", "insert_line": 0, "insert_text": "first\n"},
        "correct",
        "/memories/a.md",
    ),
    ("delete", {"path": "/memories/a.md"}, "forget_many", "/memories/a.md"),
    (
        "rename",
        {"old_path": "/memories/a.md", "new_path": "/memories/b.md"},
        "rename_many",
        "/memories/a.md",
    ),
]


class Failing:
    """The write function ``name``, raising ``error`` for its first ``times`` calls."""

    def __init__(self, name: str, error: type[MemquillError], times: int) -> None:
        self.real: Callable[..., Any] = getattr(commands, name)
        self.error = error
        self.times = times
        self.calls = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls <= self.times:
            raise self.error("the record changed since that revision")
        return self.real(*args, **kwargs)


@pytest.fixture
def pauses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The attempt number of every pause (none is slept)."""
    seen: list[int] = []
    monkeypatch.setattr(commands, "_pause", seen.append)
    return seen


def _tool(tmp_path: Path) -> Any:
    tool = memquill_tool(tmp_path)
    kind, text = answer(tool, {"command": "create", "path": "/memories/a.md", "file_text": "tea\n"})
    assert kind == "ok", text
    return tool


@pytest.mark.parametrize(("command", "arguments", "write", "path"), CASES)
def test_a_command_applies_itself_again_after_a_conflict(
    command: str,
    arguments: dict[str, Any],
    write: str,
    path: str,
    tmp_path: Path,
    pauses: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tool = _tool(tmp_path)
    failing = Failing(write, ConflictError, 3)
    monkeypatch.setattr(commands, write, failing)
    kind, text = answer(tool, {"command": command, **arguments})
    assert kind == "ok", text
    assert (failing.calls, pauses) == (4, [0, 1, 2])


@pytest.mark.parametrize(("command", "arguments", "write", "path"), CASES)
def test_a_command_gives_up_after_every_attempt_conflicted(
    command: str,
    arguments: dict[str, Any],
    write: str,
    path: str,
    tmp_path: Path,
    pauses: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tool = _tool(tmp_path)
    failing = Failing(write, ConflictError, ATTEMPTS)
    monkeypatch.setattr(commands, write, failing)
    assert answer(tool, {"command": command, **arguments}) == (
        "error",
        CONTENDED.format(path=path),
    )
    assert (failing.calls, pauses) == (ATTEMPTS, list(range(ATTEMPTS)))


@pytest.mark.parametrize(("command", "arguments", "write", "path"), CASES)
def test_not_found_at_the_write_is_a_change_except_for_create(
    command: str,
    arguments: dict[str, Any],
    write: str,
    path: str,
    tmp_path: Path,
    pauses: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tool = _tool(tmp_path)
    failing = Failing(write, NotFoundError, 1)
    monkeypatch.setattr(commands, write, failing)
    kind, text = answer(tool, {"command": command, **arguments})
    if command == "create":
        reason = "the record changed since that revision"
        message = f"memquill could not apply the command to {path}: {reason}"
        assert (kind, text, failing.calls, pauses) == ("error", message, 1, [])
    else:
        assert (kind, failing.calls, pauses) == ("ok", 2, [0])


def test_clear_all_applies_itself_again_and_gives_up_like_the_others(
    tmp_path: Path, pauses: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = _tool(tmp_path)
    failing = Failing("forget_many", NotFoundError, 2)
    monkeypatch.setattr(commands, "forget_many", failing)
    assert tool.clear_all_memory() == "All memory cleared"
    assert (failing.calls, pauses) == (3, [0, 1])
    assert tool.clear_all_memory() == "All memory cleared"  # nothing left: no write
    assert failing.calls == 3
    monkeypatch.undo()
    tool = _tool(tmp_path / "again")
    failing = Failing("forget_many", ConflictError, ATTEMPTS)
    monkeypatch.setattr(commands, "forget_many", failing)
    monkeypatch.setattr(commands, "_pause", pauses.append)
    pauses.clear()
    with pytest.raises(ToolError) as refused:
        tool.clear_all_memory()
    assert refused.value.content == CONTENDED.format(path="/memories")
    assert (failing.calls, pauses) == (ATTEMPTS, list(range(ATTEMPTS)))
