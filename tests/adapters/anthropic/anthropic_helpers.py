"""Helpers for the memory tool's tests: run a command as the SDK's tool runner would, and read
its answer back in the three forms the runner can send (an answer, a ``ToolError``'s text, or
another exception's ``repr``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError

from memquill import MemorySession
from memquill_anthropic import MemquillMemoryTool

Kind = Literal["ok", "error", "raised"]
Answer = tuple[Kind, str]
"""What the runner sends back: ``ok`` with the text, ``error`` with a ``ToolError``'s text (an
``is_error`` result), ``raised`` with another exception's ``repr`` (also ``is_error``)."""

SESSION = "chat-42"
_DIRECTORY_LINE = re.compile(r"^[0-9.]+[BKMG]\t(\S.*)$")


def answer(tool: BetaAbstractMemoryTool, command: Mapping[str, Any]) -> Answer:
    """Run ``command`` through ``tool.call`` (the method the runner calls with the input)."""
    try:
        return "ok", str(tool.call(dict(command)))
    except ToolError as error:
        return "error", str(error.content)
    except Exception as error:  # the runner sends repr(error) with is_error
        return "raised", repr(error)


def memquill_tool(workspace: Path, session_id: str = SESSION) -> MemquillMemoryTool:
    """A memory tool on a plain session of ``workspace`` (built-in secret detectors)."""
    workspace.mkdir(parents=True, exist_ok=True)
    return MemquillMemoryTool(MemorySession(workspace, session_id))


def without_directory_sizes(given: Answer) -> Answer:
    """A listing with each directory's size replaced by ``<dir>`` (the directory itself on its
    first line, and every entry ending in ``/``): the reference shows the file system's own
    directory size, memquill the total of the files inside."""
    kind, text = given
    lines = text.split("\n")
    if kind != "ok" or not lines[0].startswith("Here're the files and directories"):
        return given
    out = lines[:1]
    for index, line in enumerate(lines[1:]):
        match = _DIRECTORY_LINE.match(line)
        if match is not None and (index == 0 or line.endswith("/")):
            out.append(f"<dir>\t{match.group(1)}")
        else:
            out.append(line)
    return kind, "\n".join(out)


# -- the documented example ------------------------------------------------------------------

EXAMPLE_PLACEHOLDER = "/home/me/notes"
EXAMPLES = (
    ("docs/adapters/anthropic.md", "## Claude's memory on memquill"),
    ("README.md", "### Claude's memory tool"),
    ("packages/anthropic_plugin/README.md", "## Install and use"),
)
"""Where the example is shown: file, and the heading its Python block follows."""
EXAMPLE_SAYS = ("Let me look at my memory first.", "Noted: oat milk from now on.")
EXAMPLE_TEXT = "# Preferences\n- Coffee: oat milk\n"


def example_replies() -> list[list[dict[str, Any]]]:
    """The model's side of the documented example: view, create, search, then a reply."""
    from tests.adapters.anthropic.scripted_api import text, tool_use

    return [
        [text(EXAMPLE_SAYS[0]), tool_use("memory", command="view", path="/memories")],
        [
            tool_use(
                "memory", command="create", path="/memories/preferences.md", file_text=EXAMPLE_TEXT
            )
        ],
        [tool_use("memory_search", query="coffee")],
        [text(EXAMPLE_SAYS[1])],
    ]


def example_code(root: Path, file: str, heading: str) -> str:
    """The first Python block after ``heading`` in ``file``."""
    content = (root / file).read_text("utf-8")
    start = content.index(heading)
    match = re.compile(r"```python\n(.*?)```", re.DOTALL).search(content, start)
    assert match is not None, f"{file}: no Python block after {heading!r}"
    return match.group(1)


def example_env(home: Path, api_url: str) -> dict[str, str]:
    """The environment the example runs in: a fresh home, the scripted API, a dummy key."""
    import os

    kept = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMQUILL_", "ANTHROPIC_", "VIRTUAL_ENV"))
    }
    return {**kept, "HOME": str(home), "ANTHROPIC_BASE_URL": api_url, "ANTHROPIC_API_KEY": "test"}


def check_example_run(api: Any, stdout: str, workspace: Path) -> None:
    """What the example must have done: said both texts, sent the right tool results, and
    left the file as a named fact that search finds."""
    from memquill import RecordStore

    assert stdout.splitlines() == list(EXAMPLE_SAYS)
    assert len(api.requests) == 4
    listing = (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden "
        "items:\n0B\t/memories"
    )
    assert [r["content"] for r in api.tool_results(1)] == [listing]
    created = api.tool_results(2)
    assert [r["content"] for r in created] == [
        "File created successfully at: /memories/preferences.md"
    ]
    (search,) = api.tool_results(3)
    assert "key:preferences.md" in search["content"] and "- Coffee: oat milk" in search["content"]
    record = RecordStore(workspace).snapshot().by_key("preferences.md")
    assert record is not None and record.content == EXAMPLE_TEXT
    assert record.source == {"kind": "tool", "sessionId": "chat-42"}
