"""Semantic recall through every surface: LangChain ``Embeddings`` (tools and retriever), a
LangGraph ``embed`` function, a LlamaIndex ``BaseEmbedding`` (retriever), the MCP server's
``--embed``. Each framework's own embedding class carries the deterministic trigram vectors.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from llama_index.core.base.embeddings.base import BaseEmbedding
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from memquill.testing import TrigramEmbedder
from memquill.testing._models import PARITY_ALIASES
from memquill_langchain import MemquillRetriever, MemquillToolkit, embedder_from_index
from memquill_llamaindex import MemquillRetriever as LlamaRetriever

TRIGRAM = TrigramEmbedder(aliases=PARITY_ALIASES)
SEMANTIC = "Memory ranking semantic: keyword results re-ordered by similarity, 1 found by"


class TrigramEmbeddings(Embeddings):
    """LangChain's interface, sync only (LangChain runs it in an executor when awaited)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [TRIGRAM.vector(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return TRIGRAM.vector(text)


class TrigramEmbedding(BaseEmbedding):
    def _get_query_embedding(self, query: str) -> list[float]:
        return TRIGRAM.vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return TRIGRAM.vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return TRIGRAM.vector(text)


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "garage.md").write_text("# Garage\n\nThe automobile needs new tyres.\n", "utf-8")
    (root / "kitchen.md").write_text("# Kitchen\n\nBake bread on Sunday.\n", "utf-8")
    return root


def test_langchain_embeddings_in_the_tools_and_the_retriever(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    toolkit = MemquillToolkit.from_workspace(root, "s1", embeddings=TrigramEmbeddings())
    search = next(tool for tool in toolkit.get_tools() if tool.name == "memory_search")
    text = search.invoke({"query": "car"})
    assert text.startswith(SEMANTIC) and "[garage.md:3]" in text
    documents = toolkit.as_retriever().invoke("car")
    assert [d.metadata["source"] for d in documents] == ["garage.md"]
    alone = MemquillRetriever.from_workspace(root, embeddings=TrigramEmbeddings())
    assert [d.metadata["source"] for d in alone.invoke("car")] == ["garage.md"]
    plain = MemquillRetriever.from_workspace(root)
    assert plain.invoke("car") == []


def test_a_langgraph_embed_function_is_an_embedder(tmp_path: Path) -> None:
    async def embed(texts: list[str]) -> list[list[float]]:
        return [TRIGRAM.vector(text) for text in texts]

    embedder = embedder_from_index({"embed": embed, "dims": 256})
    assert embedder.dims == 256
    assert embedder.identity.name.endswith("embed")
    root = _workspace(tmp_path)
    toolkit = MemquillToolkit.from_workspace(root, "s1", embeddings=embedder)
    search = next(tool for tool in toolkit.get_tools() if tool.name == "memory_search")
    assert search.invoke({"query": "car"}).startswith(SEMANTIC)


def test_llamaindex_base_embedding_in_the_retriever(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    retriever = LlamaRetriever.from_workspace(root, embed_model=TrigramEmbedding())
    nodes = retriever.retrieve("car")
    assert [n.node.metadata["source"] for n in nodes] == ["garage.md"]
    assert LlamaRetriever.from_workspace(root).retrieve("car") == []


def test_the_mcp_server_takes_an_embedder(tmp_path: Path) -> None:
    root = _workspace(tmp_path)

    async def call() -> Any:
        parameters = StdioServerParameters(
            command=sys.executable,
            args=[
                "-m",
                "memquill_mcp",
                f"--workspace={root}",
                "--access=read",
                "--embed=memquill.testing:parity_embedder",
            ],
            env={"MEMQUILL_DISABLE_PLUGIN_AUTOLOAD": "1", "MEMQUILL_INDEX_DIR": ":memory:"},
        )
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            return await client.call_tool("memory_search", {"query": "car"})

    result = asyncio.run(call())
    text = result.content[0].text
    assert text.startswith(SEMANTIC) and "[garage.md:3]" in text
