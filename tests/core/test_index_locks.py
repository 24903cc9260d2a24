"""The index file's locks across processes: SQLite coordinates processes with POSIX advisory
locks on the database and its ``-shm`` file, and a process drops every such lock it holds on a
file whenever it closes *any* descriptor of that file. A search index opened while another of
this process's connections holds the file must therefore never open and close the files itself
(to narrow their modes, say): another process would then believe itself the last user, and at
its exit delete the ``-wal`` and ``-shm`` files this process still uses, so every index opened
here afterwards could not be used (kept in memory, "cannot be saved")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.core.index_helpers import indexed, reference
from tests.core.query_helpers import write

from memquill.errors import Messages
from memquill.index._search_index import IndexSearcher

# Another process that searches the same index once and exits (as a stopped server does).
OTHER_PROCESS = """
import sys
from datetime import UTC, datetime
from pathlib import Path
from memquill.index._search_index import IndexSearcher
from memquill.query import MemoryQuery, SearchArgs

searcher = IndexSearcher(sys.argv[2], notice=None, watch=False)
query = MemoryQuery(Path(sys.argv[1]), now=lambda: datetime(2026, 9, 22, tzinfo=UTC),
                    searcher=searcher)
query.search(SearchArgs(query="pierogi"))
searcher.close()
"""


def test_an_index_opened_beside_a_live_connection_survives_another_process(
    tmp_path: Path,
) -> None:
    root, folder = (tmp_path / "vault").resolve(), tmp_path / "index"
    write(root, "a.md", "pierogi with farmer cheese")
    kept = IndexSearcher(folder, notice=None, watch=False)  # a session that stays open
    try:
        indexed(root, kept).search(query="pierogi")
        # A second session of this process opens the same index, searches, and closes.
        other = IndexSearcher(folder, notice=None, watch=False)
        write(root, "b.md", "pierogi number two")
        assert (
            not indexed(root, other)
            .search(query="pierogi")
            .text.startswith(Messages.INDEX_IN_MEMORY)
        )
        other.close()
        subprocess.run([sys.executable, "-c", OTHER_PROCESS, str(root), str(folder)], check=True)
        # The session that stayed open goes on searching (and writing) here.
        write(root, "c.md", "pierogi number three")
        assert (
            not indexed(root, kept)
            .search(query="pierogi")
            .text.startswith(Messages.INDEX_IN_MEMORY)
        )
        fresh = IndexSearcher(folder, notice=None, watch=False)
        try:
            got = indexed(root, fresh).search(query="pierogi").text
        finally:
            fresh.close()
        # Before: "Search index kept in memory only. The search index cannot be saved: …"
        # (SQLite: disk I/O error, a short read of the -wal the other process deleted).
        assert got == reference(root).search(query="pierogi").text
    finally:
        kept.close()
