"""The README's command-line block works when pasted in order, as it says.

The block is read from ``README.md`` (so the test follows the README, not a copy of it) and run
by ``bash -e`` in a fresh home whose ``~/notes`` holds a note, with the installed ``memquill``
first on ``PATH``: every command must succeed, and the facts end as the block says.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from memquill import RecordStore

README = Path(__file__).resolve().parents[2] / "README.md"


def command_block() -> str:
    """The first ``sh`` block under ``## The command line``."""
    text = README.read_text("utf-8")
    section = text[text.index("\n## The command line\n") :]
    found = re.search(r"```sh\n(.*?)\n```", section, re.DOTALL)
    assert found is not None, "README: no sh block under 'The command line'"
    return found.group(1)


def test_the_block_is_the_one_people_paste() -> None:
    block = command_block()
    lines = [line for line in block.splitlines() if line.strip()]
    assert lines[0].startswith("export MEMQUILL_WORKSPACE=~/notes")
    assert all(line.startswith(("export ", "memquill ")) for line in lines)
    # Nothing to fill in: no placeholder ids or revisions.
    assert not re.search(r"--revision|\b[0-9a-f]{8}\b", block)
    assert "memquill update deploy/day" in block and "memquill forget deploy/day" in block


def test_the_readme_command_block_runs_in_order(tmp_path: Path) -> None:
    home = tmp_path / "home"
    notes = home / "notes"
    notes.mkdir(parents=True)
    (notes / "memory.md").write_text("# Long-term memory\n\n- Deploys go out from main.\n")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMQUILL_", "XDG_"))}
    env.update(
        HOME=str(home),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        MEMQUILL_DISABLE_PLUGIN_AUTOLOAD="1",
    )
    done = subprocess.run(
        ["bash", "-e", "-u", "-o", "pipefail", "-c", command_block()],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert done.stderr == ""
    store = RecordStore(notes)
    snapshot = store.snapshot()
    # Remembered, corrected twice, forgotten: three versions, all tombstones, no key left.
    assert [record.status for record in snapshot.records] == ["revoked"] * 3
    assert snapshot.keyed() == ()
    assert b"deploy" not in (notes / "memory" / "records.md").read_bytes()
    assert (cwd / "records.md").read_bytes() == store.export()
    assert "Deploys happen on Tuesdays" in done.stdout  # search and get found it
    assert "healthy" in done.stdout
    assert "saved " in done.stdout and "plugins (" in done.stdout  # remember and plugins spoke
