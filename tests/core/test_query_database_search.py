"""``memory_search`` over a database workspace with candidates from the database itself
(:mod:`memquill.query._database`).

The contract: the same text, byte for byte, as projecting every record in the process (the
same workspace searched with the bound set out of reach), whatever the records, notes,
queries, limits and filters; the records read are only the candidates; writes between
searches are seen by the next one.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import Server
from tests.core.test_items_database_search import WORDS, _text  # pyright: ignore[reportPrivateUsage]

from memquill import MemorySession, MemoryToolset
from memquill.query import _database
from memquill.query._documents import record_document
from memquill.query._plain import FILE_TYPES
from memquill.query._rank import Corpus, RankParams, matches_filters, rank, records_admitted
from memquill.store import _postgres_search
from memquill.store._postgres_location import parse_location
from memquill.store._results import Candidate

TAGS = ("#birds", "#Boats", "#sea-life", "#tea")


def _tagged(rng: random.Random) -> str:
    """A record's text, with some of :data:`TAGS` (in any case) a third of the time."""
    text = _text(rng)
    if rng.random() < 0.35:
        tags = rng.sample(TAGS, rng.randint(1, 2))
        text += " " + " ".join(tag.upper() if rng.random() < 0.2 else tag for tag in tags)
    return text


def _refuse_whole_reads(patcher: pytest.MonkeyPatch, workspace: Workspace) -> None:
    """Make ``workspace``'s store fail if a read takes every record (a projection, a
    snapshot)."""

    def refused(*args: object) -> object:
        raise AssertionError("every record was read")

    patcher.setattr(workspace.session.store, "projection", refused)
    patcher.setattr(workspace.session.store, "snapshot", refused)


def _server_searches(patcher: pytest.MonkeyPatch, asked: bool) -> None:
    """Have every search of the records ask the server, however few they are (``asked``),
    or none of them, however many (the projection in the process)."""
    patcher.setattr(_database, "DATABASE_RECORDS", -1 if asked else 10**9)


def _calls(patcher: pytest.MonkeyPatch, owner: object, name: str) -> list[object]:
    """The arguments of each call of ``owner.name`` from now on (each still made)."""
    calls: list[object] = []
    real = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> object:
        calls.append(args)
        return real(*args, **kwargs)

    patcher.setattr(owner, name, counted)
    return calls


def _first_record(answer: str) -> tuple[str, str]:
    """The id and shown revision of a search answer's first record hit."""
    record = answer.split("memory/records/", 1)[1].split(".md", 1)[0]
    return record, answer.split(record, 1)[1].split("revision:", 1)[1].split(")", 1)[0]


class Workspace:
    """A workspace folder of notes whose records are a database workspace's rows."""

    def __init__(self, folder: Path, location: str) -> None:
        self.folder = folder
        self.location = location
        self.session = MemorySession(folder, "test-session", store=location)
        self.tools = MemoryToolset(self.session)
        self.database_reads: list[int] = []

    def save(self, texts: list[str]) -> None:
        for start in range(0, len(texts), 40):
            batch = texts[start : start + 40]
            self.session.store.save(
                [Candidate(t, {"kind": "manual"}, uuid.uuid4().hex) for t in batch]
            )

    def search(self, **arguments: Any) -> str:
        return self.tools.call("memory_search", arguments).text


@pytest.fixture
def workspace(tmp_path: Path, postgres_server: Server) -> Iterator[Workspace]:
    rng = random.Random(3)
    notes = tmp_path / "vault"
    for folder in ("notes", "memory/daily"):
        (notes / folder).mkdir(parents=True)
    for index in range(25):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 60)))
        (notes / "notes" / f"n{index}.md").write_text(f"# {rng.choice(WORDS)}\n\n{words}\n")
    (notes / "memory" / "daily" / "2026-11-30.md").write_text("heron boat at the harbour\n")
    (notes / "memory.md").write_text("Anna drinks green tea\n")
    location = f"{postgres_server.url}#workspace=records-{uuid.uuid4().hex[:12]}"
    yield Workspace(notes, location)


def _both(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch, **arguments: Any
) -> tuple[str, str, list[tuple[int, int]]]:
    """The answer with every record projected here, then with the database's candidates (and
    how many candidates of how many records each database search read)."""
    _server_searches(monkeypatch, False)
    process = workspace.search(**arguments)
    _server_searches(monkeypatch, True)
    sizes: list[tuple[int, int]] = []
    real = _database.database_records

    def counted(*args: Any, **kwargs: Any) -> _database.CandidateRecords | None:
        found = real(*args, **kwargs)
        assert found is not None, "the database declined to search"
        sizes.append((len(found.documents), found.size))
        return found

    monkeypatch.setattr(_database, "database_records", counted)
    database = workspace.search(**arguments)
    monkeypatch.setattr(_database, "database_records", real)
    return process, database, sizes


def test_the_database_answers_as_projecting_every_record(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(7)
    workspace.save([_tagged(rng) for _ in range(400)])
    read: list[tuple[int, int]] = []
    for round_ in range(50):
        query = " ".join(rng.sample(WORDS, rng.randint(1, 3)))
        if round_ % 9 == 0:
            query += " memory records"  # every record's path holds these: alike on them
        if round_ % 13 == 0:
            query = "the of and"  # stop words alone: no term at all
        arguments: dict[str, Any] = {"query": query, "limit": rng.choice((1, 5, 10, 20))}
        if round_ % 5 == 4:
            arguments["file_type"] = rng.choice(("longterm", "notes", "daily"))
        if round_ % 4 == 1:
            arguments["tags"] = rng.sample([*TAGS, "#absent", "BIRDS"], rng.randint(1, 2))
        process, database, sizes = _both(workspace, monkeypatch, **arguments)
        assert database == process, arguments
        read.extend(sizes)
    assert len(read) == 50
    # Tag filters found tagged records.
    assert "memory/records/" in workspace.search(query="heron boat tea", tags=["birds", "tea"])
    # Records were hits (not only notes), and each search read a part of the records only.
    assert sum("memory/records/" in workspace.search(query=w, limit=20) for w in WORDS) >= 5
    assert all(total == 400 for _, total in read)
    assert max(found for found, _ in read) < 400 and min(found for found, _ in read) < 120


def test_a_search_reads_no_record_but_the_candidates(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(5)
    workspace.save([_text(rng) for _ in range(200)] + ["A pelican by the heron's pond"])
    _server_searches(monkeypatch, True)
    _refuse_whole_reads(monkeypatch, workspace)
    answer = workspace.search(query="pelican heron", limit=10)
    assert "A pelican by the heron's pond" in answer


def test_writes_between_searches_are_found_by_the_next(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(9)
    workspace.save([_text(rng) for _ in range(60)])
    _server_searches(monkeypatch, True)
    assert "pelican" not in workspace.search(query="pelican")
    workspace.save(["The pelican nests by the quay"])
    found = workspace.search(query="pelican quay")
    assert "The pelican nests by the quay" in found
    record, revision = _first_record(found)
    forgot = workspace.tools.call("memory_forget", {"id": record, "expected_revision": revision})
    assert not forgot.is_error, forgot.text
    assert "pelican" not in workspace.search(query="pelican quay")
    for limit in (1, 10):
        process, database, _ = _both(workspace, monkeypatch, query="pelican heron", limit=limit)
        assert database == process


def test_a_small_workspace_is_ranked_in_the_process_and_a_tag_filter_in_the_database(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace.save(["heron #birds by the river", "coffee at nine", "heron by the sea"])
    asked = _calls(monkeypatch, _database, "database_records")
    assert "heron" in workspace.search(query="heron")  # 3 versions: below the bound
    assert asked == []
    _server_searches(monkeypatch, True)
    _refuse_whole_reads(monkeypatch, workspace)
    tagged = workspace.search(query="heron", tags=["#Birds"])
    assert "heron #birds by the river" in tagged and "heron by the sea" not in tagged
    assert "heron by the sea" in workspace.search(query="heron sea")
    assert len(asked) == 2


class _WithNotes(Corpus):
    """Every record, beside ``notes`` notes of which ``holding[term]`` hold a term."""

    def __init__(self, documents: Any, notes: int, holding: dict[str, int]) -> None:
        super().__init__(documents)
        self._notes, self._holding = notes, holding

    @property
    def size(self) -> int:
        return len(self.documents) + self._notes

    def frequency(self, term: str) -> int:
        return len(self.postings(term)) + self._holding.get(term, 0)


def test_the_candidates_hold_the_best_records_before_chunks_whatever_the_notes(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The exact set asked for: the best ``depth`` records by their score before chunks
    # (ties by path), with the idf of notes and records together; here against notes that
    # hold the query's terms in any proportion (a term rare among records may be common
    # among notes, which turns the records' order around).
    rng = random.Random(13)
    workspace.save([_tagged(rng) for _ in range(300)])
    _server_searches(monkeypatch, True)
    location = parse_location(workspace.location)
    identity = _database.searched_in_database(location)
    assert identity is not None
    every = [record_document(record) for record in workspace.session.store.projection().records]
    shown = {d.path: (d.source, d.record_revision, d.content) for d in every}
    now = datetime(2026, 12, 1, tzinfo=UTC)
    checked = 0
    for _ in range(60):
        terms = rng.sample([w.lower() for w in WORDS] + ["filler", "memory"], rng.randint(1, 3))
        query = " ".join(terms)
        notes = rng.choice((0, 10, 400, 5000))
        holding = {term: rng.randint(0, notes) for term in terms}
        depth = rng.choice((1, 5, 50))
        tags = frozenset(rng.sample(("birds", "boats", "sea-life", "tea"), rng.randint(0, 2)))
        found = _database.database_records(
            location,
            identity,
            query,
            depth=depth,
            now=now,
            params=RankParams(),
            notes=notes,
            holding=lambda term: holding.get(term, 0),  # noqa: B023 - used at once
            tags=tags,
        )
        assert found is not None
        best = rank(
            _WithNotes(every, notes, holding),
            query,
            now=now,
            params=replace(RankParams(), chunk_weight=0.0, rerank_depth=depth),
            candidates=depth,
            tags=tags,
        )
        candidates = {d.path: (d.source, d.record_revision, d.content) for d in found.documents}
        assert {hit.document.path for hit in best} <= set(candidates), (query, notes, depth)
        assert all(shown[path] == seen for path, seen in candidates.items())
        assert found.size == len(every)
        checked += len(best)
    assert checked > 300


def test_a_get_reads_the_record_by_its_id_alone(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace.save(["The kiln runs at 1240 degrees.\n\nGlaze on Fridays.", "Anna: tea at four"])
    found = workspace.search(query="kiln")
    record, revision = _first_record(found)
    path = f"memory/records/{record}.md"
    asked = [
        {"file_path": path},
        {"file_path": path, "line_start": 3},
        {"file_path": "memory/records/00000000-0000-4000-8000-000000000000.md"},
        {"file_path": "memory/records/not-an-id.md"},
    ]
    _server_searches(monkeypatch, False)
    process = [workspace.tools.call("memory_get", arguments) for arguments in asked]
    _server_searches(monkeypatch, True)
    with monkeypatch.context() as reading:
        _refuse_whole_reads(reading, workspace)
        database = [workspace.tools.call("memory_get", arguments) for arguments in asked]
    assert [(r.text, r.is_error) for r in database] == [(r.text, r.is_error) for r in process]
    assert "The kiln runs at 1240 degrees." in database[0].text and not database[0].is_error
    assert database[2].is_error and database[3].is_error
    # A forgotten record is no longer there, by its id either.
    forgot = workspace.tools.call("memory_forget", {"id": record, "expected_revision": revision})
    assert not forgot.is_error, forgot.text
    gone = workspace.tools.call("memory_get", {"file_path": path})
    _server_searches(monkeypatch, False)
    again = workspace.tools.call("memory_get", {"file_path": path})
    assert gone.is_error and (gone.text, gone.is_error) == (again.text, again.is_error)


def test_recent_reads_only_the_records_it_shows(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Batches of 40 share a time: ties are ordered by file order, as the projection orders
    # them. Corrections and forgets move facts out of and into the newest.
    rng = random.Random(17)
    workspace.save([_text(rng) for _ in range(420)])
    for _ in range(6):
        record, revision = _first_record(workspace.search(query=rng.choice(WORDS)))
        name = rng.choice(("memory_update", "memory_forget"))
        arguments = {"id": record, "expected_revision": revision}
        if name == "memory_update":
            arguments["content"] = _text(rng)
        assert not workspace.tools.call(name, arguments).is_error
    _server_searches(monkeypatch, False)
    process = workspace.tools.call("memory_recent", {"days": 2})
    _server_searches(monkeypatch, True)
    _refuse_whole_reads(monkeypatch, workspace)
    database = workspace.tools.call("memory_recent", {"days": 2})
    assert database.text == process.text
    assert database.structured == process.structured
    assert database.structured is not None
    sections = database.structured["sections"]
    assert [s["kind"] for s in sections[:3]] == ["longterm", "daily", "record"]
    assert len(sections) == 2 + 375


def test_a_filter_that_admits_no_record_asks_the_server_only_for_the_figures(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(19)
    workspace.save([_tagged(rng) for _ in range(120)])
    asked = _calls(monkeypatch, _postgres_search, "search_candidates")
    for file_type in ("daily", "notes", "longterm", "all"):
        before = len(asked)
        process, database, _ = _both(
            workspace, monkeypatch, query="heron boat tea", file_type=file_type, limit=10
        )
        assert database == process, file_type
        assert (len(asked) > before) is records_admitted(file_type), file_type
    record = record_document(workspace.session.store.projection().records[0])
    for file_type in FILE_TYPES:  # the rule is the one a record's path meets
        assert records_admitted(file_type) is matches_filters(record, file_type, frozenset())
