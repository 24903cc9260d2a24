"""memquill-langchain: memquill's memory tools and retriever, native in LangChain.

Three lines give an agent memory::

    from memquill_langchain import MemquillToolkit

    toolkit = MemquillToolkit.from_workspace("/home/me/notes", session_id="chat-42")
    agent = create_agent(model, toolkit.get_tools(), system_prompt=toolkit.system_prompt())

Every name, description, schema, text and error comes from the core (:mod:`memquill`); this
package only maps them onto LangChain's ``BaseTool``, ``BaseToolkit`` and ``BaseRetriever``.
"""

from __future__ import annotations

import typing

from memquill.plugins import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
    from memquill_langchain.harness import LangChainHarness
    from memquill_langchain.model import ChatModelTextModel
    from memquill_langchain.retriever import FileType, MemquillRetriever
    from memquill_langchain.toolkit import MemquillToolkit
    from memquill_langchain.tools import MemoryToolError, MemquillTool

__all__ = [
    "ChatModelTextModel",
    "FileType",
    "LangChainHarness",
    "MemoryToolError",
    "MemquillRetriever",
    "MemquillTool",
    "MemquillToolkit",
    "__version__",
]

__version__ = "0.1.0"

# The framework is imported on first use of a name, not when memquill loads this plugin.
__getattr__, __dir__ = _lazy_exports(
    __name__,
    {
        "ChatModelTextModel": "memquill_langchain.model",
        "FileType": "memquill_langchain.retriever",
        "LangChainHarness": "memquill_langchain.harness",
        "MemoryToolError": "memquill_langchain.tools",
        "MemquillRetriever": "memquill_langchain.retriever",
        "MemquillTool": "memquill_langchain.tools",
        "MemquillToolkit": "memquill_langchain.toolkit",
    },
)
