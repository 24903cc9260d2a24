"""The retriever returns the core's search hits, in the core's order, as Documents."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from pydantic import ValidationError
from tests.adapters.langchain.langchain_helpers import core_search, notes_workspace, query, session

from memquill import InvalidInputError, MemoryToolset, SearchHit, StorageError, UnsafePathError
from memquill.query import MAX_SEARCH_LIMIT
from memquill_langchain import MemquillRetriever, MemquillToolkit

QUERIES: list[tuple[str, dict[str, Any]]] = [
    ("saffron", {}),
    ("saffron", {"k": 2}),
    ("saffron", {"k": 20, "file_type": "daily"}),
    ("saffron color", {"filter_tags": ["#project"]}),
    ("长城 Great Wall", {}),
    ("tea deploys", {"file_type": "longterm"}),
    ("zebra unicorn", {}),
]


def _expected(hit: SearchHit) -> tuple[str | None, str, dict[str, Any]]:
    note_id = f"{hit.path}#{hit.line}"
    return (
        hit.record_id if hit.kind == "record" else note_id,
        hit.snippet,
        {
            "source": hit.path,
            "line": hit.line,
            "rank": hit.rank,
            "score": hit.score,
            "heading": hit.heading,
            "kind": hit.kind,
            "provenance": hit.source,
            "record_id": hit.record_id,
            "record_revision": hit.record_revision,
            "key": hit.key,
        },
    )


def _seen(documents: list[Document]) -> list[tuple[str | None, str, dict[str, Any]]]:
    return [(doc.id, doc.page_content, doc.metadata) for doc in documents]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = notes_workspace(tmp_path)
    core = MemoryToolset(session(root))
    core.call("memory_remember", {"content": "Saffron threads go in the paella last."})
    return root


@pytest.mark.parametrize(("text", "options"), QUERIES)
def test_documents_are_the_core_hits_in_order(
    workspace: Path, text: str, options: dict[str, Any]
) -> None:
    k = options.get("k", 5)
    tags = tuple(options.get("filter_tags", ()))
    file_type = options.get("file_type", "all")
    core = core_search(workspace, text, tags=list(tags), file_type=file_type, limit=k)
    assert core.error is None
    expected = [_expected(hit) for hit in core.hits]

    retriever = MemquillRetriever(memory=query(workspace), **options)
    assert _seen(retriever.invoke(text)) == expected
    # The same options given per call instead of to the constructor.
    assert _seen(MemquillRetriever(memory=query(workspace)).invoke(text, **options)) == expected


async def test_async_returns_the_same_documents(workspace: Path) -> None:
    retriever = MemquillRetriever(memory=query(workspace), k=4)
    assert _seen(await retriever.ainvoke("saffron")) == _seen(retriever.invoke("saffron"))


def test_a_record_document_can_be_corrected_with_its_revision(workspace: Path) -> None:
    toolkit = MemquillToolkit(session=session(workspace))
    retriever = toolkit.as_retriever(k=1, file_type="longterm")
    assert retriever.memory is toolkit.toolset.query  # one document cache for tools and retriever
    [record] = retriever.invoke("saffron paella threads")
    assert record.metadata["kind"] == "record"
    assert record.id == record.metadata["record_id"]
    assert record.page_content == "Saffron threads go in the paella last."

    receipt = toolkit.toolset.call(
        "memory_update",
        {
            "id": record.id,
            "content": "Saffron threads go in the paella first.",
            "expected_revision": record.metadata["record_revision"],
        },
    )
    assert not receipt.is_error
    [updated] = retriever.invoke("saffron paella threads")
    assert updated.page_content == "Saffron threads go in the paella first."


def test_k_below_one_is_refused_with_the_core_message(workspace: Path) -> None:
    core = core_search(workspace, "saffron", limit=0)
    with pytest.raises(InvalidInputError) as per_call:
        MemquillRetriever(memory=query(workspace)).invoke("saffron", k=0)
    with pytest.raises(InvalidInputError) as constructed:
        MemquillRetriever(memory=query(workspace), k=0).invoke("saffron")
    assert str(per_call.value) == str(constructed.value) == core.error


@pytest.mark.parametrize("k", [21, 50])
def test_k_above_the_core_maximum_gives_what_memquill_returns(tmp_path: Path, k: int) -> None:
    for number in range(MAX_SEARCH_LIMIT + 5):
        (tmp_path / f"note-{number:02}.md").write_text(
            f"# Note {number}\n\nSaffron batch {number}.\n"
        )
    expected = core_search(tmp_path, "saffron", limit=MAX_SEARCH_LIMIT)
    per_call = MemquillRetriever(memory=query(tmp_path)).invoke("saffron", k=k)
    constructed = MemquillRetriever(memory=query(tmp_path), k=k).invoke("saffron")
    assert len(per_call) == MAX_SEARCH_LIMIT
    assert _seen(per_call) == _seen(constructed) == [_expected(hit) for hit in expected.hits]


def test_core_failures_raise_the_matching_memquill_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="query"):
        MemquillRetriever(memory=query(tmp_path)).invoke("")
    with pytest.raises(UnsafePathError, match="absolute workspace"):
        MemquillRetriever.from_workspace("relative/notes").invoke("saffron")
    with pytest.raises(StorageError):
        MemquillRetriever.from_workspace(tmp_path / "missing").invoke("saffron")


def test_unknown_options_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="top_k"):
        MemquillRetriever(memory=query(tmp_path), top_k=3)  # pyright: ignore[reportCallIssue]


def test_search_warnings_are_logged_and_notes_still_returned(
    workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (workspace / "memory" / "records.md").write_text("hand-edited, not a records file\n", "utf-8")
    core = core_search(workspace, "saffron")
    assert core.warnings
    with caplog.at_level(logging.WARNING, logger="memquill.retrieval"):
        documents = MemquillRetriever(memory=query(workspace)).invoke("saffron")
    assert _seen(documents) == [_expected(hit) for hit in core.hits]
    assert [record.getMessage() for record in caplog.records] == [
        f"memquill search: {warning}" for warning in core.warnings
    ]
