"""memquill for the Anthropic SDK: the store behind Claude's memory tool, and memquill's tools.

- :class:`MemquillMemoryTool`, :class:`MemquillAsyncMemoryTool`: Claude's client-side memory
  tool (``memory_20250818``: ``view``, ``create``, ``str_replace``, ``insert``, ``delete``,
  ``rename`` under ``/memories``) on a memquill session. Each file is a named fact; every
  command applies under the store's lock to the current text, credentials are refused, and a
  deleted file never comes back from a repeated command.
- :func:`memory_tools`, :func:`async_memory_tools`: memquill's six tools (``memory_search`` and
  the rest) as the SDK's function tools, for the same runner.
- :class:`AnthropicHarness`: those tools driven through the SDK's calling path, as the parity
  suite and ``memquill demo`` use them.
"""

from __future__ import annotations

import typing

from memquill import __version__ as __version__  # released together: one version
from memquill.plugins import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
    from memquill_anthropic._paths import ROOT
    from memquill_anthropic.harness import AnthropicHarness
    from memquill_anthropic.memory_tool import MemquillAsyncMemoryTool, MemquillMemoryTool
    from memquill_anthropic.tools import async_memory_tools, memory_tools

__all__ = [
    "ROOT",
    "AnthropicHarness",
    "MemquillAsyncMemoryTool",
    "MemquillMemoryTool",
    "__version__",
    "async_memory_tools",
    "memory_tools",
]


# The SDK is imported on first use of a name, not when memquill loads this plugin.
__getattr__, __dir__ = _lazy_exports(__name__)
