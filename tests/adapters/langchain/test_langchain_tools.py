"""The toolkit and its tools: what LangChain sees, access, Plan mode, errors, registration."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ValidationError
from tests.adapters.langchain.langchain_helpers import (
    call,
    notes_workspace,
    records_text,
    session,
)

from memquill import MemoryToolset, MemquillError
from memquill.cli import main
from memquill.errors import Messages
from memquill.plugins import get_plugin_manager, plugin_report
from memquill.testing._runner import canonical_schema
from memquill.tools import CATALOGUE
from memquill_langchain import LangChainHarness, MemoryToolError, MemquillTool, MemquillToolkit

READ = ["memory_search", "memory_get", "memory_recent"]
WRITE = ["memory_remember", "memory_update", "memory_forget"]


def test_read_write_toolkit_maps_every_core_field(tmp_path: Path) -> None:
    tools = MemquillToolkit(session=session(tmp_path)).get_tools()
    assert [tool.name for tool in tools] == READ + WRITE
    for tool, spec in zip(tools, CATALOGUE, strict=True):
        assert isinstance(tool, MemquillTool)
        assert tool.description == spec.description
        assert tool.args_schema is spec.args
        assert tool.response_format == "content_and_artifact"
        # What a chat model is sent: the core's name, description and schema.
        function = convert_to_openai_tool(tool)["function"]
        assert (function["name"], function["description"]) == (spec.name, spec.description)
        assert canonical_schema(function["parameters"]) == canonical_schema(spec.input_schema())


def test_read_access_offers_only_the_read_tools(tmp_path: Path) -> None:
    toolkit = MemquillToolkit.from_workspace(notes_workspace(tmp_path), "s", access="read")
    assert [tool.name for tool in toolkit.get_tools()] == READ
    assert "memory_remember" not in toolkit.system_prompt()
    harness = LangChainHarness(toolkit.session)
    with pytest.raises(LookupError, match="memory_remember"):
        harness.call("memory_remember", {"content": "Nope."})
    assert records_text(tmp_path) is None


def test_plan_mode_refuses_writes_with_the_core_message_and_changes_nothing(
    tmp_path: Path,
) -> None:
    plan_mode = False
    toolkit = MemquillToolkit(session=session(tmp_path, authorize_write=lambda: not plan_mode))
    tools = {tool.name: tool for tool in toolkit.get_tools()}
    saved = tools["memory_remember"].invoke(call("memory_remember", {"content": "Ship Friday."}))
    assert saved.status == "success"
    receipt = saved.artifact
    before = (tmp_path / "memory" / "records.md").read_bytes()

    plan_mode = True
    attempts = {
        "remember": ("memory_remember", {"content": "Another fact."}),
        "update": (
            "memory_update",
            {
                "id": receipt["recordId"],
                "content": "Ship Monday.",
                "expected_revision": receipt["recordRevision"],
            },
        ),
        "forget": (
            "memory_forget",
            {"id": receipt["recordId"], "expected_revision": receipt["recordRevision"]},
        ),
    }
    for operation, (name, args) in attempts.items():
        message = tools[name].invoke(call(name, args))
        assert isinstance(message, ToolMessage) and isinstance(message.content, str)
        assert message.status == "error"
        assert json.loads(message.content) == {
            "type": "memory_write_error",
            "operation": operation,
            "code": "invalid",
            "message": Messages.WRITE_UNAUTHORIZED,
        }
    assert (tmp_path / "memory" / "records.md").read_bytes() == before
    leftovers = sorted(path.name for path in (tmp_path / "memory").iterdir())
    assert leftovers == [".records-lock", "records.md"]


def test_success_carries_the_core_text_and_structured_result(tmp_path: Path) -> None:
    notes_workspace(tmp_path)
    core = MemoryToolset(session(tmp_path))
    tool = MemquillToolkit(session=session(tmp_path)).get_tools()[0]
    args = {"query": "saffron", "limit": 2}

    message = tool.invoke(call("memory_search", args, "call-7"))
    expected = core.call("memory_search", args)
    assert isinstance(message, ToolMessage)
    assert (message.content, message.artifact, message.status) == (
        expected.text,
        expected.structured,
        "success",
    )
    assert (message.name, message.tool_call_id) == ("memory_search", "call-7")
    # Without a ToolCall, LangChain returns the content alone; a bare string is the query.
    assert tool.invoke(args) == expected.text
    assert tool.invoke("saffron") == core.call("memory_search", {"query": "saffron"}).text


async def test_async_failure_is_an_error_message_with_the_core_text(tmp_path: Path) -> None:
    notes_workspace(tmp_path)
    core = MemoryToolset(session(tmp_path))
    tool = MemquillToolkit(session=session(tmp_path)).get_tools()[1]
    args = {"file_path": ".env"}

    message = await tool.ainvoke(call("memory_get", args))
    expected = core.call("memory_get", args)
    assert expected.is_error
    assert isinstance(message, ToolMessage)
    assert (message.content, message.status) == (expected.text, "error")
    assert message.artifact is None  # LangChain keeps no artifact on its error path


def test_invalid_arguments_get_the_core_rejection(tmp_path: Path) -> None:
    core = MemoryToolset(session(tmp_path))
    tools = {tool.name: tool for tool in MemquillToolkit(session=session(tmp_path)).get_tools()}
    cases = [
        ("memory_search", {"query": "", "limit": 0}),
        ("memory_remember", {"content": "x", "source": "forged"}),
        ("memory_update", {"id": "nope", "content": "x"}),
    ]
    for name, args in cases:
        message = tools[name].invoke(call(name, args))
        assert (message.content, message.status) == (core.call(name, args).text, "error")
    assert records_text(tmp_path) is None


def test_a_core_failure_is_raised_as_a_memory_tool_error(tmp_path: Path) -> None:
    tool = MemquillToolkit(session=session(tmp_path)).get_tools()[3]
    tool.handle_tool_error = False  # a host may prefer the exception to a ToolMessage
    with pytest.raises(MemoryToolError) as raised:
        tool.invoke({"content": "password = hunter2-correct-horse"})
    error = raised.value
    assert isinstance(error, MemquillError)
    assert error.result.is_error
    assert error.result.structured == json.loads(str(error)) == json.loads(error.message)
    assert error.result.structured is not None and error.result.structured["code"] == "secret"
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), copy.result, str(copy)) == (MemoryToolError, error.result, str(error))
    assert records_text(tmp_path) is None


def test_unknown_toolkit_options_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="acess"):
        MemquillToolkit(session=session(tmp_path), acess="read")  # pyright: ignore[reportCallIssue]


def test_the_plugin_registers_the_langchain_adapter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = plugin_report(get_plugin_manager())
    [entry] = [entry for entry in report.adapters if entry.adapter.name == "langchain"]
    assert (entry.plugin, entry.adapter.framework, entry.adapter.distribution) == (
        "langchain",
        "LangChain",
        "memquill-langchain",
    )
    assert not [failure for failure in report.failures if failure.plugin == "langchain"]
    harness = entry.adapter.open(session(tmp_path))
    try:
        assert isinstance(harness, LangChainHarness)
        assert [tool.name for tool in harness.catalogue()] == READ + WRITE
    finally:
        harness.close()

    main(["plugins", "--json"])  # may exit 1 while another adapter fails to load
    listed = json.loads(capsys.readouterr().out)
    assert {
        "name": "langchain",
        "framework": "LangChain",
        "distribution": "memquill-langchain",
        "plugin": "langchain",
    } in listed["adapters"]


async def test_ainvoke_uses_the_native_async_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def sync_path(*args: object, **kwargs: object) -> None:
        raise AssertionError("ainvoke fell back to the sync _run")

    tool = MemquillToolkit(session=session(notes_workspace(tmp_path))).get_tools()[0]
    monkeypatch.setattr(MemquillTool, "_run", sync_path)
    message = await tool.ainvoke(call("memory_search", {"query": "saffron"}))
    assert message.status == "success" and message.artifact["hits"]
