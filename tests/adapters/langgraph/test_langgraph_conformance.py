"""The store contract (``memquill.testing.StoreConformance``) on three stores.

On LangGraph's own ``InMemoryStore`` first, with the choices it made, which proves the suite
states LangGraph's semantics rather than memquill's; then on ``MemquillStore`` with each
namespace's records in its folder, and with them in PostgreSQL rows.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest
from langgraph.store.base import IndexConfig
from langgraph.store.memory import InMemoryStore
from tests.conftest import Server

from memquill.testing import StoreConformance
from memquill_langchain.store import MemquillStore


class TestInMemoryStore(StoreConformance):
    unqueried_order = "insertion"
    keeps_created_at = False
    ranks_queries = False
    lists_emptied_namespaces = True

    @pytest.fixture
    def store(self) -> InMemoryStore:
        return InMemoryStore()

    @pytest.fixture
    def indexed_store(self) -> InMemoryStore:
        return InMemoryStore(index=cast("IndexConfig", self.semantic_index))


class TestMemquillStoreOnFiles(StoreConformance):
    @pytest.fixture
    def store(self, tmp_path: Path) -> MemquillStore:
        return MemquillStore(tmp_path)

    @pytest.fixture
    def indexed_store(self, tmp_path: Path) -> MemquillStore:
        return MemquillStore(tmp_path, index=self.semantic_index)


class TestMemquillStoreOnPostgres(StoreConformance):
    @pytest.fixture
    def store(self, tmp_path: Path, postgres_server: Server) -> Iterator[MemquillStore]:
        # A fresh base name per test: its namespaces are rows no other test has.
        url = f"{postgres_server.url}#workspace=conformance-{uuid.uuid4().hex[:12]}"
        store = MemquillStore(tmp_path, store=url)
        yield store
        store.close()

    @pytest.fixture
    def indexed_store(self, tmp_path: Path, postgres_server: Server) -> Iterator[MemquillStore]:
        url = f"{postgres_server.url}#workspace=conformance-{uuid.uuid4().hex[:12]}"
        store = MemquillStore(tmp_path, store=url, index=self.semantic_index)
        yield store
        store.close()
