"""LangChain's strict OpenAI conversion takes every memquill tool, and keeps its bounds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from langchain_core.utils.function_calling import convert_to_openai_tool

from memquill import MemorySession
from memquill.tools import CATALOGUE
from memquill_langchain import MemquillToolkit


@pytest.fixture
def tools(tmp_path: Path) -> dict[str, Any]:
    toolkit = MemquillToolkit(session=MemorySession(tmp_path, "schemas"))
    return {tool.name: tool for tool in toolkit.get_tools()}


@pytest.mark.parametrize("name", [spec.name for spec in CATALOGUE])
def test_every_tool_converts_with_strict_mode(tools: dict[str, Any], name: str) -> None:
    converted = convert_to_openai_tool(tools[name], strict=True)
    function = converted["function"]
    assert (function["name"], function["strict"]) == (name, True)
    parameters = function["parameters"]
    Draft202012Validator.check_schema(parameters)
    # Each argument the model may send is there (how strict mode marks them required and
    # closes the object is LangChain's business and differs between its releases).
    assert set(parameters["properties"]) == set(tools[name].tool_call_schema.model_fields)


def test_the_bounds_reach_the_model(tools: dict[str, Any]) -> None:
    search = convert_to_openai_tool(tools["memory_search"], strict=True)["function"]
    limit = search["parameters"]["properties"]["limit"]
    assert limit | {"default": 5} == {
        "default": 5,
        "description": "How many results (1–20).",
        "maximum": 20,
        "minimum": 1,
        "type": "integer",
    }
    recent = convert_to_openai_tool(tools["memory_recent"], strict=True)["function"]
    days = recent["parameters"]["properties"]["days"]
    assert (days["minimum"], days["maximum"]) == (1, 7)
    assert not {"ge", "le"} & (set(limit) | set(days))
