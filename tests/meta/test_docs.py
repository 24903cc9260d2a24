"""The reference docs cover every hook and every tool, exactly as the code defines them."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest

from memquill.errors import ERRORS, ErrorInfo
from memquill.plugins import hookspecs
from memquill.tools import CATALOGUE

DOCS = Path(__file__).resolve().parents[2] / "docs"
HOOKS = sorted(name for name in vars(hookspecs) if name.startswith("memquill_"))


def _section(text: str, heading: str) -> str:
    """The Markdown section under ``## heading`` (up to the next ``## ``)."""
    start = text.index(f"\n## {heading}\n") + len(heading) + 5
    end = text.find("\n## ", start)
    return text[start : end if end >= 0 else None]


def test_there_are_hooks_to_document() -> None:
    assert HOOKS == [
        "memquill_register_adapters",
        "memquill_register_integrations",
        "memquill_register_secret_detectors",
        "memquill_register_text_models",
        "memquill_report_event",
    ]


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hook_is_documented_with_its_signature(hook: str) -> None:
    signature = str(inspect.signature(getattr(hookspecs, hook))).replace("'", "")
    text = (DOCS / "plugins.md").read_text("utf-8")
    assert f"\n## {hook}{signature}\n" in text, f"docs/plugins.md lacks '## {hook}{signature}'"


@pytest.mark.parametrize("spec", CATALOGUE, ids=lambda spec: spec.name)
def test_every_tool_is_documented_with_its_schema(spec: object) -> None:
    from memquill import ToolSpec

    assert isinstance(spec, ToolSpec)
    section = _section((DOCS / "tools.md").read_text("utf-8"), spec.name)
    assert f"> {spec.description}\n" in section, "the description must be quoted verbatim"
    block = re.search(r"Input schema:\n\n```json\n(.*?)\n```", section, re.DOTALL)
    assert block is not None, f"{spec.name}: no input schema block"
    assert json.loads(block.group(1)) == spec.input_schema()
    assert f"`{spec.result.__name__}`" in section


@pytest.mark.parametrize("info", ERRORS.values(), ids=lambda info: info.code)
def test_every_error_code_is_documented_with_its_exit_status(info: ErrorInfo) -> None:
    text = (DOCS / "errors.md").read_text("utf-8")
    row = re.search(rf"^\| `{info.code}` \|.*\| {info.exit_status} \|$", text, re.MULTILINE)
    assert row is not None, f"docs/errors.md has no row for `{info.code}` ending in its status"


def key_transcript(workspace: Path) -> str:
    """An agent naming a fact by its key, through the real tools: remember with a key, a second
    remember under that key (a conflict naming the fact), two updates by key, a forget by key.
    Each call passes the revision of the receipt before it, cut to 16 digits as read tools
    show it."""
    from memquill import MemorySession, MemoryToolset

    toolset = MemoryToolset(MemorySession(workspace, "chat-42"))
    lines: list[str] = []
    revision = ""

    def call(name: str, arguments: dict[str, str]) -> None:
        nonlocal revision
        result = toolset.call(name, arguments)
        shown = json.dumps(arguments, ensure_ascii=False)
        lines.extend([f"→ {name} {shown}", f"← {result.text}"])
        if not result.is_error:
            revision = str((result.structured or {})["recordRevision"])[:16]

    key = "prefs/coffee"
    call("memory_remember", {"content": "The user takes coffee black.", "key": key})
    call("memory_remember", {"content": "The user takes coffee with milk.", "key": key})
    for text in ("The user takes coffee with oat milk.", "The user takes oat milk, no sugar."):
        call("memory_update", {"key": key, "content": text, "expected_revision": revision})
    call("memory_forget", {"key": key, "expected_revision": revision})
    return "\n".join(lines)


def test_the_key_transcript_in_tools_md_is_what_the_tools_answer(tmp_path: Path) -> None:
    from memquill.testing._runner import Normalizer

    section = _section((DOCS / "tools.md").read_text("utf-8"), "Ids, versions, keys and revisions")
    block = re.search(r"```text\n(.*?)\n```", section, re.DOTALL)
    assert block is not None, "docs/tools.md: no transcript block in the keys section"
    actual = key_transcript(tmp_path)
    # Ids and revisions differ from run to run: compare them as numbered placeholders.
    assert Normalizer().text(block.group(1)) == Normalizer().text(actual), (
        f"docs/tools.md: the transcript is out of date; it now reads:\n{actual}"
    )
