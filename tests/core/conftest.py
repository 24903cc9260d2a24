"""Both records backends for the store suites: the workspace file and PostgreSQL.

``backing`` runs a test once per backend; the PostgreSQL server is ``tests/conftest.py``'s
``postgres_server``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from tests import postgres_cluster
from tests.conftest import Server
from tests.core.store_helpers import raw, records_path, tree

from memquill import RecordStore
from memquill.errors import MemoryRecordError


@dataclass(frozen=True)
class Backing:
    """One store under test: its workspace folder and, for the database, its row."""

    kind: str
    workspace: Path
    location: str | None
    url: str | None = None
    name: str | None = None

    def store(self, **options: Any) -> RecordStore:
        return RecordStore(self.workspace, location=self.location, **options)

    def location_for_child(self) -> str:
        return self.location or "file"

    def raw(self) -> bytes:
        """The stored bytes, read without the store's code."""
        if self.kind == "file":
            return raw(self.workspace)
        row = self._row()
        return bytes(row[1]) if row else b""

    def identity(self) -> bytes:
        if self.kind == "file":
            return os.fsencode(os.path.realpath(self.workspace))
        row = self._row()
        assert row is not None, "the store has not been used yet"
        return str(row[0]).encode()

    def revision_of(self, data: bytes) -> str:
        return hashlib.sha256(self.identity() + b"\0" + data).hexdigest()

    def put(self, data: bytes) -> None:
        """Replace the stored bytes behind the store's back (an editor, or an administrator)."""
        if self.kind == "file":
            records_path(self.workspace).parent.mkdir(exist_ok=True)
            records_path(self.workspace).write_bytes(data)
            return
        with contextlib.suppress(MemoryRecordError):  # bytes put before may not decode
            self.store().snapshot()  # the row exists from first use
        # As a workspace the store keeps as bytes (a v1 blob that did not split into rows).
        with psycopg.connect(self._url(), autocommit=True) as connection, connection.transaction():
            connection.execute(
                "DELETE FROM memquill.versions WHERE workspace_id = "
                "(SELECT workspace_id FROM memquill.workspaces WHERE workspace = %s)",
                (self.name,),
            )
            connection.execute(
                "UPDATE memquill.workspaces SET blob = %s, seq = seq + 1 WHERE workspace = %s",
                (data, self.name),
            )

    def image(self) -> tuple[dict[str, bytes], bytes]:
        """Everything a refused write must leave as it was."""
        return tree(self.workspace), self.raw()

    def _url(self) -> str:
        assert self.url is not None
        return self.url

    def _row(self) -> tuple[Any, ...] | None:
        with psycopg.connect(self._url(), autocommit=True) as connection:
            exists = connection.execute("SELECT to_regclass('memquill.records')").fetchone()
            if not exists or exists[0] is None:
                return None
            return connection.execute(
                "SELECT workspace_id, records FROM memquill.records WHERE workspace = %s",
                (self.name,),
            ).fetchone()


def database_backing(workspace: Path, server: Server) -> Backing:
    """A store in its own row (a fresh workspace name) of the test database."""
    name = f"test-{uuid.uuid4()}"
    return Backing("postgres", workspace, f"{server.url}#workspace={name}", server.url, name)


@pytest.fixture(params=["file", "postgres"])
def backing(request: pytest.FixtureRequest, tmp_path: Path) -> Backing:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    if request.param == "file":
        return Backing("file", workspace, None)
    return database_backing(workspace, request.getfixturevalue("postgres_server"))


@pytest.fixture(scope="module")
def own_server() -> Iterator[Server]:
    """A server of this module's own, for the tests that end backends or restart it: the shared
    one serves other test files in other workers at the same time."""
    if postgres_cluster.bindir() is None:
        pytest.fail("ending backends and restarting need the PostgreSQL server binaries")
    # Outside pytest's temporary folders, which only their owner may enter (as root, the server
    # runs as the postgres user).
    cluster = postgres_cluster.start(Path(tempfile.mkdtemp(prefix="memquill-pg-own-")))
    try:
        yield Server(cluster.url, cluster.data, cluster.bindir)
    finally:
        postgres_cluster.stop(cluster.data, cluster.bindir)
