"""memquill-langchain: memquill's memory tools and retriever, native in LangChain.

Three lines give an agent memory::

    from memquill_langchain import MemquillToolkit

    toolkit = MemquillToolkit.from_workspace("/home/me/notes", session_id="chat-42")
    agent = create_agent(model, toolkit.get_tools(), system_prompt=toolkit.system_prompt())

Or memory with no tool at all: :class:`MemquillMiddleware` puts what memquill remembers into
the prompt and extracts the facts users state, every third turn, in the background. Or
LangGraph's long-term memory: :class:`MemquillStore` is a ``BaseStore`` (``create_agent(...,
store=MemquillStore(root))``, LangMem's memory tools) that keeps each namespace in a folder of
Markdown (``pip install memquill-langchain[langgraph]``).

Every name, description, schema, text and error comes from the core (:mod:`memquill`); this
package only maps them onto LangChain's ``BaseTool``, ``BaseToolkit``, ``BaseRetriever`` and
``AgentMiddleware`` (which needs ``langchain``: ``pip install memquill-langchain[agents]``).
"""

from __future__ import annotations

import typing

from memquill import __version__ as __version__  # released together: one version
from memquill.plugins import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
    from memquill_langchain.embeddings import (
        EmbeddingsEmbedder as EmbeddingsEmbedder,
        embedder_from_index,
    )
    from memquill_langchain.harness import LangChainHarness
    from memquill_langchain.history import (
        CheckpointerSource,
        to_source_messages as to_source_messages,
    )
    from memquill_langchain.middleware import MemquillMiddleware
    from memquill_langchain.model import ChatModelTextModel
    from memquill_langchain.retriever import FileType as FileType, MemquillRetriever
    from memquill_langchain.scope import MemoryScope, RunScope, ScopeResolver as ScopeResolver
    from memquill_langchain.store import MemquillStore
    from memquill_langchain.toolkit import MemquillToolkit
    from memquill_langchain.tools import MemoryToolError, MemquillTool

__all__ = [
    "ChatModelTextModel",
    "CheckpointerSource",
    "LangChainHarness",
    "MemoryScope",
    "MemoryToolError",
    "MemquillMiddleware",
    "MemquillRetriever",
    "MemquillStore",
    "MemquillTool",
    "MemquillToolkit",
    "RunScope",
    "__version__",
    "embedder_from_index",
]


# The framework is imported on first use of a name, not when memquill loads this plugin.
__getattr__, __dir__ = _lazy_exports(__name__)
