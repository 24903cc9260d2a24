"""Both records backends for the store suites: the workspace file and PostgreSQL.

``backing`` runs a test once per backend. The PostgreSQL server comes from
``$MEMQUILL_TEST_POSTGRES`` (``.ci/run`` starts one and sets it; a test fails, never skips,
when it is set but the server cannot be reached), else from a throwaway cluster started here
when the server binaries are installed; only without both, and outside CI, are the database
runs skipped.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import uuid
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from tests import postgres_cluster
from tests.core.store_helpers import raw, records_path, tree

from memquill import MemoryRecordError, RecordStore


@dataclass(frozen=True)
class Server:
    """A reachable test server and, when known, how to restart it."""

    url: str
    data: Path | None
    bindir: Path | None


def _reachable(url: str) -> bool:
    try:
        with psycopg.connect(url, connect_timeout=10) as connection:
            connection.execute("SELECT 1")
    except psycopg.Error:
        return False
    return True


@pytest.fixture(scope="session")
def postgres_server() -> Generator[Server]:
    url = os.environ.get(postgres_cluster.URL_ENV)
    if url:
        if not _reachable(url):
            pytest.fail(f"${postgres_cluster.URL_ENV} is set but the server cannot be reached")
        data = os.environ.get(postgres_cluster.DATA_ENV)
        bindir = os.environ.get(postgres_cluster.BIN_ENV)
        yield Server(url, Path(data) if data else None, Path(bindir) if bindir else None)
        return
    if postgres_cluster.bindir() is None:
        if os.environ.get("CI"):
            pytest.fail("CI must provide PostgreSQL (.ci/run installs and starts it)")
        pytest.skip("no PostgreSQL server here: set MEMQUILL_TEST_POSTGRES or install postgresql")
    directory = Path(tempfile.mkdtemp(prefix="memquill-pg-"))
    cluster = postgres_cluster.start(directory)
    try:
        yield Server(cluster.url, cluster.data, cluster.bindir)
    finally:
        postgres_cluster.stop(cluster.data, cluster.bindir)


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
        with psycopg.connect(self._url(), autocommit=True) as connection:
            connection.execute(
                "UPDATE memquill.records SET records = %s WHERE workspace = %s", (data, self.name)
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
