"""``docs/adapters/langgraph.md`` runs as written: its store example (the root swapped for a
temporary folder), its agent example (the model name swapped for a scripted model), and its
conformance example (as a test module of its own)."""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.warnings import LangGraphDeprecatedSinceV10
from tests.adapters.langgraph.scripted_model import call, script

with warnings.catch_warnings():
    # trustcall, which LangMem imports, still takes Send from where LangGraph 0.x kept it.
    warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
    import langmem  # noqa: F401  (imported once here, so the page's import finds it loaded)

pytest_plugins = ["pytester"]

PAGE = Path(__file__).resolve().parents[3] / "docs" / "adapters" / "langgraph.md"
ROOT_LINE = 'Path("~/agent-memory").expanduser()'
MODEL_NAME = '"openai:gpt-4.1-mini"'


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", PAGE.read_text("utf-8"), re.DOTALL)


def test_the_page_has_three_python_examples() -> None:
    blocks = python_blocks()
    assert len(blocks) == 3
    assert ROOT_LINE in blocks[0] and MODEL_NAME in blocks[1]


def test_the_store_and_agent_examples_run_as_written(tmp_path: Path) -> None:
    first, second, _ = python_blocks()
    scope: dict[str, Any] = {"__name__": "langgraph_doc"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(first.replace(ROOT_LINE, f"Path({str(tmp_path)!r})"), scope)
    # What the page says it prints, in its comments.
    shown = [line[2:] for line in first.splitlines() if line.startswith("# ")]
    lines = printed.getvalue().splitlines()
    assert lines[:4] == shown
    records = "\n".join(lines[4:])
    assert records.startswith("# Memory records")
    assert "flat whites" not in records and "black" not in records  # forgotten
    assert records.count('"status":"revoked"') == 2 and '"key":"drink"' not in records
    assert '\n{\n  "theme": "dark",\n  "units": "metric"\n}' in records

    model = script(
        call("manage_memory", {"content": "Ana moved to Porto."}, "c1"),
        AIMessage(content="Noted: you live in Porto now."),
    )
    scope["model"] = model
    exec(second.replace(MODEL_NAME, "model"), scope)
    text = (tmp_path / "memories" / "ana" / "memory" / "records.md").read_text("utf-8")
    assert "\nAna moved to Porto.\n" in text


def test_the_conformance_example_passes(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
    )
    pytester.makepyfile(test_in_memory=python_blocks()[2])
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "-p", "no:randomly")
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) >= 30 and "failed" not in outcomes, outcomes
