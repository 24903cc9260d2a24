"""The parity suite with the records in PostgreSQL: every case gives the file store's results.

Each case runs through the core with its records in a workspace row of its own (a fresh name:
cases never see each other's records) while its notes stay in the workspace folder, and is
compared with the case's expected texts and with the same case run on the file store. The
server is ``tests/conftest.py``'s ``postgres_server``. A parity test never skips once
collected: where a server exists or can be started, an unreachable one fails. Only a machine
with no PostgreSQL at all (no ``MEMQUILL_TEST_POSTGRES``, no server binaries) and not CI leaves
this module out, as the other database tests skip there, so the README's ``uv run pytest``
holds on a fresh machine; CI always has a server (``.ci/run`` installs one).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
from tests import postgres_cluster
from tests.conftest import Server

from memquill import MemorySession, MemoryToolset, RecordStore
from memquill.query import _database
from memquill.testing import ParitySuite
from memquill.testing._cases import load_cases
from memquill.testing._runner import CoreHarness, HarnessFactory, run_case

if (
    not os.environ.get(postgres_cluster.URL_ENV)
    and postgres_cluster.bindir() is None
    and not os.environ.get("CI")
):
    pytest.skip(
        "no PostgreSQL server here: set MEMQUILL_TEST_POSTGRES or install postgresql",
        allow_module_level=True,
    )


def database_location(server: Server) -> str:
    """A workspace row no other run uses."""
    return f"{server.url}#workspace=parity-{uuid.uuid4()}"


class TestCoreParityPostgres(ParitySuite):
    def harness_factory(self) -> HarnessFactory:
        return CoreHarness

    def store_location(self, request: pytest.FixtureRequest) -> str | None:
        try:
            server: Server = request.getfixturevalue("postgres_server")
        except pytest.skip.Exception as missing:
            # A parity test never skips: say why it cannot run instead.
            pytest.fail(f"the parity suite on PostgreSQL needs a server: {missing}")
        return database_location(server)


class TestCoreParityPostgresCandidates(TestCoreParityPostgres):
    """The same cases with every search of the records asking the database for its
    candidates, however few the records (:mod:`memquill.query._database`): the same texts."""

    @pytest.fixture(autouse=True)
    def _database_candidates(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(_database, "DATABASE_RECORDS", -1)


def test_a_case_keeps_its_records_in_its_own_row(postgres_server: Server, tmp_path: Path) -> None:
    """The location reaches the store: the case's records are in its row (the same versions as
    on the file store), none in the folder, and a fresh row starts empty."""
    (case,) = [case for case in load_cases() if case.id == "keys-lifecycle"]
    location = database_location(postgres_server)
    run_case(case, CoreHarness, tmp_path / "db", store=location)
    run_case(case, CoreHarness, tmp_path / "file", store="file")

    def versions(store: RecordStore) -> list[tuple[str, str, str | None]]:
        return [(r.status, r.content, r.key) for r in store.snapshot().records]

    in_row = versions(RecordStore(tmp_path / "db", location=location))
    assert in_row, "the case wrote nothing to its row"
    assert in_row == versions(RecordStore(tmp_path / "file", location="file"))
    assert not (tmp_path / "db" / "memory" / "records.md").exists()
    fresh = RecordStore(tmp_path / "db", location=database_location(postgres_server))
    assert fresh.snapshot().records == ()


def test_a_fixtures_records_file_is_imported_into_the_row(
    postgres_server: Server, tmp_path: Path
) -> None:
    """A ``memory/records.md`` shipped in a case's workspace (here with a correction and a
    forget: a file in a later format than an empty store's) starts the database store with the
    same records, and leaves no copy beside the notes."""
    (case,) = [case for case in load_cases() if case.id == "recent-empty"]
    written = tmp_path / "written"
    written.mkdir()
    toolset = MemoryToolset(MemorySession(written, "fixture", store="file"))

    def remember(content: str) -> dict[str, str]:
        result = toolset.call("memory_remember", {"content": content})
        receipt = result.structured
        assert receipt is not None and not result.is_error, result.text
        return {"id": receipt["recordId"], "rev": receipt["recordRevision"]}

    kiln = remember("The kiln runs at 1200 degrees.")
    glaze = remember("Glaze batches are labelled by week.")
    corrected = {"id": kiln["id"], "content": "The kiln runs at 1240 degrees."}
    assert not toolset.call(
        "memory_update", corrected | {"expected_revision": kiln["rev"]}
    ).is_error
    forgotten = {"id": glaze["id"], "expected_revision": glaze["rev"]}
    assert not toolset.call("memory_forget", forgotten).is_error
    shipped = RecordStore(written, location="file").snapshot().records

    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    copy = (written / "memory" / "records.md").read_bytes()
    (root / "memory" / "records.md").write_bytes(copy)
    location = database_location(postgres_server)
    outcomes = run_case(case, CoreHarness, root, store=location)

    assert RecordStore(root, location=location).snapshot().records == shipped
    assert not (root / "memory" / "records.md").exists()
    assert "The kiln runs at 1240 degrees." in outcomes[0].text
    assert "Glaze" not in outcomes[0].text
