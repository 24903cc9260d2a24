"""The tool catalogue: six memory tools, owned completely by the core.

Each :class:`ToolSpec` fixes a tool's name, title, description, argument and result models,
access level and behaviour hints; :mod:`memquill.tools._toolset` binds them to a session.
Adapters map these fields onto their framework and add nothing: no wording, formatting,
ranking or error text of their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

from pydantic import BaseModel

from memquill.query import GetArgs, GetResult, RecentArgs, RecentResult, SearchArgs, SearchResult
from memquill.tools._args import ForgetArgs, RememberArgs, UpdateArgs
from memquill.tools._results import WriteReceipt

__all__ = ["CATALOGUE", "ToolAccess", "ToolHints", "ToolSpec"]

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

CATALOGUE: Final[tuple[ToolSpec, ...]] = (
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
    ToolSpec(
        name="memory_remember",
        title="Remember a fact",
        description=(
            "Save a fact, preference or decision the user asked you to remember. Give it a "
            "key (a short path such as prefs/coffee) to update or forget it by that name later. "
            "Needs write permission; attribution comes from the current session, not from "
            "arguments. Returns a durable write receipt: only status saved (or duplicate) means "
            "it is stored; a conflict names the fact that already has the key."
        ),
        args=RememberArgs,
        result=WriteReceipt,
        access="write",
        hints=ToolHints(read_only=False, destructive=False, idempotent=False),
    ),
    ToolSpec(
        name="memory_update",
        title="Correct a remembered fact",
        description=(
            "Correct a remembered fact: pass its key or its id, and the revision you read it at "
            "(from memory_search, memory_get or memory_recent, or an earlier receipt). The "
            "previous version stops being retrieved; the new version gets a new id and "
            "revision, and keeps the key. On a conflict, read it again and retry."
        ),
        args=UpdateArgs,
        result=WriteReceipt,
        access="write",
        hints=ToolHints(read_only=False, destructive=True, idempotent=True),
    ),
    ToolSpec(
        name="memory_forget",
        title="Forget a remembered fact",
        description=(
            "Forget a remembered fact and all its earlier versions, by key or id and the "
            "revision you read it at. It disappears from search, recent and direct reads, its "
            "key is free again, and the same source can never bring it back."
        ),
        args=ForgetArgs,
        result=WriteReceipt,
        access="write",
        hints=ToolHints(read_only=False, destructive=True, idempotent=True),
    ),
)
"""The six tools, read tools first."""
