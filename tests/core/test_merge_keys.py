"""Named facts across machines: keys written by the real store, merged record by record.

Two workspaces share one record key (one person, two machines) and name facts with keys
(``docs/record-format.md``). The merge keeps every key unique among active facts, renames the
younger family's when two machines took one key (the older keeps it), keeps a key a fact kept
through its corrections, and frees a forgotten fact's key on every version.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.core.sync_helpers import MEMQUILL, base_environment, run

from memquill import RecordStore
from memquill.store._merge import merge_files
from memquill.store._record import FactKey
from memquill.store._record_key import RecordKey
from memquill.store._results import Candidate


class TwoMachines:
    def __init__(self, root: Path) -> None:
        self.keys = RecordKey(root / "data" / "memquill")
        self.paths = (root / "laptop", root / "desktop")
        for path in self.paths:
            (path / "memory").mkdir(parents=True)
        self.laptop, self.desktop = (RecordStore(p, record_key=self.keys) for p in self.paths)
        self.env = base_environment(root / "home", root / "data")
        self.env["MEMQUILL_WORKSPACE"] = str(self.paths[0])

    def name(self, store: RecordStore, key: str, text: str) -> str:
        result = store.save([Candidate(text, {"kind": "manual"}, f"manual:{text}", key)])
        assert result.record_id is not None
        return result.record_id

    def raw(self, index: int) -> bytes:
        path = self.paths[index] / "memory" / "records.md"
        return path.read_bytes() if path.exists() else b""

    def share(self) -> bytes:
        """The laptop's file, copied to the desktop: their common ancestor from now on."""
        data = self.raw(0)
        (self.paths[1] / "memory" / "records.md").write_bytes(data)
        return data

    def merge(self, base: bytes) -> bytes:
        """The desktop's file merged into the laptop's, checked the other way round too."""
        key = self.keys.load()  # the store's merge fingerprints the text it erases with it
        merged, _ = merge_files(base, self.raw(0), self.raw(1), key)
        assert merge_files(base, self.raw(1), self.raw(0), key)[0] == merged
        self.laptop.merge(self.raw(1), base)
        assert self.raw(0) == merged
        return merged


@pytest.fixture
def machines(tmp_path: Path) -> TwoMachines:
    return TwoMachines(tmp_path)


def test_one_key_taken_on_two_machines_stays_with_the_older_fact(machines: TwoMachines) -> None:
    older = machines.name(machines.laptop, "prefs/coffee", "dark roast")
    younger = machines.name(machines.desktop, "prefs/coffee", "light roast")
    machines.merge(b"")
    kept = machines.laptop.find_key("prefs/coffee")
    assert kept is not None and (kept.id, kept.content) == (older, "dark roast")
    renamed = machines.laptop.find_key(f"prefs/coffee~{younger[:8]}")
    assert renamed is not None and renamed.content == "light roast"
    report = machines.laptop.doctor()
    assert report.ok
    assert [(r.key, r.root_id) for r in report.renamed_keys] == [("prefs/coffee", younger)]
    status = run([MEMQUILL, "sync", "status"], machines.paths[0], machines.env).stdout
    assert f"renamed key: 'prefs/coffee' was taken on two machines; fact {younger[:8]}" in status
    # Renaming it by hand (a correction under a new key) settles it.
    machines.laptop.correct(
        renamed.id, "light roast", machines.laptop.snapshot().revision, key="prefs/tea"
    )
    assert machines.laptop.doctor().renamed_keys == ()


def test_a_key_kept_through_corrections_merges_with_the_other_machines_facts(
    machines: TwoMachines,
) -> None:
    machines.name(machines.laptop, "deploy/day", "Deploys happen on Tuesdays")
    base = machines.share()
    machines.laptop.correct(
        FactKey("deploy/day"), "Deploys happen on Wednesdays", machines.laptop.snapshot().revision
    )
    machines.name(machines.desktop, "office/wifi", "The wifi is on floor 2")
    machines.merge(base)
    current = machines.laptop.find_key("deploy/day")
    assert current is not None and current.content == "Deploys happen on Wednesdays"
    assert machines.laptop.find_key("office/wifi") is not None
    assert machines.laptop.doctor().renamed_keys == ()


def test_a_fact_forgotten_on_one_machine_frees_its_key_everywhere(machines: TwoMachines) -> None:
    machines.name(machines.laptop, "health/diagnosis", "a private diagnosis")
    base = machines.share()
    machines.desktop.correct(
        FactKey("health/diagnosis"), "a corrected diagnosis", machines.desktop.snapshot().revision
    )
    machines.laptop.revoke(FactKey("health/diagnosis"), machines.laptop.snapshot().revision)
    merged = machines.merge(base)
    assert b"health/diagnosis" not in merged and b"diagnosis" not in merged.replace(b"\n", b"")
    assert {r.status for r in machines.laptop.snapshot().records} == {"revoked"}
    # The key is free again, on the merged store.
    machines.name(machines.laptop, "health/diagnosis", "a new fact under the old name")


def test_the_same_named_write_on_both_machines_is_one_fact(machines: TwoMachines) -> None:
    machines.name(machines.laptop, "prefs/editor", "Helix")
    machines.name(machines.desktop, "prefs/editor", "Helix")  # the same write, twice
    merged = machines.merge(b"")
    assert merged.count(b'"key":"prefs/editor"') == 1
    assert machines.laptop.doctor().renamed_keys == ()
