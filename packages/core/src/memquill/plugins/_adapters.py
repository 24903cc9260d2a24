"""What an adapter is, as the core sees it: a name and a way to drive its tools.

Every framework adapter (LangChain, LlamaIndex, MCP, or a third party's) registers an
:class:`AdapterSpec` through the ``memquill_register_adapters`` hook. Its ``open`` builds an
:class:`AdapterHarness` for a session: the adapter's native tools, driven through the
framework's own calling path. ``memquill demo`` and the parity suite (``memquill.testing``) run
the same calls through every harness and compare what comes back.
"""

from __future__ import annotations

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
