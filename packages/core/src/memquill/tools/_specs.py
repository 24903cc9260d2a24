"""What a tool is (:class:`ToolSpec`), and the three read tools.

Each :class:`ToolSpec` fixes a tool's name, title, description, argument and result models,
access level and behaviour hints; :mod:`memquill.tools._toolset` binds them to a session.
Adapters map these fields onto their framework and add nothing: no wording, formatting,
ranking or error text of their own. The read tools live here apart from the write tools
(:mod:`memquill.tools._catalogue`, with their models), so a read session never loads the
write models.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from memquill.query import GetArgs, GetResult, RecentArgs, RecentResult, SearchArgs, SearchResult

if TYPE_CHECKING:
    from pydantic import BaseModel


ToolAccess = Literal["read", "write"]
"""``read`` tools exist for every session; ``write`` tools only with write access."""


@dataclass(frozen=True, slots=True)
class ToolHints:
    """Behaviour hints, as MCP's tool annotations define them (hints, not guarantees)."""

    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool = False


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """Everything about a tool except the session it runs for.

    Attributes:
        name: the tool name every adapter uses.
        title: a short human title.
        description: the description every adapter sends to the model, verbatim.
        args: the argument model (the input schema).
        result: the model of the structured result on success (the output schema).
        access: ``read`` tools exist for every session; ``write`` tools only with write access.
        hints: behaviour hints.
    """

    name: str
    title: str
    description: str
    args: type[BaseModel]
    result: type[BaseModel]
    access: ToolAccess
    hints: ToolHints

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments."""
        return self.args.model_json_schema()

    def output_schema(self) -> dict[str, Any]:
        """The JSON schema of the structured result on success."""
        return self.result.model_json_schema(by_alias=True)


_READ: Final = ToolHints(read_only=True, destructive=False, idempotent=True)

READ_TOOLS: Final[tuple[ToolSpec, ...]] = (
    ToolSpec(
        name="memory_search",
        title="Search memory",
        description=(
            "Search the workspace's memory - notes, daily notes, long-term memory and "
            "remembered facts - by keywords, in any language. Filter by tags and by file type; "
            "among equally good matches, recent daily notes rank higher. Works without a model "
            "or credentials. Returns ranked results with their source path, the line where the "
            "match is and an excerpt around it, and for a remembered fact its id and revision; "
            "read on from that line with memory_get."
        ),
        args=SearchArgs,
        result=SearchResult,
        access="read",
        hints=_READ,
    ),
    ToolSpec(
        name="memory_get",
        title="Read a memory source",
        description=(
            "Read a workspace-relative memory source, such as a path memory_search returned. "
            "Lines are 1-based and inclusive. One response holds at most 3000 characters; to "
            "continue, call again with char_start set to the next_char_start it reports and "
            "the same file_path and lines. Internal files and forgotten history cannot be read."
        ),
        args=GetArgs,
        result=GetResult,
        access="read",
        hints=_READ,
    ),
    ToolSpec(
        name="memory_recent",
        title="Review recent memory",
        description=(
            "Review long-term memory, the most recent daily notes and the remembered facts "
            "(newest first), with their source paths. Call it at the start of a conversation."
        ),
        args=RecentArgs,
        result=RecentResult,
        access="read",
        hints=_READ,
    ),
)
"""The read tools, as the catalogue lists them."""
