"""``MemquillRetriever``: the core's hits as nodes, in a real query engine, no ids for the LLM."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode
from tests.core.plugin_helpers import BROKEN_PLUGIN, write_distribution

from memquill import (
    InvalidInputError,
    MemorySession,
    MemoryToolset,
    MemquillError,
    SearchResult,
    StorageError,
    UnsafePathError,
)
from memquill.plugins._manager import DISABLE_AUTOLOAD_ENV
from memquill.query import MAX_SEARCH_LIMIT
from memquill.tools._catalogue import WriteReceipt
from memquill_llamaindex import MemquillRetriever, MemquillToolSpec

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
REVISION = re.compile(r"[0-9a-f]{64}")


def _remember(session: MemorySession, content: str) -> WriteReceipt:
    result = MemoryToolset(session).call("memory_remember", {"content": content})
    assert not result.is_error, result.text
    return WriteReceipt.model_validate(result.structured)


def _text(node: NodeWithScore) -> TextNode:
    assert isinstance(node.node, TextNode)
    return node.node


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"similarity_top_k": 2},
        {"tags": ["project"]},
        {"file_type": "longterm"},
        {"file_type": "daily", "similarity_top_k": 1},
    ],
)
def test_nodes_are_the_core_hits_in_order(session: MemorySession, options: dict[str, Any]) -> None:
    _remember(session, "The user drinks oolong tea every morning.")
    nodes = MemquillRetriever(session, **options).retrieve("tea billing")
    arguments = {
        "query": "tea billing",
        "tags": options.get("tags", []),
        "file_type": options.get("file_type", "all"),
        "limit": options.get("similarity_top_k", 5),
    }
    found = MemoryToolset(session).call("memory_search", arguments)
    hits = SearchResult.model_validate(found.structured).hits
    assert hits, "the fixture must give this query hits"
    assert [(node.node_id, node.score) for node in nodes] == [
        (hit.record_id or f"{hit.path}#{hit.line}", hit.score) for hit in hits
    ]
    for node, hit in zip(nodes, hits, strict=True):
        text = _text(node)
        assert text.text == hit.snippet
        assert text.metadata["source"] == hit.path
        assert text.metadata["provenance"] == hit.source
        assert text.metadata.get("record_revision") == hit.record_revision


def test_llm_and_embed_text_hold_no_ids_revisions_or_provenance(session: MemorySession) -> None:
    receipt = _remember(session, "The user drinks oolong tea every morning.")
    nodes = MemquillRetriever(session).retrieve("oolong tea")
    record = _text(nodes[0])
    assert record.metadata["record_id"] == receipt.record_id
    assert record.metadata["record_revision"] == receipt.record_revision
    assert receipt.record_revision in record.metadata["provenance"]
    for node in nodes:
        for mode in (MetadataMode.LLM, MetadataMode.EMBED):
            seen = _text(node).get_content(metadata_mode=mode)
            assert not UUID.search(seen), seen
            assert not REVISION.search(seen), seen
            assert "memory-record:" not in seen and "workspace-file" not in seen
    assert record.get_content(metadata_mode=MetadataMode.LLM) == (
        "line: 1\nheading: \nkind: record\n\nThe user drinks oolong tea every morning."
    )
    note = next(_text(node) for node in nodes if node.node.metadata["source"] == "memory.md")
    assert note.get_content(metadata_mode=MetadataMode.LLM).startswith(
        "source: memory.md\nline: 3\nheading: Long-term memory\nkind: note\n\n"
    )


async def test_aretrieve_equals_retrieve(session: MemorySession) -> None:
    retriever = MemquillRetriever(session, similarity_top_k=3)
    query = "tea tomatoes billing"
    sync, asynchronous = retriever.retrieve(query), await retriever.aretrieve(query)
    assert [(n.node_id, n.score, n.text) for n in asynchronous] == [
        (n.node_id, n.score, n.text) for n in sync
    ]
    assert len(sync) == 3


def test_no_hits_is_an_empty_list(session: MemorySession) -> None:
    assert MemquillRetriever(session).retrieve("zebra unicorn") == []


@pytest.mark.parametrize(
    ("query", "options", "message"),
    [
        ("", {}, "query: String should have at least 1 character"),
        ("tea", {"similarity_top_k": 0}, "limit: Input should be greater than or equal to 1"),
    ],
)
def test_a_failed_search_raises_the_core_error(
    session: MemorySession, query: str, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidInputError) as caught:
        MemquillRetriever(session, **options).retrieve(query)
    assert caught.value.message == message


@pytest.mark.parametrize("top_k", [21, 50])
def test_more_than_memquill_returns_gives_what_it_has(tmp_path: Path, top_k: int) -> None:
    for number in range(MAX_SEARCH_LIMIT + 5):
        (tmp_path / f"note-{number:02}.md").write_text(
            f"# Note {number}\n\nSaffron batch {number}.\n"
        )
    session = MemorySession(tmp_path, "chat-42")
    nodes = MemquillRetriever(session, similarity_top_k=top_k).retrieve("saffron")
    found = MemoryToolset(session).call(
        "memory_search", {"query": "saffron", "limit": MAX_SEARCH_LIMIT}
    )
    hits = SearchResult.model_validate(found.structured).hits
    assert len(nodes) == len(hits) == MAX_SEARCH_LIMIT
    assert [node.node_id for node in nodes] == [f"{hit.path}#{hit.line}" for hit in hits]


@pytest.mark.parametrize(
    ("workspace_name", "error", "code"),
    [("relative/notes", UnsafePathError, "unsafe_path"), (None, StorageError, "storage")],
)
def test_a_bad_workspace_raises_the_error_carrying_the_core_code(
    tmp_path: Path, workspace_name: str | None, error: type[MemquillError], code: str
) -> None:
    workspace = workspace_name or str(tmp_path / "missing")
    session = MemorySession(workspace, access="read")
    found = MemoryToolset(session).call("memory_search", {"query": "tea"})
    core = SearchResult.model_validate(found.structured)
    with pytest.raises(error) as caught:
        MemquillRetriever.from_workspace(workspace).retrieve("tea")
    assert (caught.value.code, caught.value.message) == (code, core.error)
    assert core.error_code == code


async def test_in_a_query_engine_the_llm_sees_snippets_but_no_ids(
    session: MemorySession,
) -> None:
    receipt = _remember(session, "The user drinks oolong tea every morning.")
    retriever = MemquillRetriever(session, similarity_top_k=3)
    # MockLLM answers with the prompt it was given: the response is what the LLM read.
    engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())
    for response in (engine.query("oolong tea"), await engine.aquery("oolong tea")):
        expected = retriever.retrieve("oolong tea")
        assert [n.node_id for n in response.source_nodes] == [n.node_id for n in expected]
        assert [n.score for n in response.source_nodes] == [n.score for n in expected]
        prompt = str(response)
        assert "The user drinks oolong tea every morning." in prompt
        assert "source: memory.md" in prompt
        assert "oolong tea" in prompt.rsplit("Query:", 1)[-1]
        assert receipt.record_id is not None and receipt.record_id not in prompt
        assert receipt.record_revision is not None and receipt.record_revision not in prompt
        assert receipt.revision not in prompt
        assert not UUID.search(prompt) and not REVISION.search(prompt)


def test_search_warnings_are_logged_not_raised(
    session: MemorySession, workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A hand-written records.md is not managed memory: search still answers from the notes.
    (workspace / "memory" / "records.md").write_text("# my own list\n- tea\n", "utf-8")
    with caplog.at_level(logging.WARNING, logger="memquill.retrieval"):
        nodes = MemquillRetriever(session).retrieve("tea")
    core = MemoryToolset(session).call("memory_search", {"query": "tea"}).structured
    assert core is not None and core["warnings"]
    assert core["warnings"][0].startswith("Managed memory unavailable: ")
    assert [record.getMessage() for record in caplog.records] == [
        f"memquill search: {warning}" for warning in core["warnings"]
    ]
    assert [node.node.metadata["source"] for node in nodes] == [hit["path"] for hit in core["hits"]]
    assert nodes


def test_from_workspace_searches_read_only(workspace: Path) -> None:
    retriever = MemquillRetriever.from_workspace(
        workspace, similarity_top_k=1, tags=["project"], file_type="notes"
    )
    (node,) = retriever.retrieve("tea")
    assert node.node_id == "notes/project.md#6"
    assert node.text == "The tea shop project ships in October."


def test_from_workspace_opens_a_read_session_that_loads_no_plugin(
    workspace: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A plugin that fails to load: a session that may write loads the plugins (their secret
    # detectors guard its writes) and logs the failure; the retriever's read session loads none.
    monkeypatch.delenv(DISABLE_AUTOLOAD_ENV, raising=False)
    broken = {"memquill_tmp_broken": BROKEN_PLUGIN}
    site = write_distribution(tmp_path / "site", broken, {"tmp-broken": "memquill_tmp_broken"})
    monkeypatch.syspath_prepend(site)
    with caplog.at_level(logging.WARNING, logger="memquill.plugins"):
        MemquillToolSpec.from_workspace(workspace, "chat-9")
        assert "plugin tmp-broken" in caplog.text
        caplog.clear()
        retriever = MemquillRetriever.from_workspace(workspace)
    assert caplog.records == []
    assert retriever.retrieve("tea")
