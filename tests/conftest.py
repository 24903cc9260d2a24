"""Suite-wide settings, and the PostgreSQL server the database tests share.

Property tests run with a fixed seed derivation and no time limit per example: CI machines vary
in speed, and a test must fail because of the code, never because the machine was busy.

``postgres_server`` comes from ``$MEMQUILL_TEST_POSTGRES`` (``.ci/run`` starts one and sets it;
a test fails, never skips, when it is set but the server cannot be reached), else from a
throwaway cluster started here when the server binaries are installed; only without both, and
outside CI, are the database tests skipped. One cluster serves the whole run.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from tests import postgres_cluster

settings.register_profile(
    "memquill",
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("memquill")


def pytest_configure(config: object) -> None:
    """Keep model-assistance state (install key, receipts) out of the real user data folder."""
    import os
    import tempfile

    # Each pytest-xdist worker gets its own folder: receipts and the install key are per-run state.
    if not os.environ.get("MEMQUILL_TEST_DATA_HOME") or os.environ.get("PYTEST_XDIST_WORKER"):
        folder = tempfile.mkdtemp(prefix="memquill-test-data-")
        os.environ["MEMQUILL_TEST_DATA_HOME"] = folder
        os.environ["XDG_DATA_HOME"] = folder


@pytest.fixture(autouse=True, scope="session")
def _index_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Search indexes go to a temporary folder, never the user's cache."""
    folder = tmp_path_factory.mktemp("indexes")
    previous = os.environ.get("MEMQUILL_INDEX_DIR")
    os.environ["MEMQUILL_INDEX_DIR"] = str(folder)
    yield
    if previous is None:
        os.environ.pop("MEMQUILL_INDEX_DIR", None)
    else:
        os.environ["MEMQUILL_INDEX_DIR"] = previous


@dataclass(frozen=True)
class Server:
    """A reachable test server and, when known, how to restart it."""

    url: str
    data: Path | None
    bindir: Path | None


def _reachable(url: str) -> bool:
    import psycopg  # only where a database test runs: not every environment has the driver

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
