"""memquill for Google ADK: a memory service on Markdown, and memquill's tools.

- :class:`MemquillMemoryService`: an ADK ``BaseMemoryService``. ``(app_name, user_id)`` is a
  workspace folder under a root; ``add_memory`` saves facts through the one write path,
  ``search_memory`` answers memquill's ranking, ``delete_memory`` forgets, and sessions feed
  extraction with the host's model (never raw chat as facts).
- :func:`memory_tools`: memquill's six tools (``memory_search`` and the rest) as ADK
  ``FunctionTool``s with the core's schemas and texts.
- :class:`AdkTextModel`: an ADK ``BaseLlm`` as memquill's ``TextModel``.
- :class:`AdkHarness`: those tools driven through ADK's calling path, as the parity suite and
  ``memquill demo`` use them.
"""

from __future__ import annotations

import typing

from memquill import __version__ as __version__  # released together: one version
from memquill.plugins import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
    from memquill_adk.harness import AdkHarness
    from memquill_adk.model import AdkTextModel
    from memquill_adk.service import MemquillMemoryService
    from memquill_adk.tools import MemquillFunctionTool as MemquillFunctionTool, memory_tools

__all__ = [
    "AdkHarness",
    "AdkTextModel",
    "MemquillMemoryService",
    "__version__",
    "memory_tools",
]


# ADK is imported on first use of a name (a heavy import), not when memquill loads this plugin.
__getattr__, __dir__ = _lazy_exports(__name__)
