"""The memory tool answers exactly as the SDK's reference implementation, except on purpose.

Each sequence of commands (every command, every error the reference words) runs against the
SDK's own ``BetaLocalFilesystemMemoryTool`` in a temporary folder and against
``MemquillMemoryTool`` on a fresh workspace, step by step, through ``tool.call`` (what the tool
runner calls). The answers must be equal, text and kind (an answer, a ``ToolError``'s text, or
another exception's ``repr``), after one normalisation: a directory's size in a listing (the
reference shows the file system's directory size, memquill the total of the files inside).

A step marked with a difference pins both answers instead, and names the difference; each one
is listed, with its reason, in ``docs/adapters/anthropic.md`` (checked at the end).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest
from anthropic.tools.memory import BetaLocalFilesystemMemoryTool
from tests.adapters.anthropic.anthropic_helpers import (
    Answer,
    answer,
    memquill_tool,
    without_directory_sizes,
)

ROOT = Path(__file__).resolve().parents[3]
DIFFERENCES: Final = {
    "directory sizes": "the reference shows the file system's size of a directory",
    "empty directories": "a directory exists while it holds a file",
    "one spelling": "/memoriesfoo and paths that leave /memories and come back are refused",
    "below a file": "a clear refusal instead of NotADirectoryError",
    "into itself": "a clear refusal instead of OSError(22)",
    "names": "control characters and paths longer than a key are refused",
    "file contents": "empty, carriage returns, over 16,000 UTF-16 units",
    "credentials": "secrets are refused",
    "deleted files": "a repeated create does not bring a deleted file back",
}
"""Each deliberate difference (its name in the docs' list) and what it is about."""


@dataclass(frozen=True, slots=True)
class Step:
    """A command; for a difference, what each side answers and which difference it is."""

    command: dict[str, Any]
    difference: str | None = None
    memquill: Answer | None = None
    reference: Answer | None = None


def view(path: str, view_range: list[int] | None = None) -> dict[str, Any]:
    command: dict[str, Any] = {"command": "view", "path": path}
    if view_range is not None:
        command["view_range"] = view_range
    return command


def create(path: str, text: str) -> dict[str, Any]:
    return {"command": "create", "path": path, "file_text": text}


def replace(path: str, old: str, new: str) -> dict[str, Any]:
    return {"command": "str_replace", "path": path, "old_str": old, "new_str": new}


def insert(path: str, line: int, text: str) -> dict[str, Any]:
    return {"command": "insert", "path": path, "insert_line": line, "insert_text": text}


def delete(path: str) -> dict[str, Any]:
    return {"command": "delete", "path": path}


def rename(old: str, new: str) -> dict[str, Any]:
    return {"command": "rename", "old_path": old, "new_path": new}


def same(*commands: dict[str, Any]) -> list[Step]:
    return [Step(command) for command in commands]


LINES = "line one\nline two\nline three\nline four\nline five\nline six\nline seven\n"
LISTING = "Here're the files and directories up to 2 levels deep in {path}, excluding hidden items:"

SEQUENCES: Final[dict[str, list[Step]]] = {
    "view": same(
        view("/memories"),
        create("/memories/notes/project.md", "# Project\nShip in May.\nOwner: Ana\n"),
        create("/memories/todo.txt", "- buy milk"),
        create("/memories/.hidden", "a hidden note"),
        create("/memories/notes/.draft.md", "draft"),
        create("/memories/a/b/c/deep.md", "deep"),
        create("/memories/café.md", "crème brûlée"),
        create("/memories/my notes.md", "spaces in the name"),
        view("/memories"),  # hidden names left out, two levels deep, sorted by name
        view("/memories/"),
        view("/memories/notes"),
        view("/memories/a/b"),
        view("/memories/notes/project.md"),
        view("/memories/notes/project.md", [2, 3]),
        view("/memories/notes/project.md", [2, -1]),
        view("/memories/notes/project.md", [0, 1]),
        view("/memories/notes/project.md", [5, 9]),
        view("/memories/notes/project.md", [3, 1]),
        view("/memories/notes/project.md", [1]),
        view("/memories/notes/project.md", [1, 2, 3]),
        view("/memories/todo.txt"),
        view("/memories/.hidden"),
        view("/memories/./notes//project.md"),
        view("/memories/notes/../todo.txt"),
        view("/memories/café.md"),
        view("/memories/missing.md"),
        view("/memories/todo.txt/inside"),
        view("/etc/passwd"),
        view("memories/todo.txt"),
        view("/memories/../etc/passwd"),
        view("/memories/notes/../../x"),
    ),
    "sizes": same(
        create("/memories/one.txt", "x" * 1536),
        create("/memories/two.txt", "x" * 2048),
        create("/memories/limit.txt", "x" * 16000),  # a fact's limit, exactly
        create("/memories/wide.txt", "é" * 600),
        view("/memories"),
    ),
    "create": same(
        create("/memories/a.md", "alpha\n"),
        create("/memories/a.md", "again"),
        create("/memories", "the root"),
        create("/memories/", "the root"),
        create("/memories/dir/x.md", "x"),
        create("/memories/dir", "a directory"),
        create("/memories/dir/", "a directory"),
        create("/tmp/x.md", "outside"),
        create("/memories/../x.md", "escaping"),
        create("/memories/deep/er/and/deeper.md", "nested"),
        view("/memories"),
        view("/memories/a.md"),
    ),
    "str_replace": same(
        create("/memories/n.md", LINES),
        replace("/memories/n.md", "line four", "line 4"),
        replace("/memories/n.md", "line one", "first"),
        replace("/memories/n.md", "line seven", "last"),
        replace("/memories/n.md", "line two\nline three", "two and three"),
        replace("/memories/n.md", "line", "row"),
        replace("/memories/n.md", "nope", "never"),
        replace("/memories/n.md", "line five", "line five"),
        replace("/memories/n.md", "", "x"),
        view("/memories/n.md"),
        create("/memories/o.md", "aaa\n"),
        replace("/memories/o.md", "aa", "b"),  # counted without overlaps: once
        view("/memories/o.md"),
        create("/memories/d/x.md", "x"),
        replace("/memories/missing.md", "a", "b"),
        replace("/memories/d", "a", "b"),
        replace("/memories", "a", "b"),
        replace("/elsewhere/n.md", "a", "b"),
        replace("/memories/../n.md", "a", "b"),
    ),
    "insert": same(
        create("/memories/list.md", "a\nb\nc\n"),
        insert("/memories/list.md", 0, "top"),
        insert("/memories/list.md", 4, "end\n\n"),
        insert("/memories/list.md", 2, "middle"),
        insert("/memories/list.md", -1, "never"),
        insert("/memories/list.md", 7, "never"),
        view("/memories/list.md"),
        create("/memories/nonl.md", "x"),
        insert("/memories/nonl.md", 1, "y"),
        insert("/memories/nonl.md", 0, ""),
        view("/memories/nonl.md"),
        create("/memories/d/x.md", "x"),
        insert("/memories/missing.md", 0, "a"),
        insert("/memories/d", 0, "a"),
        insert("/memories", 0, "a"),
        insert("/var/list.md", 0, "a"),
    ),
    "delete": same(
        create("/memories/keep.md", "keep"),
        create("/memories/dir/a.md", "a"),
        create("/memories/dir/sub/b.md", "b"),
        create("/memories/dir/.hidden", "hidden"),
        delete("/memories/dir/sub/b.md"),
        delete("/memories/dir/sub/b.md"),
        delete("/memories/dir"),
        view("/memories"),
        view("/memories/dir/.hidden"),
        delete("/memories/dir"),
        delete("/memories"),
        delete("/memories/"),
        delete("/memories/keep.md/.."),
        delete("/etc"),
        delete("/memories/../keep.md"),
        delete("/memories/missing.md"),
        view("/memories/keep.md"),
    ),
    "rename": same(
        create("/memories/a.md", "A"),
        create("/memories/b.md", "B"),
        create("/memories/d/x.md", "X"),
        create("/memories/d/y/z.md", "Z"),
        rename("/memories/a.md", "/memories/c.md"),
        view("/memories/c.md"),
        view("/memories/a.md"),
        rename("/memories/c.md", "/memories/new/deeper/c.md"),
        rename("/memories/b.md", "/memories/d/x.md"),
        rename("/memories/missing.md", "/memories/e.md"),
        rename("/memories/missing.md", "/memories/b.md"),
        rename("/memories", "/memories/x"),
        rename("/memories/", "/memories/x"),
        rename("/memories/b.md", "/memories"),
        rename("/memories/b.md", "/memories/b.md"),
        rename("/memories/d", "/memories/e"),
        view("/memories"),
        view("/memories/e/y/z.md"),
        rename("/etc/b.md", "/memories/f.md"),
        rename("/memories/b.md", "/tmp/b.md"),
        rename("/memories/b.md", "/memories/../b.md"),
        rename("/memories/../b.md", "/memories/f.md"),
        view("/memories/new/deeper/c.md"),
    ),
    "empty directories": [
        *same(create("/memories/dir/only.md", "only"), delete("/memories/dir/only.md")),
        Step(
            view("/memories"),
            "empty directories",
            ("ok", f"{LISTING.format(path='/memories')}\n0B\t/memories"),
            ("ok", f"{LISTING.format(path='/memories')}\n<dir>\t/memories\n<dir>\t/memories/dir/"),
        ),
        *same(create("/memories/src/f.md", "f"), rename("/memories/src/f.md", "/memories/f.md")),
        Step(
            view("/memories"),
            "empty directories",
            ("ok", f"{LISTING.format(path='/memories')}\n1B\t/memories\n1B\t/memories/f.md"),
            (
                "ok",
                f"{LISTING.format(path='/memories')}\n<dir>\t/memories\n<dir>\t/memories/dir/\n"
                "1B\t/memories/f.md\n<dir>\t/memories/src/",
            ),
        ),
    ],
    "directory sizes": [
        *same(create("/memories/a/x.md", "12345"), create("/memories/a/b/y.md", "123")),
        Step(
            view("/memories"),
            "directory sizes",
            (
                "ok",
                f"{LISTING.format(path='/memories')}\n8B\t/memories\n8B\t/memories/a/\n"
                "3B\t/memories/a/b/\n5B\t/memories/a/x.md",
            ),
            (
                "ok",
                f"{LISTING.format(path='/memories')}\n<dir>\t/memories\n<dir>\t/memories/a/\n"
                "<dir>\t/memories/a/b/\n5B\t/memories/a/x.md",
            ),
        ),
    ],
    "one spelling": [
        Step(
            create("/memoriesfoo", "x"),
            "one spelling",
            ("error", "Path must be /memories or start with /memories/, got: /memoriesfoo"),
            ("ok", "File created successfully at: /memoriesfoo"),
        ),
        Step(
            create("/memories/a/../../memories/zz.md", "x"),
            "one spelling",
            ("error", "Path /memories/a/../../memories/zz.md would escape /memories directory"),
            ("ok", "File created successfully at: /memories/a/../../memories/zz.md"),
        ),
    ],
    "below a file": [
        *same(create("/memories/f.md", "f"), create("/memories/h.md", "h")),
        Step(
            create("/memories/f.md/g.md", "g"),
            "below a file",
            ("error", "The path /memories/f.md is a file, so it cannot hold /memories/f.md/g.md."),
            ("raised", "NotADirectoryError(20, 'Not a directory')"),
        ),
        Step(
            rename("/memories/h.md", "/memories/f.md/h.md"),
            "below a file",
            ("error", "The path /memories/f.md is a file, so it cannot hold /memories/f.md/h.md."),
            ("raised", "NotADirectoryError(20, 'Not a directory')"),
        ),
        *same(view("/memories")),
    ],
    "into itself": [
        *same(create("/memories/d/a.md", "a")),
        Step(
            rename("/memories/d", "/memories/d/sub"),
            "into itself",
            ("error", "Cannot move /memories/d into itself (/memories/d/sub)."),
            ("raised", "OSError(22, 'Invalid argument')"),
        ),
        *same(view("/memories")),
    ],
    "names": [
        *same(create("/memories/" + "n" * 150 + ".md", "a long ASCII name is fine")),
        Step(
            create("/memories/nul\x00x.md", "x"),
            "names",
            (
                "error",
                "The path /memories/nul\x00x.md has a name memquill cannot keep: memory paths "
                "may not hold control characters or unpaired surrogates.",
            ),
            ("raised", "ValueError('embedded null byte')"),
        ),
        Step(
            create("/memories/" + "é" * 200, "x"),
            "names",
            (
                "error",
                f"The path /memories/{'é' * 200} is too long for memquill: below /memories it "
                "may have at most 200 characters once spaces, punctuation and non-ASCII letters "
                "are escaped (%XX per UTF-8 byte). Use a shorter name.",
            ),
            ("raised", "OSError(36, 'File name too long')"),
        ),
    ],
    "file contents": [
        Step(
            create("/memories/empty.md", ""),
            "file contents",
            (
                "error",
                "memquill keeps no empty memory files: write at least one visible character to "
                "/memories/empty.md, or delete it.",
            ),
            ("ok", "File created successfully at: /memories/empty.md"),
        ),
        Step(
            create("/memories/blank.md", " \n\t\n"),
            "file contents",
            (
                "error",
                "memquill keeps no empty memory files: write at least one visible character to "
                "/memories/blank.md, or delete it.",
            ),
            ("ok", "File created successfully at: /memories/blank.md"),
        ),
        Step(
            create("/memories/crlf.md", "one\r\ntwo\r\n"),
            "file contents",
            (
                "error",
                "memquill keeps memory files with \\n line endings only, and this text has a "
                "carriage return (\\r). Write it again with \\n line endings and no \\r; "
                "/memories/crlf.md is unchanged.",
            ),
            ("ok", "File created successfully at: /memories/crlf.md"),
        ),
        Step(
            create("/memories/big.md", "😀" * 8001),
            "file contents",
            (
                "error",
                "/memories/big.md would hold 16,002 characters (UTF-16 code units); memquill "
                "keeps at most 16,000 per memory file. Split it into several files; "
                "/memories/big.md is unchanged.",
            ),
            ("ok", "File created successfully at: /memories/big.md"),
        ),
        *same(create("/memories/s.md", "gone")),
        Step(
            replace("/memories/s.md", "gone", ""),
            "file contents",
            (
                "error",
                "memquill keeps no empty memory files: write at least one visible character to "
                "/memories/s.md, or delete it.",
            ),
            (
                "ok",
                "The memory file has been edited. Here is the snippet showing the change (with "
                "line numbers):\n     1\t",
            ),
        ),
        Step(
            view("/memories/s.md"),
            "file contents",
            ("ok", "Here's the content of /memories/s.md with line numbers:\n     1\tgone"),
            ("ok", "Here's the content of /memories/s.md with line numbers:\n     1\t"),
        ),
    ],
    "credentials": [
        Step(
            create("/memories/keys.md", "deploy token = ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
            "credentials",
            (
                "error",
                "memquill refused to write /memories/keys.md: the text holds credential "
                "material (github_token, assignment). Leave the secret out (say where it is "
                "kept instead, for example 'the deploy key is in the team vault') and try "
                "again; /memories/keys.md is unchanged.",
            ),
            ("ok", "File created successfully at: /memories/keys.md"),
        ),
        *same(create("/memories/ops.md", "The deploy key is in the team vault.\n")),
        Step(
            insert("/memories/ops.md", 1, "AWS key AKIAZ7Q4W2E5R8T1Y3U6"),
            "credentials",
            (
                "error",
                "memquill refused to write /memories/ops.md: the text holds credential "
                "material (aws_access_key). Leave the secret out (say where it is kept "
                "instead, for example 'the deploy key is in the team vault') and try again; "
                "/memories/ops.md is unchanged.",
            ),
            ("ok", "The file /memories/ops.md has been edited."),
        ),
    ],
    "deleted files": [
        *same(
            create("/memories/t.md", "tea, no sugar"),
            delete("/memories/t.md"),
        ),
        Step(
            create("/memories/t.md", "tea, no sugar"),
            "deleted files",
            (
                "error",
                "memquill will not create /memories/t.md again: a file with exactly this text "
                "was deleted before, and a deleted memory never comes back through a tool or a "
                "conversation. If the user wants it again now, create it with different text "
                "(for example, add the date).",
            ),
            ("ok", "File created successfully at: /memories/t.md"),
        ),
        *same(
            # Moved away is not deleted: the same text may be created there again.
            create("/memories/r.md", "rooibos"),
            rename("/memories/r.md", "/memories/s.md"),
            create("/memories/r.md", "rooibos"),
            replace("/memories/s.md", "rooibos", "rooibos, iced"),
            delete("/memories/s.md"),
            create("/memories/s.md", "green tea"),
        ),
    ],
}


def test_every_sequence_names_only_listed_differences() -> None:
    named = {step.difference for steps in SEQUENCES.values() for step in steps} - {None}
    assert named == set(DIFFERENCES)


@pytest.mark.parametrize("name", SEQUENCES)
def test_the_memory_tool_answers_as_the_reference(name: str, tmp_path: Path) -> None:
    reference = BetaLocalFilesystemMemoryTool(str(tmp_path / "reference"))
    ours = memquill_tool(tmp_path / "workspace")
    for index, step in enumerate(SEQUENCES[name], 1):
        theirs = without_directory_sizes(answer(reference, step.command))
        mine = without_directory_sizes(answer(ours, step.command))
        where = f"{name}, step {index}: {step.command}"
        if step.difference is None:
            assert mine == theirs, where
        else:
            assert step.memquill is not None and step.reference is not None
            assert mine == without_directory_sizes(step.memquill), where
            assert theirs == without_directory_sizes(step.reference), where


def test_the_differences_are_documented() -> None:
    page = (ROOT / "docs" / "adapters" / "anthropic.md").read_text("utf-8")
    section = page.split("## Differences from the reference", 1)[1].split("\n## ", 1)[0]
    for name in DIFFERENCES:
        assert f"**{name[0].upper()}{name[1:]}**" in section, name
