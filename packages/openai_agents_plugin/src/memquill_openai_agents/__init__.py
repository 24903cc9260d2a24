"""memquill for the OpenAI Agents SDK: memory as function tools, and a session as history.

- :func:`memory_tools`: memquill's six tools (three for a read-only session) as the SDK's
  ``FunctionTool``s, with the core's names, descriptions and texts and the core's schemas made
  strict by the SDK's ``ensure_strict_json_schema``.
- :class:`SessionSource`: the SDK's ``Session`` (``SQLiteSession`` and the rest) as memquill's
  ``MessageSource``, so automatic extraction learns from an agent's conversation; its items are
  read, never written.
- :class:`OpenAIAgentsHarness`: the tools driven through the SDK's calling path (the adapter
  ``memquill demo`` and the parity suite open).
"""

from __future__ import annotations

import typing

from memquill import __version__ as __version__  # released together: one version
from memquill.plugins import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
    from memquill_openai_agents.harness import OpenAIAgentsHarness
    from memquill_openai_agents.history import SessionSource, to_source_messages
    from memquill_openai_agents.tools import memory_tools

__all__ = [
    "OpenAIAgentsHarness",
    "SessionSource",
    "__version__",
    "memory_tools",
    "to_source_messages",
]

# The SDK is imported on first use of a name, not when memquill loads this plugin.
__getattr__, __dir__ = _lazy_exports(__name__)
