"""Folder entries that memquill promises are durable once the call returns.

The crash-state scenarios cover the records file's writes; these cover two smaller promises
beside them: a key file created in a new folder (the record key that keys every tombstone hash:
lost, a new key would stop recognising earlier operations), and the stale staging files
``doctor --fix`` reports as removed (a staging file can hold forgotten text). Each call runs under
the recorder and is replayed into the file-system model; once it has returned, no folder may
still hold an entry change that a power cut could undo.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.core.crash_state.model import FileSystem
from tests.core.crash_state.recorder import Recorder
from tests.core.store_helpers import manual

from memquill import RecordStore
from memquill.foundation.keyfiles import load_key_file


def unsynced_folders(root: Path, recorder: Recorder, model: FileSystem) -> list[str]:
    for index, call in enumerate(recorder.calls):
        model.replay(call, index)
    return sorted(
        os.path.relpath(folder, root)
        for folder, changes in model.pending_entries.items()
        if changes
    )


def test_a_key_file_in_new_folders_is_durable_when_it_is_returned(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    model = FileSystem.from_disk(str(root))
    recorder = Recorder(str(root))
    with recorder.active():
        key = load_key_file(root / "data" / "memquill" / "record-key")
    assert len(key) == 32
    assert unsynced_folders(root, recorder, model) == []


def test_staging_files_doctor_fix_removed_stay_removed(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    store = RecordStore(root)
    store.save([manual("The kiln fires at dawn.")])
    stale = root / "memory" / ".records-0f5e2c1a-7d4b-4c1e-9a51-3f2b8c6d7e90.tmp"
    stale.write_bytes(b"a staging copy that still holds forgotten text")
    model = FileSystem.from_disk(str(root))
    recorder = Recorder(str(root))
    with recorder.active():
        report = store.doctor(fix=True)
    assert report.removed == ("memory/" + stale.name,)
    assert unsynced_folders(root, recorder, model) == []
