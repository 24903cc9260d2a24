"""Git merges ``memory/records.md`` record by record: two and three real clones, real pulls.

Each clone runs ``memquill sync setup`` (the real command), carries the first machine's record
key over (``memquill key export --stdout | memquill key import -``), and then remembers,
corrects and forgets on its own; ``git pull --no-rebase`` runs the merge driver. Checked: no
conflict, no conflict markers, nothing acknowledged lost, forgotten text gone, the diverged
fact reported, ``doctor`` healthy, and identical bytes on every clone once they synced both
ways.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.core.sync_helpers import Machine, bare_origin, carry_key

from memquill.store._merge import merge_files


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    return bare_origin(tmp_path)


def first_machine(tmp_path: Path, origin: Path, subfolder: str = "") -> Machine:
    machine = Machine(tmp_path, "laptop", origin, subfolder)
    setup = machine.memquill("sync", "setup").stdout
    assert "memory/records.md merge=memquill" in setup
    machine.commit("memquill merges memory/records.md")
    machine.git("push", "-q", "-u", "origin", "HEAD")
    return machine


def other_machine(tmp_path: Path, origin: Path, name: str, first: Machine) -> Machine:
    machine = Machine(tmp_path, name, origin, first.workspace.relative_to(first.clone).as_posix())
    assert "already" not in machine.memquill("sync", "setup").stdout  # the driver is per clone
    assert "installed" in carry_key(first, machine)
    return machine


def no_markers(machine: Machine) -> None:
    data = machine.raw()
    for marker in (b"<<<<<<<", b"=======", b">>>>>>>"):
        assert marker not in data


def healthy(machine: Machine) -> None:
    report = machine.store.doctor()
    assert report.ok, report
    assert report.other_keys == {}  # every record was written under the one key


def test_two_clones_merge_without_conflict_and_end_with_the_same_bytes(
    tmp_path: Path, origin: Path
) -> None:
    laptop = first_machine(tmp_path, origin)
    laptop.remember("the deploy window is Tuesday")
    laptop.remember("the cat is Miso")
    laptop.remember("the office wifi is on floor 2")
    laptop.sync()
    desktop = other_machine(tmp_path, origin, "desktop", laptop)
    desktop.pull()
    assert desktop.raw() == laptop.raw()

    # Both work offline.
    laptop.remember("laptop: tea over coffee")
    laptop.update("the cat is Miso", "the cat is Mochi")
    laptop.forget("the office wifi is on floor 2")
    laptop.remember("both: standup at 10")
    desktop.remember("desktop: the printer is in room 4")
    desktop.update("the cat is Miso", "the cat is Momo")  # the same fact, differently
    desktop.update("the office wifi is on floor 2", "the office wifi is on floor 3")
    desktop.remember("both: standup at 10")  # the same write on both machines

    laptop.sync()
    pulled = desktop.sync()  # the merge driver runs here
    assert "memquill merge: " in pulled and "diverged" in pulled
    laptop.pull()
    for machine in (laptop, desktop):
        no_markers(machine)
        healthy(machine)
    assert laptop.raw() == desktop.raw()
    texts = laptop.active_texts()
    assert {
        "the deploy window is Tuesday",
        "laptop: tea over coffee",
        "desktop: the printer is in room 4",
        "both: standup at 10",
    } <= texts
    assert b"wifi" not in laptop.raw()  # forgotten on the laptop: gone, also the desktop's edit
    assert len([t for t in texts if t.startswith("the cat is")]) == 1
    assert sum(r.content == "both: standup at 10" for r in laptop.store.snapshot().records) == 1
    diverged = laptop.store.doctor().diverged
    assert len(diverged) == 1
    status = laptop.memquill("sync", "status").stdout
    assert "diverged" in status and "the cat is Mo" in status


def test_each_clone_merging_the_other_gives_the_same_bytes(tmp_path: Path, origin: Path) -> None:
    laptop = first_machine(tmp_path, origin)
    laptop.remember("shared")
    laptop.sync()
    desktop = other_machine(tmp_path, origin, "desktop", laptop)
    desktop.pull()
    laptop.remember("from the laptop")
    laptop.update("shared", "shared, corrected on the laptop")
    desktop.remember("from the desktop")
    desktop.forget("shared")
    for machine, branch in ((laptop, "laptop"), (desktop, "desktop")):
        machine.commit()
        machine.git("push", "-q", "origin", f"HEAD:{branch}")
    laptop.git("fetch", "-q")
    desktop.git("fetch", "-q")
    laptop.git("merge", "-q", "--no-edit", "origin/desktop")  # the laptop merges the desktop
    desktop.git("merge", "-q", "--no-edit", "origin/laptop")  # and the desktop the laptop
    assert laptop.raw() == desktop.raw()
    assert b"shared" not in laptop.raw()
    assert {"from the laptop", "from the desktop"} <= laptop.active_texts()
    # The two merge commits then merge with each other without touching records.md again.
    laptop.git("push", "-q", "origin", "HEAD:main")
    desktop.git("pull", "-q", "--no-rebase", "origin", "main")
    assert laptop.raw() == desktop.raw()
    merged, _ = merge_files(b"", laptop.raw(), laptop.raw())
    assert merged == laptop.raw()


def test_three_clones_of_a_workspace_in_a_subfolder(tmp_path: Path, origin: Path) -> None:
    laptop = first_machine(tmp_path, origin, subfolder="notes")
    laptop.remember("the boiler is serviced in May")
    laptop.sync()
    desktop = other_machine(tmp_path, origin, "desktop", laptop)
    server = other_machine(tmp_path, origin, "server", laptop)
    for machine in (desktop, server):
        machine.pull()
    laptop.remember("laptop fact")
    desktop.remember("desktop fact")
    server.remember("server fact")
    desktop.update("the boiler is serviced in May", "the boiler is serviced in June")
    server.forget("the boiler is serviced in May")
    laptop.sync()
    desktop.sync()
    server.sync()
    laptop.pull()
    desktop.pull()
    files = {machine.raw() for machine in (laptop, desktop, server)}
    assert len(files) == 1
    for machine in (laptop, desktop, server):
        no_markers(machine)
        healthy(machine)
    assert {"laptop fact", "desktop fact", "server fact"} <= laptop.active_texts()
    assert b"boiler" not in laptop.raw()
    assert (laptop.workspace / ".gitattributes").read_text() == (
        "memory/records.md merge=memquill -text diff\n"
    )


def test_without_the_driver_git_leaves_a_conflict(tmp_path: Path, origin: Path) -> None:
    # What the set-up is for: the same divergence with no driver configured in the clone.
    laptop = first_machine(tmp_path, origin)
    laptop.remember("shared")
    laptop.sync()
    desktop = Machine(tmp_path, "desktop", origin)
    desktop.pull()
    laptop.remember("from the laptop")
    desktop.remember("from the desktop")
    laptop.sync()
    desktop.commit()
    done = desktop.git("pull", "--no-rebase", check=False)
    assert done.returncode != 0 and "CONFLICT" in done.stdout
    assert b"<<<<<<<" in desktop.raw()


def test_pull_with_rebase_uses_the_driver_too(tmp_path: Path, origin: Path) -> None:
    laptop = first_machine(tmp_path, origin)
    laptop.remember("shared")
    laptop.sync()
    desktop = other_machine(tmp_path, origin, "desktop", laptop)
    desktop.pull()
    laptop.remember("from the laptop")
    laptop.sync()
    desktop.remember("from the desktop, first")
    desktop.commit("one")
    desktop.remember("from the desktop, second")
    desktop.commit("two")
    done = desktop.git("pull", "--rebase", check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    no_markers(desktop)
    healthy(desktop)
    assert {"shared", "from the laptop", "from the desktop, first", "from the desktop, second"} == (
        desktop.active_texts()
    )


def test_line_endings_are_never_converted(tmp_path: Path, origin: Path) -> None:
    # A repository that checks every text file out with CRLF line endings.
    laptop = Machine(tmp_path, "laptop", origin)
    (laptop.workspace / ".gitattributes").write_text("* text=auto eol=crlf\n")
    laptop.memquill("sync", "setup")
    laptop.remember("line one\nline two")
    laptop.commit()
    laptop.git("push", "-q", "-u", "origin", "HEAD")
    desktop = other_machine(tmp_path, origin, "desktop", laptop)
    desktop.pull()
    assert desktop.raw() == laptop.raw() and b"\r" not in desktop.raw()
    healthy(desktop)
    assert "line one\nline two" in desktop.active_texts()
