"""memquill for Pydantic AI: memory as a toolset.

- :class:`MemquillToolset`: memquill's six tools (three for a read-only session) as an
  ``AbstractToolset`` with the core's names, descriptions, schemas and texts. Arguments the
  model can fix raise ``ModelRetry``; every other failure is a ``ToolFailed`` result. Its
  instructions are the core's usage prompt, and with ``recall=True`` what memquill remembers
  for the run's prompt.
- :class:`PydanticAIHarness`: the toolset driven through an agent run (the adapter
  ``memquill demo`` and the parity suite open).
"""

from __future__ import annotations

import typing

from memquill import __version__ as __version__  # released together: one version
from memquill.plugins import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
    from memquill_pydantic_ai.harness import PydanticAIHarness
    from memquill_pydantic_ai.toolset import MemquillToolset

__all__ = ["MemquillToolset", "PydanticAIHarness", "__version__"]

# Pydantic AI is imported on first use of a name, not when memquill loads this plugin.
__getattr__, __dir__ = _lazy_exports(__name__)
