"""The reference docs cover every hook and every tool, exactly as the code defines them."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest

from memquill import CATALOGUE, ERRORS, ErrorInfo
from memquill.plugins import hookspecs

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
