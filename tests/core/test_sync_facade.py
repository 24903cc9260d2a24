"""``memquill.sync`` is the one place every sync name is imported from (``docs/sync.md``): the
CLI's and the page's through the names it serves memquill's own code, a user's (``merge_files``)
through ``__all__``.

The record-level merge's code runs inside the store's transaction, so its names live in
``memquill.store``; the sync facade answers for each of them with the very same object, and
importing it loads none of them until one is used. Sync's writes live in ``memquill.sync``
itself; ``memquill.tools`` still answers for them, with a warning naming their home.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import memquill.store
import memquill.sync
import memquill.tools
from memquill.sync._merge import records_workspace

FROM_STORE = (
    "Divergence",
    "KeyRename",
    "MergeReport",
    "MergeResult",
    "ResolveReport",
    "ResolvedCopy",
    "merge_files",
)
WRITES = ("keep_version", "merge_copy", "resolve_conflict_copies")


def _served(facade: object, name: str) -> object:
    """``facade.name``, a name it serves memquill's own code (a warning for a test)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return getattr(facade, name)


def test_every_sync_name_is_imported_from_the_sync_facade() -> None:
    # The store serves these to the sync facade; only merge_files is public there.
    for name in FROM_STORE:
        assert _served(memquill.sync, name) is _served(memquill.store, name), name
    for name in WRITES:
        assert callable(_served(memquill.sync, name)), name
    assert memquill.sync.__all__ == ["merge_files"]


def test_the_writes_moved_from_the_tools_still_resolve_with_a_warning() -> None:
    for name in WRITES:
        home = _served(memquill.sync, name)
        with pytest.warns(DeprecationWarning, match=f"moved to memquill.sync.{name}"):
            assert getattr(memquill.tools, name) is home
        assert name not in memquill.tools.__all__


def test_the_driver_names_moved_from_the_store_still_resolve_with_a_warning() -> None:
    for name in ("merge_into_file", "read_copy"):
        home = _served(memquill.sync, name)
        with pytest.warns(DeprecationWarning, match=f"moved to memquill.sync.{name}"):
            assert getattr(memquill.store, name) is home
        assert name not in memquill.store.__all__


def test_the_driver_merges_into_the_store_only_for_a_workspace_records_file(
    tmp_path: Path,
) -> None:
    records = tmp_path / "work" / "memory" / "records.md"
    records.parent.mkdir(parents=True)
    records.write_bytes(b"")
    link = tmp_path / "ours.md"
    link.symlink_to(records)
    assert records_workspace(records) == (tmp_path / "work").resolve()
    assert records_workspace(link) == (tmp_path / "work").resolve()
    assert records_workspace(tmp_path / "records.md") is None
    assert records_workspace(tmp_path / "memory" / "other.md") is None


def test_importing_the_sync_facade_loads_no_sync_code() -> None:
    probe = (
        "import sys, memquill.sync\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('memquill.') and ("
        "m.startswith('memquill.sync._') or m.startswith('memquill.store._merge')"
        " or m == 'memquill.store._families'))\n"
        "print(','.join(loaded))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""
