"""What the core sees of an adapter (a name, a way to drive its tools) and of an integration.

Every framework adapter (LangChain, LlamaIndex, MCP, or a third party's) registers an
:class:`AdapterSpec` through the ``memquill_register_adapters`` hook. Its ``open`` builds an
:class:`AdapterHarness` for a session: the adapter's native tools, driven through the
framework's own calling path. ``memquill demo`` and the parity suite (``memquill.testing``) run
the same calls through every harness and compare what comes back.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from memquill.tools import MemorySession


@dataclass(frozen=True, slots=True)
class ToolDescriptor:
    """A tool as a framework advertises it to a model.

    Attributes:
        name: the tool name.
        description: the description text.
        input_schema: the JSON schema of the arguments, as the framework sends it.
    """

    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class HarnessResult:
    """One tool call's outcome, read back through the framework.

    Attributes:
        text: the text the model would see.
        is_error: the framework's native error flag.
        structured: the structured result the framework carries beside the text, if any.
    """

    text: str
    is_error: bool
    structured: Mapping[str, Any] | None = field(default=None)


class AdapterHarness(Protocol):
    """Drives one adapter's tools for one session."""

    def catalogue(self) -> list[ToolDescriptor]:
        """The tools the adapter exposes, in the order it exposes them."""
        ...

    def call(self, name: str, arguments: Mapping[str, Any]) -> HarnessResult:
        """Call a tool by name through the framework's own calling path."""
        ...

    def close(self) -> None:
        """Release what the harness holds (processes, event loops)."""
        ...


@dataclass(frozen=True, slots=True)
class AdapterSpec:
    """An installed adapter.

    Attributes:
        name: a short unique key, such as ``"langchain"`` or ``"mcp-stdio"``.
        framework: the framework (or protocol) it targets, for people.
        distribution: the distribution that ships it.
        open: builds a harness for a session.
    """

    name: str
    framework: str
    distribution: str
    open: Callable[[MemorySession], AdapterHarness]


# ----------------------------------------------------------------------------------------------
# Framework integrations that are not tool adapters: what ``memquill plugins`` lists beside
# the adapters (a LangGraph store, say), and whether what each needs is installed.
#
# An :class:`IntegrationSpec` names the object and the distributions it needs; nothing of it is
# imported to list it (installed distributions are looked up in their metadata).


@dataclass(frozen=True, slots=True)
class IntegrationSpec:
    """An installed plugin's integration with a framework, other than its tools.

    Attributes:
        name: a short unique key, such as ``"langgraph-store"``.
        framework: what it plugs into, for people (``"LangGraph BaseStore"``).
        distribution: what to install for it (``"memquill-langchain[langgraph]"``).
        entry: where it is, ``module:object`` (``"memquill_langchain.store:MemquillStore"``).
        requires: the distributions it needs besides the plugin's own (``("langgraph",)``).
    """

    name: str
    framework: str
    distribution: str
    entry: str
    requires: tuple[str, ...] = ()

    def missing(self) -> tuple[str, ...]:
        """The required distributions that are not installed (none: it is available)."""
        absent: list[str] = []
        for requirement in self.requires:
            try:
                importlib.metadata.version(requirement)
            except importlib.metadata.PackageNotFoundError:
                absent.append(requirement)
        return tuple(absent)
