"""memquill for LlamaIndex: memory as native tools, a retriever and a memory block.

- :func:`memquill_tools` / :class:`MemquillToolSpec`: the six memquill tools (three for a
  read-only session) as ``FunctionTool`` objects; ``content``, ``raw_output`` and ``is_error``
  come from the core unchanged.
- :class:`MemquillRetriever`: memquill search as a ``BaseRetriever`` for any query engine.
- :class:`MemquillMemoryBlock`: recent memory and search hits in a ``Memory``'s context.
- :class:`LlamaIndexHarness`: the tools driven through LlamaIndex's calling path (the adapter
  ``memquill demo`` and the parity suite open).
"""

from memquill_llamaindex.harness import LlamaIndexHarness
from memquill_llamaindex.memory_block import MemquillMemoryBlock
from memquill_llamaindex.retriever import FileType, MemquillRetriever
from memquill_llamaindex.tools import MemquillToolSpec, memquill_tools

__all__ = [
    "FileType",
    "LlamaIndexHarness",
    "MemquillMemoryBlock",
    "MemquillRetriever",
    "MemquillToolSpec",
    "__version__",
    "memquill_tools",
]

__version__ = "0.1.0"
