"""langchain-tests' standard suites, unmodified, for every memory tool and the retriever.

Each test gets a fresh notes workspace holding one remembered fact, so the write examples
(update and forget that fact by its id and revision) succeed and carry an artifact.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import BaseTool
from langchain_tests.integration_tests import RetrieversIntegrationTests, ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests
from tests.adapters.langchain.langchain_helpers import notes_workspace, query, session

from memquill_langchain import MemquillRetriever, MemquillToolkit

TOOL_NAMES = [
    "memory_search",
    "memory_get",
    "memory_recent",
    "memory_remember",
    "memory_update",
    "memory_forget",
]


def _example(name: str, record_id: str, revision: str) -> dict[str, Any]:
    return {
        "memory_search": {"query": "saffron", "limit": 3},
        "memory_get": {"file_path": "notes.md", "line_start": 5},
        "memory_recent": {"days": 2},
        "memory_remember": {"content": "The user's favourite spice is saffron."},
        "memory_update": {
            "id": record_id,
            "content": "Deploys happen on Wednesdays.",
            "expected_revision": revision,
        },
        "memory_forget": {"id": record_id, "expected_revision": revision},
    }[name]


class _OneToolPerTest:
    """Builds the workspace and picks the tool under test (one run per tool name)."""

    _tool: BaseTool
    _example_args: dict[str, Any]

    @pytest.fixture(autouse=True, params=TOOL_NAMES)
    def _memory_tool(self, request: pytest.FixtureRequest, tmp_path: Path) -> None:
        toolkit = MemquillToolkit(session=session(notes_workspace(tmp_path)))
        receipt = toolkit.toolset.call(
            "memory_remember", {"content": "Deploys happen on Tuesdays."}
        ).structured
        assert receipt is not None and receipt["status"] == "saved"
        name: str = request.param
        self._tool = next(tool for tool in toolkit.get_tools() if tool.name == name)
        self._example_args = _example(name, receipt["recordId"], receipt["recordRevision"])

    @property
    def tool_constructor(self) -> BaseTool:
        return self._tool

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return self._example_args


class TestMemoryToolsUnit(_OneToolPerTest, ToolsUnitTests):
    pass


class TestMemoryToolsIntegration(_OneToolPerTest, ToolsIntegrationTests):
    pass


class TestMemquillRetrieverStandard(RetrieversIntegrationTests):
    _workspace: Path

    @pytest.fixture(autouse=True)
    def _notes(self, tmp_path: Path) -> None:
        self._workspace = notes_workspace(tmp_path)

    @property
    def retriever_constructor(self) -> type[BaseRetriever]:
        return MemquillRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"memory": query(self._workspace)}

    @property
    def retriever_query_example(self) -> str:
        return "saffron"
