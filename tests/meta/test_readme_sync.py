"""The README's "Sync across machines" instructions work as written, on two real git clones.

The three shell blocks of that section are taken from README.md and run verbatim with ``bash
-e``: the set-up on each clone, the key carried from the laptop to the desktop (``ssh desktop``
is a stand-in that runs the command as the desktop's user, in the desktop's environment), and
the sync on each clone after both remembered something. The clones then hold the same bytes,
with every fact, no conflict marker, and a healthy store.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from tests.core.sync_helpers import Machine, bare_origin, run

README = Path(__file__).resolve().parents[2] / "README.md"


def sync_blocks() -> list[str]:
    text = README.read_text("utf-8")
    start = text.index("\n## Sync across machines\n")
    end = text.index("\n## ", start + 1)
    return re.findall(r"```sh\n(.*?)```", text[start:end], re.DOTALL)


def shell(machine: Machine, block: str, bin_folder: Path) -> str:
    env = {**machine.env, "PATH": f"{bin_folder}{os.pathsep}{machine.env['PATH']}"}
    done = run(["bash", "-e", "-c", block], machine.workspace.parent, env, check=False)
    assert done.returncode == 0, f"{block}\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def fake_ssh(folder: Path, desktop: Machine) -> None:
    """``ssh desktop COMMAND…`` runs COMMAND with the desktop's environment."""
    exports = " ".join(
        f"{name}='{desktop.env[name]}'"
        for name in ("HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "MEMQUILL_WORKSPACE")
    )
    script = folder / "ssh"
    script.write_text(
        '#!/bin/sh\n[ "$1" = desktop ] || exit 255\nshift\n'
        f'cd "{desktop.workspace}" && exec env {exports} "$@"\n'
    )
    script.chmod(0o755)


def test_the_readme_sync_instructions_work_verbatim_on_two_clones(tmp_path: Path) -> None:
    setup, carry, sync = sync_blocks()
    assert "memquill sync setup" in setup and "git pull" in sync
    origin = bare_origin(tmp_path)
    seed = Machine(tmp_path, "seed", origin)  # the repository exists before memquill does
    (seed.workspace / "notes.md").write_text("# Notes\n")
    seed.commit("notes")
    seed.git("push", "-q", "origin", "HEAD:main")
    laptop = Machine(tmp_path, "laptop", origin)
    desktop = Machine(tmp_path, "desktop", origin)
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    (bin_folder / "memquill").symlink_to(Path(sys.executable).parent / "memquill")
    fake_ssh(bin_folder, desktop)

    for machine in (laptop, desktop):
        shell(machine, setup, bin_folder)
    shell(laptop, carry, bin_folder)
    assert desktop.key.current() == laptop.key.current() is not None

    laptop.memquill("remember", "the laptop knows the deploy window is Tuesday")
    laptop.memquill("remember", "both know standup is at 10")
    desktop.memquill("remember", "the desktop knows the printer is in room 4")
    desktop.memquill("remember", "both know standup is at 10")
    shell(laptop, sync, bin_folder)
    pulled = shell(desktop, sync, bin_folder)
    assert "memquill merge:" in pulled
    shell(laptop, sync, bin_folder)

    assert laptop.raw() == desktop.raw()
    assert b"<<<<<<<" not in laptop.raw()
    assert laptop.active_texts() == {
        "the laptop knows the deploy window is Tuesday",
        "both know standup is at 10",
        "the desktop knows the printer is in room 4",
    }
    for machine in (laptop, desktop):
        assert machine.memquill("doctor").stdout.rstrip().endswith("healthy")


def test_docs_sync_shows_the_same_commands() -> None:
    # docs/sync.md repeats the README's blocks; the test above runs them, so they must match.
    text = (README.parent / "docs" / "sync.md").read_text("utf-8")
    start = text.index("\n## Git\n")
    section = text[start : text.index("\n### ", start)]
    assert re.findall(r"```sh\n(.*?)```", section, re.DOTALL) == sync_blocks()
