"""The PostgreSQL store's schema v2: a row per record version, no 2 MiB ceiling, and the
upgrade of a v1 database (one blob per workspace, built here with v1's own statements)."""

from __future__ import annotations

import hashlib
import json
import secrets
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from tests.conftest import Server
from tests.core import postgres_v1, postgres_v2
from tests.core.conftest import Backing, database_backing
from tests.core.store_helpers import expect_error, manual

from memquill import RecordStore
from memquill.errors import MemoryRecordError, Messages
from memquill.store import _postgres as postgres_backend
from memquill.store._codec import HEADER, decode_store
from memquill.store._memo import Decoded
from memquill.store._postgres import NO_QUOTA
from memquill.store._postgres_location import parse_location
from memquill.store._postgres_pool import list_workspaces
from memquill.store._postgres_rows import Row, assemble, columns, rows_of
from memquill.store._postgres_sql import APPEND, WRITERS_SHARED, Script
from memquill.store._record import FactKey
from memquill.store._results import Candidate, WriteResult
from memquill.store._transaction import Change, Operation, apply_operation

Connection = psycopg.Connection[tuple[object, ...]]


@pytest.fixture
def db(tmp_path: Path, postgres_server: Server) -> Backing:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return database_backing(workspace, postgres_server)


@pytest.fixture
def database(postgres_server: Server) -> Iterator[str]:
    """A database of this test's own (a v1 schema must not meet the shared one)."""
    name = f"memquill_v1_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_server.url, autocommit=True) as connection:
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield f"{postgres_server.url.rsplit('/', 1)[0]}/{name}"
    finally:
        with psycopg.connect(postgres_server.url, autocommit=True) as connection:
            connection.execute(
                sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name))
            )


def rows(url: str, workspace: str) -> list[tuple[object, ...]]:
    """The workspace's version rows in file order: id, status, key, changed."""
    with psycopg.connect(url, autocommit=True) as connection:
        return connection.execute(
            "SELECT v.id, v.status, v.key, v.changed FROM memquill.versions v "
            "JOIN memquill.workspaces w USING (workspace_id) WHERE w.workspace = %s "
            "ORDER BY v.position",
            (workspace,),
        ).fetchall()


def keyed(content: str, key: str) -> Candidate:
    return Candidate(content, {"kind": "manual"}, f"op:{key}:{content}", key)


def test_each_version_is_a_row_and_a_write_touches_only_its_rows(db: Backing) -> None:
    assert db.url is not None and db.name is not None
    store = db.store()
    saved = store.save([keyed("Tea.", "drinks/ana"), keyed("Mate.", "drinks/bo"), manual("x")])
    before = rows(db.url, db.name)
    assert [(status, key) for _, status, key, _ in before] == [
        ("active", "drinks/ana"),
        ("active", "drinks/bo"),
        ("active", None),
    ]
    corrected = store.correct(FactKey("drinks/ana"), "Coffee.", saved.revision)
    after = rows(db.url, db.name)
    assert [(status, key) for _, status, key, _ in after] == [
        ("superseded", "drinks/ana"),
        ("active", "drinks/bo"),
        ("active", None),
        ("active", "drinks/ana"),
    ]
    # Only the corrected version and the new one were written; the others kept their rows.
    assert after[1:3] == before[1:3] and after[0][3] == after[3][3] != before[0][3]
    # The rows give back the file's bytes, so revisions are the file store's.
    assert corrected.revision == db.revision_of(db.raw()) == store.snapshot().revision
    assert [r.content for r in decode_store(db.raw().decode()).records] == [
        "Tea.",
        "Mate.",
        "x",
        "Coffee.",
    ]
    # Another client reads the same records and revision, fetching only what changed.
    other = db.store()
    assert other.snapshot().revision == corrected.revision
    store.revoke(FactKey("drinks/bo"), corrected.revision)
    assert other.snapshot().revision == store.snapshot().revision == db.revision_of(db.raw())
    assert other.snapshot().records == store.snapshot().records


def test_an_appended_correction_supersedes_its_row_and_keeps_the_bytes(db: Backing) -> None:
    """A second correction of a keyed fact is appended (a v2 file): the old version's bytes
    stay, its row's status and key columns say superseded, and the key moves without tripping
    the one-active-key constraint."""
    assert db.url is not None and db.name is not None
    store = db.store()
    saved = store.save([keyed("Tea.", "drinks/ana"), manual("x")])
    revision = store.correct(FactKey("drinks/ana"), "Coffee.", saved.revision).revision
    rewritten = db.raw()
    corrected = store.correct(FactKey("drinks/ana"), "Mate.", revision)
    assert db.raw().startswith(rewritten)  # appended: the bytes before are unchanged
    assert [(status, key) for _, status, key, _ in rows(db.url, db.name)] == [
        ("superseded", "drinks/ana"),
        ("active", None),
        ("superseded", "drinks/ana"),
        ("active", "drinks/ana"),
    ]
    assert corrected.revision == db.revision_of(db.raw()) == store.snapshot().revision
    other = db.store()
    assert other.snapshot().records == store.snapshot().records
    assert store.snapshot().by_key("drinks/ana") == other.snapshot().by_key("drinks/ana")
    again = store.correct(FactKey("drinks/ana"), "Water.", corrected.revision)
    assert other.snapshot().revision == again.revision


def test_a_refused_append_marks_no_version_superseded(db: Backing) -> None:
    """The append's one statement marks the versions a correction supersedes only if it
    wrote the correction: refused (a version written since touched its key), the row it
    would have marked keeps its status and stamp."""
    assert db.url is not None and db.name is not None
    store = db.store()
    store.save([keyed("Tea.", "drinks/ana")])
    store.upsert([keyed("Coffee.", "drinks/ana")])  # written after the rows "held" below
    before = rows(db.url, db.name)
    active = before[-1]
    with psycopg.connect(db.url, autocommit=True) as connection:
        found = connection.execute(
            "SELECT workspace_id, header, seq FROM memquill.workspaces WHERE workspace = %s",
            (db.name,),
        ).fetchone()
        assert found is not None
        workspace_id, header, seq = found
        marked = json.dumps(
            [
                {
                    "id": active[0],
                    "root_id": active[0],
                    "status": "superseded",
                    "key": "drinks/ana",
                    "source_key": None,
                    "operation_hash": None,
                    "created_at": "",
                    "updated_at": "",
                    "meta": "{}",
                    "content": "",
                }
            ]
        )
        answer = connection.execute(
            APPEND,
            (
                "1000ms",
                db.name,
                workspace_id,
                header,
                seq - 1,
                [],
                ["drinks/ana"],
                [],
                [],
                0,
                0,
                [active[0]],
                marked,
                "[]",
            ),
        ).fetchall()
    assert answer and all(row[0] is None for row in answer)  # refused
    assert rows(db.url, db.name) == before
    assert store.snapshot().revision == db.store().snapshot().revision


def test_a_schema_made_before_the_one_statement_append_gains_it(
    database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Clients of this schema version before the append became one statement made databases
    # without its function: the first connection of this one adds it, and keeps theirs.
    location = f"{database}#workspace=team"
    earlier = RecordStore(tmp_path, location=location)
    earlier.upsert([keyed("Tea.", "drinks/ana")])
    earlier.upsert([keyed("Coffee.", "drinks/ana")])  # the first correction rewrites
    with psycopg.connect(database, autocommit=True) as connection:
        connection.execute("DROP FUNCTION memquill.append_v4")
    later = RecordStore(tmp_path, location=location)
    later.snapshot()  # the rows held, so the correction below is an append
    sent: list[str] = []
    real = Script.send

    def send(self: Script) -> object:
        sent.extend(self._parts)  # pyright: ignore[reportPrivateUsage]
        return real(self)

    monkeypatch.setattr(Script, "send", send)
    assert later.upsert([keyed("Mate.", "drinks/ana")]).status == "saved"
    assert any("memquill.append_v4(" in part for part in sent), sent
    assert [row[1:3] for row in rows(database, "team")] == [
        ("superseded", "drinks/ana"),
        ("superseded", "drinks/ana"),
        ("active", "drinks/ana"),
    ]
    found = later.snapshot().by_key("drinks/ana")
    assert found is not None and found.content == "Mate."
    with psycopg.connect(database, autocommit=True) as connection:
        found = connection.execute(
            "SELECT to_regproc('memquill.append_v4') IS NOT NULL,"
            " to_regproc('memquill.append_v3') IS NOT NULL"
        ).fetchone()
    assert found == (True, True)


def test_an_earlier_clients_append_is_written_by_the_one_statement(
    database: str, tmp_path: Path
) -> None:
    # A client before append_v4 takes the locks itself, then calls append_v3 with the
    # versions its correction supersedes: on a database this version made, append_v3 hands
    # them to append_v4, which writes the new version and marks the old one with its seq.
    RecordStore(tmp_path, location=f"{database}#workspace=team").save([keyed("Tea.", "drinks/ana")])
    [(old_id, _, _, _)] = rows(database, "team")
    new_id = str(uuid.uuid4())
    with psycopg.connect(database, autocommit=True) as connection:
        found = connection.execute(
            "SELECT w.workspace_id, w.header, w.seq, v.meta, v.content, v.created_at"
            " FROM memquill.workspaces w JOIN memquill.versions v USING (workspace_id)"
            " WHERE w.workspace = 'team'"
        ).fetchone()
        assert found is not None
        workspace_id, header, seq, meta, content, created = found
        version = {
            "root_id": old_id,
            "key": "drinks/ana",
            "source_key": None,
            "operation_hash": None,
            "created_at": created,
            "updated_at": created,
            "meta": meta,
            "content": content,
        }
        marked = [{**version, "id": old_id, "status": "superseded"}]
        added = [{**version, "id": new_id, "status": "active", "ord": 0}]
        with connection.transaction():
            connection.execute(WRITERS_SHARED, ("team",))
            connection.execute(
                "SELECT 1 FROM memquill.workspaces WHERE workspace_id = %s FOR NO KEY UPDATE",
                (workspace_id,),
            )
            answer = connection.execute(
                "SELECT * FROM memquill.append_v3(%s, %s, %s, %s::text[], %s::text[],"
                " %s::text[], %s::bytea[], %s, %s, %s::json, %s::json)",
                (
                    workspace_id,
                    header,
                    seq,
                    [old_id],
                    ["drinks/ana"],
                    [],
                    [],
                    10,
                    1,
                    json.dumps(marked),
                    json.dumps(added),
                ),
            ).fetchall()
    assert [row[0] for row in answer] == [seq + 1]
    assert rows(database, "team") == [
        (old_id, "superseded", "drinks/ana", seq + 1),
        (new_id, "active", "drinks/ana", seq + 1),
    ]


def test_the_places_a_correction_replaced_are_the_rows_it_updates(
    db: Backing, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The write's change names the versions an appended correction superseded (its draft
    noted them), and those are the rows updated: no scan of every record finds them. A change
    that names none updates none (here the old version's row then still says active)."""
    assert db.url is not None and db.name is not None
    changes: list[Change] = []
    dropping = False

    def spied(current: Decoded, operation: Operation, capacity: int) -> Change | WriteResult:
        answer = apply_operation(current, operation, capacity)
        if isinstance(answer, Change):
            changes.append(answer)
            if dropping:
                answer = replace(answer, replaced=frozenset())
        return answer

    monkeypatch.setattr(postgres_backend, "apply_operation", spied)
    store = db.store()
    saved = store.save([keyed("Tea.", "drinks/ana"), manual("x"), manual("y")])
    revision = store.correct(FactKey("drinks/ana"), "Coffee.", saved.revision).revision
    x, y = (store.snapshot().records[n].id for n in (1, 2))
    corrected = store.correct(x, "x2", revision)
    assert [change.replaced for change in changes] == [frozenset(), {0}, {1}]
    assert [status for _, status, _, _ in rows(db.url, db.name)][:2] == ["superseded"] * 2
    dropping = True
    store.correct(y, "y2", corrected.revision)
    assert changes[-1].replaced == {2}
    assert [status for _, status, _, _ in rows(db.url, db.name)][2] == "active"


def test_a_workspace_is_not_bounded_by_2_mib_but_by_its_quota(db: Backing) -> None:
    assert db.url is not None and db.name is not None
    store = db.store()
    words = " ".join(f"word{n}" for n in range(1800))  # about 15,000 characters
    for batch in range(4):  # 160 facts of 15,000 characters: about 2.3 MiB
        facts = [manual(f"fact {batch}-{n}: {words}", f"k{batch}-{n}") for n in range(40)]
        assert store.save(facts).status == "saved"
    size = store.snapshot().size_bytes
    assert size > 2 * 1024 * 1024
    assert len(rows(db.url, db.name)) == 160
    report = store.doctor()
    assert report.ok and report.used_bytes == size
    assert (report.max_bytes, report.percent_used) == (None, None)  # no quota: none shown
    assert store.preflight().max_bytes is None  # the same answer, not a capacity of 1 TiB
    assert store.capacity == NO_QUOTA  # what writes are checked against: in effect none
    # A quota is the workspace row's setting: a write past it is refused, nothing written.
    with psycopg.connect(db.url, autocommit=True) as connection:
        connection.execute(
            "UPDATE memquill.workspaces SET quota_bytes = %s WHERE workspace = %s",
            (size + 1000, db.name),
        )
    limited = db.store()
    assert limited.capacity == size + 1000
    assert limited.preflight(0).max_bytes == size + 1000
    with pytest.raises(MemoryRecordError) as refused:
        limited.save([manual(f"one more: {words}", "one-more")])
    assert refused.value.code == "capacity"
    assert store.snapshot().size_bytes == size
    assert limited.save([manual("short")]).status == "saved"


def team_records(tmp_path: Path, *more: Candidate) -> bytes:
    """The records of a file store where a keyed fact was corrected and another forgotten,
    then ``more`` saved."""
    source = tmp_path / "source"
    source.mkdir()
    made = RecordStore(source)
    first = made.save([keyed("Tea.", "drinks/ana"), manual("the deploy window is Tuesday")])
    fixed = made.correct(FactKey("drinks/ana"), "Coffee.", first.revision)
    made.revoke(first.record_ids[1] or "", fixed.revision)
    if more:
        made.save(list(more))
    return made.export()


def v1_database(url: str, tmp_path: Path) -> dict[str, tuple[str, bytes]]:
    """A v1 database as v1 left it: three workspaces (records from a file store, an empty
    one, one an administrator broke), each name mapped to its id and bytes."""
    blobs = {
        "team": team_records(tmp_path),
        "empty": b"",
        "broken": (HEADER + "<!-- memory-record {not json} -->\nx\n\n").encode(),
    }
    workspaces = {name: (str(uuid.uuid4()), data) for name, data in blobs.items()}
    with psycopg.connect(url, autocommit=True) as connection:
        postgres_v1.ensure_schema(connection)
        for name, (workspace_id, data) in workspaces.items():
            postgres_v1.create_workspace(
                connection, name, workspace_id, secrets.token_bytes(32), data
            )
    return workspaces


def v1_revision(workspace_id: str, data: bytes) -> str:
    return hashlib.sha256(workspace_id.encode() + b"\0" + data).hexdigest()


def state(url: str) -> list[tuple[object, ...]]:
    """Everything the upgrade writes, to compare before and after a second connection."""
    with psycopg.connect(url, autocommit=True) as connection:
        return [
            *connection.execute(
                "SELECT workspace, workspace_id, seq, header, blob FROM memquill.workspaces "
                "ORDER BY workspace"
            ).fetchall(),
            *connection.execute(
                "SELECT workspace_id, id, meta, changed FROM memquill.versions ORDER BY 1, 2"
            ).fetchall(),
            *connection.execute("SELECT version FROM memquill.schema_version").fetchall(),
        ]


def test_a_v1_database_upgrades_on_first_connect_once_and_keeps_revisions(
    database: str, tmp_path: Path
) -> None:
    workspaces = v1_database(database, tmp_path)
    team = RecordStore(tmp_path, location=f"{database}#workspace=team")
    snapshot = team.snapshot()
    workspace_id, data = workspaces["team"]
    # The same identity and the same bytes: every revision a client held is still valid.
    assert snapshot.revision == v1_revision(workspace_id, data)
    assert team.export() == data
    assert [status for _, status, _, _ in rows(database, "team")] == [
        "superseded",
        "revoked",
        "active",
    ]
    empty = RecordStore(tmp_path, location=f"{database}#workspace=empty").snapshot()
    assert empty.revision == v1_revision(*workspaces["empty"])
    # Bytes that never decoded are kept as they were and reported, as the file store does.
    broken = RecordStore(tmp_path, location=f"{database}#workspace=broken")
    expect_error("corrupt", Messages.EDITED, broken.snapshot)
    upgraded = state(database)
    with psycopg.connect(database, autocommit=True) as connection:
        # v1's emptied table is gone; the view in its place gives each workspace's bytes.
        left = connection.execute("SELECT to_regclass('memquill.records_v1')").fetchone()
        shown = connection.execute(
            "SELECT workspace, records FROM memquill.records ORDER BY workspace"
        ).fetchall()
    assert left == (None,)
    assert shown == [(name, workspaces[name][1]) for name in ("broken", "empty", "team")]
    # A second connection finds nothing to do.
    RecordStore(tmp_path, location=f"{database}#workspace=team").snapshot()
    assert state(database) == upgraded
    assert team.save([manual("after the upgrade")], snapshot.revision).status == "saved"


def test_names_are_listed_from_no_schema_and_from_v1_without_making_or_moving_anything(
    database: str, tmp_path: Path
) -> None:
    location = parse_location(database)
    assert list_workspaces(location, "").names == ()
    with psycopg.connect(database, autocommit=True) as connection:
        made = connection.execute("SELECT to_regnamespace('memquill')").fetchone()
    assert made == (None,)
    v1_database(database, tmp_path)
    assert list_workspaces(location, "").names == ("broken", "empty", "team")
    assert list_workspaces(location, "te").names == ("team",)
    with psycopg.connect(database, autocommit=True) as connection:
        moved = connection.execute("SELECT to_regclass('memquill.workspaces')").fetchone()
    assert moved == (None,)
    RecordStore(tmp_path, location=f"{database}#workspace=team").snapshot()  # upgraded
    assert list_workspaces(location, "").names == ("broken", "empty", "team")
    assert list_workspaces(location, "e").names == ("empty",)


def test_a_listing_sends_its_mark_alone_until_a_row_under_the_prefix_changes(
    database: str, tmp_path: Path
) -> None:
    location = parse_location(database)
    assert list_workspaces(location, "", None) == (None, (), (), 0)  # no schema yet

    def store(name: str) -> RecordStore:
        return RecordStore(
            tmp_path / name.replace("/", "-"), location=f"{database}#workspace={name}"
        )

    def sql(statement: str, *args: object) -> None:
        with psycopg.connect(database, autocommit=True) as connection:
            connection.execute(statement, args)  # pyright: ignore[reportArgumentType]

    store("team/a").save([manual("a fact")])
    store("team/b").save([manual("b fact")])
    store("teamwork").save([manual("beside the prefix")])
    held, listed, hashes, versions = list_workspaces(location, "team/", None)
    assert versions == 2  # the records the rows hold: one each
    assert held is not None
    assert listed is not None
    assert listed == ("team/a", "team/b")
    names = listed
    assert None not in hashes
    assert list_workspaces(location, "team/", held) == (held, None, (), 2)

    def after(change: Callable[[], object], expected: tuple[str, ...] | None) -> None:
        nonlocal held, names, hashes
        change()
        mark, listed, hashed, _ = list_workspaces(location, "team/", held)
        assert listed == expected
        if listed is not None:
            # Each row's hash changes with it: those of the rows that did not, kept.
            before = dict(zip(names, hashes, strict=True))
            changed = {
                name
                for name, value in zip(listed, hashed, strict=True)
                if before.get(name) != value
            }
            assert len(changed) == 1 or (changed == set() and len(listed) < len(before)), changed
            names, hashes = listed, hashed
        assert (mark == held) == (expected is None)
        assert mark is not None
        held = mark

    team_a = store("team/a")
    both = ("team/a", "team/b")
    after(lambda: team_a.save([manual("another")]), both)
    after(lambda: store("teamwork").save([manual("again")]), None)  # outside the prefix
    after(
        lambda: sql("UPDATE memquill.workspaces SET quota_bytes = 9999 WHERE workspace = 'team/b'"),
        both,
    )
    after(
        lambda: sql("UPDATE memquill.workspaces SET quota_bytes = NULL WHERE workspace = 'team/b'"),
        both,
    )
    after(lambda: store("team/c").save([manual("c fact")]), (*both, "team/c"))
    after(lambda: sql("DELETE FROM memquill.workspaces WHERE workspace = 'team/c'"), both)
    # Made again under its name: a new id, and its seq counts from 0 again.
    after(lambda: store("team/c").save([manual("c fact")]), (*both, "team/c"))
    after(
        lambda: sql(
            "UPDATE memquill.workspaces SET workspace = 'team/d' WHERE workspace = 'team/c'"
        ),
        (*both, "team/d"),
    )
    after(lambda: None, None)
    # A blob (bytes kept as they were) is read whole every time: no mark while one is there.
    sql("UPDATE memquill.workspaces SET blob = '\\x00'::bytea WHERE workspace = 'team/d'")
    last = list_workspaces(location, "team/", held)
    assert (last.mark, last.names) == (None, (*both, "team/d"))
    assert None not in last.hashes[:2]
    assert last.hashes[2] is None
    assert list_workspaces(location, "team/a", None).mark is not None


def test_a_v1_database_gives_no_mark(database: str, tmp_path: Path) -> None:
    v1_database(database, tmp_path)
    assert list_workspaces(parse_location(database), "", "1 0") == (
        None,
        ("broken", "empty", "team"),
        (None, None, None),
        0,  # a v1 table's records are not counted
    )


def test_an_emptied_v1_table_something_depends_on_is_kept(database: str, tmp_path: Path) -> None:
    """The upgrade drops v1's emptied table only when nothing of the operator's refers to it:
    a view over it keeps it (empty), the store works beside it, and a later connection drops
    it once the view is gone."""
    workspaces = v1_database(database, tmp_path)
    with psycopg.connect(database, autocommit=True) as connection:
        connection.execute("CREATE VIEW public.v1_names AS SELECT workspace FROM memquill.records")
    team = RecordStore(tmp_path, location=f"{database}#workspace=team")
    assert team.snapshot().revision == v1_revision(*workspaces["team"])
    with psycopg.connect(database, autocommit=True) as connection:
        kept = connection.execute("SELECT count(*) FROM memquill.records_v1").fetchone()
        named = connection.execute("SELECT count(*) FROM public.v1_names").fetchone()
    assert (kept, named) == ((0,), (0,))
    upgraded = state(database)
    RecordStore(tmp_path, location=f"{database}#workspace=team").snapshot()
    assert state(database) == upgraded
    assert team.save([manual("after the upgrade")]).status == "saved"
    # Once nothing depends on it, a later connection drops it; one that cannot have the
    # table at once (a reader holds it) leaves it for the next, and goes on.
    with psycopg.connect(database, autocommit=True) as connection:
        connection.execute("DROP VIEW public.v1_names")
    with psycopg.connect(database) as reader:
        reader.execute("SELECT count(*) FROM memquill.records_v1")  # held until it ends
        RecordStore(tmp_path, location=f"{database}#workspace=team").snapshot()
    RecordStore(tmp_path, location=f"{database}#workspace=team").snapshot()
    with psycopg.connect(database, autocommit=True) as connection:
        gone = connection.execute("SELECT to_regclass('memquill.records_v1')").fetchone()
    assert gone == (None,)


CONNECT = """
import sys
from memquill import RecordStore
print(RecordStore(sys.argv[1], location=sys.argv[2]).snapshot().revision, flush=True)
"""


def test_two_clients_connecting_at_once_upgrade_each_workspace_once(
    database: str, tmp_path: Path
) -> None:
    workspaces = v1_database(database, tmp_path)
    location = f"{database}#workspace=team"
    clients = [
        subprocess.Popen(
            [sys.executable, "-c", CONNECT, str(tmp_path), location],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    answers = [client.communicate(timeout=60) for client in clients]
    expected = v1_revision(*workspaces["team"])
    assert [out.strip() for out, _ in answers] == [expected, expected], answers
    with psycopg.connect(database, autocommit=True) as connection:
        found = connection.execute(
            "SELECT workspace, workspace_id::text, "
            "(SELECT count(*) FROM memquill.versions v WHERE v.workspace_id = w.workspace_id) "
            "FROM memquill.workspaces w ORDER BY workspace"
        ).fetchall()
    assert found == [
        ("broken", workspaces["broken"][0], 0),
        ("empty", workspaces["empty"][0], 0),
        ("team", workspaces["team"][0], 3),
    ]


def test_a_v1_client_is_refused_by_a_v2_database_and_never_writes(
    database: str, tmp_path: Path
) -> None:
    v1_database(database, tmp_path)
    with psycopg.connect(database, autocommit=True) as early:
        postgres_v1.ensure_schema(early)  # a v1 client connected before the upgrade
        team = RecordStore(tmp_path, location=f"{database}#workspace=team")
        team.snapshot()  # the upgrade
        before = state(database), team.export()
        # A v1 client connecting now is told its schema is newer than it knows.
        with (
            psycopg.connect(database, autocommit=True) as late,
            pytest.raises(postgres_v1.NewerSchemaError),
        ):
            postgres_v1.ensure_schema(late)
        # The one connected before cannot write through v1's statements either.
        with pytest.raises(psycopg.Error), early.transaction():
            early.execute(postgres_v1.READ_FOR_WRITE, {"known": b"", "name": "team"})
            early.execute(postgres_v1.REPLACE, (b"overwritten", "team"))
    assert (state(database), team.export()) == before


def v2_database(url: str, tmp_path: Path) -> tuple[str, bytes]:
    """A v2 database as v2 left it, with one workspace, ``team`` (records from a file store:
    a correction and a forget among them), as its id and bytes."""
    data = team_records(tmp_path, keyed("Blue.", "colour/bo"))
    parsed = rows_of(data)
    assert parsed is not None
    header, pairs = parsed
    workspace_id = str(uuid.uuid4())
    with psycopg.connect(url, autocommit=True) as connection, connection.transaction():
        postgres_v2.ensure_schema(connection)
        connection.execute(
            "INSERT INTO memquill.workspaces (workspace, workspace_id, record_key, header, seq, "
            "versions, size_bytes) VALUES ('team', %s, %s, %s, 4, %s, %s)",
            (workspace_id, secrets.token_bytes(32), header, len(pairs), len(data)),
        )
        for position, (row, record) in enumerate(pairs):
            connection.execute(
                "INSERT INTO memquill.versions (workspace_id, id, position, root_id, status, key,"
                " source_key, operation_hash, created_at, updated_at, meta, content, changed)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 4)",
                (workspace_id, row.id, position, *columns(row, record)),
            )
    return workspace_id, data


def test_a_v2_database_upgrades_to_v3_on_first_connect_and_a_v2_writer_is_still_seen(
    database: str, tmp_path: Path
) -> None:
    workspace_id, data = v2_database(database, tmp_path)
    with psycopg.connect(database, autocommit=True) as early:
        postgres_v2.ensure_schema(early)  # a v2 client connected before the upgrade
        team = RecordStore(tmp_path, location=f"{database}#workspace=team")
        snapshot = team.snapshot()  # the upgrade
        # The same identity and bytes: every revision a client held is still valid.
        assert snapshot.revision == v1_revision(workspace_id, data)
        assert team.export() == data
        with psycopg.connect(database, autocommit=True) as connection:
            versions = connection.execute("SELECT version FROM memquill.schema_version")
            assert [row[0] for row in versions.fetchall()] == [2, 3]
        upgraded = state(database)
        RecordStore(tmp_path, location=f"{database}#workspace=team").snapshot()
        assert state(database) == upgraded  # a second connection finds nothing to do
        # A v2 client connecting now is told its schema is newer than it knows.
        with (
            psycopg.connect(database, autocommit=True) as late,
            pytest.raises(postgres_v2.NewerSchemaError),
        ):
            postgres_v2.ensure_schema(late)
        # The one connected before still writes alone as v2 did: it deletes the last fact's
        # version (no row moves, so no row is stamped ``changed``), and the server notes it in
        # ``deleted_seq``, which v2's statements do not know.
        last = snapshot.records[-1]
        kept = snapshot.records[:-1]
        with early.transaction():
            found = early.execute(
                "SELECT header FROM memquill.workspaces WHERE workspace = 'team' FOR NO KEY UPDATE"
            ).fetchone()
            assert found is not None
            early.execute(postgres_v2.DELETE_ROWS, (workspace_id, [last.id]))
            early.execute(postgres_v2.WROTE, (5, len(kept), found[0], len(data), workspace_id))
        stamped = early.execute(
            "SELECT deleted_seq FROM memquill.workspaces WHERE workspace = 'team'"
        ).fetchone()
    assert stamped == (5,)
    # The v3 client, holding the rows as they were, puts that fact's key again: its append,
    # run on those rows in one message, is refused for the deletion and run again on the rows
    # as they are: a new fact. Without ``deleted_seq`` it was committed as a correction of
    # the fact deleted (its root gone).
    put = team.upsert([keyed("Green.", "colour/bo")])
    assert put.status == "saved"
    fresh = RecordStore(tmp_path, location=f"{database}#workspace=team").snapshot()
    assert [r.content for r in fresh.records] == [*(r.content for r in kept), "Green."]
    assert fresh.records[-1].root_id == fresh.records[-1].id != last.id


def test_a_host_reading_another_hosts_appended_rows_decodes_only_those(
    db: Backing, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two hosts writing in turn (16 writers of one namespace, in the benchmark): each reads
    the other's rows before its write. Only the appended rows are decoded: the workspace's
    bytes are neither assembled from every row again nor decoded again (at 10,000 items that
    doubled the time a writer held the row lock). What each then holds is what the database
    holds, byte for byte, through appended corrections."""
    assert db.url is not None and db.name is not None
    first, second = db.store(), db.store()
    revision = first.save([keyed(f"Fact {n}.", f"facts/{n}") for n in range(40)]).revision
    revision = first.correct(FactKey("facts/1"), "Fact 1, again.", revision).revision  # v2
    second.snapshot()
    whole: list[str] = []

    def decoded(text: str) -> object:
        whole.append("decoded")
        return decode_store(text)

    def assembled(header: str, rows: Sequence[Row]) -> bytes:
        whole.append("assembled")
        return assemble(header, rows)

    monkeypatch.setattr("memquill.store._memo.decode_store", decoded)
    monkeypatch.setattr("memquill.store._postgres.assemble", assembled)
    for turn in range(3):
        revision = second.save([manual(f"The second host's fact {turn}.")], revision).revision
        revision = first.correct(FactKey("facts/1"), f"Fact 1, take {turn}.", revision).revision
    seen = second.snapshot()
    assert whole == []
    assert seen.revision == revision == first.snapshot().revision
    assert seen.records == first.snapshot().records
    assert seen.by_key("facts/1") == first.snapshot().by_key("facts/1")
    assert second.export() == first.export() == db.raw()
    assert revision == db.revision_of(db.raw())


def test_another_host_catches_up_through_compaction_that_removes_and_moves_rows(
    db: Backing,
) -> None:
    assert db.url is not None and db.name is not None
    writer, reader = db.store(), db.store()
    saved = writer.save([keyed(f"Fact {n}.", f"facts/{n}") for n in range(6)])
    reader.snapshot()
    revision = saved.revision
    for n in range(0, 6, 2):
        revision = writer.revoke(FactKey(f"facts/{n}"), revision).revision
    revision = writer.correct(FactKey("facts/1"), "Fact 1, again.", revision).revision
    assert reader.snapshot().revision == revision
    # Compaction folds the forgotten families into a ledger that sorts first: rows go, and
    # every other row moves.
    compacted = writer.compact(revision)
    assert compacted.status == "saved"
    assert len(rows(db.url, db.name)) < 7
    seen = reader.snapshot()
    assert seen.revision == compacted.revision == db.revision_of(db.raw())
    assert seen.records == writer.snapshot().records
    assert reader.export() == writer.export() == db.raw()
    # And the reader can write on top of what it caught up with.
    assert reader.save([keyed("Fact 9.", "facts/9")], seen.revision).status == "saved"
    assert writer.snapshot().revision == reader.snapshot().revision == db.revision_of(db.raw())


def test_export_gives_the_file_stores_bytes_through_keys_forgets_and_compaction(
    db: Backing, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.core.test_store_postgres import FixedIds, fixed_clock

    from memquill.store import _store as store_module

    file_workspace = tmp_path / "file-ws"
    (file_workspace / "memory").mkdir(parents=True)
    (file_workspace / "memory" / ".records-lock").touch()  # ids drawn once, as on the database
    on_db = db.store(now=fixed_clock())
    on_file = RecordStore(file_workspace, now=fixed_clock(), record_key=on_db.record_key)
    on_db.snapshot()
    exported: list[list[bytes]] = []
    for store in (on_file, on_db):
        monkeypatch.setattr(store_module, "uuid", FixedIds())
        steps: list[bytes] = []
        first = store.save([keyed(f"Fact {n}.", f"facts/{n}") for n in range(5)])
        revision = store.revoke(FactKey("facts/1"), first.revision).revision  # v1 -> v3
        steps.append(store.export())
        revision = store.revoke(FactKey("facts/3"), revision).revision  # appended on the file
        steps.append(store.export())
        revision = store.save([manual("unkeyed"), keyed("Fact 7.", "facts/7")], revision).revision
        steps.append(store.export())
        revision = store.compact(revision).revision
        store.save([keyed("Fact 8.", "facts/8")], revision)
        steps.append(store.export())
        exported.append(steps)
    on_disk = (file_workspace / "memory" / "records.md").read_bytes()
    assert exported[0] == exported[1]
    assert exported[0][-1] == db.raw() == on_disk
    assert exported[0][0].startswith(b"# Memory records\n\n<!-- memory-records:v3 -->")
