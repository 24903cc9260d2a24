"""memquill for LlamaIndex: memory as native tools, a retriever and a memory block.

- :func:`memquill_tools` / :class:`MemquillToolSpec`: the six memquill tools (three for a
  read-only session) as ``FunctionTool`` objects; ``content``, ``raw_output`` and ``is_error``
  come from the core unchanged.
- :class:`MemquillRetriever`: memquill search as a ``BaseRetriever`` for any query engine.
- :class:`MemquillMemoryBlock`: recent memory and search hits in a ``Memory``'s context; with
  an extraction (:meth:`MemquillMemoryBlock.with_extraction`), the turns ``Memory`` flushes
  feed automatic extraction, read back through :class:`ChatStoreSource`.
- :class:`LlamaIndexHarness`: the tools driven through LlamaIndex's calling path (the adapter
  ``memquill demo`` and the parity suite open).
"""

from __future__ import annotations

import typing

from memquill import __version__ as __version__  # released together: one version
from memquill.plugins import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
    from memquill_llamaindex.embedding import BaseEmbeddingEmbedder as BaseEmbeddingEmbedder
    from memquill_llamaindex.harness import LlamaIndexHarness
    from memquill_llamaindex.history import (
        ChatStoreSource as ChatStoreSource,
        to_source_messages as to_source_messages,
    )
    from memquill_llamaindex.memory_block import MemquillMemoryBlock
    from memquill_llamaindex.model import LLMTextModel
    from memquill_llamaindex.retriever import FileType as FileType, MemquillRetriever
    from memquill_llamaindex.tools import MemquillToolSpec, memquill_tools

__all__ = [
    "LLMTextModel",
    "LlamaIndexHarness",
    "MemquillMemoryBlock",
    "MemquillRetriever",
    "MemquillToolSpec",
    "__version__",
    "memquill_tools",
]


# The framework is imported on first use of a name, not when memquill loads this plugin.
__getattr__, __dir__ = _lazy_exports(__name__)
