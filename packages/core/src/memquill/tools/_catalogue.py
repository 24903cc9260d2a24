"""The tool catalogue: six memory tools, owned completely by the core.

The read tools and what a :class:`ToolSpec` is come from :mod:`memquill.tools._specs`; the
write tools are here, with the write argument models and the receipt.
"""

from __future__ import annotations

from typing import Final

from memquill.tools._args import ForgetArgs, RememberArgs, UpdateArgs
from memquill.tools._results import WriteReceipt
from memquill.tools._specs import READ_TOOLS, ToolHints, ToolSpec

CATALOGUE: Final[tuple[ToolSpec, ...]] = (
    *READ_TOOLS,
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
